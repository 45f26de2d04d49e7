"""Issue 20 item 3: a 2026-07-28 response stream that breaks before its answer is re-issued as a new
request with a new id (basic/transports/streamable-http: no resumption in 2026-07-28, "the client MUST
re-issue it with a new id"), a bounded number of times. Before, the call failed at once. Tested with a real
HTTP proxy on 127.0.0.1 in front of our server that cuts the SSE response mid-message."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook import Client, Server
from mcp_notebook.engine.modern_client import MAX_REISSUES
from mcp_notebook.protocol.errors import JSONRPCError
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.local_http import serving

pytestmark = [pytest.mark.timeout(60), pytest.mark.requirement("http-2026-reissue")]
_SKIP = {"host", "content-length", "transfer-encoding", "connection"}


class CuttingProxy:
    """Forwards every POST to ``upstream``; the first ``cuts`` tools/call requests get a stream that breaks
    in the middle of a message instead."""

    def __init__(self, upstream: str, cuts: int) -> None:
        self.upstream, self.cuts = upstream, cuts
        self.calls: list[Any] = []  # the JSON-RPC ids of the tools/call requests seen
        self.served = contextlib.AsyncExitStack()

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/mcp", self.handle)
        base = await self.served.enter_async_context(serving(app))
        return f"{base}/mcp"

    async def stop(self) -> None:
        await self.served.aclose()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        message = json.loads(body)
        if message.get("method") == "tools/call":
            self.calls.append(message["id"])
            if len(self.calls) <= self.cuts:
                response = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
                await response.prepare(request)
                await response.write(b'event: message\ndata: {"jsonrpc": "2.0", "id": ')
                assert request.transport is not None
                request.transport.abort()  # the stream breaks mid-message
                return response
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _SKIP}
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.upstream, data=body, headers=headers) as up,
        ):
            data = await up.read()
            kept = {k: v for k, v in up.headers.items() if k.lower() not in _SKIP}
            return web.Response(status=up.status, body=data, headers=kept)


def make_server() -> Server:
    server = Server("reissue")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


async def run(cuts: int) -> tuple[CuttingProxy, Any]:
    http = StreamableHTTPServer(make_server())
    upstream = await http.start("127.0.0.1", 0)
    proxy = CuttingProxy(upstream, cuts)
    url = await proxy.start()
    try:
        async with Client(url, era="modern", timeout=20, listen=False) as client:
            try:
                outcome: Any = await client.call_tool("add", {"a": 2, "b": 3})
            except JSONRPCError as exc:
                outcome = exc
            notes = [e for e in client.trace if e.direction == "note" and "re-issued" in str(e.message)]
            assert len(notes) == min(cuts, MAX_REISSUES)
    finally:
        await proxy.stop()
        await http.stop()
    return proxy, outcome


async def test_a_broken_2026_stream_is_reissued_with_a_new_id() -> None:
    proxy, result = await run(cuts=1)
    assert not isinstance(result, JSONRPCError), result  # was: the call failed with the broken stream
    assert result["structuredContent"] == {"result": 5}
    assert len(proxy.calls) == 2 and proxy.calls[0] != proxy.calls[1]  # a new request, a new id


async def test_reissuing_is_bounded() -> None:
    proxy, result = await run(cuts=100)
    assert isinstance(result, JSONRPCError) and "lost" in str(result)
    assert len(proxy.calls) == MAX_REISSUES + 1 and len(set(proxy.calls)) == MAX_REISSUES + 1
