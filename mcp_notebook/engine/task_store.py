"""Where a server keeps its tasks: an interface, an in-memory store and a SQLite store (DESIGN decision 18).

The in-memory store is the default: tasks live as long as the process. The SQLite store (stdlib
``sqlite3``, one file) keeps them across a restart and lets several worker processes share them: every
change is one read-modify-write inside an ``IMMEDIATE`` transaction, so a cancel on one worker and a
completion on another cannot both win. A networked store (Redis, Postgres) implements the same methods.

Every task is bound to its owner (the principal that created it, ``TaskRecord.owner``), and a store keeps
an index by owner: listing one owner's tasks costs one page, counting an owner's open tasks (for the caps of
:class:`~.tasks.TaskManager`) and purging expired tasks cost the index's lookups, whatever else is stored
(50k other tasks included). A store whose calls block on I/O says so with ``blocking = True``: the task
engine then calls it from a worker thread, never on the event loop.
"""

from __future__ import annotations

import bisect
import heapq
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..protocol.tasks import TERMINAL, TaskRecord, decode_cursor, encode_cursor

__all__ = [
    "InMemoryTaskStore",
    "SQLiteTaskStore",
    "TaskStore",
    "decode_cursor",
    "encode_cursor",
    "open_task_store",
]

Change = Callable[[TaskRecord], None]
Page = tuple["list[TaskRecord]", "str | None"]  # (records, next cursor)


class TaskStore(Protocol):
    """What the task engine needs from a store. Methods are synchronous; ``blocking`` says whether they
    wait on I/O (the engine then runs them in a thread)."""

    blocking: bool

    def create(self, record: TaskRecord) -> None:
        """Store a new task; it is visible to :meth:`get` (from any process sharing the store) on return."""

    def get(self, task_id: str) -> TaskRecord | None: ...

    def update(self, task_id: str, change: Change) -> TaskRecord | None:
        """Apply ``change`` to the stored record atomically; the new record, or None if there is none."""

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        """Every task (or one owner's), oldest first. Costs all of them: for small books (the client's)."""

    def page(self, owner: str, cursor: str | None, limit: int) -> Page:
        """``owner``'s tasks after ``cursor`` (oldest first), at most ``limit``, and the cursor of the next
        page (None: no more). Costs one page through the owner index. A bad cursor raises ValueError."""

    def count_open(self, owner: str | None = None) -> int:
        """How many tasks are not terminal (of ``owner``, or of everyone): the engine's caps."""

    def purge_expired(self, now: float | None = None) -> int:
        """Drop tasks past their ttl; how many were dropped."""


def _copy(record: TaskRecord) -> TaskRecord:
    return TaskRecord.from_json(record.to_json())


class InMemoryTaskStore:
    """Tasks in a dict, for one process (the default), with an owner index and an expiry heap."""

    blocking = False

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._by_owner: dict[str | None, list[tuple[float, str]]] = {}  # sorted (created, id)
        self._open: Counter[str | None] = Counter()
        self._expiry: list[tuple[float, str]] = []  # heap of (expires, id)
        self._lock = threading.Lock()

    def create(self, record: TaskRecord) -> None:
        copy = _copy(record)
        with self._lock:
            self._records[copy.task_id] = copy
            bisect.insort(self._by_owner.setdefault(copy.owner, []), (copy.created_at, copy.task_id))
            if not copy.terminal:
                self._open[copy.owner] += 1
            expires = copy.expires_at()
            if expires is not None:
                heapq.heappush(self._expiry, (expires, copy.task_id))

    def get(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            record = self._records.get(task_id)
            return _copy(record) if record is not None else None

    def update(self, task_id: str, change: Change) -> TaskRecord | None:
        with self._lock:
            record = self._records.get(task_id)
            if record is None:
                return None
            copy = _copy(record)
            change(copy)
            self._records[task_id] = copy
            if not record.terminal and copy.terminal:
                self._open[record.owner] -= 1
            return _copy(copy)

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        with self._lock:
            records = [_copy(r) for r in self._records.values()]
        return sorted((r for r in records if owner is None or r.owner == owner), key=lambda r: r.created_at)

    def page(self, owner: str, cursor: str | None, limit: int) -> Page:
        after = decode_cursor(cursor) if cursor is not None else None
        with self._lock:
            keys = self._by_owner.get(owner, [])
            start = bisect.bisect_right(keys, after) if after is not None else 0
            chosen = keys[start : start + limit + 1]
            records = [_copy(self._records[task_id]) for _, task_id in chosen[:limit]]
        more = len(chosen) > limit
        return records, encode_cursor(records[-1]) if more and records else None

    def count_open(self, owner: str | None = None) -> int:
        with self._lock:
            return self._open[owner] if owner is not None else sum(self._open.values())

    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        gone = 0
        with self._lock:
            while self._expiry and self._expiry[0][0] < now:
                _, task_id = heapq.heappop(self._expiry)
                record = self._records.pop(task_id, None)
                if record is None:
                    continue
                gone += 1
                keys = self._by_owner[record.owner]
                at = bisect.bisect_left(keys, (record.created_at, task_id))
                if at < len(keys) and keys[at] == (record.created_at, task_id):
                    del keys[at]
                if not keys:
                    del self._by_owner[record.owner]
                if not record.terminal:
                    self._open[record.owner] -= 1
        return gone


_TERMINAL_SQL = ", ".join(f"'{status}'" for status in sorted(TERMINAL))


class SQLiteTaskStore:
    """Tasks in one SQLite file: they survive a restart, and worker processes on one machine share them."""

    blocking = True  # file I/O and lock waits: the engine calls it from a thread

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = str(path)
        self._timeout = timeout
        self._local = threading.local()
        db = self._connect()
        self._wal(db)
        # One writer migrates at a time: worker processes that start together on a new file would otherwise
        # race (two ALTERs of one table); BEGIN IMMEDIATE waits for the write lock within the busy timeout.
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, owner TEXT, created REAL NOT NULL,"
                " expires REAL, body TEXT NOT NULL, open INTEGER NOT NULL DEFAULT 1)"
            )
            columns = {row[1] for row in db.execute("PRAGMA table_info(tasks)")}
            if "open" not in columns:  # a file written before the owner index: derive it once
                db.execute("ALTER TABLE tasks ADD COLUMN open INTEGER NOT NULL DEFAULT 1")
                db.execute(f"UPDATE tasks SET open = json_extract(body, '$.status') NOT IN ({_TERMINAL_SQL})")
            db.execute("CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, created, id)")
            db.execute("CREATE INDEX IF NOT EXISTS tasks_open ON tasks (open, owner)")
            db.execute("CREATE INDEX IF NOT EXISTS tasks_expires ON tasks (expires)")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _wal(self, db: sqlite3.Connection) -> None:
        """Switch the file to write-ahead logging. SQLite answers "database is locked" at once, without its
        busy handler, when another process holds the file while the mode changes (workers starting together
        on a new file), so this waits and retries within the store's timeout."""
        deadline = time.monotonic() + self._timeout
        pause = 0.005
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

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
            "INSERT INTO tasks (id, owner, created, expires, body, open) VALUES (?, ?, ?, ?, ?, ?)",
            (
                record.task_id,
                record.owner,
                record.created_at,
                record.expires_at(),
                _dump(record),
                int(not record.terminal),
            ),
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
                "UPDATE tasks SET body = ?, expires = ?, open = ? WHERE id = ?",
                (_dump(record), record.expires_at(), int(not record.terminal), task_id),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return record

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        db = self._connect()
        if owner is None:
            rows = db.execute("SELECT body FROM tasks ORDER BY created, id").fetchall()
        else:
            rows = db.execute(
                "SELECT body FROM tasks WHERE owner = ? ORDER BY created, id", (owner,)
            ).fetchall()
        return [TaskRecord.from_json(json.loads(row[0])) for row in rows]

    def page(self, owner: str, cursor: str | None, limit: int) -> Page:
        db = self._connect()
        if cursor is None:
            rows = db.execute(
                "SELECT created, id, body FROM tasks WHERE owner = ? ORDER BY created, id LIMIT ?",
                (owner, limit + 1),
            ).fetchall()
        else:
            created, task_id = decode_cursor(cursor)
            rows = db.execute(
                "SELECT created, id, body FROM tasks WHERE owner = ? AND (created, id) > (?, ?)"
                " ORDER BY created, id LIMIT ?",
                (owner, created, task_id, limit + 1),
            ).fetchall()
        records = [TaskRecord.from_json(json.loads(row[2])) for row in rows[:limit]]
        more = len(rows) > limit and records
        return records, f"{rows[limit - 1][0]!r}~{rows[limit - 1][1]}" if more else None

    def count_open(self, owner: str | None = None) -> int:
        db = self._connect()
        if owner is None:
            row = db.execute("SELECT COUNT(*) FROM tasks WHERE open = 1").fetchone()
        else:
            row = db.execute("SELECT COUNT(*) FROM tasks WHERE open = 1 AND owner = ?", (owner,)).fetchone()
        return int(row[0])

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
