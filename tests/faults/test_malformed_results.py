"""A server answering with results of the wrong shape: the client raises an error naming the method and the
JSON path, instead of handing the user a result that breaks later (or reads ``"isError": "yes"`` as False).

The peer is a hand-written server on the other end of an in-memory transport: it answers what the test
tells it to, which no correct server would.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_notebook import Client
from mcp_notebook.protocol.errors import RemoteProtocolError
from mcp_notebook.protocol.shapes import MalformedResult
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.memory import MemoryTransport, memory_pair

WAIT = 20.0
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
    "serverInfo": {"name": "liar", "version": "1"},
}
TOOLS = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}


async def lying_server(transport: MemoryTransport, answers: dict[str, Any]) -> None:
    try:
        while True:
            message = json.loads(await transport.receive())
            if "id" in message and "method" in message:
                result = answers.get(message["method"], {})
                await transport.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
    except TransportClosed:
        pass


async def client_of(answers: dict[str, Any]) -> tuple[Client, asyncio.Task[None]]:
    ours, theirs = memory_pair()
    server = asyncio.ensure_future(
        lying_server(theirs, {"initialize": INITIALIZE, "tools/list": TOOLS, **answers})
    )
    return Client(ours, timeout=WAIT), server


@pytest.mark.parametrize(
    ("result", "where"),
    [
        ({"content": "not a list"}, r"\$\.content: expected an array, got a string"),
        ({"content": [], "isError": "yes"}, r"\$\.isError: expected a boolean, got a string"),
        ({}, r"\$: the required member 'content' is missing"),
        ({"content": [{"type": "text"}]}, r"\$\.content\[0\]: the required member 'text' is missing"),
        ({"content": [{"type": "video"}]}, r"\$\.content\[0\]\.type: expected one of 'text', .*got 'video'"),
        ({"content": [{"type": "image", "data": 3, "mimeType": "image/png"}]}, r"\$\.content\[0\]\.data"),
        ({"content": [], "structuredContent": [1]}, r"\$\.structuredContent: expected an object"),
    ],
)
async def test_a_malformed_tool_result_is_an_error_naming_method_and_path(result: Any, where: str) -> None:
    client, server = await client_of({"tools/call": result})
    async with client:
        with pytest.raises(MalformedResult, match=r"^tools/call result is malformed at " + where):
            await asyncio.wait_for(client.call_tool("t"), WAIT)
    await asyncio.wait_for(server, WAIT)


async def test_a_result_that_is_not_an_object_fails_its_call_at_once() -> None:
    client, server = await client_of({"tools/call": "a string"})
    async with client:
        with pytest.raises(RemoteProtocolError, match=r'^tools/call: "result" must be an object'):
            await asyncio.wait_for(client.call_tool("t"), WAIT)  # was: waited for its timeout
    await asyncio.wait_for(server, WAIT)


async def test_a_server_that_pages_forever_fails_the_listing() -> None:
    client, server = await client_of({"tools/list": {"tools": [], "nextCursor": "again"}})
    async with client:
        with pytest.raises(RemoteProtocolError, match="tools/list: the server sent the cursor 'again' twice"):
            await asyncio.wait_for(client.list_tools(), WAIT)  # was: a loop without end
    await asyncio.wait_for(server, WAIT)


async def test_a_well_formed_result_with_extra_keys_passes() -> None:
    result = {"content": [{"type": "text", "text": "ok", "extra": 1}], "isError": False, "vendorKey": {}}
    client, server = await client_of({"tools/call": result})
    async with client:
        assert await asyncio.wait_for(client.call_tool("t"), WAIT) == result
    await asyncio.wait_for(server, WAIT)


@pytest.mark.parametrize(
    ("method", "answers", "where"),
    [
        # one malformed tool is left out by list_tools (issue 20: tests/spec/test_contracts_bad_tool.py);
        # a list that is not a list still fails the result
        ("tools/list", {"tools/list": {"tools": "none"}}, r"\$\.tools: expected an array"),
        ("prompts/get", {"prompts/get": {"messages": [{"role": "robot"}]}}, r"\$\.messages\[0\]\.role"),
        ("resources/read", {"resources/read": {"contents": None}}, r"\$\.contents: expected an array"),
    ],
)
async def test_other_methods_are_checked_too(method: str, answers: dict[str, Any], where: str) -> None:
    client, server = await client_of(answers)
    async with client:
        with pytest.raises(MalformedResult, match=f"^{method} result is malformed at {where}"):
            await asyncio.wait_for(client.request(method, {"name": "p", "uri": "x://y"}), WAIT)
    await asyncio.wait_for(server, WAIT)


async def test_a_malformed_initialize_result_fails_connect() -> None:
    client, server = await client_of({"initialize": {**INITIALIZE, "serverInfo": {"name": "no version"}}})
    with pytest.raises(
        MalformedResult, match=r"^initialize result is malformed at \$\.serverInfo: .*'version'"
    ):
        await asyncio.wait_for(client.connect(), WAIT)
    await asyncio.wait_for(server, WAIT)
