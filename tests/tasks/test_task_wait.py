"""A call running as a task waits for its next status on an event (a status pushed on the listen stream)
with a bound. Cancelling the call must always reach its ``except CancelledError`` (which sends
``tasks/cancel``), also when a status arrives in the same turn of the loop: Python 3.11's
``asyncio.wait_for`` returned instead of raising then, so the cancel was lost and the call waited for a task
nobody would cancel (``test_cancel_by_cancelling_the_call[modern-http]`` timed out about once in 30 runs on a
busy machine)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from mcp_notebook.transports.base import wait_event as _wait_for_event


async def _follow(arrived: asyncio.Event) -> None:
    """What a call running as a task does: wait for each next status, with a bound, until it ends."""
    while True:
        await _wait_for_event(arrived, 5)
        arrived.clear()


@pytest.mark.parametrize("turns", [0, 1, 2])
async def test_a_cancel_as_the_status_arrives_is_not_swallowed(turns: int) -> None:
    arrived = asyncio.Event()
    waiting = asyncio.ensure_future(_follow(arrived))
    await asyncio.sleep(0)  # the call is waiting for its next status
    arrived.set()  # a status is pushed...
    for _ in range(turns):
        await asyncio.sleep(0)
    waiting.cancel()  # ...as the person cancels the call
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiting, 5)  # a swallowed cancel: the loop waits on, and this times out


async def test_the_wait_ends_on_the_event_or_the_bound() -> None:
    arrived = asyncio.Event()
    await _wait_for_event(arrived, 0.01)  # nothing came: back after the bound, no error
    arrived.set()
    await asyncio.wait_for(_wait_for_event(arrived, 60), 5)  # already set: at once


async def test_a_bounded_wait_starts_no_task() -> None:
    """The Streamable HTTP server waits like this once per request: a task per wait was a task and two more
    turns of the loop per request (issue 21). Python 3.10 has no asyncio.timeout and keeps the task."""
    loop = asyncio.get_running_loop()
    created: list[object] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        created.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    arrived = asyncio.Event()
    loop.set_task_factory(factory)  # type: ignore[arg-type]
    try:
        loop.call_soon(arrived.set)
        assert await _wait_for_event(arrived, 5)
        assert not await _wait_for_event(asyncio.Event(), 0.001)
    finally:
        loop.set_task_factory(None)
    assert len(created) == (0 if sys.version_info >= (3, 11) else 2)
