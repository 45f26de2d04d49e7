"""Issue 18 item 2: ``subscriptions/listen`` streams are bounded per principal and in all.

Before, one token opened 1,017 streams, exhausting the file limit while other clients timed out. Now a
principal past ``Server.max_listens_per_principal`` gets -32600 for the next listen (its open streams go
on), and another principal still gets one. 50 attempts here, not 1,000: the bound is what is tested.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Server
from mcp_notebook.protocol import era
from mcp_notebook.transports.http_server import StreamableHTTPServer

pytestmark = pytest.mark.timeout(90)
WAIT = 30.0
MODERN = "2026-07-28"


async def _first_event(
    http: aiohttp.ClientSession, url: str, token: str, request_id: int, opened: list[aiohttp.ClientResponse]
) -> dict[str, Any]:
    """Open a listen stream and return its first message (the ack, or the error); the stream stays open
    (in ``opened``) until the test closes it."""
    params = era.modern_params(
        {"notifications": {"toolsListChanged": True}}, MODERN, {}, {"name": "flood", "version": "1"}
    )
    message = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}
    headers = {
        **era.http_headers("subscriptions/listen", params),
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    resp = await http.post(url, json=message, headers=headers)
    opened.append(resp)
    if resp.content_type == "application/json":
        answer: dict[str, Any] = await resp.json()
        return answer
    while True:
        line = (await asyncio.wait_for(resp.content.readline(), WAIT)).decode()
        if line.startswith("data:"):
            first: dict[str, Any] = json.loads(line[5:])
            return first


async def test_listen_streams_are_capped_per_principal() -> None:
    server = Server("listen-flood")
    server.max_listens_per_principal = 16
    http_server = StreamableHTTPServer(server, tokens={"alice": "alice-secret", "bob": "bob-secret"})
    url = await http_server.start()
    opened: list[aiohttp.ClientResponse] = []
    try:
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=WAIT), connector=aiohttp.TCPConnector(limit=0)
        ) as http:
            first = await asyncio.gather(
                *(_first_event(http, url, "alice-secret", i, opened) for i in range(50))
            )
            acks = [m for m in first if m.get("method") == "notifications/subscriptions/acknowledged"]
            refused = [m for m in first if "error" in m]
            assert len(acks) == 16 and len(refused) == 34, first[:3]
            assert all(m["error"]["code"] == -32600 for m in refused)
            assert "per caller" in refused[0]["error"]["message"]
            other = await _first_event(http, url, "bob-secret", 99, opened)
            assert other.get("method") == "notifications/subscriptions/acknowledged"
            for resp in opened:
                resp.close()
    finally:
        await http_server.stop()


async def test_open_sse_streams_are_capped_per_client() -> None:
    """The transport's own bound: past ``max_streams_per_client`` open SSE streams, a new one is 429."""
    server = Server("stream-flood")
    http_server = StreamableHTTPServer(server, tokens={"alice": "alice-secret", "bob": "bob-secret"})
    http_server.max_streams_per_client = 4
    url = await http_server.start()
    opened: list[aiohttp.ClientResponse] = []
    try:
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=WAIT), connector=aiohttp.TCPConnector(limit=0)
        ) as http:
            first = [await _first_event(http, url, "alice-secret", i, opened) for i in range(6)]
            assert [m.get("method") for m in first[:4]] == ["notifications/subscriptions/acknowledged"] * 4
            assert [r.status for r in opened] == [200] * 4 + [429] * 2
            assert all(m["error"]["code"] == -32029 for m in first[4:])
            other = await _first_event(http, url, "bob-secret", 99, opened)
            assert other.get("method") == "notifications/subscriptions/acknowledged"
            for resp in opened:
                resp.close()
    finally:
        await http_server.stop()
