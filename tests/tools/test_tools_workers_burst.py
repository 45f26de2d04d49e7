"""A burst of sync calls started in one turn of the loop (the handlers of several requests read at once):
the worker is woken once, when the turn's other callbacks have run, and takes the burst's calls one after
the other (engine/workers.py ``_Wake``). A wake-up held that way is not lost if the loop closes first."""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any

import pytest

from mcp_notebook.engine import workers
from mcp_notebook.engine.workers import run_in_worker
from tests.waiting import wait_until

WAIT = 10.0


def quick(i: int) -> int:
    return i * 2


def counted_pool(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    """A pool of its own where every function counts as quick after its first call and the watch stays out
    of it: no timing decides what these tests see. Its wake-ups are counted."""
    pool = workers._Workers()
    monkeypatch.setattr(workers, "_workers", pool)
    monkeypatch.setattr(workers, "QUICK", 60.0)
    monkeypatch.setattr(workers, "WATCH", 60.0)
    wakes: list[Any] = []
    monkeypatch.setattr(pool, "_wake", lambda worker: (wakes.append(worker), workers._Workers._wake(worker)))
    return pool, wakes


async def test_a_burst_started_in_one_turn_wakes_one_worker_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pool, wakes = counted_pool(monkeypatch)
    assert await run_in_worker(functools.partial(quick, 0)) == 0  # known quick from now on
    for _ in range(3):
        wakes.clear()
        # gather starts eight tasks: their first steps, each submitting its call, run in one turn
        results = await asyncio.gather(*(run_in_worker(functools.partial(quick, i)) for i in range(8)))
        assert results == [i * 2 for i in range(8)]
        assert len(wakes) == 1 and len(pool._workers) == 1
    assert not pool._waiting and not pool._quick_busy and not pool._busy


def one_turn(submit: Any) -> None:
    """Run ``submit`` as a fresh loop's only callback, in its last turn, then close the loop."""
    loop = asyncio.new_event_loop()

    def last() -> None:
        submit(loop)
        loop.stop()  # this turn is the last: what it leaves ready never runs on the loop

    loop.call_soon(last)
    loop.run_forever()
    loop.close()  # drops what was left ready


def test_a_lone_call_wakes_its_worker_within_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing else ready on the loop (a sequential caller): the worker is woken at once, not at the end of
    the turn."""
    pool, wakes = counted_pool(monkeypatch)
    assert asyncio.run(run_in_worker(functools.partial(quick, 0))) == 0  # an idle worker
    wakes.clear()
    ran = threading.Event()
    call = run_in_worker(ran.set)
    seen: list[int] = []

    def submit(loop: asyncio.AbstractEventLoop) -> None:
        call.send(None)  # hands the job over, then waits for the answer
        seen.append(len(wakes))

    one_turn(submit)
    call.close()
    assert seen == [1] and ran.wait(WAIT)
    wait_until(lambda: not pool._busy, "the worker to be idle again")


def test_a_held_wake_up_is_not_lost_when_the_loop_closes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    pool, wakes = counted_pool(monkeypatch)
    assert asyncio.run(run_in_worker(functools.partial(quick, 0))) == 0  # an idle worker
    wakes.clear()
    ran = threading.Event()
    call = run_in_worker(ran.set)
    seen: list[int] = []

    def submit(loop: asyncio.AbstractEventLoop) -> None:
        loop.call_soon(lambda: None)  # another callback ready: the wake-up is held for the turn's end
        call.send(None)
        seen.append(len(wakes))

    one_turn(submit)  # the held wake-up is dropped with the loop's callbacks: it wakes the worker then
    call.close()
    assert seen == [0] and ran.wait(WAIT) and len(wakes) == 1
    wait_until(lambda: not pool._busy, "the worker to be idle again")
