"""Where a server keeps its tasks: an interface, an in-memory store and a SQLite store (DESIGN decision 18).

The in-memory store is the default: tasks live as long as the process. The SQLite store (stdlib
``sqlite3``, one file) keeps them across a restart and lets several worker processes share them: every
change is one read-modify-write inside an ``IMMEDIATE`` transaction, so a cancel on one worker and a
completion on another cannot both win. A networked store (Redis, Postgres) implements the same five
methods.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..protocol.tasks import TaskRecord

__all__ = ["InMemoryTaskStore", "SQLiteTaskStore", "TaskStore", "open_task_store"]

Change = Callable[[TaskRecord], None]


class TaskStore(Protocol):
    """What the task engine needs from a store. Methods are synchronous and quick."""

    def create(self, record: TaskRecord) -> None:
        """Store a new task; it is visible to :meth:`get` (from any process sharing the store) on return."""

    def get(self, task_id: str) -> TaskRecord | None: ...

    def update(self, task_id: str, change: Change) -> TaskRecord | None:
        """Apply ``change`` to the stored record atomically; the new record, or None if there is none."""

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        """Tasks, oldest first; with ``owner``, only that owner's (and unowned ones are never shown to
        an owner)."""

    def purge_expired(self, now: float | None = None) -> int:
        """Drop tasks past their ttl; how many were dropped."""


class InMemoryTaskStore:
    """Tasks in a dict, for one process (the default)."""

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._lock = threading.Lock()

    def create(self, record: TaskRecord) -> None:
        with self._lock:
            self._records[record.task_id] = TaskRecord.from_json(record.to_json())

    def get(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            record = self._records.get(task_id)
            return TaskRecord.from_json(record.to_json()) if record is not None else None

    def update(self, task_id: str, change: Change) -> TaskRecord | None:
        with self._lock:
            record = self._records.get(task_id)
            if record is None:
                return None
            copy = TaskRecord.from_json(record.to_json())
            change(copy)
            self._records[task_id] = copy
            return TaskRecord.from_json(copy.to_json())

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        with self._lock:
            records = [TaskRecord.from_json(r.to_json()) for r in self._records.values()]
        return sorted((r for r in records if owner is None or r.owner == owner), key=lambda r: r.created_at)

    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        with self._lock:
            gone = [key for key, record in self._records.items() if record.expired(now)]
            for key in gone:
                del self._records[key]
        return len(gone)


class SQLiteTaskStore:
    """Tasks in one SQLite file: they survive a restart, and worker processes on one machine share them."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = str(path)
        self._timeout = timeout
        self._local = threading.local()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, owner TEXT, created REAL NOT NULL,"
                " expires REAL, body TEXT NOT NULL)"
            )

    def _connect(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            # isolation_level=None: transactions are ours (BEGIN IMMEDIATE takes the write lock up front)
            db = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
            self._local.db = db
        return db

    def create(self, record: TaskRecord) -> None:
        db = self._connect()
        db.execute(
            "INSERT INTO tasks (id, owner, created, expires, body) VALUES (?, ?, ?, ?, ?)",
            (record.task_id, record.owner, record.created_at, record.expires_at(), _dump(record)),
        )

    def get(self, task_id: str) -> TaskRecord | None:
        row = self._connect().execute("SELECT body FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return TaskRecord.from_json(json.loads(row[0])) if row else None

    def update(self, task_id: str, change: Change) -> TaskRecord | None:
        db = self._connect()
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT body FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if row is None:
                db.execute("ROLLBACK")
                return None
            record = TaskRecord.from_json(json.loads(row[0]))
            change(record)
            db.execute(
                "UPDATE tasks SET body = ?, expires = ? WHERE id = ?",
                (_dump(record), record.expires_at(), task_id),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return record

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        db = self._connect()
        if owner is None:
            rows = db.execute("SELECT body FROM tasks ORDER BY created").fetchall()
        else:
            rows = db.execute("SELECT body FROM tasks WHERE owner = ? ORDER BY created", (owner,)).fetchall()
        return [TaskRecord.from_json(json.loads(row[0])) for row in rows]

    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        cursor = self._connect().execute(
            "DELETE FROM tasks WHERE expires IS NOT NULL AND expires < ?", (now,)
        )
        return cursor.rowcount

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


def _dump(record: TaskRecord) -> str:
    return json.dumps(record.to_json(), separators=(",", ":"), default=str)


def open_task_store(spec: str | None) -> TaskStore:
    """``None``/``"memory"``: in memory; ``redis://HOST:PORT/DB`` (or ``rediss://``, ``unix://``): Redis
    (``engine/task_store_redis.py``, the ``redis`` extra); anything else: a SQLite file at that path."""
    if spec is None or spec in ("", "memory", ":memory:"):
        return InMemoryTaskStore()
    from .task_store_redis import RedisTaskStore, is_redis_url

    if is_redis_url(spec):
        return RedisTaskStore(spec)
    return SQLiteTaskStore(spec)
