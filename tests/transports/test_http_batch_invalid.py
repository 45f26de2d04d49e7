"""A 2025-03-26 session's POSTed batch with no request in it and something that is no message (h7review,
round 7): ``[]``, ``[1, 2]``, a notification beside a number. The server cannot accept it (JSON-RPC 2.0
section 6: an empty batch or a non-message is an invalid request), so the POST gets 400 with the JSON-RPC
error (transports: "If the server cannot accept the input, it MUST return an HTTP error status code"), as a
single invalid message does; before, 202 Accepted, and the error went to the session's GET stream, if
any. A batch of valid notifications is still 202."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from mcp_notebook import Server
from mcp_notebook.transports.http_server import StreamableHTTPServer

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
async def session() -> AsyncIterator[tuple[aiohttp.ClientSession, str, dict[str, str]]]:
    http = StreamableHTTPServer(Server("batches"))
    url = await http.start()
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    try:
        async with aiohttp.ClientSession() as raw:
            async with raw.post(url, data=json.dumps(init), headers=HEADERS) as resp:
                assert resp.status == 200
                headers = {**HEADERS, "Mcp-Session-Id": resp.headers["Mcp-Session-Id"]}
                headers["MCP-Protocol-Version"] = "2025-03-26"
            yield raw, url, headers
    finally:
        await http.stop()


@pytest.mark.parametrize("body", ["[]", "[1, 2]", '[{"jsonrpc": "2.0", "method": "notifications/x"}, 5]'])
async def test_a_batch_of_no_request_with_an_invalid_item_is_refused(
    session: tuple[aiohttp.ClientSession, str, dict[str, str]], body: str
) -> None:
    raw, url, headers = session
    async with raw.post(url, data=body, headers=headers) as resp:
        assert resp.status == 400
        assert (await resp.json())["error"]["code"] == -32600


async def test_a_batch_of_notifications_is_accepted(
    session: tuple[aiohttp.ClientSession, str, dict[str, str]],
) -> None:
    raw, url, headers = session
    body = json.dumps([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}])
    async with raw.post(url, data=body, headers=headers) as resp:
        assert resp.status == 202
