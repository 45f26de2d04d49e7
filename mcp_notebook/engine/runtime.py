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
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from typing import Any, TypeVar

__all__ = ["Runtime", "get_runtime"]

T = TypeVar("T")


class Runtime:
    def __init__(self, name: str = "mcp-notebook runtime") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

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

    def in_runtime_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runtime loop; returns a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

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
        try:
            with _blocking_hook():
                return future.result(timeout)
        except (KeyboardInterrupt, concurrent.futures.TimeoutError):
            future.cancel()
            raise

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
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
        if not thread.is_alive():
            loop.close()


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
