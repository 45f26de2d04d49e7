"""A call running as a task waits for its next status on an event (a status pushed on the listen stream)
with a bound. Cancelling the call must always reach its ``except CancelledError`` (which sends
``tasks/cancel``), also when a status arrives in the same turn of the loop: Python 3.11's
``asyncio.wait_for`` returned instead of raising then, so the cancel was lost and the call waited for a task
nobody would cancel (``test_cancel_by_cancelling_the_call[modern-http]`` timed out about once in 30 runs on a
busy machine)."""

from __future__ import annotations

import asyncio

import pytest

from mcp_notebook.transports.base import wait_event as _wait_for_event


@pytest.mark.parametrize("turns", [0, 1, 2])
async def test_a_cancel_as_the_status_arrives_is_not_swallowed(turns: int) -> None:
    arrived = asyncio.Event()
    waiting = asyncio.ensure_future(_wait_for_event(arrived, 5))
    await asyncio.sleep(0)  # the call is waiting for its next status
    arrived.set()  # a status is pushed...
    for _ in range(turns):
        await asyncio.sleep(0)
    waiting.cancel()  # ...as the person cancels the call
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_the_wait_ends_on_the_event_or_the_bound() -> None:
    arrived = asyncio.Event()
    await _wait_for_event(arrived, 0.01)  # nothing came: back after the bound, no error
    arrived.set()
    await asyncio.wait_for(_wait_for_event(arrived, 60), 5)  # already set: at once
