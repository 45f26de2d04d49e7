"""Issue 18 item 4: malformed input to the HTTP server is a JSON-RPC error, never HTTP 500, and the body
bounds hold on every path, the OAuth tool-scope check (which reads the body first) included.

Before: with ``--tool-scope``, ``params`` as a list or a string and a body nested 1,010 deep gave 500, and a
slow body was read without the transport's ``body_timeout`` (20 slow bodies held 60 s against 5 s); a
``Last-Event-ID`` with 4,301+ digits (or a non-ASCII digit) gave 500.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Server
from mcp_notebook.auth.resource import ProtectedResource
from mcp_notebook.transports.http_limits import HTTPLimits
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.auth.local_as import LocalAS
from tests.serving._http import INIT

pytestmark = pytest.mark.timeout(60)
WAIT = 20.0
LEGACY = "2025-11-25"


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, dict[str, str]]]:
    local = LocalAS()
    await local.start()
    server = Server("malformed")

    @server.tool
    def add(a: int) -> int:
        """Echo."""
        return a

    resource = ProtectedResource(None, local.issuer, tool_scopes={"add": ["mcp:tools"]})
    http = StreamableHTTPServer(
        server,
        middlewares=[resource.middleware],
        identify=resource.identity,
        limits=HTTPLimits(body_timeout=1.0),
    )
    resource.body_timeout = http.limits.body_timeout
    url = await http.start()
    resource.bind(url)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {local.mint(url)}",
    }
    try:
        yield url, headers
    finally:
        await http.stop()
        await local.stop()


async def _post(http: aiohttp.ClientSession, url: str, body: str, headers: dict[str, str]) -> tuple[int, Any]:
    async with http.post(url, data=body, headers=headers) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text.startswith("{") else text


async def test_malformed_bodies_are_json_rpc_errors(served: tuple[str, dict[str, str]]) -> None:
    url, headers = served
    deep = "[" * 1010 + "]" * 1010
    bodies = [
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": [1, 2]}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "add"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": 5}),
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":'
        + deep
        + "}}}",
        "[" + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["x"]}) + "]",
    ]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
        async with http.post(url, json=INIT, headers=headers) as resp:
            assert resp.status == 200
            session = {
                **headers,
                "Mcp-Session-Id": resp.headers["Mcp-Session-Id"],
                "MCP-Protocol-Version": LEGACY,
            }
        for body in bodies:
            for extra in (headers, session):
                status, answer = await _post(http, url, body, extra)
                assert status < 500, (body[:80], status, answer)
                assert isinstance(answer, dict) and ("error" in answer or "result" in answer), answer
        for last in ("s1_" + "9" * 5000, "s1_\u00b2", "s1_-1", "_"):
            get = {**session, "Accept": "text/event-stream", "Last-Event-ID": last}
            async with http.get(url, headers=get) as resp:
                assert resp.status == 400, (last[:10], resp.status)
                assert (await resp.json())["error"]["code"] < 0


async def test_a_slow_body_is_cut_off_on_the_tool_scope_path(served: tuple[str, dict[str, str]]) -> None:
    url, headers = served
    host, port = url.split("//")[1].split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: {host}:{port}",
            *(f"{k}: {v}" for k, v in headers.items()),
            "Content-Length: 100",
            "",
            "",
        ]
        writer.write("\r\n".join(head).encode() + b'{"jsonrpc":')  # ...and nothing more
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), WAIT)
        assert b" 408 " in status_line, status_line
    finally:
        writer.close()
