"""The Redis task store beyond the shared contract (tests/tasks/test_task_store.py): atomic changes from
many handles, expiry by Redis itself, events to other handles, a finished record written once, and the
clear error when redis-py is missing. A private redis-server on 127.0.0.1 (conftest.py)."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
import redis

from mcp_notebook import Server
from mcp_notebook.engine.task_store import SQLiteTaskStore, open_task_store
from mcp_notebook.engine.task_store_redis import RedisTaskStore, TaskEvent
from mcp_notebook.protocol.tasks import TaskRecord
from tests.tasks.test_task_store import check_updates_are_atomic

WAIT = 20.0


def record(task_id: str, ttl: int | None = 60_000) -> TaskRecord:
    return TaskRecord(task_id, "modern", "tool", ttl_ms=ttl)


def test_updates_from_many_handles_are_atomic(redis_url: str) -> None:
    """Eight handles (eight workers) add one input each, 25 times, to one task: no update is lost."""
    check_updates_are_atomic(lambda: RedisTaskStore(redis_url))


def test_a_cancel_and_a_completion_cannot_both_win(redis_url: str) -> None:
    """The second change to a finished task is not written: its result is stored once."""
    one, two = RedisTaskStore(redis_url), RedisTaskStore(redis_url)
    one.create(record("race"))

    def cancel(r: TaskRecord) -> None:
        r.status = "cancelled"

    def complete(r: TaskRecord) -> None:
        r.status, r.result = "completed", {"content": []}

    assert one.update("race", cancel).status == "cancelled"  # type: ignore[union-attr]
    after = two.update("race", complete)
    assert after is not None and after.status == "cancelled" and after.result is None
    assert one.get("race").status == "cancelled"  # type: ignore[union-attr]


def test_redis_expires_the_record_with_its_ttl(redis_url: str) -> None:
    store = RedisTaskStore(redis_url)
    store.create(record("short", ttl=300))
    store.create(record("kept", ttl=None))
    raw = redis.Redis.from_url(redis_url)
    assert 0 < raw.pttl("mcp-notebook:task:short") <= 300
    assert raw.pttl("mcp-notebook:task:kept") == -1  # no expiry
    deadline = time.monotonic() + WAIT
    while store.get("short") is not None:  # Redis drops it itself; nobody purges
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert [r.task_id for r in store.list()] == ["kept"]  # and the index forgets it
    assert store.purge_expired() == 0


async def test_changes_reach_other_handles_as_events(redis_url: str) -> None:
    mine, theirs = RedisTaskStore(redis_url), RedisTaskStore(redis_url)
    heard: asyncio.Queue[TaskEvent] = asyncio.Queue()
    ready = asyncio.Event()

    async def listen() -> None:
        async for event in theirs.events(ready=ready.set):
            await heard.put(event)

    listening = asyncio.create_task(listen())
    try:
        await asyncio.wait_for(ready.wait(), WAIT)
        mine.create(record("e1"))
        mine.update("e1", lambda r: setattr(r, "lease_expires", time.time() + 10))  # no news
        mine.update("e1", lambda r: setattr(r, "status", "cancelled"))
        first = await asyncio.wait_for(heard.get(), WAIT)
        second = await asyncio.wait_for(heard.get(), WAIT)
        assert first == TaskEvent("e1", "working", None)
        assert second == TaskEvent("e1", "cancelled", "working")
        assert heard.empty()
    finally:
        listening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listening
    # a handle does not hear its own changes
    ready.clear()
    listening = asyncio.create_task(_collect(mine, ready, heard))
    try:
        await asyncio.wait_for(ready.wait(), WAIT)
        mine.create(record("e2"))
        theirs.create(record("e3"))
        assert (await asyncio.wait_for(heard.get(), WAIT)).task_id == "e3"
    finally:
        # awaited, so the subscription's own finally closes its Redis connection on this loop; a task left
        # cancelling when the loop closes left that connection to the garbage collector, whose
        # ResourceWarnings failed a later test (tests/scale/test_redis_workers.py in a CI run)
        listening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listening
        mine.close()
        theirs.close()


async def _collect(store: RedisTaskStore, ready: asyncio.Event, into: asyncio.Queue[TaskEvent]) -> None:
    async for event in store.events(ready=ready.set):
        await into.put(event)


def test_open_and_server_take_a_url_or_a_path(redis_url: str, tmp_path: object) -> None:
    assert isinstance(open_task_store(redis_url), RedisTaskStore)
    assert isinstance(Server("s", task_store=redis_url).tasks.store, RedisTaskStore)
    path = f"{tmp_path}/tasks.db"
    assert isinstance(Server("s", task_store=path).tasks.store, SQLiteTaskStore)
    given = RedisTaskStore(redis_url)
    assert Server("s", task_store=given).tasks.store is given


def test_without_redis_py_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis -> ImportError
    with pytest.raises(ImportError, match=r"pip install 'mcp-notebook\[redis\]'"):
        open_task_store("redis://127.0.0.1:1/0")
