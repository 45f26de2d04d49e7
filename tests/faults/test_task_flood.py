"""Issue 18: 50k stored tasks cost a caller who owns none nothing (bounded count and time, no timing asserts).

Before, ``tasks/list`` and task creation walked every stored task (copying each; the in-memory purge read
every record's expiry), on the event loop: 50k tasks stalled everyone 2.6-3 s. Now both go through the
store's owner index (one page) and its expiry index, and a blocking store (SQLite) is called from a thread.
Work is counted (records copied, expiry checks, the query plan), not timed.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.engine import task_store
from mcp_notebook.engine.tasks import TaskManager
from mcp_notebook.protocol.errors import JSONRPCError
from mcp_notebook.protocol.tasks import TaskRecord

pytestmark = pytest.mark.timeout(120)
MANY = 50_000


def _flood_memory() -> task_store.InMemoryTaskStore:
    """50k finished tasks of alice's, put straight into the store's table and owner index (quicker than
    50k creates; what create does is covered by the task store contract tests)."""
    store = task_store.InMemoryTaskStore()
    keys = store._by_owner.setdefault("alice", [])
    for i in range(MANY):
        record = TaskRecord(f"t{i:05}", "legacy", "tool", "completed", created_at=1e9 + i, owner="alice")
        store._records[record.task_id] = record
        keys.append((record.created_at, record.task_id))
    return store


def test_memory_store_pages_and_creates_in_page_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _flood_memory()
    copies = {"n": 0}
    real_copy = task_store._copy

    def counting(record: TaskRecord) -> TaskRecord:
        copies["n"] += 1
        return real_copy(record)

    monkeypatch.setattr(task_store, "_copy", counting)
    checks = {"n": 0}
    real_expired = TaskRecord.expired

    def counted(self: TaskRecord, now: float | None = None) -> bool:
        checks["n"] += 1
        return real_expired(self, now)

    monkeypatch.setattr(TaskRecord, "expired", counted)
    assert store.page("bob", None, 100) == ([], None) and copies["n"] == 0
    page, cursor = store.page("alice", None, 100)
    assert len(page) == 100 and cursor is not None and copies["n"] == 100
    manager = TaskManager(store)
    copies["n"] = 0
    manager.create(modern=False, tool="t", ttl_ms=None, owner="bob")  # purge + caps + create
    assert copies["n"] <= 2 and checks["n"] == 0


def test_sqlite_store_uses_its_indexes(tmp_path: Path) -> None:
    store = task_store.SQLiteTaskStore(tmp_path / "tasks.db")
    db = store._connect()
    rows = [
        (
            f"t{i:05}",
            "alice",
            1e9 + i,
            None,
            json.dumps({"task_id": f"t{i:05}", "era": "legacy", "tool": "x", "status": "completed"}),
            0,
        )
        for i in range(MANY)
    ]
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO tasks (id, owner, created, expires, body, open) VALUES (?, ?, ?, ?, ?, ?)", rows
    )
    db.execute("COMMIT")
    assert store.page("bob", None, 100) == ([], None)
    page, cursor = store.page("alice", None, 100)
    assert len(page) == 100 and cursor is not None
    assert store.page("alice", cursor, 100)[0][0].task_id == "t00100"
    plans = {
        "page": (
            "SELECT body FROM tasks WHERE owner = ? AND (created, id) > (?, ?) ORDER BY created, id LIMIT ?",
            ("bob", 0.0, "", 101),
        ),
        "count": ("SELECT COUNT(*) FROM tasks WHERE open = 1 AND owner = ?", ("bob",)),
        "purge": ("DELETE FROM tasks WHERE expires IS NOT NULL AND expires < ?", (1.0,)),
    }
    for name, (sql, args) in plans.items():
        plan = " ".join(str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", args))
        assert "USING" in plan and "INDEX" in plan and "SCAN tasks" not in plan.replace("USING", ""), (
            name,
            plan,
        )
    assert store.count_open("bob") == 0 and store.count_open() == 0
    store.close()


async def test_listing_calls_a_blocking_store_off_the_event_loop(tmp_path: Path) -> None:
    server = Server("flood")
    server.tasks.store = store = task_store.SQLiteTaskStore(tmp_path / "tasks.db")
    threads: list[int] = []
    real_page = store.page

    def page(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return real_page(*args)

    store.page = page  # type: ignore[method-assign]
    async with Client(server, era="legacy") as client:
        assert await client.list_tasks() == []
    assert threads and threading.get_ident() not in threads


async def test_open_tasks_are_capped_per_caller_and_ttl_is_bounded() -> None:
    manager = TaskManager(max_open_per_principal=3, max_open=5, max_ttl_ms=60_000)
    for _ in range(3):
        record = manager.create(modern=False, tool="t", ttl_ms=86_400_000, owner="alice")
        assert record.ttl_ms == 60_000  # a day asked for, the maximum given
    with pytest.raises(JSONRPCError, match="per caller"):
        manager.create(modern=False, tool="t", ttl_ms=None, owner="alice")
    manager.create(modern=False, tool="t", ttl_ms=None, owner="bob")  # others are not affected
    manager.create(modern=False, tool="t", ttl_ms=None, owner="carol")
    with pytest.raises(JSONRPCError, match="on this server"):
        manager.create(modern=False, tool="t", ttl_ms=None, owner="dave")
