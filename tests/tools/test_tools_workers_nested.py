"""A sync tool that waits for a call served by the worker pool too (a sync tool of another server): the
pool's bound never makes it wait for a worker that the waiting calls hold (engine/workers.py).

Moved from test_tools_workers.py (which passed 600 lines), with no change."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from mcp_notebook import Server
from mcp_notebook.engine import workers
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.engine.sync import SyncClient
from mcp_notebook.engine.workers import run_in_worker

WAIT = 10.0


async def test_the_bound_is_per_loop_so_a_call_waiting_for_one_on_another_loop_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As each loop's default executor: MAX_WORKERS calls of this loop, each waiting for a call served on
    another loop (a sync tool calling, through connect()'s thread, a sync tool of an in-process server), all
    finish. With one bound for every loop the other loop's call waited for a worker that this loop's calls,
    waiting for it, held: every call timed out."""
    monkeypatch.setattr(workers, "_workers", workers._Workers())
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()
    try:
        n = workers.MAX_WORKERS
        all_running = threading.Barrier(n, timeout=WAIT)

        def outer(i: int) -> int:
            all_running.wait()  # this loop's calls hold as many workers as its bound allows
            inner = asyncio.run_coroutine_threadsafe(run_in_worker(lambda: i * 2), other)
            return inner.result(timeout=WAIT)  # a worker of this loop waits for the other loop's call

        results = await asyncio.gather(*(run_in_worker(lambda i=i: outer(i)) for i in range(n)))
        assert results == [i * 2 for i in range(n)]
    finally:
        other.call_soon_threadsafe(other.stop)
        await asyncio.to_thread(thread.join, WAIT)
        other.close()


def test_a_sync_tool_waiting_in_the_sync_client_for_its_own_loop_frees_its_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sync tools of a server on the runtime's loop that call, through the sync client (Runtime.run), a sync
    tool of another server on that same loop: while they wait, their workers do not count against the
    loop's bound (workers.parked), so the calls they wait for get workers. Before, MAX_WORKERS such calls
    at once held every worker of the loop while the calls they waited for queued behind them: all timed
    out (12 at once with MAX_WORKERS=6, through connect() of two in-process servers)."""
    monkeypatch.setattr(workers, "_workers", workers._Workers())
    monkeypatch.setattr(workers, "MAX_WORKERS", 2)
    runtime = Runtime("test runtime")
    inner_server, outer_server = Server("inner"), Server("outer")
    all_running = threading.Barrier(2, timeout=WAIT)

    @inner_server.tool
    def twice(x: int) -> int:
        """Twice x."""
        return 2 * x

    inner = SyncClient(inner_server, runtime=runtime, timeout=WAIT)

    @outer_server.tool
    def outer(x: int) -> int:
        """Twice x, asked of the other server."""
        all_running.wait()  # the loop's bound (2) is held by these calls
        return int(inner.call_tool("twice", {"x": x})["structuredContent"]["result"])

    caller = SyncClient(outer_server, runtime=runtime, timeout=2 * WAIT)
    try:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda x: caller.call_tool("outer", {"x": x}), (1, 2)))
        assert [r.get("structuredContent") for r in results] == [{"result": 2}, {"result": 4}]
    finally:
        caller.close()
        inner.close()
        runtime.stop()
