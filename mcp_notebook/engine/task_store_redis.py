"""Tasks on Redis (DESIGN decision 21): workers on several machines share them, a cancel crosses workers,
and a status change reaches a ``subscriptions/listen`` stream on any worker.

Keys, under a prefix (default ``mcp-notebook:``):

- ``task:{id}``: the record as JSON, with ``PEXPIREAT`` at its creation + ttl: Redis drops it when its
  ttl is over (a task without a ttl stays);
- ``index``: a sorted set, id by creation time (``list``, oldest first); ``expiry``: id by expiry time, so
  ``purge_expired`` can clean the index of the ids Redis dropped;
- channel ``events``: one message per change, ``{"id", "status", "was", "origin"}``, PUBLISHed inside the
  same ``MULTI`` as the write it reports.

Every change is ``WATCH``, ``GET``, the change in Python, ``MULTI``/``SET``/``PUBLISH``/``EXEC``, retried
when another worker wrote the record in between: a cancel on one worker and a completion on another cannot
both win. A terminal record is never written again, so a result is stored once, by the transition that
ends the task.

Why two clients: the :class:`~.task_store.TaskStore` interface is synchronous (the engine calls it between
awaits, as it calls SQLite), so its five quick calls use redis-py's blocking client, one or two loopback
round trips each. What lives as long as the server, the subscription that carries the events, runs on
redis-py's asyncio client on the serving loop (:meth:`RedisTaskStore.events`, followed by
:class:`~.tasks.TaskManager`). redis-py is the optional extra ``mcp-notebook[redis]``, imported here only.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.tasks import TaskRecord, decode_cursor, encode_cursor

__all__ = ["RedisTaskStore", "TaskEvent", "is_redis_url"]

Change = Callable[[TaskRecord], None]
_Page = tuple[list[TaskRecord], str | None]  # (records, next cursor)
_SCHEMES = ("redis://", "rediss://", "unix://")
_MISSING = (
    "the Redis task store needs redis-py, an optional extra: pip install 'mcp-notebook[redis]' "
    "(or pip install redis)"
)


def is_redis_url(spec: str) -> bool:
    return spec.startswith(_SCHEMES)


@dataclass(frozen=True)
class TaskEvent:
    """A change another process made to a task: its id, its status now and before the change."""

    task_id: str
    status: str
    was: str | None


def _redis_module() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise ImportError(_MISSING) from exc
    return redis


class RedisTaskStore:
    """Tasks in one Redis database (``redis://HOST:PORT/DB``), shared by every worker that names it."""

    def __init__(self, url: str, *, prefix: str = "mcp-notebook:") -> None:
        module = _redis_module()
        self.url = url
        self.prefix = prefix
        self.channel = f"{prefix}events"
        self.origin = secrets.token_hex(8)  # this handle's events are not news to itself
        self._index = f"{prefix}index"
        self._expiry = f"{prefix}expiry"
        self._owners = f"{prefix}owners"  # task id -> owner, to clean the owner indexes on purge
        self._open_all = f"{prefix}open"  # ids of tasks not yet terminal (the caps count them)
        self._watch_error: type[Exception] = module.WatchError
        # Any: redis-py's stubs type every reply as a union of all replies (bytes | str | list | ...)
        self._redis: Any = module.Redis.from_url(url)

    blocking = True  # a network round trip: the task engine calls it from a thread

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _by_owner(self, owner: str | None) -> str:
        return f"{self.prefix}owner:{owner or ''}"

    def _open(self, owner: str | None) -> str:
        return f"{self.prefix}open:{owner or ''}"

    def _event(self, record: TaskRecord, was: str | None) -> bytes:
        data = {"id": record.task_id, "status": record.status, "was": was, "origin": self.origin}
        return json.dumps(data, separators=(",", ":")).encode()

    # ---- the TaskStore interface --------------------------------------------------------------------------
    def create(self, record: TaskRecord) -> None:
        expires = record.expires_at()
        with self._redis.pipeline(transaction=True) as pipe:
            if expires is None:
                pipe.set(self._key(record.task_id), _dump(record), nx=True)
            else:
                pipe.set(self._key(record.task_id), _dump(record), nx=True, pxat=_ms(expires))
                pipe.zadd(self._expiry, {record.task_id: expires})
            pipe.zadd(self._index, {record.task_id: record.created_at})
            pipe.zadd(self._by_owner(record.owner), {record.task_id: record.created_at})
            pipe.hset(self._owners, record.task_id, record.owner or "")
            if not record.terminal:
                pipe.sadd(self._open(record.owner), record.task_id)
                pipe.sadd(self._open_all, record.task_id)
            pipe.publish(self.channel, self._event(record, None))
            created = pipe.execute()[0]
        if not created:
            raise ValueError(f"a task {record.task_id} exists already")

    def get(self, task_id: str) -> TaskRecord | None:
        raw = self._redis.get(self._key(task_id))
        return _load(raw) if raw is not None else None

    def update(self, task_id: str, change: Change) -> TaskRecord | None:
        key = self._key(task_id)
        with self._redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    if raw is None:
                        return None
                    record = _load(raw)
                    if record.terminal:
                        return record  # written once: a finished task never changes
                    before = record.to_json()
                    change(record)
                    after = record.to_json()
                    if after == before:
                        return record
                    expires = record.expires_at()
                    pipe.multi()
                    if expires is None:
                        pipe.set(key, _dump(record))
                    else:
                        pipe.set(key, _dump(record), pxat=_ms(expires))
                    if record.terminal:
                        pipe.srem(self._open(record.owner), task_id)
                        pipe.srem(self._open_all, task_id)
                    if _news(before, after):  # a lease renewal is nobody's news
                        pipe.publish(self.channel, self._event(record, before["status"]))
                    pipe.execute()
                    return record
                except self._watch_error:
                    continue  # another worker wrote it between our GET and EXEC: read it again

    def list(self, owner: str | None = None) -> list[TaskRecord]:
        ids = [i.decode() for i in self._redis.zrange(self._index, 0, -1)]
        records: list[TaskRecord] = []
        gone: list[str] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for task_id, raw in zip(chunk, self._redis.mget([self._key(i) for i in chunk]), strict=True):
                if raw is None:
                    gone.append(task_id)  # Redis expired it
                    continue
                record = _load(raw)
                if owner is None or record.owner == owner:
                    records.append(record)
        if gone:
            self._redis.zrem(self._index, *gone)
            self._redis.zrem(self._expiry, *gone)
        return records

    def purge_expired(self, now: float | None = None) -> int:
        """Redis drops the records itself; this drops what the indexes still hold of them."""
        now = time.time() if now is None else now
        ids = [i.decode() for i in self._redis.zrangebyscore(self._expiry, "-inf", f"({now}")]
        if not ids:
            return 0
        owners = [o.decode() if o is not None else "" for o in self._redis.hmget(self._owners, ids)]
        with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(*(self._key(i) for i in ids))
            pipe.zrem(self._index, *ids)
            pipe.zrem(self._expiry, *ids)
            pipe.hdel(self._owners, *ids)
            pipe.srem(self._open_all, *ids)
            for task_id, owner in zip(ids, owners, strict=True):
                pipe.zrem(self._by_owner(owner), task_id)
                pipe.srem(self._open(owner), task_id)
            pipe.execute()
        return len(ids)

    def page(self, owner: str, cursor: str | None, limit: int) -> _Page:
        """Through the owner's sorted set (score: creation time; Redis orders ties by id, as we do)."""
        key = self._by_owner(owner)
        if cursor is None:
            ids = [i.decode() for i in self._redis.zrangebyscore(key, "-inf", "+inf", start=0, num=limit + 1)]
        else:
            created, after = decode_cursor(cursor)
            ties = [i.decode() for i in self._redis.zrangebyscore(key, created, created)]
            later = self._redis.zrangebyscore(key, f"({created!r}", "+inf", start=0, num=limit + 1)
            ids = [*sorted(i for i in ties if i > after), *(i.decode() for i in later)][: limit + 1]
        chosen = ids[:limit]
        raws = self._redis.mget([self._key(i) for i in chosen]) if chosen else []
        records = [_load(raw) for raw in raws if raw is not None]  # None: Redis expired it already
        return records, encode_cursor(records[-1]) if len(ids) > limit and records else None

    def count_open(self, owner: str | None = None) -> int:
        return int(self._redis.scard(self._open(owner) if owner is not None else self._open_all))

    # ---- shared-store extras ------------------------------------------------------------------------------
    async def events(self, ready: Callable[[], None] | None = None) -> AsyncIterator[TaskEvent]:
        """Changes other processes make, as they happen (redis-py's asyncio client, on the calling loop).
        ``ready`` is called once the subscription stands: nothing published after it is missed."""
        from redis import asyncio as aioredis

        client: Any = aioredis.Redis.from_url(self.url)
        pubsub: Any = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
            if ready is not None:
                ready()
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                data = json.loads(message["data"])
                if data.get("origin") == self.origin:
                    continue
                yield TaskEvent(str(data["id"]), str(data["status"]), data.get("was"))
        finally:
            await pubsub.aclose()
            await client.aclose()

    def close(self) -> None:
        self._redis.close()


def _news(before: dict[str, Any], after: dict[str, Any]) -> bool:
    return any(before[k] != after[k] for k in after if k not in ("lease_expires", "updated_at"))


def _ms(epoch_seconds: float) -> int:
    return max(1, int(epoch_seconds * 1000))


def _dump(record: TaskRecord) -> bytes:
    return json.dumps(record.to_json(), separators=(",", ":"), default=str).encode()


def _load(raw: Any) -> TaskRecord:
    return TaskRecord.from_json(json.loads(raw))
