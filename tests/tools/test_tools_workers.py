"""The worker threads sync tools run in (engine/workers.py): what asyncio.to_thread gave, for less."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import os
import subprocess
import sys
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.engine import workers
from mcp_notebook.engine.workers import run_in_worker

WAIT = 10.0
who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


async def test_runs_in_another_thread_with_the_callers_context() -> None:
    who.set("caller")
    here = threading.get_ident()
    seen = await run_in_worker(lambda: (threading.get_ident(), who.get()))
    assert seen[0] != here
    assert seen[1] == "caller"


async def test_the_exception_reaches_the_caller() -> None:
    def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        await run_in_worker(fail)


class Big:
    """Stands for a large result (a DataFrame, say)."""


async def test_a_worker_keeps_no_result_once_delivered() -> None:
    result = await run_in_worker(Big)
    gone = weakref.ref(result)
    del result
    for _ in range(200):  # the worker may still be returning from the call: bounded, ends at the event
        gc.collect()
        if gone() is None:
            break
        await asyncio.sleep(0.01)
    assert gone() is None  # before: the worker's frame held it until its next job


async def test_calls_run_concurrently() -> None:
    """As many calls as there may be workers, each waiting for all: they finish only if they run at once."""
    n = workers.MAX_WORKERS
    barrier = threading.Barrier(n, timeout=WAIT)
    results = await asyncio.gather(*(run_in_worker(lambda i=i: (barrier.wait(), i)[1]) for i in range(n)))
    assert results == list(range(n))


async def test_a_call_cancelled_before_a_worker_takes_it_never_runs() -> None:
    release = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> None:
        started.release()
        release.wait(WAIT)

    # every worker busy (the ones already idle, and as many more as the bound allows)
    holders = [asyncio.ensure_future(run_in_worker(hold)) for _ in range(workers.MAX_WORKERS)]
    for _ in holders:
        assert await asyncio.to_thread(started.acquire, True, WAIT)
    ran = threading.Event()
    late = asyncio.ensure_future(run_in_worker(ran.set))
    await asyncio.sleep(0)
    late.cancel()
    release.set()
    await asyncio.gather(*holders)
    assert await run_in_worker(lambda: "after") == "after"  # every queued job before this one was taken
    assert late.cancelled()
    assert not ran.is_set()


class CountingExecutor(ThreadPoolExecutor):
    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        self.submitted += 1
        return super().submit(*args, **kwargs)


def make_server(gate: threading.Event | None = None, entered: threading.Event | None = None) -> Server:
    server = Server("workers")

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool
    def wait_for_gate() -> str:
        """Block until the test opens the gate."""
        assert gate is not None and entered is not None
        entered.set()
        gate.wait(WAIT)
        return "open"

    return server


async def test_a_sync_tool_call_hops_without_the_loops_executor() -> None:
    """One hop per call on our own workers: no concurrent.futures machinery (issue 21, per-call cost)."""
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    try:
        async with Client(make_server()) as client:
            executor.submitted = 0
            for _ in range(5):
                result = await client.call_tool("echo", {"text": "x"})
                assert result["content"] == [{"type": "text", "text": "x"}]
        assert executor.submitted == 0
    finally:
        executor.shutdown(wait=False)


def test_a_blocked_sync_tool_does_not_hold_up_the_end_of_asyncio_run() -> None:
    """asyncio.to_thread's executor is joined when asyncio.run ends: a tool blocked forever held it up."""
    gate, entered = threading.Event(), threading.Event()

    async def main() -> None:
        async with Client(make_server(gate, entered)) as client:
            call = asyncio.ensure_future(client.call_tool("wait_for_gate", {}))
            assert await asyncio.to_thread(entered.wait, WAIT)
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)

    runner = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    runner.start()
    runner.join(WAIT / 2)
    ended = not runner.is_alive()
    gate.set()  # the worker finishes either way
    runner.join(WAIT)
    assert entered.is_set()
    assert ended, "asyncio.run waited for the blocked tool"


def _ends(inbox: Any) -> list[tuple[int, tuple[int, int]]]:
    """An inbox's two file descriptors and what each is (device, inode), to tell them closed later even if
    their numbers were given to other files meanwhile."""
    return [(fd, (os.fstat(fd).st_dev, os.fstat(fd).st_ino)) for fd in (inbox._reader, inbox._writer)]


def _still_open(ends: list[tuple[int, tuple[int, int]]]) -> list[int]:
    still = []
    for fd, what in ends:
        try:
            stat = os.fstat(fd)
        except OSError:
            continue
        if (stat.st_dev, stat.st_ino) == what:
            still.append(fd)
    return still


class NoReaders(asyncio.SelectorEventLoop):
    """Stands for a loop that cannot watch a socket (Windows' proactor loop)."""

    def add_reader(self, *args: Any) -> None:
        raise NotImplementedError


def test_a_loop_that_cannot_watch_a_socket_gets_its_answers_all_the_same() -> None:
    loop = NoReaders()
    try:
        assert loop.run_until_complete(run_in_worker(lambda: "answered")) == "answered"
        with pytest.raises(KeyError, match="boom"):
            loop.run_until_complete(run_in_worker(lambda: {}["boom"]))
        assert workers._inbox(loop) is None  # call_soon_threadsafe carried them
    finally:
        loop.close()


def test_a_loops_inbox_is_closed_when_the_loop_is_collected() -> None:
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(run_in_worker(lambda: 1)) == 1
    inbox = workers._inbox(loop)
    assert inbox is not None
    key = id(loop)
    loop.close()
    del loop
    gc.collect()
    assert key not in workers._inboxes or workers._inboxes[key][1] is not inbox
    assert inbox.closed  # its pipe (or socket pair) closed, not leaked


def test_an_answer_for_a_closed_loop_is_dropped_and_the_worker_goes_on() -> None:
    loop = asyncio.new_event_loop()
    gate, entered = threading.Event(), threading.Event()
    ran_in: list[threading.Thread] = []

    def wait() -> str:
        ran_in.append(threading.current_thread())
        entered.set()
        gate.wait(WAIT)
        return "late"

    call = loop.create_task(run_in_worker(wait))
    loop.run_until_complete(asyncio.to_thread(entered.wait, WAIT))
    call.cancel()
    loop.run_until_complete(asyncio.gather(call, return_exceptions=True))
    inbox = workers._inbox(loop)
    assert inbox is not None
    loop.close()  # the call is still running: its answer comes to a closed loop
    gate.set()
    for _ in range(1000):  # bounded: ends once the worker has answered
        if inbox._answers:
            break
        threading.Event().wait(0.01)
    assert len(inbox._answers) == 1  # left there, for nobody
    other = asyncio.new_event_loop()
    try:
        assert other.run_until_complete(run_in_worker(lambda: "next")) == "next"
    finally:
        other.close()
    assert ran_in[0].is_alive()  # back at the queue, not ended by an error


def test_a_loop_closed_while_a_cancelled_call_runs_is_let_go_once_the_call_answers() -> None:
    """The late answer holds the call's future, and the future its loop: neither may stay in the inbox for
    good (a pytest run, or asyncio.run in a loop, would keep every such loop and two sockets each)."""
    gate, entered = threading.Event(), threading.Event()

    def wait() -> str:
        entered.set()
        gate.wait(WAIT)
        return "late"

    async def main() -> tuple[weakref.ref[asyncio.AbstractEventLoop], weakref.ref[Any]]:
        call = asyncio.ensure_future(run_in_worker(wait))
        await asyncio.to_thread(entered.wait, WAIT)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        loop = asyncio.get_running_loop()
        return weakref.ref(loop), weakref.ref(workers._inbox(loop))

    loop_ref, inbox_ref = asyncio.run(main())  # closes the loop, the call still running
    inbox = inbox_ref()
    assert inbox is not None
    ends = _ends(inbox)
    del inbox
    gate.set()
    for _ in range(1000):  # bounded: ends once the worker has answered and let go of its job
        gc.collect()
        if loop_ref() is None:
            break
        threading.Event().wait(0.01)
    assert loop_ref() is None, "the closed loop is kept by its late answer"
    assert inbox_ref() is None
    assert not _still_open(ends)  # closed, not leaked


def test_a_closed_loop_still_referred_to_holds_no_inbox_sockets() -> None:
    """Closing a loop lets go of its inbox (only the loop's reader held it, and for a moment the worker that
    answered): a closed loop kept by a test, a traceback or a task holds no sockets (it held two until
    collected)."""
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(run_in_worker(lambda: 1)) == 1
    inbox = workers._inbox(loop)
    assert inbox is not None
    ends, inbox_ref = _ends(inbox), weakref.ref(inbox)
    del inbox
    loop.close()
    for _ in range(1000):  # bounded: the worker that answered may still be returning from its call
        if inbox_ref() is None:
            break
        threading.Event().wait(0.01)
    assert inbox_ref() is None
    assert not _still_open(ends)
    assert not loop.is_running()  # the loop itself is still here


async def test_sequential_calls_take_one_worker_and_start_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker counts itself idle before it answers, and the most recently idle is taken first: one call at
    a time keeps one thread (its pipe woken each time), never a thread or a queued job per call."""
    pool = workers._Workers()
    monkeypatch.setattr(workers, "_workers", pool)
    seen = [await run_in_worker(threading.get_ident) for _ in range(300)]
    assert len(set(seen)) == 1
    assert len(pool._workers) == 1
    assert pool._idle == pool._workers and not pool._waiting


async def test_a_worker_that_cannot_be_started_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = workers._Workers()
    monkeypatch.setattr(workers, "_workers", pool)

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", no_thread)
        with pytest.raises(RuntimeError, match="can't start"):
            await run_in_worker(lambda: 1)
    assert pool._workers == []  # its pipe closed, the bound not used up
    assert await run_in_worker(lambda: 2) == 2


FORK_CHILD = """
import asyncio, os, sys
from mcp_notebook.engine import workers
from mcp_notebook.engine.workers import run_in_worker

assert asyncio.run(run_in_worker(lambda: "parent")) == "parent"
parent_fds = [fd for w in workers._workers._workers for fd in (w.read, w.write)]
pid = os.fork()
if pid == 0:
    closed = True
    for fd in parent_fds:  # the parent's workers are gone in the child: their pipes are closed there
        try:
            os.fstat(fd)
            closed = False
        except OSError:
            pass
    ok = closed and asyncio.run(run_in_worker(lambda: "child")) == "child"
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
assert asyncio.run(run_in_worker(lambda: "parent again")) == "parent again"
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_runs_calls_on_workers_of_its_own() -> None:
    done = subprocess.run([sys.executable, "-c", FORK_CHILD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def gated(gate: threading.Event | None, entered: threading.Event | None = None, pause: float = 0.0) -> str:
    """A sync tool's function: quick unless told to pause or to wait at a gate."""
    if pause:
        threading.Event().wait(pause)
    if entered is not None:
        entered.set()
    if gate is not None:
        gate.wait(WAIT)
    return "done"


def pause(seconds: float) -> None:
    threading.Event().wait(seconds)


def _fresh_pool(monkeypatch: pytest.MonkeyPatch, quick: float, watch: float | None = None) -> Any:
    """A pool of its own, QUICK (and WATCH) set: no timing decides what these tests see."""
    pool = workers._Workers()
    monkeypatch.setattr(workers, "_workers", pool)
    monkeypatch.setattr(workers, "QUICK", quick)
    if watch is not None:
        monkeypatch.setattr(workers, "WATCH", watch)
    return pool


async def _known_quick(pool: Any) -> None:
    for _ in range(100):  # bounded; on a busy machine one call may be preempted past QUICK, not a hundred
        await run_in_worker(functools.partial(gated, None))
        if pool._is_quick(gated):
            return
    raise AssertionError("gated never counted quick")


async def test_a_burst_of_quick_calls_runs_on_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls of a function whose last call was quick wait for the worker running one, instead of each waking
    a thread of its own (the watch, which would spread them if that worker stalled, is kept out of it)."""
    pool = _fresh_pool(monkeypatch, quick=60.0, watch=60.0)
    wakes = []
    monkeypatch.setattr(pool, "_wake", lambda worker: (wakes.append(worker), workers._Workers._wake(worker)))
    await _known_quick(pool)
    wakes.clear()
    results = await asyncio.gather(*(run_in_worker(functools.partial(gated, None)) for _ in range(64)))
    assert results == ["done"] * 64
    assert len(pool._workers) == 1 and set(wakes) <= set(pool._workers)
    assert not pool._waiting and not pool._quick_busy and not pool._busy


async def test_unknown_and_slow_functions_never_wait_behind_a_quick_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A quick function's call blocks (the watch kept out of it): a call of a function not seen yet, and of
    one slow last time, still each get a worker at once."""
    pool = _fresh_pool(monkeypatch, quick=0.05, watch=60.0)
    gate, entered = threading.Event(), threading.Event()
    await _known_quick(pool)
    await run_in_worker(functools.partial(pause, 0))  # quick (at least as a rule)
    await run_in_worker(functools.partial(pause, 0.06))  # slow last time
    blocked = asyncio.ensure_future(run_in_worker(functools.partial(gated, gate, entered)))
    try:
        await asyncio.to_thread(entered.wait, WAIT)
        assert sum(pool._quick_busy.values()) == 1
        assert not pool._is_quick(pause)
        await asyncio.wait_for(run_in_worker(functools.partial(pause, 0)), WAIT)
        assert await asyncio.wait_for(run_in_worker(lambda: "unknown"), WAIT) == "unknown"
    finally:
        gate.set()
    assert await blocked == "done"


async def test_a_quick_function_that_blocks_holds_up_no_other_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call queued behind a quick function's call that now blocks is handed to a worker of its own by the
    loop's watch, and the blocked worker is no longer counted as one that will take waiting calls."""
    pool = _fresh_pool(monkeypatch, quick=60.0)
    gate, entered = threading.Event(), threading.Event()
    await _known_quick(pool)
    blocked = asyncio.ensure_future(run_in_worker(functools.partial(gated, gate, entered)))
    try:
        await asyncio.to_thread(entered.wait, WAIT)
        behind = asyncio.ensure_future(run_in_worker(functools.partial(gated, None)))
        await asyncio.sleep(0)
        assert [len(jobs) for jobs in pool._waiting.values()] == [1]  # behind the blocked call, at first
        assert await asyncio.wait_for(behind, WAIT) == "done"  # before the gate opens
        assert not pool._quick_busy and len(pool._workers) == 2
    finally:
        gate.set()
    assert await blocked == "done"


def _unread(fd: int) -> int:
    import fcntl
    import termios

    count = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return int.from_bytes(count, sys.byteorder)


@pytest.mark.skipif(not workers._PIPES, reason="the inbox is a pipe on POSIX")
async def test_answers_given_before_the_loop_reads_wake_it_once() -> None:
    """Three answers put before the loop reads its inbox write one byte, not three; once the loop has read
    and settled them, the next answer writes again."""
    loop = asyncio.get_running_loop()
    inbox = workers._inbox(loop)
    assert inbox is not None
    await run_in_worker(lambda: None)  # nothing unread left from earlier calls
    futures = [loop.create_future() for _ in range(3)]
    for i, future in enumerate(futures):
        inbox.put(future, i, None)
    assert _unread(inbox._reader) == 1
    assert await asyncio.wait_for(asyncio.gather(*futures), WAIT) == [0, 1, 2]
    assert _unread(inbox._reader) == 0
    last = loop.create_future()
    inbox.put(last, "again", None)
    assert _unread(inbox._reader) == 1
    assert await asyncio.wait_for(last, WAIT) == "again"


async def test_a_caller_resumes_in_the_turn_that_reads_its_answer() -> None:
    """The task awaiting a sync call runs on in the inbox reader's turn (_Answer), not in a turn of its own:
    one wait of the loop per call (it was two: the wait, then a turn for the task's wake-up). Not fewer: the
    answer of the call a resumed caller makes waits for the next turn, so that a chain of quick calls never
    keeps the loop from its other callbacks and its I/O (200 calls ran in 0-6 waits without that)."""
    loop = asyncio.get_running_loop()
    selector = loop._selector  # type: ignore[attr-defined]
    await run_in_worker(lambda: None)
    waits = 0
    select = selector.select

    def counted(timeout: float | None = None) -> Any:
        nonlocal waits
        waits += 1
        return select(timeout)

    selector.select = counted
    try:
        for i in range(200):
            assert await run_in_worker(functools.partial(int, i)) == i
    finally:
        selector.select = select
    assert 200 <= waits < 300  # 200 calls: 200 now, ~400 with a turn for each wake-up


async def test_a_caller_cancelled_while_its_call_runs_gets_the_cancel() -> None:
    started, release = threading.Event(), threading.Event()

    def blocked() -> str:
        started.set()
        release.wait(WAIT)
        return "late"

    task = asyncio.create_task(run_in_worker(blocked))
    assert await asyncio.to_thread(started.wait, WAIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT)
    release.set()
    assert await run_in_worker(lambda: "next") == "next"  # the late answer is dropped, the pool goes on


async def test_an_answer_settled_while_a_task_runs_resumes_its_caller_through_call_soon() -> None:
    """Inside a running task (a nested loop runner) the caller cannot be entered: it waits its turn."""
    answer = workers._Answer(loop=asyncio.get_running_loop())
    caller = asyncio.create_task(asyncio.wait_for(answer, WAIT))
    await asyncio.sleep(0)
    workers._settle(answer, "x", None)  # from this task: no RuntimeError("Cannot enter into task")
    assert not caller.done()
    assert await caller == "x"


@pytest.mark.skipif(not workers._PIPES, reason="the inbox is a pipe on POSIX")
async def test_a_caller_raising_out_of_the_inbox_leaves_the_other_answers_to_the_next_turn() -> None:
    loop = asyncio.get_running_loop()
    inbox = workers._inbox(loop)
    assert inbox is not None
    await run_in_worker(lambda: None)  # nothing unread left from earlier calls
    first, second = workers._Answer(loop=loop), workers._Answer(loop=loop)

    async def interrupted() -> None:
        await first
        raise KeyboardInterrupt

    a, b = asyncio.create_task(interrupted()), asyncio.create_task(asyncio.wait_for(second, WAIT))
    await asyncio.sleep(0)  # both wait for their answers
    inbox._answers.extend([(first, 1, None), (second, 2, None)])  # as put() leaves them, less the byte
    caught = []

    def reader_turn() -> None:
        try:
            inbox._settle_all()
        except KeyboardInterrupt:
            caught.append(_unread(inbox._reader))

    loop.call_soon(reader_turn)
    assert await b == 2
    assert caught == [1]  # the interrupt went up to the loop, and a byte was left for the second answer
    with pytest.raises(KeyboardInterrupt):
        a.result()
