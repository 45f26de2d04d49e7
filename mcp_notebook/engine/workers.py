"""The worker threads that synchronous tools, resources and prompts run in (unless the notebook's kernel
thread runs them): :func:`run_in_worker`, the default ``Server.run_sync``.

What ``asyncio.to_thread`` does, for less: a call is one tuple handed to an idle worker (woken by a byte
on its own pipe, see :class:`_Workers`), where ``to_thread`` goes through the loop's ``ThreadPoolExecutor`` (a
``concurrent.futures.Future`` with its condition, a work item, the executor's locks and semaphore) and
``wrap_future``'s chaining of two futures. The answer goes back through the loop's own inbox (a deque and a
pipe the loop reads), not ``call_soon_threadsafe`` (a Handle and a context copy per answer, and two
reads of the loop's self-pipe per wake-up); a loop that cannot watch one (Windows' proactor loop) gets
``call_soon_threadsafe``. ``bench/hop.py`` measures the hop against ``to_thread`` and anyio's.

As with ``to_thread``: the caller's context variables are seen by the function, its exception is raised
to the awaiting caller, a caller cancelled before a worker picks the call up means it never runs (once it
runs it finishes; its result is dropped), and calls run concurrently, on as many threads as are busy, up
to :data:`MAX_WORKERS` per event loop (then that loop's calls wait their turn): the bound of each loop's
default executor, so a sync tool that waits for a sync tool served on another loop (``connect()``'s thread)
never waits for a worker its own loop's calls hold. The threads are shared by every loop, and unlike the
default executor's they are daemons that nothing joins: a tool blocked forever holds up neither
``asyncio.run``'s end nor interpreter exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import socket
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_WORKERS", "run_in_worker"]

T = TypeVar("T")
MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)  # the default executor's own bound
_PIPES = os.name == "posix"  # a selector loop elsewhere (Windows) watches sockets only

# (context, function, the loop's inbox, the future, its loop)
_Job = tuple[
    contextvars.Context, Callable[[], Any], "_Inbox | None", "asyncio.Future[Any]", asyncio.AbstractEventLoop
]


class _Worker:
    """One worker thread's end of its wake-ups: it sleeps in a read of its own pipe until a job is put in
    ``job`` and a byte written."""

    __slots__ = ("job", "read", "write")

    def __init__(self) -> None:
        self.job: _Job | None = None
        self.read, self.write = os.pipe()

    def close(self) -> None:
        os.close(self.read)
        os.close(self.write)


class _Workers:
    """Idle workers wait in a stack, each on its own pipe; a loop's jobs wait in a queue only while it has
    :data:`MAX_WORKERS` of them running (the bound is per loop, as each loop's default executor's: one bound
    for all would let sync tools waiting for calls served on another loop take every worker). A pipe, not a
    lock or a queue's condition: a write to a pipe is a *synchronous* wake-up for the kernel (the writer will
    sleep soon), so the woken worker is queued on the loop's own CPU and runs when the loop goes to wait for
    the answer, instead of waking an idle CPU, or preempting the loop and finding the interpreter lock still
    held (measured: 4.5 -> 2.2 context switches per hop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []  # the most recently idle last: it is taken first
        self._busy: dict[asyncio.AbstractEventLoop, int] = {}  # a loop's jobs running (none: no entry)
        self._waiting: dict[asyncio.AbstractEventLoop, deque[_Job]] = {}  # a loop's jobs past its bound
        self._workers: list[_Worker] = []

    def submit(self, job: _Job) -> None:
        loop = job[4]
        with self._lock:
            busy = self._busy.get(loop, 0)
            if busy >= MAX_WORKERS:
                waiting = self._waiting.get(loop)
                if waiting is None:
                    waiting = self._waiting[loop] = deque()
                waiting.append(job)
                return
            if self._idle:
                worker = self._idle.pop()
            else:
                self._start(job)
                self._busy[loop] = busy + 1
                return
            self._busy[loop] = busy + 1
        worker.job = job
        os.write(worker.write, b"\0")

    def _start(self, job: _Job) -> None:
        """A new worker, its first job given (under the lock)."""
        worker = _Worker()
        self._workers.append(worker)
        worker.job = job  # not the thread's argument: its Thread would hold the job for good
        name = f"mcp-notebook worker {len(self._workers)}"
        try:
            threading.Thread(target=self._work, args=(worker,), name=name, daemon=True).start()
        except BaseException:  # no thread to be had: the caller hears of it, nothing is counted
            self._workers.remove(worker)
            worker.close()
            raise

    def _work(self, worker: _Worker) -> None:
        job, worker.job = worker.job, None
        while True:
            while job is not None:
                job = _run(job, worker, self._next)  # its locals (the result, the loop) go with it
            os.read(worker.read, 1)
            job, worker.job = worker.job, None

    def _next(self, worker: _Worker, loop: asyncio.AbstractEventLoop) -> _Job | None:
        """The worker's next job (the next waiting one of ``loop``, whose job it ran), or None once it is
        counted idle."""
        with self._lock:
            waiting = self._waiting.get(loop) if self._waiting else None  # (mostly none at all)
            if waiting:
                job = waiting.popleft()
                if not waiting:
                    del self._waiting[loop]
                return job
            busy = self._busy[loop] - 1
            if busy:
                self._busy[loop] = busy
            else:
                del self._busy[loop]
            self._idle.append(worker)
            return None

    def after_fork(self) -> None:
        """In a forked child the threads are gone (their pipes, queue and lock with them), and a loop there
        makes its own inbox."""
        for worker in self._workers:
            worker.close()
        self.__init__()  # type: ignore[misc]
        _inboxes.clear()


def _run(
    job: _Job, worker: _Worker, next_job: Callable[[_Worker, asyncio.AbstractEventLoop], _Job | None]
) -> _Job | None:
    """Run one job; the worker's next job. The worker counts itself idle (or takes its next job) *before* it
    wakes the loop: once the loop is woken the two threads want the interpreter at once, and whatever the
    worker still does then (its bookkeeping) the loop waits for."""
    context, fn, inbox, future, loop = job
    if future.cancelled():  # read across threads: at worst a just-cancelled call still runs
        return next_job(worker, loop)
    try:
        result = context.run(fn)
    except BaseException as exc:  # delivered to the caller, as to_thread does
        following = next_job(worker, loop)
        _deliver(inbox, future, None, exc)
    else:
        following = next_job(worker, loop)
        _deliver(inbox, future, result, None)
    return following


def _deliver(inbox: _Inbox | None, future: asyncio.Future[Any], result: Any, exc: Any) -> None:
    if inbox is not None:
        inbox.put(future, result, exc)
        return
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits the answer any more
        future.get_loop().call_soon_threadsafe(_settle, future, result, exc)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)


class _Inbox:
    """One loop's answers from the workers: a deque, and a pipe (a socket pair where a loop can watch only
    sockets: Windows) whose read end the loop watches. A worker appends its answer and writes a byte; the
    loop, woken, reads once and settles every answer there is. Only the loop holds it (its reader's Handle),
    and a worker while it answers: ``_inboxes`` refers to it weakly, so an answer left for a closed loop (a
    call cancelled, still running when the loop closed) goes with the inbox once its worker lets go, and the
    future it holds lets the loop go. Its ends close when the loop is collected or the inbox is. (A try, not
    ``contextlib.suppress``, on this path.)"""

    __slots__ = ("__weakref__", "_answers", "_reader", "_sockets", "_writer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._answers: deque[tuple[asyncio.Future[Any], Any, Any]] = deque()
        self._sockets: tuple[socket.socket, socket.socket] | None = None
        if _PIPES:  # a byte through a pipe: 0.9-1.3 us written and read, through a socket pair 2.4-3.9
            self._reader, self._writer = os.pipe()
        else:
            self._sockets = socket.socketpair()
            self._reader, self._writer = (end.fileno() for end in self._sockets)
        try:
            for end in self._sockets or ():
                end.setblocking(False)
            if self._sockets is None:
                os.set_blocking(self._reader, False)
                os.set_blocking(self._writer, False)
            # in an empty context: the reader's Handle keeps its context for the loop's life, and the first
            # caller's (its request's variables) must not be held that long
            contextvars.Context().run(loop.add_reader, self._reader, self._settle_all)
        except BaseException:
            self.close()
            raise

    def put(self, future: asyncio.Future[Any], result: Any, exc: Any) -> None:
        self._answers.append((future, result, exc))
        try:
            if self._sockets is None:
                os.write(self._writer, b"\0")
            else:
                self._sockets[1].send(b"\0")
        except OSError:  # full (the loop is behind and will wake anyway) or closed (the loop is gone)
            return

    def _settle_all(self) -> None:
        try:  # the wake-up bytes; any left over only wake the loop once more
            if self._sockets is None:
                os.read(self._reader, 4096)
            else:
                self._sockets[0].recv(4096)
        except OSError:  # woken for nothing: an earlier wake-up settled its answer
            pass
        answers = self._answers
        while answers:
            _settle(*answers.popleft())

    def close(self) -> None:
        """Close both ends (once: a second call closes nothing, the numbers may be another file's by then)."""
        if self._sockets is not None:
            for end in self._sockets:
                end.close()
        elif self._reader != -1:
            os.close(self._reader)
            os.close(self._writer)
        self._reader = self._writer = -1

    @property
    def closed(self) -> bool:
        return self._reader == -1

    def __del__(self) -> None:
        if hasattr(self, "_writer"):  # not when the pipe could not be made in __init__
            self.close()


def _no_inbox() -> None:
    """The entry of a loop that cannot watch a socket (stands where a weak reference to an inbox would)."""
    return None


_inboxes: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], Callable[[], _Inbox | None]]] = {}


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox | None:
    """The loop's inbox (made on its first call), or None for a loop that cannot watch a socket."""
    key = id(loop)
    known = _inboxes.get(key)
    if known is not None and known[0]() is loop:
        return known[1]()
    try:
        ref = weakref.ref(loop)
    except TypeError:  # a loop that cannot be referred to weakly: nothing to tie an inbox's sockets to
        return None
    try:
        inbox: _Inbox | None = _Inbox(loop)
    except NotImplementedError:  # the proactor loop has no add_reader: call_soon_threadsafe then
        inbox = None
    weak = _no_inbox if inbox is None else weakref.ref(inbox)
    _inboxes[key] = (ref, weak)
    weakref.finalize(loop, _forget, key, weak)
    return inbox


def _forget(key: int, weak: Callable[[], _Inbox | None]) -> None:
    known = _inboxes.get(key)
    if known is not None and known[1] is weak:
        del _inboxes[key]
    inbox = weak()
    if inbox is not None:
        inbox.close()


_workers = _Workers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers.after_fork)


async def run_in_worker(fn: Callable[[], T]) -> T:
    """``fn()`` in a worker thread, in a copy of the caller's context; its result or its exception."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    _workers.submit((contextvars.copy_context(), fn, _inbox(loop), future, loop))
    return await future
