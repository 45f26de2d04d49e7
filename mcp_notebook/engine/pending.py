"""A connection's requests awaiting their answers: each one's future and timeout, the timeouts of all of
them on one loop timer (engine/outgoing.py)."""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..transports.base import INLINE

__all__ = ["INLINE", "Expired", "Pending", "ProgressCallback", "Timers", "cancelling", "uncancelled"]

ProgressCallback = Callable[[float, "float | None", "str | None"], Any]


class Expired(Exception):
    """Internal: the request's timer ran out (carries the seconds waited)."""


class Timers:
    """The timeouts of one connection's requests on one loop timer, set for the earliest of them.

    Arming a request sets its expiry, and moves the loop timer only when that comes sooner; disarming
    forgets the request. So a request's timeout costs no ``call_later`` and ``cancel`` (a TimerHandle, a heap
    push, then the pop of the cancelled handle): when the timer fires, the requests due are expired and it
    is set again for the next expiry, if any."""

    __slots__ = ("_armed", "_handle", "_when")

    def __init__(self) -> None:
        self._armed: set[Pending] = set()
        self._handle: asyncio.TimerHandle | None = None
        self._when = math.inf

    def arm(self, pending: Pending, expires: float, loop: asyncio.AbstractEventLoop) -> None:
        pending.expires = expires
        self._armed.add(pending)
        if expires < self._when:
            self._set(expires, loop)

    def disarm(self, pending: Pending) -> None:
        pending.expires = None
        self._armed.discard(pending)

    def stop(self) -> None:
        self._armed.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._when = math.inf

    def _set(self, when: float, loop: asyncio.AbstractEventLoop) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._when = when
        self._handle = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._handle, self._when = None, math.inf
        due = loop.time() + _CLOCK_RESOLUTION  # what asyncio runs a timer by: it may fire that early
        later = math.inf
        for pending in list(self._armed):
            expires = pending.expires
            if expires is None:
                continue
            if expires <= due:
                self.disarm(pending)
                pending.expire()
            elif expires < later:
                later = expires
        if later < self._when:
            self._set(later, loop)


_CLOCK_RESOLUTION = time.get_clock_info("monotonic").resolution


def cancelling(task: asyncio.Task[Any]) -> int:
    """The cancel requests pending on ``task`` (0 where Task.cancelling is missing: not reached there)."""
    if sys.version_info >= (3, 11):
        return task.cancelling()
    return 0


def uncancelled(task: asyncio.Task[Any]) -> bool:
    """Take back one cancel request of ours; True when no other one is left."""
    if sys.version_info >= (3, 11):
        return task.uncancel() == 0
    return False  # not reached: INLINE is False


@dataclass(eq=False, slots=True)
class Pending:
    """One request of ours awaiting its answer, with its timeout (kept by the connection's Timers)."""

    future: asyncio.Future[dict[str, Any]]
    timers: Timers
    on_progress: ProgressCallback | None = None
    timeout: float | None = None
    deadline: float | None = None  # loop time after which progress no longer extends the wait
    expires: float | None = None  # loop time at which the request times out (None: not armed)
    delay: float = 0.0  # the seconds that timeout was set for
    capped: bool = False  # ... by the deadline (max_timeout), not by ``timeout``
    caller: asyncio.Task[Any] | None = None  # the caller's task, while it runs the exchange itself (inline)
    stopped: bool = False  # fail() cancelled that task, to end the exchange
    cut: bool = False  # the inline exchange ended by cancellation: the request is cancelled on the wire

    def fail(self, exc: BaseException) -> None:
        """End the wait with ``exc``; a caller busy with the exchange is stopped (the future says why)."""
        if self.future.done():
            return
        self.future.set_exception(exc)
        if self.caller is not None and not self.stopped:
            self.stopped = True
            self.caller.cancel()

    def arm(self, loop: asyncio.AbstractEventLoop) -> None:
        """(Re)start the timeout: ``timeout`` from now, never past ``deadline``."""
        delay = self.timeout
        now = loop.time()
        capped = False
        if self.deadline is not None:
            left = max(0.0, self.deadline - now)
            if delay is None or left <= delay:
                delay, capped = left, True
        if delay is None:
            self.timers.disarm(self)
            return
        self.delay, self.capped = delay, capped
        self.timers.arm(self, now + delay, loop)

    def disarm(self) -> None:
        self.timers.disarm(self)

    def expire(self) -> None:
        self.fail(Expired(self.delay, self.capped))
