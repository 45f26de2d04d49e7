"""The client facing peers that misbehave: each case ends with an outcome, in bounded time.

Real processes (tests/faults/_peer.py) and real HTTP on 127.0.0.1. Time bounds are generous ("< 10 s"): they
separate "fails fast" from "waits for its timeout" (60 s here), not fast from faster.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import pytest
from aiohttp import web

from mcp_notebook import Client
from mcp_notebook.protocol.errors import ConnectionClosedError, JSONRPCError, MCPError, RequestTimeoutError
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport
from mcp_notebook.transports.stdio import StdioClientTransport
from tests.local_http import serving

WAIT = 30.0  # no case comes near this; it only keeps a broken case from hanging the suite
FAST = 10.0  # "fails fast": well under the calls' own 60 s timeout
PEER = Path(__file__).with_name("_peer.py")
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def peer(mode: str, *args: object) -> list[str]:
    return [sys.executable, str(PEER), mode, *map(str, args)]


@pytest.fixture
async def http_peer() -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    proc = await asyncio.create_subprocess_exec(
        *peer("http"), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        assert proc.stdout is not None
        url = (await asyncio.wait_for(proc.stdout.readline(), WAIT)).decode().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url, proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), WAIT)


# ---- HTTP --------------------------------------------------------------------------------------------------
@posix_only
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_http_server_killed_after_the_first_sse_event_fails_the_call_fast(
    http_peer: tuple[str, asyncio.subprocess.Process], era: Literal["legacy", "modern"]
) -> None:
    """Legacy streams carry event ids, so the client may resume them: it must not back off against a port
    nobody listens on any more. 2026-07-28 streams never resume: the request is re-issued (issue 20), which
    finds nobody there, and the call fails at once."""
    url, proc = http_peer
    async with Client(url, timeout=60, era=era) as client:
        assert client.is_modern == (era == "modern")
        progressed = asyncio.Event()
        call = asyncio.ensure_future(client.call_tool("slow", progress_callback=lambda *_: progressed.set()))
        await asyncio.wait_for(progressed.wait(), WAIT)  # the call's SSE stream carried its first event
        os.kill(proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        reissued_and_refused = r"SSE stream|cannot reach|Connection reset|Cannot connect"
        with pytest.raises(MCPError, match="cannot reach" if era == "legacy" else reissued_and_refused):
            await asyncio.wait_for(call, WAIT)
        assert time.monotonic() - killed < FAST  # was 1+2+4+8+16 s of resume backoff against a closed port


INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "serverInfo": {"name": "limited", "version": "1"},
}


@pytest.mark.parametrize("retry_after", ["1", "3600", "\u00b2"])
async def test_http_429_retry_after_is_honoured_for_a_bounded_time(retry_after: str) -> None:
    """A Retry-After that is neither delay-seconds (ASCII digits) nor an HTTP date, such as a superscript
    two (a digit to str.isdigit(), not to float()), is the default 1 s: waited, then sent again."""
    posts: list[float] = []

    async def limited(request: web.Request) -> web.Response:
        body = await request.json()
        posts.append(time.monotonic())
        if len(posts) == 1:
            return web.Response(status=429, text="slow down", headers={"Retry-After": retry_after})
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": INITIALIZED})

    app = web.Application()
    app.router.add_post("/mcp", limited)
    async with serving(app) as base:
        transport = await StreamableHTTPClientTransport.start(f"{base}/mcp")
        client = Client(transport, timeout=60, era="legacy")  # the mock answers only initialize
        if retry_after != "3600":  # waited, then sent again: the handshake succeeds
            await asyncio.wait_for(client.connect(), WAIT)
            assert len(posts) >= 2 and posts[1] - posts[0] >= 0.9
            assert client.server_info["name"] == "limited"
        else:  # longer than the client waits: a clear error at once, not an hour of waiting
            started = time.monotonic()
            with pytest.raises(JSONRPCError, match=r"HTTP 429.*retry after 3600 s"):
                await asyncio.wait_for(client.connect(), WAIT)
            assert len(posts) == 1 and time.monotonic() - started < FAST
        await client.aclose()


# ---- stdio -------------------------------------------------------------------------------------------------
async def test_a_request_over_the_servers_limit_fails_its_own_call_and_the_server_goes_on() -> None:
    async with Client(peer("stdio", 4096), timeout=60) as client:
        started = time.monotonic()
        with pytest.raises(JSONRPCError, match=r"message of \d+ bytes exceeds the limit of 4096"):
            await asyncio.wait_for(client.call_tool("echo", {"text": "z" * 10_000}), WAIT)
        assert time.monotonic() - started < FAST
        result = await asyncio.wait_for(client.call_tool("echo", {"text": "small"}), WAIT)
        assert result["content"][0]["text"] == "small"


@pytest.mark.parametrize("mode", ["stdio", "id-last"])
async def test_an_answer_over_the_clients_limit_fails_its_own_call(mode: str) -> None:
    command = peer(mode, 64 << 20) if mode == "stdio" else peer(mode, 10_000)
    transport = await StdioClientTransport.start(command, max_line_bytes=4096)
    async with Client(transport, timeout=60) as client:
        started = time.monotonic()
        with pytest.raises(JSONRPCError, match=r"message of 10\d\d\d bytes exceeds the limit of 4096"):
            await asyncio.wait_for(client.call_tool("big", {"size": 10_000}), WAIT)
        assert time.monotonic() - started < FAST
        if mode == "stdio":  # the connection goes on
            result = await asyncio.wait_for(client.call_tool("echo", {"text": "after"}), WAIT)
            assert result["content"][0]["text"] == "after"


async def test_an_answer_over_the_limit_whose_id_cannot_be_read_ends_the_connection_at_once() -> None:
    transport = await StdioClientTransport.start(peer("id-hidden", 10_000), max_line_bytes=4096)
    async with Client(transport, timeout=60, era="legacy") as client:
        started = time.monotonic()
        with pytest.raises(MCPError, match=r"message of 10\d\d\d bytes exceeds the limit of 4096, and its"):
            await asyncio.wait_for(client.call_tool("big", {"size": 10_000}), WAIT)
        assert time.monotonic() - started < FAST  # not the call's 60 s timeout


@posix_only
async def test_a_server_killed_mid_call_fails_the_call_with_how_it_died() -> None:
    transport = await StdioClientTransport.start(peer("stdio", 64 << 20))
    async with Client(transport, timeout=60) as client:
        progressed = asyncio.Event()
        call = asyncio.ensure_future(client.call_tool("slow", progress_callback=lambda *_: progressed.set()))
        await asyncio.wait_for(progressed.wait(), WAIT)
        os.kill(transport.pid, signal.SIGKILL)
        killed = time.monotonic()
        with pytest.raises(ConnectionClosedError, match="SIGKILL"):
            await asyncio.wait_for(call, WAIT)
        assert time.monotonic() - killed < FAST


async def test_garbage_on_stdout_is_reported_and_calls_go_on() -> None:
    async with Client(peer("garbage"), timeout=60) as client:
        assert (await asyncio.wait_for(client.call_tool("garble"), WAIT))["content"][0]["text"] == "garbled"
        result = await asyncio.wait_for(client.call_tool("echo", {"text": "still here"}), WAIT)
        assert result["content"][0]["text"] == "still here"
        notes = "\n".join(str(entry) for entry in client.trace.entries())
    for line in ("Server ready", "{not json at all", "[INFO] not a message", "garbage"):
        assert line in notes


@posix_only
async def test_a_peer_that_hangs_times_out_and_is_still_shut_down_in_bounded_time() -> None:
    transport = await StdioClientTransport.start(peer("hang"), close_timeout=1.0)
    client = Client(transport, timeout=2.0)
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError):
        await asyncio.wait_for(client.connect(), WAIT)  # connect() closes what it opened on failure
    assert transport.returncode == -signal.SIGKILL  # it ignored EOF and SIGTERM
    assert time.monotonic() - started < FAST


async def test_an_http_server_that_accepts_and_never_answers_times_out() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # reads the request, answers nothing, until the client hangs up
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        client = Client(f"http://127.0.0.1:{port}/mcp", timeout=2.0, probe_timeout=2.0)
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            await asyncio.wait_for(client.connect(), WAIT)
        assert time.monotonic() - started < FAST
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), WAIT)


async def test_mcp_errors_are_the_only_errors_a_dead_peer_raises() -> None:
    """No aiohttp or OS exception escapes the transport boundary: nothing listens on this port."""
    client = Client("http://127.0.0.1:9/mcp", timeout=5)
    with pytest.raises(MCPError) as info:
        await asyncio.wait_for(client.connect(), WAIT)
    assert "cannot reach" in str(info.value)
