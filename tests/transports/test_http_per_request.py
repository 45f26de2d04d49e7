"""A 2026-07-28 POST costs the server one handler task, no engine loop of its own (issue 21); no POST
starts a task to read a body that already arrived or to wait for its answer, or frames as SSE an answer it
sends as one JSON body.

A stateless request used to be served like a session: a task running ``Server.serve``, a reader task
waiting on an inbox, then the teardown of both, for every POST. The engine's ``Server.serve_one`` starts the
request's handler at once and ends it when the exchange is over; any other ``Serves`` (a cassette) still gets
its ``serve`` loop per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.protocol import era, modern
from mcp_notebook.protocol.errors import ConnectionClosedError, RequestTimeoutError
from mcp_notebook.protocol.header_params import header_params
from mcp_notebook.transports import (
    _http_common,
    _http_modern,
    _http_sessions,
    _http_streams,
    http_client,
)
from mcp_notebook.transports.base import INLINE, Peer, Transport, wait_event
from mcp_notebook.transports.http_server import StreamableHTTPServer

CALLS = 10


def make_server() -> Server:
    server = Server("one")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


def _with_chatty(server: Server) -> Server:
    """``server`` with a ``chatty`` tool that reports progress before answering (its answer comes on SSE)."""

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Reports progress before answering, so the answer comes on an SSE stream."""
        await ctx.report_progress(1, 2, "half way")
        return "done"

    return server


def _hanging(server: Server) -> tuple[asyncio.Event, asyncio.Event]:
    """A ``hang`` tool on ``server`` that waits until cancelled: (started, cancelled)."""
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool
    async def hang() -> str:
        """Waits until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    return started, cancelled


class _Tasks:
    """The tasks created on the running loop while installed (named by now: a task may be named after
    it is created)."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[Any]] = []

    @property
    def names(self) -> Counter[str]:
        return Counter(task.get_name() for task in self.tasks)

    def __enter__(self) -> _Tasks:
        loop = asyncio.get_running_loop()
        self._previous = loop.get_task_factory()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            task = asyncio.Task(coro, loop=loop, **kwargs)
            self.tasks.append(task)
            return task

        loop.set_task_factory(factory)  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.get_running_loop().set_task_factory(self._previous)


async def test_a_modern_post_runs_no_engine_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    server = make_server()
    loops = 0
    serve = Server.serve

    async def counted_serve(self: Server, transport: Transport, **kwargs: Any) -> None:
        nonlocal loops
        loops += 1
        await serve(self, transport, **kwargs)

    monkeypatch.setattr(Server, "serve", counted_serve)
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern") as client:
            await client.call_tool("add", {"a": 1, "b": 2})  # discovery and the tools list first
            open_before = len(server.sessions)  # the client's subscriptions/listen stream
            with _Tasks() as tasks:
                for i in range(CALLS):
                    result = await client.call_tool("add", {"a": i, "b": 1})
                    assert result["structuredContent"] == {"result": i + 1}
            assert len(server.sessions) == open_before  # each request's connection ended with its answer
    finally:
        await http.stop()
    assert loops == 0
    readers = sum(n for name, n in tasks.names.items() if name.endswith(" reader"))
    assert readers == 0, tasks.names
    handlers = sum(n for name, n in tasks.names.items() if " handle tools/call " in name)
    # the handler runs in the POST's own task (Server.serve_inline; Python 3.11+), else in one task per POST
    assert handlers == (0 if INLINE else CALLS), tasks.names


class OnlyServe:
    """A server that offers only ``serve`` (as a cassette does): the HTTP server runs it per POST."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.served = 0

    async def serve(self, transport: Transport, *, peer: Peer | None = None) -> None:
        self.served += 1
        await self.server.serve(transport, peer=peer)

    def tool_input_schema(self, name: object) -> dict[str, Any] | None:
        return self.server.tool_input_schema(name)


async def test_a_server_without_serve_one_still_answers_modern_posts() -> None:
    wrapped = OnlyServe(make_server())
    http = StreamableHTTPServer(wrapped)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern") as client:
            before = wrapped.served
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result["structuredContent"] == {"result": 5}
            assert wrapped.served > before  # the call (and whatever else the client sent) went to serve
    finally:
        await http.stop()
    assert not wrapped.server.sessions


async def test_stopping_the_server_ends_a_modern_request_in_flight() -> None:
    server = make_server()
    started, cancelled = _hanging(server)

    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    async with Client(url, era="modern") as client:
        call = asyncio.ensure_future(client.call_tool("hang", {}))
        await asyncio.wait_for(started.wait(), 10)
        await http.stop("stopping for the test")
        await asyncio.wait_for(cancelled.wait(), 10)
        with pytest.raises(Exception, match="stopping for the test"):
            await asyncio.wait_for(call, 10)
    assert not server.sessions


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_request_starts_no_task_to_read_its_body_or_wait_for_its_answer(era: str) -> None:
    http = StreamableHTTPServer(make_server())
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era=era) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            with _Tasks() as tasks:
                for i in range(CALLS):
                    await client.call_tool("add", {"a": i, "b": 1})
    finally:
        await http.stop()
    started = Counter(getattr(task.get_coro(), "__qualname__", "?") for task in tasks.tasks)
    assert not started.keys() & {"BaseRequest.read", "Event.wait"}, started


async def test_a_modern_post_leaves_nothing_for_the_cycle_collector() -> None:
    """Its session, engine and streams are freed by reference counting when the exchange ends. They used to
    form cycles (session <-> transport, session -> engine -> transport, engine <-> connection): ~50 objects a
    request for the cycle collector, 90 collections per 1,000 calls, and a full collection now and then."""
    http = StreamableHTTPServer(make_server())
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern") as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            gc.collect()
            gc.disable()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                for i in range(CALLS):
                    await client.call_tool("add", {"a": i, "b": 1})
                gc.collect()
                garbage = Counter(type(o).__qualname__ for o in gc.garbage)
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.enable()
    finally:
        await http.stop()
    ours = {"ServerSession", "Connection", "Session", "_Session", "_Stream", "HTTPSessionTransport", "Trace"}
    assert not garbage.keys() & ours, garbage
    assert sum(garbage.values()) < CALLS, garbage  # not even one object a request


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_answer_sent_as_one_json_body_is_never_framed_as_sse(
    era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Framing is done when an event is written to a stream: a request answered with one JSON body (the
    answer is all there is) costs no SSE framing; one whose stream carries progress first still gets it."""
    framed: list[str] = []
    encode = _http_sessions.encode_event

    def counted(data: str, **kwargs: Any) -> bytes:
        framed.append(data)
        return encode(data, **kwargs)

    monkeypatch.setattr(_http_sessions, "encode_event", counted)
    server = _with_chatty(make_server())
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era=era) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            framed.clear()
            for i in range(CALLS):
                await client.call_tool("add", {"a": i, "b": 1})
            assert framed == []
            heard: list[float] = []
            result = await client.call_tool("chatty", {}, progress_callback=lambda p, t, m: heard.append(p))
            assert result["content"][0]["text"] == "done"
            messages = [data for data in framed if data]  # a 2025-11-25 stream's priming event is empty
    finally:
        await http.stop()
    assert heard == [1]
    assert len(messages) == 2  # the progress notification and the answer, on the request's SSE stream


async def test_a_modern_client_walks_a_tools_schema_once_per_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Mcp-Param-* headers (SEP-2243) need the tool's x-mcp-header properties: found once per tools
    listing, not by walking the schema on every call."""
    walks = 0

    def counted(schema: Any) -> Any:
        nonlocal walks
        walks += 1
        return header_params(schema)

    monkeypatch.setattr(era, "header_params", counted)
    monkeypatch.setattr(http_client, "header_params", counted)
    http = StreamableHTTPServer(make_server())
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern") as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            before = walks
            for i in range(CALLS):
                await client.call_tool("add", {"a": i, "b": 1})
    finally:
        await http.stop()
    assert walks == before


async def test_a_server_walks_a_tools_schema_once_and_waits_with_no_timer_per_post(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Per POST the server neither walks the called tool's schema for x-mcp-header parameters (found once
    per schema) nor arms a timer to watch for a vanished client while the answer is pending (one watcher
    task checks every waiting POST)."""
    walks = 0
    waits = 0

    def counted(schema: Any) -> Any:
        nonlocal walks
        walks += 1
        return header_params(schema)

    async def counted_wait(event: asyncio.Event, timeout: float | None) -> bool:
        nonlocal waits
        waits += 1
        return await wait_event(event, timeout)

    monkeypatch.setattr(_http_modern, "header_params", counted)
    monkeypatch.setattr(modern, "header_params", counted)
    monkeypatch.setattr(_http_streams, "wait_event", counted_wait)
    http = StreamableHTTPServer(make_server())
    url = await http.start("127.0.0.1", 0)
    try:
        for client_era in ("modern", "legacy"):
            async with Client(url, era=client_era) as client:  # type: ignore[arg-type]
                await client.call_tool("add", {"a": 1, "b": 2})
                walks_before, waits_before = walks, waits
                for i in range(CALLS):
                    await client.call_tool("add", {"a": i, "b": 1})
                assert (walks, waits) == (walks_before, waits_before), client_era
    finally:
        await http.stop()


def test_an_edit_of_a_tools_input_schema_as_handed_out_leaves_the_tool_alone() -> None:
    """Server.tool_input_schema is public: what it returns is the same object each time (the transport
    walks it once) but never the tool's own definition, which tools/list advertises (it was, this round)."""
    server = make_server()
    advertised = copy.deepcopy(server.tools.get("add").definition["inputSchema"])  # type: ignore[union-attr]
    schema = server.tool_input_schema("add")
    assert schema == advertised
    assert server.tool_input_schema("add") is schema
    schema["required"] = []  # a caller's own edit
    schema["properties"]["a"]["x-mcp-header"] = "A"
    assert server.tools.page(None)[0][0]["inputSchema"] == advertised


async def test_a_client_hanging_up_before_the_first_message_cancels_the_request() -> None:
    """The watcher finds a POST whose client left while its answer was pending: the tool is cancelled
    (2026 transports#cancellation) and the POST ends."""
    server = make_server()
    started, cancelled = _hanging(server)  # it sends nothing meanwhile
    await _hang_up_on(server, StreamableHTTPServer(server), started, cancelled)


def test_the_watcher_still_finds_a_client_that_hung_up_after_the_server_restarted_on_another_loop() -> None:
    """A server stopped and started again on a new event loop (asyncio.run twice) watches its waiting POSTs
    there too: the watcher's wake-up event is not the first loop's (it was: the watcher died at once, with
    'bound to a different event loop', and no hung-up client was found again)."""
    server = make_server()
    started, cancelled = _hanging(server)
    http = StreamableHTTPServer(server)

    async def first() -> None:
        url = await http.start("127.0.0.1", 0)
        try:
            async with Client(url) as client:
                assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
        finally:
            await http.stop()

    asyncio.run(first())
    asyncio.run(_hang_up_on(server, http, started, cancelled))


async def _hang_up_on(
    server: Server, http: StreamableHTTPServer, started: asyncio.Event, cancelled: asyncio.Event
) -> None:
    """Start ``http``, call ``hang`` and hang up before its answer: the tool is cancelled, the POST ends."""
    url = await http.start("127.0.0.1", 0)
    try:
        params, body = _modern_call("hang")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **era.http_headers("tools/call", params),
        }
        async with aiohttp.ClientSession() as http_client_session:
            post = asyncio.ensure_future(http_client_session.post(url, data=body, headers=headers))
            await asyncio.wait_for(started.wait(), 10)
            post.cancel()  # closes the connection: the client hangs up with no answer yet
            with contextlib.suppress(asyncio.CancelledError):
                await post
        await asyncio.wait_for(cancelled.wait(), 10)
        for _ in range(200):  # the request's connection leaves the server once its POST ended
            if not server.sessions:
                break
            await asyncio.sleep(0.05)
        assert not server.sessions
    finally:
        await http.stop()


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_answer_in_a_json_body_skips_the_client_queue(
    era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HTTP client hands an answer that came as one JSON body straight to the engine when nothing
    received before it waits (no queue, no turn of the loop for the reader task); messages on an SSE stream
    still go through the queue in order, so a progress report is heard before its call returns."""
    queued: list[str] = []
    put = _http_common.ClientInbox.put

    def counted(self: _http_common.ClientInbox, message: str) -> None:
        queued.append(message)
        put(self, message)

    monkeypatch.setattr(_http_common.ClientInbox, "put", counted)
    server = _with_chatty(make_server())
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era=era) as client:  # type: ignore[arg-type]
            await client.call_tool("add", {"a": 1, "b": 2})
            queued.clear()
            for i in range(CALLS):
                result = await client.call_tool("add", {"a": i, "b": 1})
                assert result["structuredContent"] == {"result": i + 1}
            assert queued == []
            heard: list[float] = []
            result = await client.call_tool("chatty", {}, progress_callback=lambda p, t, m: heard.append(p))
            assert result["content"][0]["text"] == "done"
            assert heard == [1]
    finally:
        await http.stop()


def _modern_call(tool: str) -> tuple[dict[str, Any], str]:
    """A 2026-07-28 tools/call of ``tool`` (no arguments): its params and its JSON text."""
    info = {"name": "raw", "version": "0"}
    params = era.modern_params({"name": tool, "arguments": {}}, "2026-07-28", {}, info)
    return params, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


class _Sink:
    """A server transport that keeps what is sent (a POST's stream, in short)."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, message: str, *, related_id: Any = None) -> None:
        self.sent.append(message)

    async def receive(self) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


@pytest.mark.skipif(not INLINE, reason="Task.uncancel: Python 3.11+ (the server keeps a handler task)")
@pytest.mark.parametrize("stopped_by", ["the request's end", "someone else"])
async def test_a_handler_run_in_the_posts_task_takes_back_only_its_own_cancel(stopped_by: str) -> None:
    """Server.serve_inline: ending the request cancels the caller's task while the handler runs; the
    handler ends unanswered and the caller carries on. Any other cancel of that task still propagates."""
    server = make_server()
    started, cancelled = _hanging(server)
    transport = _Sink()
    ends: list[Callable[[str], None]] = []

    async def post() -> str:
        end, run = server.serve_inline(transport, _modern_call("hang")[1], peer=Peer("http", lasting=False))
        ends.append(end)
        assert run is not None
        await run
        await asyncio.sleep(0)  # nothing left pending on this task
        return "carried on"

    task = asyncio.ensure_future(post())
    await asyncio.wait_for(started.wait(), 10)
    if stopped_by == "someone else":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        ends[0]("the client left")
        assert await asyncio.wait_for(task, 10) == "carried on"
    assert cancelled.is_set() and transport.sent == []  # cancelled: no answer
    ends[0]("over")
    assert not server.sessions


async def test_what_a_tool_sends_before_its_answer_is_streamed_while_it_runs() -> None:
    """The handler runs in the POST's own task; its progress still reaches the client while it runs (a
    task streams it): here the tool finishes only once the client heard its progress."""
    server = make_server()
    heard = asyncio.Event()

    @server.tool
    async def gated(ctx: Context) -> str:
        """Reports progress, then waits until the client heard it."""
        await ctx.report_progress(1, 2, "half way")
        await asyncio.wait_for(heard.wait(), 10)
        return "done"

    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern") as client:
            result = await client.call_tool("gated", {}, progress_callback=lambda p, t, m: heard.set())
            assert result["content"][0]["text"] == "done"
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
    finally:
        await http.stop()
    assert not server.sessions


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_modern_call_posts_from_the_callers_own_task(era: str) -> None:
    """2026-07-28: the caller's task runs the POST and reads its answer (no task per POST, no wake-up
    through a future); a legacy request keeps its task (it is cancelled by a POSTed notification)."""
    http = StreamableHTTPServer(make_server())
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era=era) as client:  # type: ignore[arg-type]
            await client.call_tool("add", {"a": 1, "b": 2})
            with _Tasks() as tasks:
                for i in range(CALLS):
                    result = await client.call_tool("add", {"a": i, "b": 1})
                    assert result["structuredContent"] == {"result": i + 1}
    finally:
        await http.stop()
    posts = sum(count for name, count in tasks.names.items() if name.startswith("POST "))
    assert posts == (0 if era == "modern" and INLINE else CALLS), tasks.names


async def test_a_modern_call_timing_out_closes_its_stream_and_sends_nothing() -> None:
    """The timer stops the caller's own exchange: the stream closes (the tool is cancelled, 2026-07-28
    transports#cancellation), no notification is POSTed, the caller gets the timeout, and its task carries
    no cancellation left over."""
    server = make_server()
    started, cancelled = _hanging(server)
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern") as client:
            with pytest.raises(RequestTimeoutError, match=r"timed out after 0\.2 s"):
                await client.call_tool("hang", {}, timeout=0.2)
            assert started.is_set()
            await asyncio.wait_for(cancelled.wait(), 10)
            await asyncio.sleep(0)  # would raise CancelledError if the stop were left pending
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
            out = [entry.message for entry in client.trace if entry.direction == "out"]
            cancels = [m for m in out if m.get("method") == "notifications/cancelled"]
            # inline (3.11+), the cut exchange is noted, not recorded as a message; either way none is POSTed
            assert not cancels or not INLINE
    finally:
        await http.stop()


async def test_closing_the_client_ends_a_modern_call_in_its_exchange_with_the_reason() -> None:
    """The connection's end stops a caller busy with its own exchange: it gets the connection's reason,
    not a cancellation, and the server's tool is cancelled (the stream closed)."""
    server = make_server()
    started, cancelled = _hanging(server)
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        client = Client(url, era="modern")
        await client.__aenter__()
        call = asyncio.ensure_future(client.call_tool("hang", {}))
        await asyncio.wait_for(started.wait(), 10)
        await client.__aexit__(None, None, None)
        with pytest.raises(ConnectionClosedError):
            await asyncio.wait_for(call, 10)
        await asyncio.wait_for(cancelled.wait(), 10)
    finally:
        await http.stop()
