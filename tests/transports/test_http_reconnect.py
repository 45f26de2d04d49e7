"""Resuming a request's SSE stream the server closed (SSE polling, 2025-11-25, SEP-1699).

The client MUST wait the server's ``retry`` before it reconnects: counted from the moment the stream ended,
with no backoff added on top and no other wait first (the conformance suite's ``sse-retry`` scenario fails
a client that reconnects early, or late by more than the retry value). Here a real aiohttp server on
127.0.0.1 closes a call's stream twice before answering; every wait the transport makes is recorded.
Only lower bounds are asserted on real time (the MUST); upper bounds would be timing assertions (bench/).
"""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from mcp_notebook.transports import http_client
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport
from mcp_notebook.transports.sse import encode_event
from tests.local_http import serving

WAIT = 10.0
RETRY_MS = 300


class ClosingServer:
    """``tools/call`` gets a priming event (id, ``retry``) and a closed stream; the first two resuming GETs
    are closed the same way, the third carries the answer. Times are the loop's clock (shared with the
    client, which runs on the same loop)."""

    def __init__(self) -> None:
        self.closed_at: list[float] = []
        self.get_at: list[float] = []
        self.last_event_ids: list[str | None] = []
        self.call_id: Any = None
        self._events = 0

    async def post(self, request: web.Request) -> web.StreamResponse:
        message = json.loads(await request.text())
        if "id" not in message:
            return web.Response(status=202)
        if message["method"] != "tools/call":
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return web.Response(text=body, content_type="application/json")
        self.call_id = message["id"]
        return await self._prime_and_close(request)

    async def get(self, request: web.Request) -> web.StreamResponse:
        last = request.headers.get("Last-Event-ID")
        if last is None:
            return web.Response(status=405)  # no standalone stream here
        self.get_at.append(asyncio.get_running_loop().time())
        self.last_event_ids.append(last)
        if len(self.get_at) < 3:
            return await self._prime_and_close(request)
        response = await self._open(request)
        answer = {
            "jsonrpc": "2.0",
            "id": self.call_id,
            "result": {"content": [], "resumed": len(self.get_at)},
        }
        self._events += 1
        await response.write(encode_event(json.dumps(answer), event_id=f"e{self._events}"))
        await response.write_eof()
        return response

    async def _open(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        return response

    async def _prime_and_close(self, request: web.Request) -> web.StreamResponse:
        response = await self._open(request)
        self._events += 1
        await response.write(encode_event("", event_id=f"e{self._events}", retry=RETRY_MS))
        await response.write_eof()
        self.closed_at.append(asyncio.get_running_loop().time())
        return response


@pytest.fixture
async def closing_server() -> AsyncIterator[tuple[ClosingServer, str]]:
    server = ClosingServer()
    app = web.Application()
    app.router.add_post("/mcp", server.post)
    app.router.add_get("/mcp", server.get)
    async with serving(app) as base:
        yield server, f"{base}/mcp"


async def test_a_closed_stream_is_resumed_after_exactly_the_servers_retry(
    closing_server: tuple[ClosingServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, url = closing_server
    waits: list[float] = []

    async def recorded_sleep(delay: float) -> None:
        waits.append(delay)
        await asyncio.sleep(delay)

    # every sleep the HTTP client makes, and only its own (aiohttp's are untouched)
    monkeypatch.setattr(
        http_client, "asyncio", types.SimpleNamespace(**{**vars(asyncio), "sleep": recorded_sleep})
    )
    transport = await StreamableHTTPClientTransport.start(url)
    try:
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {}},
        }
        await transport.send(json.dumps(call))
        answer = json.loads(await asyncio.wait_for(transport.receive(), WAIT))
    finally:
        await transport.aclose()

    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"content": [], "resumed": 3}}
    assert server.last_event_ids == ["e1", "e2", "e3"]  # each GET resumes after the last event seen
    # one wait per reconnect, never longer than the server's retry (no backoff growing on top of it)
    assert len(waits) == 3, waits
    assert all(0 < wait <= RETRY_MS / 1000 for wait in waits), waits
    # and the MUST: no reconnect before ``retry`` has passed since the server closed the stream
    for closed, resumed in zip(server.closed_at, server.get_at, strict=True):
        assert resumed - closed >= RETRY_MS / 1000, (closed, resumed)
