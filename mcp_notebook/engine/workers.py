"""The worker threads that synchronous tools, resources and prompts run in (unless the notebook's kernel
thread runs them): :func:`run_in_worker`, the default ``Server.run_sync``.

What ``asyncio.to_thread`` does, for less: a call is one tuple put on a queue and one
``call_soon_threadsafe`` back, where ``to_thread`` goes through the loop's ``ThreadPoolExecutor`` (a
``concurrent.futures.Future`` with its condition, a work item, the executor's locks and semaphore) and
``wrap_future``'s chaining of two futures. Measured on 2 shared cores: ~24 us of CPU per hop against
~45-65 us (docs/benchmarks.md, "Round 3").

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
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_WORKERS", "run_in_worker"]

T = TypeVar("T")
MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)  # the default executor's own bound

_Job = tuple[contextvars.Context, Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


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
        """In a forked child the threads are gone (their queue and lock go with them)."""
        self.__init__()  # type: ignore[misc]


def _run(job: _Job, finished: Callable[[], None]) -> None:
    """Run one job. The worker counts itself free *before* it wakes the loop: once the loop is woken the two
    threads want the interpreter at once, and whatever the worker still does then (its bookkeeping) the loop
    waits for. Counted free a moment early, it takes the next job as soon as it is back at the queue."""
    context, fn, loop, future = job
    if future.cancelled():  # read across threads: at worst a just-cancelled call still runs
        finished()
        return
    try:
        result = context.run(fn)
    except BaseException as exc:  # delivered to the caller, as to_thread does
        finished()
        _deliver(loop, future, None, exc)
    else:
        finished()
        _deliver(loop, future, result, None)


def _deliver(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, exc: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits the answer any more
        loop.call_soon_threadsafe(_settle, future, result, exc)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)


_workers = _Workers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers.after_fork)


async def run_in_worker(fn: Callable[[], T]) -> T:
    """``fn()`` in a worker thread, in a copy of the caller's context; its result or its exception."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    _workers.submit((contextvars.copy_context(), fn, loop, future))
    return await future
