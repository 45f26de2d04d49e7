"""A Streamable HTTP server that goes down and comes back (a restart, a deploy): the client's calls fail at
once while nothing listens, with why, and work again when it is back, in both eras, without the person
connecting again. Before, the first refused connection closed the client for good: every later call said
"cannot reach the server" even with the server back (only a legacy 404 started a new session). A client
closed by this side stays closed; requests that meet the closed connection together make one new
connection, not one each. A server back but not ready yet (503 while it starts) fails that call, and the
next one connects again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from mcp_notebook import Client, Server
from mcp_notebook.errors import ConnectionClosedError, MCPError
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.local_http import serving

WAIT = 30.0


def _server() -> Server:
    server = Server("restarting")

    @server.tool
    def ping_me() -> str:
        return "pong"

    return server


async def _up(port: int = 0) -> tuple[StreamableHTTPServer, str, int]:
    http = StreamableHTTPServer(_server())
    url = await http.start(port=port)
    return http, url, int(url.split(":")[2].split("/")[0])


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_calls_work_again_once_the_server_is_back(era: str) -> None:
    http, url, port = await _up()
    async with Client(url, era=era) as client:
        assert _text(await client.call_tool("ping_me")) == "pong"
        await http.stop()
        with pytest.raises(ConnectionClosedError, match="cannot reach the server"):
            await asyncio.wait_for(client.call_tool("ping_me"), WAIT)  # nothing listens: fails at once
        with pytest.raises(ConnectionClosedError, match="cannot reach the server"):
            await asyncio.wait_for(client.call_tool("ping_me"), WAIT)  # still down: tried again, fails again
        http, _, _ = await _up(port)  # the same address, a new process's worth of server
        try:
            assert _text(await asyncio.wait_for(client.call_tool("ping_me"), WAIT)) == "pong"
            assert _text(await asyncio.wait_for(client.call_tool("ping_me"), WAIT)) == "pong"
            notes = [entry.raw for entry in client.trace if "connecting again" in entry.raw]
            assert notes and all("unreachable" in note for note in notes)
        finally:
            await http.stop()


async def test_a_client_closed_by_this_side_stays_closed() -> None:
    http, url, _ = await _up()
    try:
        client = await Client(url, era="legacy").connect()
        await client.aclose()
        with pytest.raises(ConnectionClosedError, match="closed by this side"):
            await asyncio.wait_for(client.call_tool("ping_me"), WAIT)
        assert not http.sessions or all(s.closed for s in http.sessions.values())
    finally:
        await http.stop()


async def test_requests_meeting_the_closed_connection_together_make_one_new_connection() -> None:
    http, url, port = await _up()
    async with Client(url, era="legacy") as client:
        await http.stop()
        with pytest.raises(ConnectionClosedError):
            await asyncio.wait_for(client.call_tool("ping_me"), WAIT)
        http, _, _ = await _up(port)
        try:
            results = await asyncio.wait_for(
                asyncio.gather(*(client.call_tool("ping_me") for _ in range(8))), WAIT
            )
            assert [_text(r) for r in results] == ["pong"] * 8
            assert len(http.sessions) == 1  # one initialize for all eight, not eight sessions
        finally:
            await http.stop()


async def test_a_server_back_but_not_ready_yet_is_tried_again() -> None:
    async def starting(request: web.Request) -> web.Response:
        return web.Response(status=503, text="starting")

    app = web.Application()
    app.router.add_route("*", "/mcp", starting)
    http, url, port = await _up()
    async with Client(url, era="legacy") as client:
        await http.stop()
        with pytest.raises(ConnectionClosedError, match="cannot reach the server"):
            await asyncio.wait_for(client.call_tool("ping_me"), WAIT)
        async with serving(app, port=port):  # something answers at the address, but not MCP yet
            with pytest.raises(MCPError, match="503"):
                await asyncio.wait_for(client.call_tool("ping_me"), WAIT)
        http, _, _ = await _up(port)
        try:
            assert _text(await asyncio.wait_for(client.call_tool("ping_me"), WAIT)) == "pong"
            assert any("the last attempt to connect again failed" in entry.raw for entry in client.trace)
        finally:
            await http.stop()


async def test_a_request_made_before_the_server_went_away_awaited_after_it_is_back_connects_again() -> None:
    """A 2026-07-28 request's coroutine is bound to the connection of the moment it was made (141ff90: no
    coroutine around it); awaited after that connection closed (the server went away, came back), it sends
    on the client's connection of the moment it runs, connecting again, as a request made then does."""
    http, url, port = await _up()
    async with Client(url, era="modern") as client:
        assert _text(await client.call_tool("ping_me")) == "pong"
        early = client.request("tools/call", {"name": "ping_me"})  # made now, awaited below
        await http.stop()
        with pytest.raises(ConnectionClosedError, match="cannot reach the server"):
            await asyncio.wait_for(client.call_tool("ping_me"), WAIT)  # the connection closes
        http, _, _ = await _up(port)
        try:
            assert _text(await asyncio.wait_for(early, WAIT)) == "pong"
        finally:
            await http.stop()
