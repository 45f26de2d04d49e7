"""The worker threads that synchronous tools, resources and prompts run in (unless the notebook's kernel
thread runs them): :func:`run_in_worker`, the default ``Server.run_sync``.

What ``asyncio.to_thread`` does, for less: a call is one tuple put on a queue and one
``call_soon_threadsafe`` back, where ``to_thread`` goes through the loop's ``ThreadPoolExecutor`` (a
``concurrent.futures.Future`` with its condition, a work item, the executor's locks and semaphore) and
``wrap_future``'s chaining of two futures. The answer goes back through the loop's own inbox (a deque and a
socket pair the loop reads), not ``call_soon_threadsafe`` (a Handle and a context copy per answer, and two
reads of the loop's self-pipe per wake-up); a loop that cannot watch a socket (Windows' proactor loop) gets
``call_soon_threadsafe``. ``bench/hop.py`` measures the hop against ``to_thread`` and anyio's.

As with ``to_thread``: the caller's context variables are seen by the function, its exception is raised
to the awaiting caller, a caller cancelled before a worker picks the call up means it never runs (once it
runs it finishes; its result is dropped), and calls run concurrently, on as many threads as are busy, up
to :data:`MAX_WORKERS` (then they wait their turn). Unlike the default executor the threads are daemons
that nothing joins: a tool blocked forever holds up neither ``asyncio.run``'s end nor interpreter exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import queue
import socket
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_WORKERS", "run_in_worker"]

T = TypeVar("T")
MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)  # the default executor's own bound

_Job = tuple[contextvars.Context, Callable[[], Any], "_Inbox | None", "asyncio.Future[Any]"]


class _Workers:
    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._free = 0  # workers waiting for a job, less the jobs queued for them (negative: jobs wait)

    def submit(self, job: _Job) -> None:
        with self._lock:
            self._free -= 1
            if self._free < 0 and self._threads < MAX_WORKERS:
                self._threads += 1
                self._free += 1
                name = f"mcp-notebook worker {self._threads}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        jobs = self._jobs
        while True:
            _run(jobs.get(), self._finished)  # its locals (the result, the loop) go with it: nothing kept

    def _finished(self) -> None:
        with self._lock:
            self._free += 1

    def after_fork(self) -> None:
        """In a forked child the threads are gone (their queue and lock go with them), and a loop there makes
        its own inbox."""
        self.__init__()  # type: ignore[misc]
        _inboxes.clear()


def _run(job: _Job, finished: Callable[[], None]) -> None:
    """Run one job. The worker counts itself free *before* it wakes the loop: once the loop is woken the two
    threads want the interpreter at once, and whatever the worker still does then (its bookkeeping) the loop
    waits for. Counted free a moment early, it takes the next job as soon as it is back at the queue."""
    context, fn, inbox, future = job
    if future.cancelled():  # read across threads: at worst a just-cancelled call still runs
        finished()
        return
    try:
        result = context.run(fn)
    except BaseException as exc:  # delivered to the caller, as to_thread does
        finished()
        _deliver(inbox, future, None, exc)
    else:
        finished()
        _deliver(inbox, future, result, None)


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
    """One loop's answers from the workers: a deque, and a socket pair whose one end the loop watches. A
    worker appends its answer and writes a byte; the loop, woken, reads once and settles every answer there
    is. Only the loop holds it (its reader's Handle), and a worker while it answers: ``_inboxes`` refers to it
    weakly, so an answer left for a closed loop (a call cancelled, still running when the loop closed) goes
    with the inbox once its worker lets go, and the future it holds lets the loop go. Its sockets close when
    the loop is collected or the inbox is. (A try, not ``contextlib.suppress``, on this path.)"""

    __slots__ = ("__weakref__", "_answers", "_reader", "_writer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._answers: deque[tuple[asyncio.Future[Any], Any, Any]] = deque()
        self._reader, self._writer = socket.socketpair()
        try:
            self._reader.setblocking(False)
            self._writer.setblocking(False)
            # in an empty context: the reader's Handle keeps its context for the loop's life, and the first
            # caller's (its request's variables) must not be held that long
            contextvars.Context().run(loop.add_reader, self._reader.fileno(), self._settle_all)
        except BaseException:
            self.close()
            raise

    def put(self, future: asyncio.Future[Any], result: Any, exc: Any) -> None:
        self._answers.append((future, result, exc))
        try:
            self._writer.send(b"\0")
        except OSError:  # full (the loop is behind and will wake anyway) or closed (the loop is gone)
            return

    def _settle_all(self) -> None:
        try:  # noqa: SIM105 (see the class's docstring)
            self._reader.recv(4096)  # the wake-up bytes; any left over only wake the loop once more
        except OSError:  # woken for nothing: an earlier wake-up settled its answer
            pass
        answers = self._answers
        while answers:
            _settle(*answers.popleft())

    def close(self) -> None:
        self._reader.close()
        self._writer.close()

    def __del__(self) -> None:
        if hasattr(self, "_writer"):  # not when socketpair() failed in __init__
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
    _workers.submit((contextvars.copy_context(), fn, _inbox(loop), future))
    return await future
