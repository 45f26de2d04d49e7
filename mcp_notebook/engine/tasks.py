"""Running tool calls as tasks, in both eras (spec notes §6; the wire rules are in ``protocol/tasks.py``).

A task-run ``tools/call`` is answered at once with a ``CreateTaskResult``; the tool goes on in the
background on this process's loop, and everything about it lives in a :class:`TaskStore` record, so any
process sharing the store answers ``tasks/get``/``tasks/cancel``/``tasks/update``. Cancellation is
cooperative: the task is marked ``cancelled`` at once and the tool sees ``ctx.cancelled``.

Input during a task: in 2025-11-25 the task goes ``input_required`` and the request goes to the client on
the stream of its open ``tasks/result`` (tagged with ``related-task``); with the 2026 extension the task
goes ``input_required`` with ``inputRequests`` that ``tasks/get`` shows, and ``tasks/update`` answers them
(from any worker: the running one watches the store).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..protocol import modern
from ..protocol import tasks as wire
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, JSONRPCError
from ..protocol.tasks import TaskRecord
from ..transports.base import wait_event
from . import otel
from .task_store import InMemoryTaskStore, TaskStore
from .task_store_redis import TaskEvent

if TYPE_CHECKING:
    from ..protocol.jsonrpc import RequestId
    from .connection import IncomingRequest

__all__ = ["TaskManager"]

log = logging.getLogger("mcp_notebook.engine.tasks")

T = TypeVar("T")


# What tasks need from the server and its sessions (engine/server.py, engine/server_session.py), declared
# here so that the import runs one way (server_methods -> tasks; tests/test_layers.py).
class TaskServer(Protocol):
    tasks: TaskManager
    tasks_enabled: bool
    mask_errors: bool
    page_size: int
    run_sync: Callable[[Callable[[], Any]], Awaitable[Any]]
    run_async: Callable[[Coroutine[Any, Any, Any]], Awaitable[Any]] | None

    @property
    def sessions(self) -> Collection[TaskSession]: ...

    def emit(self, event: str, data: dict[str, Any]) -> None: ...


class TaskSession(Protocol):
    @property
    def server(self) -> TaskServer: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...

    @property
    def listens(self) -> dict[RequestId, dict[str, Any]]: ...

    @property
    def listen_principals(self) -> dict[RequestId, str | None]: ...

    def principal(self, request: IncomingRequest) -> str | None: ...

    def notify_soon(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    def spawn_notify(self, method: str, params: dict[str, Any], related_id: RequestId) -> None: ...


@dataclass
class _Running:
    """A task this process is running: how to stop it and where its input answers arrive."""

    record_id: str
    modern: bool
    session: TaskSession
    tool: str = ""
    cancel_event: threading.Event = field(default_factory=threading.Event)
    waiting: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    asked: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    result_request: IncomingRequest | None = None  # legacy: an open tasks/result for this task
    result_opened: asyncio.Event = field(default_factory=asyncio.Event)


class TaskManager:
    """The server's tasks: creation, background runs, and the state behind ``tasks/*``."""

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        default_ttl_ms: int = 3_600_000,
        max_ttl_ms: int = 3_600_000,
        poll_interval_ms: int = 500,
        watch_interval: float = 0.2,
        lease_seconds: float = 8.0,
        max_open_per_principal: int = 64,
        max_open: int = 1000,
    ) -> None:
        self._store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms  # a longer requested ttl is cut to this (tasks#ttl: the server decides)
        self.poll_interval_ms = poll_interval_ms
        self.watch_interval = watch_interval
        # A running task's lease: renewed every quarter of it while this process runs the task; a task
        # whose lease ran out (its worker was killed, its machine is gone) fails when next read.
        self.lease_seconds = lease_seconds
        # The server whose sessions hear status changes (set by Server; None: only the running task's).
        self.server: TaskServer | None = None
        # Tasks not yet terminal: per principal, and in all. A caller past its cap is refused (-32600)
        # until one of its tasks ends; nobody else is affected.
        self.max_open_per_principal = max_open_per_principal
        self.max_open = max_open
        self._running: dict[str, _Running] = {}
        self._jobs: set[asyncio.Task[None]] = set()
        self._changed: dict[str, asyncio.Event] = {}
        self._follower: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the serving loop, once seen
        self._following = asyncio.Event()

    @property
    def store(self) -> TaskStore:
        return self._store

    @store.setter
    def store(self, store: TaskStore) -> None:
        if self._follower is not None:
            self._follower.cancel()
            self._follower = None
        self._store = store

    async def off_loop(self, work: Callable[[], T]) -> T:
        """Run a store call in a thread when the store blocks (SQLite), else right here."""
        self._loop = asyncio.get_running_loop()
        if getattr(self.store, "blocking", False):
            return await asyncio.to_thread(work)
        return work()

    # ---- records -----------------------------------------------------------------------------------------
    def create(self, *, modern: bool, tool: str, ttl_ms: int | None, owner: str | None) -> TaskRecord:
        self.store.purge_expired()  # through the expiry index: costs what expired, not what is stored
        if owner is not None and self.store.count_open(owner) >= self.max_open_per_principal:
            raise JSONRPCError(
                INVALID_REQUEST,
                f"Too many open tasks: at most {self.max_open_per_principal} per caller; "
                "wait for one to finish or cancel one",
            )
        if self.store.count_open() >= self.max_open:
            raise JSONRPCError(
                INVALID_REQUEST, f"Too many open tasks on this server (at most {self.max_open})"
            )
        ttl = self.default_ttl_ms if ttl_ms is None else max(0, min(ttl_ms, self.max_ttl_ms))
        record = TaskRecord(
            wire.new_task_id(),
            "modern" if modern else "legacy",
            tool,
            ttl_ms=int(ttl),
            poll_interval_ms=int(self.poll_interval_ms),
            owner=owner,
            lease_expires=time.time() + self.lease_seconds,
        )
        self.store.create(record)  # durable before the CreateTaskResult goes out (SEP-2663)
        return record

    async def acreate(self, *, modern: bool, tool: str, ttl_ms: int | None, owner: str | None) -> TaskRecord:
        """:meth:`create`, off the event loop when the store blocks."""
        return await self.off_loop(lambda: self.create(modern=modern, tool=tool, ttl_ms=ttl_ms, owner=owner))

    async def afind(self, task_id: str, owner: str | None) -> TaskRecord:
        """:meth:`find`, off the event loop when the store blocks."""
        return await self.off_loop(lambda: self.find(task_id, owner))

    async def apage(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskRecord], str | None]:
        """One page of ``owner``'s live tasks, through the store's owner index, off the loop if it blocks."""

        def page() -> tuple[list[TaskRecord], str | None]:
            self.store.purge_expired()
            return self.store.page(owner, cursor, limit)

        return await self.off_loop(page)

    def find(self, task_id: str, owner: str | None) -> TaskRecord:
        """The task, or -32602 when it is unknown, expired, or bound to another principal."""
        record = self.store.get(task_id)
        if record is None or record.expired() or (record.owner is not None and record.owner != owner):
            raise JSONRPCError(INVALID_PARAMS, f"Unknown task: {task_id}")
        return self.check_lease(record)

    def check_lease(self, record: TaskRecord) -> TaskRecord:
        """The record, failed first if its worker's lease ran out (the worker died without a word)."""
        now = time.time()
        if not _lapsed(record, now) or record.task_id in self._running:
            return record

        def fail(current: TaskRecord) -> None:
            if not _lapsed(current, now):
                return  # renewed meanwhile
            deadline = time.strftime("%H:%M:%S", time.gmtime(current.lease_expires or now))
            wire.check_transition(current.status, "failed")
            current.status = "failed"
            current.error = {
                "code": INTERNAL_ERROR,
                "message": f"the worker running the task stopped (its lease ran out at {deadline} UTC)",
            }
            current.input_requests = {}
            current.lease_expires = None
            current.updated_at = now

        failed = self.store.update(record.task_id, fail)
        if failed is None:
            return record
        if failed.status == "failed" and record.status != "failed":
            self._poke(record.task_id)
            self._announce(failed)
        return failed

    def change(self, task_id: str, status: str | None = None, **fields: Any) -> TaskRecord | None:
        """Move a task along (never out of a terminal state) and wake whoever waits on it."""

        def apply(record: TaskRecord) -> None:
            if record.terminal:
                return
            if status is not None:
                wire.check_transition(record.status, status)
                record.status = status
            for name, value in fields.items():
                setattr(record, name, value)
            record.updated_at = time.time()

        before = self.store.get(task_id)
        record = self.store.update(task_id, apply)
        if record is not None and before is not None and not before.terminal:
            self._poke(task_id)
            if status is not None and status != before.status:
                self._announce(record)
        return record

    def cancel(self, task_id: str) -> TaskRecord:
        record = self.change(task_id, "cancelled", cancel_requested=True, input_requests={})
        if record is None:
            raise JSONRPCError(INVALID_PARAMS, f"Unknown task: {task_id}")
        running = self._running.get(task_id)
        if running is not None:
            self._stop(running)
        return record

    def deliver(self, task_id: str, responses: dict[str, dict[str, Any]]) -> None:
        """``tasks/update``: record the answers (unknown or already answered keys are ignored)."""

        def apply(record: TaskRecord) -> None:
            fresh = {k: v for k, v in responses.items() if k in record.input_requests}
            if not fresh or record.terminal:
                return
            record.input_responses.update(fresh)
            record.input_requests = wire.input_key_filter(record.input_requests, fresh)
            if not record.input_requests and record.status == "input_required":
                record.status = "working"
            record.updated_at = time.time()

        record = self.store.update(task_id, apply)
        if record is not None:
            self._poke(task_id)
            running = self._running.get(task_id)
            if running is not None:
                self._collect(running, record)
                if record.status == "working":
                    self._announce(record)

    async def wait_terminal(self, task_id: str, owner: str | None) -> TaskRecord:
        """Until the task is terminal (legacy ``tasks/result``); re-reads the store every poll interval."""
        self.follow()
        while True:
            record = await self.afind(task_id, owner)
            if record.terminal:
                return record
            event = self._changed.setdefault(task_id, asyncio.Event())
            await wait_event(event, max(self.poll_interval_ms / 1000, 0.05))
            event.clear()

    def _poke(self, task_id: str) -> None:
        loop = self._loop
        if loop is not None and not _running_on(loop):  # a store call off the loop (check_lease in a thread)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._poke, task_id)
            return
        event = self._changed.get(task_id)
        if event is not None:
            event.set()
        running = self._running.get(task_id)
        if running is not None:
            running.wake.set()

    # ---- running -----------------------------------------------------------------------------------------
    def start(
        self,
        record: TaskRecord,
        session: TaskSession,
        run: Callable[[_Running], Awaitable[tuple[dict[str, Any] | None, dict[str, Any] | None]]],
    ) -> None:
        """Run ``run`` in the background; it returns ``(result, error)`` and the task settles on it."""
        self.run(self.register(record, session), run)

    def register(self, record: TaskRecord, session: TaskSession) -> _Running:
        running = _Running(record.task_id, record.era == "modern", session, tool=record.tool)
        self._running[record.task_id] = running
        self.follow()
        return running

    def run(
        self,
        running: _Running,
        run: Callable[[_Running], Awaitable[tuple[dict[str, Any] | None, dict[str, Any] | None]]],
    ) -> None:
        record = running

        async def job() -> None:
            watcher = asyncio.get_running_loop().create_task(self._watch(running))
            try:
                with otel.task_span(running.tool, record.record_id):
                    result, error = await run(running)
            except asyncio.CancelledError:
                result, error = None, {"code": INTERNAL_ERROR, "message": "the server stopped the task"}
            except JSONRPCError as exc:
                result, error = None, exc.to_wire()
            except Exception as exc:
                log.exception("task %s failed: %s", record.record_id, type(exc).__name__)
                result, error = None, {"code": INTERNAL_ERROR, "message": "Internal error"}  # no type leaked
            finally:
                watcher.cancel()
            try:
                if error is not None:
                    self.change(record.record_id, "failed", error=error, input_requests={})
                else:
                    legacy_failed = not running.modern and bool(result and result.get("isError"))
                    status = "failed" if legacy_failed else "completed"
                    self.change(record.record_id, status, result=result, input_requests={})
            finally:
                self._running.pop(record.record_id, None)

        task = asyncio.get_running_loop().create_task(job(), name=f"task {record.record_id}")
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    async def _watch(self, running: _Running) -> None:
        """Notice what other processes did to a running task (a cancel, input answers); renew its lease."""
        renewed = 0.0
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    running.wake.wait(), timeout=min(self.watch_interval, self.lease_seconds / 4)
                )
            running.wake.clear()
            now = time.time()
            if now - renewed >= self.lease_seconds / 4:
                record = self.store.update(running.record_id, self._renew)
                renewed = now
            else:
                record = self.store.get(running.record_id)
            if record is None or record.terminal or record.cancel_requested:
                self._stop(running)  # cancelled, or failed by another worker that took this one for dead
                return
            self._collect(running, record)

    def _renew(self, record: TaskRecord) -> None:
        if not record.terminal:
            record.lease_expires = time.time() + self.lease_seconds

    def _collect(self, running: _Running, record: TaskRecord) -> None:
        for key, future in list(running.waiting.items()):
            answer = record.input_responses.get(key)
            if answer is not None and not future.done():
                future.set_result(answer)

    def _stop(self, running: _Running) -> None:
        running.cancel_event.set()
        for future in running.waiting.values():
            if not future.done():
                future.cancel()

    async def ask(
        self, running: _Running, method: str, params: dict[str, Any], key: str | None
    ) -> dict[str, Any]:
        """Extension: park the task ``input_required`` until ``tasks/update`` brings the answer to ``key``."""
        running.asked += 1
        key = key or f"{method.split('/')[0]}_{running.asked}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        running.waiting[key] = future

        def park(record: TaskRecord) -> None:
            record.input_requests = {**record.input_requests, key: {"method": method, "params": params}}

        try:
            self.store.update(running.record_id, park)
            self.change(running.record_id, "input_required")
            return await future
        except asyncio.CancelledError:
            if running.cancel_event.is_set():
                from ..tools.context import ToolCancelled

                raise ToolCancelled("the task was cancelled while waiting for input") from None
            raise
        finally:
            running.waiting.pop(key, None)

    async def ask_legacy(
        self, running: _Running, method: str, params: dict[str, Any], fallback: IncomingRequest
    ) -> dict[str, Any]:
        """2025-11-25: ``input_required``, then the request on the stream of the client's ``tasks/result``."""
        self.change(running.record_id, "input_required")
        if running.result_request is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    running.result_opened.wait(), timeout=max(5.0, self.poll_interval_ms / 100)
                )
        tagged = {
            **params,
            "_meta": {**params.get("_meta", {}), wire.META_RELATED_TASK: {"taskId": running.record_id}},
        }
        try:
            if running.result_request is not None:
                return await running.result_request.request(method, tagged)
            return await fallback.connection.request(method, tagged)
        finally:
            self.change(running.record_id, "working")

    # ---- notifications -----------------------------------------------------------------------------------
    def _announce(self, record: TaskRecord) -> None:
        """Tell the task's client its new status: ``notifications/tasks/status`` (legacy) or, on a
        ``subscriptions/listen`` stream that asked for this task, ``notifications/tasks`` (extension)."""
        running = self._running.get(record.task_id)
        if record.era == "legacy":
            if running is not None:
                running.session.notify_soon("notifications/tasks/status", wire.legacy_task(record))
            return
        detailed = wire.detailed_task(record)
        sessions = {running.session} if running is not None else set()
        if self.server is not None:
            sessions |= set(self.server.sessions)
        for session in sessions | set(_all_sessions(running)):
            for listen_id, honoured in list(session.listens.items()):
                owner = session.listen_principals.get(listen_id)
                if record.owner is not None and owner != record.owner:
                    continue  # another principal's stream: it learns nothing of this task
                if record.task_id in honoured.get("taskIds", ()):
                    tagged = {**detailed, "_meta": {modern.META_SUBSCRIPTION_ID: listen_id}}
                    with contextlib.suppress(RuntimeError):
                        if session.loop is not None:
                            session.loop.call_soon_threadsafe(
                                session.spawn_notify, "notifications/tasks", tagged, listen_id
                            )

    # ---- other processes' changes (a store with events: Redis) ------------------------------------------
    def follow(self) -> None:
        """Start hearing other workers' changes on this loop, once (a store without events: nothing)."""
        events = getattr(self._store, "events", None)
        loop = self._loop = asyncio.get_running_loop()
        if events is None or (
            self._follower is not None and not self._follower.done() and self._follower.get_loop() is loop
        ):
            return
        self._following = asyncio.Event()
        self._follower = loop.create_task(self._follow(events), name="task events")

    async def following(self, timeout: float = 5.0) -> None:
        """Until other workers' changes are heard (at most ``timeout``: without them, polls still work)."""
        self.follow()
        if self._follower is not None:
            await wait_event(self._following, timeout)

    async def _follow(self, events: Callable[..., AsyncIterator[TaskEvent]]) -> None:
        delay = 0.1
        while True:
            try:
                async for event in events(ready=self._following.set):
                    delay = 0.1
                    self._heard(event)
            except Exception as exc:  # the connection dropped: polls carry on meanwhile
                log.warning("task events: %s: %s; again in %.1f s", type(exc).__name__, exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _heard(self, event: TaskEvent) -> None:
        """Another worker changed a task: wake whoever waits on it here (a running task's watcher sees a
        cancel at once); a new status goes to this worker's listen streams."""
        self._poke(event.task_id)
        if event.status != event.was:
            record = self.store.get(event.task_id)
            if record is not None:
                self._announce(record)

    async def aclose(self) -> None:
        """Stop the tasks this process runs: each ends ``failed`` ("the server stopped the task") in the
        store, so a client (or another worker) does not wait on it forever."""
        if self._follower is not None:
            self._follower.cancel()
            self._follower = None
        jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
        for running in list(self._running.values()):
            running.cancel_event.set()  # a tool in a worker thread stops at its next check
        if jobs:
            await asyncio.wait(jobs, timeout=5)


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _lapsed(record: TaskRecord, now: float) -> bool:
    return not record.terminal and record.lease_expires is not None and record.lease_expires < now


def _all_sessions(running: _Running | None) -> set[TaskSession]:
    return set(running.session.server.sessions) if running is not None else set()
