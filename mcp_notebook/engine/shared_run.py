"""One run of some work that every caller meanwhile shares (a client's tools listing, its new connection).

A caller that arrives while the work runs waits for that run instead of starting its own; one that arrives
after it ended starts a new run. A caller cancelled leaves the run to the others (it is shielded). The run's
failure is each waiting caller's, and it is retrieved even when none is left (no "exception was never
retrieved" at exit).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["SharedRun"]


class SharedRun:
    __slots__ = ("running",)

    def __init__(self) -> None:
        self.running: asyncio.Future[None] | None = None  # the run in flight, or the last one (done)

    async def join(self, start: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Wait for the run in flight, or for a new one of ``start()`` when none is."""
        running = self.running
        if running is None or running.done():
            running = self.running = asyncio.ensure_future(start())
            running.add_done_callback(_retrieved)
        await asyncio.shield(running)


def _retrieved(run: asyncio.Future[None]) -> None:
    if not run.cancelled():
        run.exception()
