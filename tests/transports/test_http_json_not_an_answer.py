"""A POST's JSON body that does not answer the POSTed request (h7review, round 7): the exchange is over and
nothing else can bring the answer (transports: a JSON body is the one response to the request), so the
request fails at once with why, in both eras; before, it waited out the caller's whole timeout (60 s by
default) for an answer that could not come."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from mcp_notebook.protocol import modern
from mcp_notebook.protocol.jsonrpc import Request, serialize
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport
from tests.local_http import serving
from tests.waiting import WAIT

ANSWERS: dict[str, Any] = {
    "another id": {"jsonrpc": "2.0", "id": 99, "result": {}},
    "an empty batch": [],
    "a notification": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
}


@contextlib.asynccontextmanager
async def request_answered_with(
    response: Callable[[], web.Response], era: str
) -> AsyncIterator[StreamableHTTPClientTransport]:
    """A client transport whose request 7 (tools/call, in ``era``) is sent to a server answering every POST
    with a ``response()``; the transport is closed when the block ends."""

    async def answer(request: web.Request) -> web.Response:
        return response()

    app = web.Application()
    app.router.add_post("/", answer)
    params: dict[str, Any] = {"name": "t"}
    if era == "modern":
        params["_meta"] = {modern.META_PROTOCOL_VERSION: "2026-07-28"}
    async with serving(app) as base:
        transport = await StreamableHTTPClientTransport.start(f"{base}/")
        try:
            await transport.send(serialize(Request(7, "tools/call", params)))
            yield transport
        finally:
            await transport.aclose()


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("body", list(ANSWERS))
async def test_a_json_body_that_does_not_answer_fails_the_request_at_once(era: str, body: str) -> None:
    async with request_answered_with(lambda: web.json_response(ANSWERS[body]), era) as transport:
        ours = None
        while ours is None:  # what the server sent comes first (the engine ignores it), then the error
            received = json.loads(await asyncio.wait_for(transport.receive(), WAIT))
            ours = received if isinstance(received, dict) and received.get("id") == 7 else None
    assert "did not answer request 7" in ours["error"]["message"]
