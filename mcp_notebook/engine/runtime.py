"""The one background event-loop thread that owns every connection (DESIGN decision 3).

Jupyter's kernel already runs an asyncio loop, and each cell is its own task: a connection opened in one
cell and used or closed in another would cross tasks (and anyio-style cancel scopes). So connections live
on a private loop in a daemon thread for their whole life. Synchronous callers hop there with
:meth:`Runtime.run` (blocking, interruptible: Ctrl-C / kernel interrupt cancels the coroutine), async callers
with :meth:`Runtime.run_async` (awaitable from any loop). This thread is the one every connection lives on;
the few other threads the package starts are listed in docs/architecture.md ("Threads").
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from .workers import park_here, unpark

__all__ = ["Runtime", "get_runtime"]

T = TypeVar("T")


class Runtime:
    def __init__(self, name: str = "mcp-notebook runtime") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # what :meth:`stop` closes first (the sync clients' connections): see :meth:`close_at_stop`
        self._to_close: weakref.WeakSet[Closable] = weakref.WeakSet()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        thread = threading.Thread(target=main, name=self._name, daemon=True)
        thread.start()
        ready.wait(timeout=10)
        self._loop, self._thread = loop, thread

    def close_at_stop(self, thing: Closable) -> None:
        """``await thing.aclose()`` on the loop when the runtime stops (at exit) unless gone by then."""
        self._to_close.add(thing)

    def in_runtime_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runtime loop; returns a thread-safe future (cancel it to cancel the task).

        ``asyncio.run_coroutine_threadsafe`` with one difference: an interrupt (KeyboardInterrupt) raised in
        the caller while the coroutine is being queued (a SIGINT's handler runs right after the loop's
        wake-up write, and under load the coroutine may already run by then) cancels the coroutine, or
        closes it if it has not started: the caller never gets the future, so nothing else could.
        """
        if not asyncio.iscoroutine(coro):
            raise TypeError("a coroutine object is required")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        claim = threading.Lock()  # acquired once: by the loop starting the coroutine, or by a failed submit

        def start() -> None:
            if not claim.acquire(blocking=False):
                return  # the submit failed (interrupted) and closed the coroutine
            if future.cancelled():
                coro.close()
                return
            try:
                _chain(loop.create_task(coro), future, loop)
            except BaseException as exc:
                if not future.cancelled():
                    future.set_exception(exc)
                raise

        try:
            loop = self.loop
            loop.call_soon_threadsafe(start)
        except BaseException:
            if claim.acquire(blocking=False):
                coro.close()  # never started, and now never will
            future.cancel()  # started: its task is cancelled
            raise
        return future

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the runtime loop and block until it finishes.

        An interrupt (KeyboardInterrupt) or a timeout cancels the coroutine before propagating, so a call in
        flight sends its ``notifications/cancelled`` instead of running on unseen.
        """
        if self.in_runtime_thread():
            coro.close()
            raise RuntimeError(
                "Runtime.run() called from the runtime thread itself: await the coroutine instead"
            )
        future = self.submit(coro)
        parked = None
        try:  # from here on an interrupt cancels the coroutine, wherever it lands
            parked = park_here()  # in a worker: the call may need one of its own loop's workers
            with _blocking_hook():
                return future.result(timeout)
        except (KeyboardInterrupt, concurrent.futures.TimeoutError):
            future.cancel()
            raise
        finally:
            unpark(parked)

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` running on the runtime loop, from any other loop (e.g. a notebook cell)."""
        if self.in_runtime_thread():
            return await coro
        future = self.submit(coro)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if thread.is_alive():
            # The connections still open close first, then what still runs there ends, as under asyncio.run:
            # stopped with them pending, each task was reported "destroyed but it is pending" at exit (and a
            # server's clean-up raised "Event loop is closed"), and an HTTP client's session "unclosed".
            ending = asyncio.run_coroutine_threadsafe(_end(list(self._to_close), timeout), loop)
            with contextlib.suppress(Exception):  # late, or the loop already stopping: stop it anyway
                ending.result(timeout + 1.0)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
        if not thread.is_alive():
            loop.close()


class Closable(Protocol):
    async def aclose(self) -> None: ...


async def _end(to_close: list[Closable], timeout: float) -> None:
    """Close ``to_close``, then cancel the loop's other tasks and wait for them (and for those they start
    meanwhile), all within ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    closing = [asyncio.ensure_future(thing.aclose()) for thing in to_close]
    if closing:
        await asyncio.wait(closing, timeout=timeout)
    this = asyncio.current_task()
    while (left := deadline - loop.time()) > 0:
        tasks = [task for task in asyncio.all_tasks() if task is not this]
        if not tasks:
            return
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=left)


def _chain(
    task: asyncio.Task[T], future: concurrent.futures.Future[T], loop: asyncio.AbstractEventLoop
) -> None:
    """``task``'s outcome into ``future``; cancelling ``future`` (from any thread) cancels ``task``."""

    def copy(done: asyncio.Task[T]) -> None:
        if future.cancelled():
            return
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile elsewhere
            if done.cancelled():
                future.cancel()
            elif (exc := done.exception()) is not None:
                future.set_exception(exc)
            else:
                future.set_result(done.result())

    def cancel(done: concurrent.futures.Future[T]) -> None:
        if done.cancelled() and not task.done():
            loop.call_soon_threadsafe(task.cancel)

    task.add_done_callback(copy)
    future.add_done_callback(cancel)


_blocking_hook: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext


def set_blocking_hook(hook: Callable[[], AbstractContextManager[Any]]) -> None:
    """Wrap every blocking :meth:`Runtime.run` wait in ``hook()``.

    The notebook uses it to mark the kernel's main thread as parked, so that a tool call meant for the main
    thread can run on its behalf instead of deadlocking (DESIGN decision 6, the self-call).
    """
    global _blocking_hook
    _blocking_hook = hook


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def get_runtime() -> Runtime:
    """The process-wide runtime, started on first use and stopped at exit."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = Runtime()
            atexit.register(_runtime.stop)
        return _runtime
