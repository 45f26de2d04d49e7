"""Resources: listing, templates, reading text/binary/templated contents, not-found, subscriptions.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/server/resources (MCP-NOTES §7.7).
"""

from __future__ import annotations

import base64

import pytest

from mcp_notebook.engine.server import Server
from mcp_notebook.protocol.errors import RESOURCE_NOT_FOUND, JSONRPCError
from tests.interaction._harness import Connect, Inbox

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def library() -> Server:
    server = Server("library")
    server.add_resource("file:///notes.txt", "hello notes", name="notes", mime_type="text/plain")
    server.add_resource("file:///logo.png", PNG, name="logo", mime_type="image/png")

    @server.resource("weather://{city}/today", mime_type="text/plain")
    def weather(city: str) -> str:
        """Today's weather for a city."""
        return f"Sunny in {city}"

    return server


async def test_list_resources(connect: Connect) -> None:
    """server/resources#listing-resources: Resource has uri and name, optional mimeType and size."""
    async with connect(library()) as client:
        resources = await client.list_resources()

    by_uri = {r["uri"]: r for r in resources}
    assert set(by_uri) == {"file:///notes.txt", "file:///logo.png"}
    assert by_uri["file:///notes.txt"]["name"] == "notes"
    assert by_uri["file:///notes.txt"]["mimeType"] == "text/plain"
    assert by_uri["file:///logo.png"]["size"] == len(PNG)


async def test_list_resource_templates(connect: Connect) -> None:
    """server/resources#resource-templates: uriTemplate (RFC 6570) and name."""
    async with connect(library()) as client:
        templates = await client.list_resource_templates()

    assert templates == [
        {
            "uriTemplate": "weather://{city}/today",
            "name": "weather",
            "description": "Today's weather for a city.",
            "mimeType": "text/plain",
        }
    ]


async def test_read_text_resource(connect: Connect) -> None:
    """server/resources#reading-resources: text contents are {uri, mimeType?, text}."""
    async with connect(library()) as client:
        result = await client.read_resource("file:///notes.txt")

    assert result["contents"] == [
        {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello notes"}
    ]


async def test_read_binary_resource(connect: Connect) -> None:
    """server/resources#binary-content: binary contents are base64 in blob."""
    async with connect(library()) as client:
        result = await client.read_resource("file:///logo.png")

    (content,) = result["contents"]
    assert content["uri"] == "file:///logo.png" and content["mimeType"] == "image/png"
    assert "text" not in content
    assert base64.b64decode(content["blob"]) == PNG


async def test_read_template_with_variables(connect: Connect) -> None:
    """server/resources#resource-templates: the template's variables are filled from the requested URI."""
    async with connect(library()) as client:
        result = await client.read_resource("weather://Paris/today")

    assert result["contents"] == [
        {"uri": "weather://Paris/today", "mimeType": "text/plain", "text": "Sunny in Paris"}
    ]


@pytest.mark.parametrize("uri", ["file:///missing.txt", "weather://Paris/tomorrow", "weather:///today"])
async def test_unknown_resource_is_32002_with_the_uri(connect: Connect, uri: str) -> None:
    """server/resources#error-handling: resource not found -> -32002 with data.uri (<= 2025-11-25)."""
    async with connect(library()) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.read_resource(uri)

    assert info.value.code == RESOURCE_NOT_FOUND
    assert info.value.data == {"uri": uri}


async def test_adding_a_resource_sends_list_changed(connect: Connect) -> None:
    """server/resources#list-changed-notification: with listChanged declared the server notifies changes."""
    server = library()
    inbox = Inbox()
    async with connect(server, notification_handler=inbox) as client:
        await client.send_ping()  # the handshake has completed on the server side too
        server.add_resource("file:///new.txt", "new")
        await inbox.wait("notifications/resources/list_changed")
        assert "file:///new.txt" in {r["uri"] for r in await client.list_resources()}


async def test_subscribe_then_unsubscribe(connect: Connect) -> None:
    """server/resources#subscriptions: after resources/subscribe the server sends
    notifications/resources/updated for that URI; after resources/unsubscribe it stops."""
    server = library()
    inbox = Inbox()
    async with connect(server, notification_handler=inbox) as client:
        await client.subscribe_resource("file:///notes.txt")
        await client.subscribe_resource("weather://Paris/today")
        server.notify_resource_updated("file:///notes.txt")
        server.notify_resource_updated("file:///logo.png")  # not subscribed: not sent
        assert await inbox.wait("notifications/resources/updated") == [{"uri": "file:///notes.txt"}]

        await client.unsubscribe_resource("file:///notes.txt")
        server.notify_resource_updated("file:///notes.txt")  # unsubscribed: must not arrive
        server.notify_resource_updated("weather://Paris/today")  # the marker: arrives after it would have
        await inbox.wait("notifications/resources/updated", count=2)

    assert inbox.of("notifications/resources/updated") == [
        {"uri": "file:///notes.txt"},
        {"uri": "weather://Paris/today"},
    ]
