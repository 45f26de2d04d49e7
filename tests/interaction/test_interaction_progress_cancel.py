"""Progress, timeouts, cancellation and a server that disappears mid-call.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress (MCP-NOTES §3.5),
.../basic/utilities/cancellation (§3.6), .../basic/lifecycle#timeouts (§2.1).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from mcp_notebook.engine.client import Client
from mcp_notebook.engine.server import Server
from mcp_notebook.protocol.errors import ConnectionClosedError, RequestTimeoutError
from mcp_notebook.tools import Context
from mcp_notebook.transports.memory import memory_pair
from tests.interaction._harness import WAIT, Connect


def cancellations_sent(client: Client) -> list[dict[str, Any]]:
    return [
        e.message["params"]
        for e in client.trace
        if e.direction == "out" and e.message.get("method") == "notifications/cancelled"
    ]


def request_ids_sent(client: Client, method: str) -> list[Any]:
    return [
        e.message["id"] for e in client.trace if e.direction == "out" and e.message.get("method") == method
    ]


class Blocker:
    """A tool that starts, then waits until cancelled; the test sees both through events."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.ctx_cancelled: bool | None = None

    async def tool(self, ctx: Context) -> str:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.ctx_cancelled = ctx.cancelled
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


def blocking_server() -> tuple[Server, Blocker]:
    server = Server("s")
    blocker = Blocker()
    server.add_tool(blocker.tool, name="block")
    return server, blocker


class HandClient:
    """A 2025-11-25 client played by hand over a memory pair: each message as written, initialized."""

    def __init__(self, server: Server) -> None:
        self.side, server_side = memory_pair()
        self.serving = asyncio.create_task(server.serve(server_side))

    @classmethod
    async def initialized(cls, server: Server) -> HandClient:
        hand = cls(server)
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hand", "version": "0"},
        }
        await hand.send({"id": 100, "method": "initialize", "params": init})
        await hand.answer(100)
        await hand.send({"method": "notifications/initialized"})
        return hand

    async def send(self, message: dict[str, Any]) -> None:
        await self.side.send(json.dumps({"jsonrpc": "2.0", **message}))

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The answer to ``request_id`` (what comes before it is skipped)."""
        while True:
            message: dict[str, Any] = json.loads(await asyncio.wait_for(self.side.receive(), WAIT))
            if message.get("id") == request_id:
                return message

    async def close(self) -> None:
        await self.side.aclose()
        await asyncio.wait_for(self.serving, WAIT)


# -- progress ------------------------------------------------------------------------------------------------
async def test_progress_callback_receives_increasing_progress(connect: Connect) -> None:
    """basic/utilities/progress: the requestor sends a progressToken; the receiver's notifications carry it,
    progress MUST increase, total and message are optional."""
    server = Server("s")

    @server.tool
    async def work(ctx: Context) -> str:
        for i in range(1, 6):
            await ctx.report_progress(i * 10, 50, f"step {i}")
        return "done"

    seen: list[tuple[float, float | None, str | None]] = []
    async with connect(server) as client:
        result = await client.call_tool("work", progress_callback=lambda p, t, m: seen.append((p, t, m)))
        sent = [
            e.message
            for e in client.trace
            if e.direction == "out" and e.message.get("method") == "tools/call"
        ]
        received = [e.message for e in client.trace if e.message.get("method") == "notifications/progress"]

    assert result["content"] == [{"type": "text", "text": "done"}]
    assert seen == [
        (10, 50, "step 1"),
        (20, 50, "step 2"),
        (30, 50, "step 3"),
        (40, 50, "step 4"),
        (50, 50, "step 5"),
    ]
    token = sent[0]["params"]["_meta"]["progressToken"]
    assert {n["params"]["progressToken"] for n in received} == {token}


async def test_no_progress_without_a_progress_token(connect: Connect) -> None:
    """basic/utilities/progress: progress is sent only for requests that carried a progressToken."""
    server = Server("s")

    @server.tool
    async def work(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        return "done"

    async with connect(server) as client:
        await client.call_tool("work")
        assert not [e for e in client.trace if e.message.get("method") == "notifications/progress"]


async def test_progress_resets_the_timeout(connect: Connect) -> None:
    """basic/lifecycle#timeouts: the receiver MAY reset the timeout clock on progress. A tool working for
    1.5 s and reporting every 0.1 s finishes under a 0.75 s timeout (a window that leaves 2 busy cores room
    for a stall between two reports; the whole work still outlasts it twice)."""
    server = Server("s")

    @server.tool
    async def steady(ctx: Context) -> str:
        for i in range(1, 16):
            await asyncio.sleep(0.1)  # the tool's own work, not a wait for the test's sake
            await ctx.report_progress(i, 15)
        return "finished"

    ticks: list[float] = []
    async with connect(server) as client:
        result = await client.call_tool(
            "steady", timeout=0.75, progress_callback=lambda p, t, m: ticks.append(p)
        )

    assert result["content"][0]["text"] == "finished"
    assert ticks == list(range(1, 16))


async def test_max_timeout_bounds_a_call_despite_progress(connect: Connect) -> None:
    """basic/lifecycle#timeouts: a maximum timeout SHOULD always be enforced, regardless of progress."""
    server = Server("s")
    stopped = asyncio.Event()

    @server.tool
    async def forever(ctx: Context) -> str:
        i = 0
        try:
            while True:
                i += 1
                await asyncio.sleep(0.02)
                await ctx.report_progress(i)
        except asyncio.CancelledError:
            stopped.set()
            raise

    async with connect(server) as client:
        # the wait that ended is max_timeout's, not what was left of the last window (was "after 0.013 s");
        # progress every 0.02 s against a 1 s window: only a stall of a second on busy cores ends it first
        with pytest.raises(RequestTimeoutError, match=r"timed out after 1\.5 s \(max_timeout\)"):
            await client.call_tool("forever", timeout=1.0, max_timeout=1.5, progress_callback=lambda *a: None)
        await asyncio.wait_for(stopped.wait(), WAIT)


# -- timeouts ------------------------------------------------------------------------------------------------
async def test_silent_tool_times_out_and_the_server_sees_the_cancellation(connect: Connect) -> None:
    """basic/lifecycle#timeouts: on timeout the sender SHOULD issue notifications/cancelled and stop waiting;
    cancellation#behavior-requirements: the receiver SHOULD stop processing."""
    server, blocker = blocking_server()
    async with connect(server) as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("block", timeout=0.2)
        await asyncio.wait_for(blocker.cancelled.wait(), WAIT)
        (call_id,) = request_ids_sent(client, "tools/call")
        (cancel,) = cancellations_sent(client)

    assert blocker.ctx_cancelled is True
    assert cancel["requestId"] == call_id


async def test_silent_sync_tool_sees_ctx_cancelled_after_timeout(connect: Connect) -> None:
    """The same for a plain ``def`` tool running in a thread: it cannot be interrupted, so ctx.cancelled is
    how it learns it should stop (cancellation#behavior-requirements)."""
    server = Server("s")
    started = threading.Event()
    noticed = threading.Event()
    unit_of_work = threading.Event()  # never set: waiting on it for 0.01 s stands for a chunk of work

    @server.tool
    def grind(ctx: Context) -> str:
        started.set()
        while not ctx.cancelled:
            unit_of_work.wait(0.01)
        noticed.set()
        return "stopped"

    async with connect(server) as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("grind", timeout=0.2)
        assert await asyncio.to_thread(noticed.wait, WAIT)
    assert started.is_set()


async def test_late_result_after_timeout_is_ignored(connect: Connect) -> None:
    """cancellation#behavior-requirements: the sender SHOULD ignore a response that arrives after
    cancelling. A tool that ignores cancellation answers late; the connection stays usable."""
    server = Server("s")
    release = asyncio.Event()

    @server.tool
    async def stubborn() -> str:
        while True:
            try:
                await release.wait()
                return "late"
            except asyncio.CancelledError:
                continue  # deliberately ignores the cancellation

    async with connect(server) as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("stubborn", timeout=0.1)
        release.set()
        await client.send_ping()
        assert (await client.call_tool("stubborn"))["content"][0]["text"] == "late"


# -- cancellation by the caller ------------------------------------------------------------------------------
async def test_cancelling_the_awaiting_task_sends_cancelled_and_cancels_the_handler(connect: Connect) -> None:
    """basic/utilities/cancellation: the requestor sends notifications/cancelled {requestId, reason?}; the
    receiver SHOULD stop processing and not respond."""
    server, blocker = blocking_server()
    async with connect(server) as client:
        call = asyncio.create_task(client.call_tool("block"))
        await asyncio.wait_for(blocker.started.wait(), WAIT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(blocker.cancelled.wait(), WAIT)
        (call_id,) = request_ids_sent(client, "tools/call")
        (cancel,) = cancellations_sent(client)
        await client.send_ping()  # still usable
        answers = [e.message for e in client.trace if e.direction == "in" and e.message.get("id") == call_id]

    assert cancel["requestId"] == call_id
    assert blocker.ctx_cancelled is True
    assert answers == []  # the server did not respond to the cancelled request


# -- disconnects ---------------------------------------------------------------------------------------------
async def test_server_disconnect_mid_call_fails_the_pending_call_promptly(connect: Connect) -> None:
    """No request waits forever: when the transport ends, every pending request fails at once with
    ConnectionClosedError (DESIGN "reliability"; basic/lifecycle#shutdown)."""
    server, blocker = blocking_server()
    async with connect(server, timeout=60) as client:
        call = asyncio.create_task(client.call_tool("block"))
        await asyncio.wait_for(blocker.started.wait(), WAIT)
        await connect.drop_server(server)
        with pytest.raises(ConnectionClosedError):
            await asyncio.wait_for(call, WAIT)
        await asyncio.wait_for(blocker.cancelled.wait(), WAIT)  # the server stopped the handler too
        if connect.transport == "http":
            # transports#session-management: the server ended the session, so the client MUST start a new
            # one; the next request runs there.
            await asyncio.wait_for(client.send_ping(), WAIT)
        else:
            with pytest.raises(ConnectionClosedError):
                await client.send_ping()


async def test_client_disconnect_mid_call_cancels_the_server_handler(connect: Connect) -> None:
    """basic/lifecycle#shutdown: when the client goes away, the server stops work for it."""
    server, blocker = blocking_server()
    async with connect(server) as client:
        call = asyncio.create_task(client.call_tool("block"))
        await asyncio.wait_for(blocker.started.wait(), WAIT)
    with pytest.raises(ConnectionClosedError):
        await asyncio.wait_for(call, WAIT)
    await asyncio.wait_for(blocker.cancelled.wait(), WAIT)


# -- scripted client: behaviour the Client never produces (memory transport only) ----------------------------
async def test_cancellation_with_a_boolean_request_id_is_ignored() -> None:
    """cancellation#behavior-requirements: invalid cancellation notifications SHOULD be ignored. Request ids
    are strings or integers (basic#requests), so requestId true must not cancel request 1 (True == 1 in
    Python). The client is played by hand over a memory pair."""
    server, blocker = blocking_server()
    hand = await HandClient.initialized(server)
    send, answer = hand.send, hand.answer
    await send({"id": 1, "method": "tools/call", "params": {"name": "block", "arguments": {}}})
    await asyncio.wait_for(blocker.started.wait(), WAIT)
    await send({"method": "notifications/cancelled", "params": {"requestId": True}})
    await send({"id": 2, "method": "ping"})
    await answer(2)
    await send({"id": 3, "method": "ping"})
    await answer(3)
    cancelled_by_bool = blocker.cancelled.is_set()

    await send({"method": "notifications/cancelled", "params": {"requestId": 1}})
    await asyncio.wait_for(blocker.cancelled.wait(), WAIT)
    await hand.close()
    assert not cancelled_by_bool


async def test_a_request_cancelled_before_its_handler_ran_frees_its_id() -> None:
    """A request and its cancellation read in one go (both queued before the reader ran): the handler's task
    is cancelled before its first step, so its own cleanup never runs. The connection must still let the id
    go (cancellation: the request is over), or a later request with that id is refused as "already in use"
    and the connection keeps the cancelled request for good."""
    server, blocker = blocking_server()
    hand = await HandClient.initialized(server)
    send, answer = hand.send, hand.answer
    # no await between them yields to the server's reader: it reads the call and its cancellation together
    await send({"id": 5, "method": "tools/call", "params": {"name": "block", "arguments": {}}})
    await send({"method": "notifications/cancelled", "params": {"requestId": 5}})
    await send({"id": 6, "method": "ping"})
    await answer(6)
    (session,) = server.sessions
    assert not blocker.started.is_set()  # cancelled before it ran
    await send({"id": 5, "method": "ping"})  # the id of a request that is over, used again
    assert "result" in await answer(5)
    assert 5 not in session.connection._running
    # nor does it keep the handler's task (a handler's task leaves the set itself, in its own finally,
    # which a task cancelled before its first step never runs)
    assert handler_tasks(session.connection) == []
    await hand.close()


def handler_tasks(connection: Any) -> list[str]:
    return [t.get_name() for t in connection._tasks if " handle " in t.get_name()]


async def test_a_connection_keeps_no_handler_task_once_answered_and_closing_cancels_a_running_one() -> None:
    """Each request's handler runs in a task the connection holds (so that closing cancels it) until it
    ends: answered, failed, or cancelled while running; then it is gone from the connection's tasks."""
    server, blocker = blocking_server()

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    async def fail() -> str:
        raise ValueError("no")

    hand = await HandClient.initialized(server)
    (session,) = server.sessions
    for i in range(20):
        await hand.send(
            {"id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
        )
        assert (await hand.answer(i))["result"]["content"][0]["text"] == "x"
    await hand.send({"id": 30, "method": "tools/call", "params": {"name": "fail", "arguments": {}}})
    assert (await hand.answer(30))["result"]["isError"] is True
    await hand.send({"id": 31, "method": "tools/call", "params": {"name": "block", "arguments": {}}})
    await asyncio.wait_for(blocker.started.wait(), WAIT)
    assert [name.split(" handle ")[1] for name in handler_tasks(session.connection)] == ["tools/call 31"]
    await hand.send({"method": "notifications/cancelled", "params": {"requestId": 31}})
    await asyncio.wait_for(blocker.cancelled.wait(), WAIT)
    await hand.send({"id": 32, "method": "ping"})
    await hand.answer(32)
    assert handler_tasks(session.connection) == []
    await hand.send({"id": 33, "method": "tools/call", "params": {"name": "block", "arguments": {}}})
    blocker.started.clear()
    blocker.cancelled.clear()
    await asyncio.wait_for(blocker.started.wait(), WAIT)
    (running,) = [t for t in session.connection._tasks if t.get_name().endswith("handle tools/call 33")]
    await session.connection.aclose()  # closing cancels the handler still running, and waits for it
    assert running.done() and blocker.cancelled.is_set()  # ended unanswered (_answer: cancelled)
    assert handler_tasks(session.connection) == []
    await hand.close()
