"""The one way a test waits for what another thread or process sets: poll a condition, bounded.

Prefer awaiting an event when the code under test offers one; this is for state that has none (a
handle's progress set on the runtime thread, a count in a server's log, a task another worker finishes).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

WAIT = 10.0  # seconds: the default bound


def wait_until(condition: Callable[[], T], what: str, timeout: float = WAIT, every: float = 0.01) -> T:
    """``condition()``'s first truthy value, polled every ``every`` s; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


async def wait_until_async(
    check: Callable[[], Awaitable[T]], what: str, timeout: float = WAIT, every: float = 0.05
) -> T:
    """:func:`wait_until` for an async check, in a test's own loop."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(every)
