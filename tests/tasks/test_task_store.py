"""The task store contract, for the in-memory store, the SQLite one (two handles on one file stand for
two worker processes) and the Redis one (a private redis-server, tests/scale/_services.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.engine.task_store import InMemoryTaskStore, SQLiteTaskStore, TaskStore, open_task_store
from mcp_notebook.protocol.tasks import TaskRecord, check_transition
from tests.scale._services import redis_server

T0 = float(int(time.time()))  # records are made "now": Redis expires a key whose ttl is over at once


@pytest.fixture(autouse=True)
def _now() -> None:
    global T0
    T0 = float(int(time.time()))  # each test's own "now" (a long run must not age the records)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TaskStore]:
    if request.param == "memory":
        yield InMemoryTaskStore()
    elif request.param == "sqlite":
        yield SQLiteTaskStore(tmp_path / "tasks.db")
    else:
        from mcp_notebook.engine.task_store_redis import RedisTaskStore

        url = request.getfixturevalue("redis_url")
        redis = RedisTaskStore(url, prefix=f"test-{request.node.name}:")
        yield redis
        redis.close()


def record(
    task_id: str, owner: str | None = None, created: float | None = None, ttl: int | None = 60_000
) -> TaskRecord:
    created = T0 if created is None else created
    return TaskRecord(task_id, "legacy", "tool", created_at=created, ttl_ms=ttl, owner=owner)


def test_create_get_update(store: TaskStore) -> None:
    store.create(record("t1"))
    got = store.get("t1")
    assert got is not None and got.status == "working" and got.tool == "tool"
    assert store.get("nope") is None

    def finish(r: TaskRecord) -> None:
        r.status = "completed"
        r.result = {"content": [{"type": "text", "text": "ok"}]}

    updated = store.update("t1", finish)
    assert updated is not None and updated.status == "completed"
    again = store.get("t1")
    assert again is not None and again.result == {"content": [{"type": "text", "text": "ok"}]}
    assert store.update("nope", finish) is None
    got.status = "failed"  # records handed out are copies: changing one changes nothing stored
    assert store.get("t1").status == "completed"  # type: ignore[union-attr]


def test_list_by_owner_and_purge(store: TaskStore) -> None:
    store.create(record("a", owner="alice", created=T0))
    store.create(record("b", owner="bob", created=T0 + 1))
    store.create(record("forever", created=T0 + 2, ttl=None))
    assert [r.task_id for r in store.list()] == ["a", "b", "forever"]
    assert [r.task_id for r in store.list("alice")] == ["a"]
    assert store.purge_expired(now=T0 + 30) == 0
    assert store.purge_expired(now=T0 + 61) == 1  # "a" expired; "b" expires at T0 + 61 exactly
    assert store.get("a") is None and store.get("b") is not None and store.get("forever") is not None


def test_sqlite_is_shared_between_handles(tmp_path: Path) -> None:
    one, two = SQLiteTaskStore(tmp_path / "t.db"), SQLiteTaskStore(tmp_path / "t.db")
    one.create(record("shared"))
    seen = two.get("shared")
    assert seen is not None and seen.task_id == "shared"
    two.update("shared", lambda r: setattr(r, "cancel_requested", True))
    assert one.get("shared").cancel_requested  # type: ignore[union-attr]


def check_updates_are_atomic(open_store: Callable[[], Any]) -> None:
    """Eight handles (threads, or workers), each its own connection from ``open_store``, add one input
    each, 25 times, to one task: no update is lost. Shared by the SQLite and Redis stores' tests."""
    open_store().create(record("counter", created=time.time()))  # now: the Redis store expires by TTL

    def bump(r: TaskRecord) -> None:
        r.input_responses = {**r.input_responses, str(len(r.input_responses)): {}}

    def worker() -> None:
        mine = open_store()
        for _ in range(25):
            mine.update("counter", bump)
        mine.close()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(open_store().get("counter").input_responses) == 200


def test_sqlite_updates_are_atomic(tmp_path: Path) -> None:
    """Eight threads with their own connections add one each, 25 times: no update is lost."""
    check_updates_are_atomic(lambda: SQLiteTaskStore(tmp_path / "t.db"))


def test_open_task_store(tmp_path: Path) -> None:
    assert isinstance(open_task_store(None), InMemoryTaskStore)
    assert isinstance(open_task_store(str(tmp_path / "x.db")), SQLiteTaskStore)


def test_status_transitions() -> None:
    check_transition("working", "input_required")
    check_transition("input_required", "working")
    for terminal in ("completed", "failed", "cancelled"):
        check_transition("working", terminal)
        with pytest.raises(ValueError):
            check_transition(terminal, "working")
    with pytest.raises(ValueError):
        check_transition("working", "paused")


def test_pages_by_owner(store: TaskStore) -> None:
    for i in range(5):
        store.create(record(f"a{i}", owner="alice", created=T0 + i))
    store.create(record("b0", owner="bob", created=T0 + 0.5))
    first, cursor = store.page("alice", None, 2)
    assert [r.task_id for r in first] == ["a0", "a1"] and cursor is not None
    second, cursor = store.page("alice", cursor, 2)
    assert [r.task_id for r in second] == ["a2", "a3"] and cursor is not None
    third, cursor = store.page("alice", cursor, 2)
    assert [r.task_id for r in third] == ["a4"] and cursor is None
    assert store.page("carol", None, 10) == ([], None)
    with pytest.raises(ValueError):
        store.page("alice", "not a cursor", 2)


def test_counts_open_tasks_per_owner(store: TaskStore) -> None:
    store.create(record("a", owner="alice"))
    store.create(record("b", owner="alice"))
    store.create(record("c", owner="bob"))
    assert (store.count_open("alice"), store.count_open("bob"), store.count_open()) == (2, 1, 3)
    store.update("a", lambda r: setattr(r, "status", "completed"))
    assert (store.count_open("alice"), store.count_open()) == (1, 2)
    store.purge_expired(now=T0 + 61)  # all three expired: nothing open is left
    assert store.count_open() == 0 and store.count_open("alice") == 0


_OPEN_TOGETHER = """
import sys, time
from mcp_notebook.engine.task_store import SQLiteTaskStore
start, folder, files = float(sys.argv[1]), sys.argv[2], int(sys.argv[3])
failed = 0
for n in range(files):
    while time.time() < start + n * 0.05:  # every process opens file n at the same instant
        pass
    try:
        SQLiteTaskStore(f"{folder}/tasks{n}.db")
    except Exception as error:
        failed += 1
        print(f"file {n}: {error!r}")
sys.exit(1 if failed else 0)
"""


def test_worker_processes_opening_a_new_file_together_all_start(tmp_path: Path) -> None:
    """``--workers N --task-store FILE`` starts N processes that open one new file at once: switching it to
    write-ahead logging raced and one worker died with "database is locked" (CI of fd19b8b); each of six
    processes opening 20 new files together must get every store."""
    import subprocess
    import sys

    files = 20
    start = time.time() + 3.0  # after the six interpreters have imported the store
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN_TOGETHER, str(start), str(tmp_path), str(files)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(6)
    ]
    outputs = [child.communicate(timeout=60)[0] for child in children]
    assert [child.returncode for child in children] == [0] * 6, outputs
    for n in range(files):
        store = SQLiteTaskStore(tmp_path / f"tasks{n}.db")
        assert store._connect().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
