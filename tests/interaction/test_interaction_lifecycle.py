"""Lifecycle: the initialize handshake, version negotiation, ping, and a peer that hangs up.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle and
.../basic/utilities/ping (MCP-NOTES §2.1). Docstrings below cite paths under that base.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_notebook.engine.client import Client
from mcp_notebook.engine.server import Server
from mcp_notebook.protocol.errors import (
    METHOD_NOT_FOUND,
    ConnectionClosedError,
    JSONRPCError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from mcp_notebook.tools import Context
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.memory import memory_pair
from tests.interaction._harness import WAIT, Connect


def wire_log(client: Client) -> list[tuple[str, dict[str, Any]]]:
    return [(e.direction, e.message) for e in client.trace if e.direction != "note"]


async def test_initialize_reports_server_info_capabilities_version_and_instructions(connect: Connect) -> None:
    """basic/lifecycle#initialization: InitializeResult has protocolVersion, capabilities, serverInfo,
    instructions; the client then sends notifications/initialized."""
    server = Server(
        "demo",
        "1.2.3",
        title="Demo server",
        description="For tests",
        website_url="https://example.org",
        instructions="Call add for sums.",
    )

    async with connect(server, client_info={"name": "nb-test", "version": "9"}) as client:
        assert client.server_info == {
            "name": "demo",
            "version": "1.2.3",
            "title": "Demo server",
            "description": "For tests",
            "websiteUrl": "https://example.org",
        }
        assert client.server_capabilities == {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "logging": {},
            "completions": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        }
        assert client.negotiated_version is not None and client.negotiated_version.name == "2025-11-25"
        assert client.instructions == "Call add for sums."
        messages = wire_log(client)

    (d1, initialize), (d2, answer), (d3, initialized) = messages[:3]
    assert (d1, initialize["method"]) == ("out", "initialize")
    assert initialize["params"]["protocolVersion"] == "2025-11-25"
    assert initialize["params"]["clientInfo"] == {"name": "nb-test", "version": "9"}
    assert (d2, answer["id"]) == ("in", initialize["id"])
    assert (d3, initialized) == ("out", {"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_server_sees_client_info_and_capabilities(connect: Connect) -> None:
    """basic/lifecycle#initialization: the client sends clientInfo and its capabilities."""
    server = Server("s")

    @server.tool
    def who(ctx: Context) -> dict[str, Any]:
        return {"info": ctx.client_info}

    async with connect(server, client_info={"name": "nb", "version": "2"}, roots=[]) as client:
        result = await client.call_tool("who")
        (session,) = server.sessions
        assert session.session.peer_capabilities == {"roots": {"listChanged": True}}

    assert result["structuredContent"] == {"info": {"name": "nb", "version": "2"}}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_server_echoes_the_version_the_client_asked_for(connect: Connect, version: str) -> None:
    """basic/lifecycle#version-negotiation: if the server supports the requested version, it MUST
    respond with the same version."""
    async with connect(Server("s"), protocol_version=version) as client:
        assert client.negotiated_version is not None and client.negotiated_version.name == version
        (answer,) = client.trace.entries()[1:2]
        assert answer["message"]["result"]["protocolVersion"] == version


async def test_server_answers_its_latest_version_for_an_unknown_one(connect: Connect) -> None:
    """basic/lifecycle#version-negotiation: otherwise it MUST respond with another version it supports
    (SHOULD be its latest)."""
    async with connect(Server("s"), protocol_version="2099-01-01") as client:
        assert client.negotiated_version is not None and client.negotiated_version.name == "2025-11-25"


async def test_ping_from_the_client(connect: Connect) -> None:
    """basic/utilities/ping: the receiver MUST respond promptly with an empty result."""
    async with connect(Server("s")) as client:
        await asyncio.wait_for(client.send_ping(), WAIT)
        assert client.trace.entries()[-1]["message"]["result"] == {}


async def test_ping_from_the_server(connect: Connect) -> None:
    """basic/utilities/ping: either party may ping (legacy era)."""
    server = Server("s")
    async with connect(server):
        (session,) = server.sessions
        assert await asyncio.wait_for(session.connection.request("ping"), WAIT) == {}


async def test_client_disconnecting_ends_the_server_session(connect: Connect) -> None:
    """basic/lifecycle#shutdown: closing the connection is the shutdown; the server lets go of it."""
    server = Server("s")
    async with connect(server):
        (session,) = server.sessions
    await asyncio.wait_for(session.connection.wait_closed(), WAIT)


# -- scripted peers: behaviour no real Server can produce (memory transport only) ----------------------------
async def test_client_refuses_and_disconnects_when_the_server_picks_an_unsupported_version() -> None:
    """basic/lifecycle#version-negotiation: if the client does not support the version in the server's
    response, it SHOULD disconnect. The server here is played by hand over a memory pair."""
    client_side, server_side = memory_pair()

    async def scripted_server() -> None:
        request = json.loads(await server_side.receive())
        assert request["method"] == "initialize"
        result = {
            "protocolVersion": "1999-01-01",
            "capabilities": {},
            "serverInfo": {"name": "old", "version": "0"},
        }
        await server_side.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        with pytest.raises(TransportClosed):
            await server_side.receive()  # the client hangs up instead of sending notifications/initialized

    peer = asyncio.create_task(scripted_server())
    with pytest.raises(RemoteProtocolError, match="1999-01-01"):
        await Client(client_side, timeout=WAIT, era="legacy").connect()
    await asyncio.wait_for(peer, WAIT)


async def test_client_never_cancels_initialize_even_on_timeout() -> None:
    """basic/lifecycle#initialization: the client MUST NOT cancel initialize. A server that never answers
    makes connect() time out, without a notifications/cancelled on the wire."""
    client_side, server_side = memory_pair()
    client = Client(client_side, timeout=0.1, era="legacy")
    with pytest.raises(RequestTimeoutError):
        await client.connect()
    sent = [json.loads(await asyncio.wait_for(server_side.receive(), WAIT))]
    with pytest.raises(TransportClosed):
        while True:
            sent.append(json.loads(await asyncio.wait_for(server_side.receive(), WAIT)))
    assert [m.get("method") for m in sent] == ["initialize"]


async def test_pending_initialize_fails_when_the_server_hangs_up() -> None:
    """No request waits forever: a transport that ends fails every pending request (DESIGN, reliability)."""
    client_side, server_side = memory_pair()

    async def hang_up() -> None:
        await server_side.receive()
        await server_side.aclose()

    peer = asyncio.create_task(hang_up())
    with pytest.raises(ConnectionClosedError):
        await asyncio.wait_for(Client(client_side, timeout=60).connect(), WAIT)
    await peer


async def test_unknown_method_is_32601(connect: Connect) -> None:
    """basic (error codes): an unknown method is answered with -32601 Method not found."""
    async with connect(Server("s")) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.request("vendor/teleport", {})
        await client.send_ping()  # the connection survives

    assert info.value.code == METHOD_NOT_FOUND
