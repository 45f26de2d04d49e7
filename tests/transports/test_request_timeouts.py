"""Request timeouts on one loop timer per connection (engine/pending.py ``Timers``): each request still
times out after its own timeout, whatever the others' are, and a finished request leaves nothing armed."""

from __future__ import annotations

import asyncio

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol.errors import RequestTimeoutError

WAIT = 10.0  # bounds a broken case; the timeouts under test are far shorter


def hanging_server() -> Server:
    server = Server("timeouts")

    @server.tool
    async def hang() -> str:
        """Never answers."""
        await asyncio.Event().wait()
        return "never"

    @server.tool
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


async def test_a_shorter_timeout_armed_after_a_longer_one_still_fires_first() -> None:
    async with Client(hanging_server()) as client:
        slow = asyncio.ensure_future(client.call_tool("hang", {}, timeout=60))
        await asyncio.sleep(0.01)
        with pytest.raises(RequestTimeoutError, match=r"0\.05 s"):
            await asyncio.wait_for(client.call_tool("hang", {}, timeout=0.05), WAIT)
        assert not slow.done()  # its own timeout is far off
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)


async def test_each_request_times_out_after_its_own_timeout() -> None:
    async with Client(hanging_server()) as client:
        calls = [asyncio.ensure_future(client.call_tool("hang", {}, timeout=t)) for t in (0.2, 0.05, 0.1)]
        done = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), WAIT)
        assert [type(outcome) for outcome in done] == [RequestTimeoutError] * 3
        assert [str(outcome).split(" after ")[1] for outcome in done] == ["0.2 s", "0.05 s", "0.1 s"]


async def test_answered_requests_leave_no_timeout_armed() -> None:
    async with Client(hanging_server()) as client:
        for _ in range(5):
            await client.call_tool("echo", {"text": "x"}, timeout=0.05)
        timers = client.connection._timers
        assert not timers._armed
        await asyncio.sleep(0.1)  # past every timeout: the loop timer fires and expires nothing
        result = await client.call_tool("echo", {"text": "y"}, timeout=0.05)
        assert result["content"] == [{"type": "text", "text": "y"}]


async def test_a_closed_connection_stops_its_timer() -> None:
    client = Client(hanging_server())
    await client.connect()
    await client.call_tool("echo", {"text": "x"}, timeout=30)
    timers = client.connection._timers
    assert timers._handle is not None  # set for the first request, left for the next
    await client.aclose()
    assert timers._handle is None and not timers._armed
