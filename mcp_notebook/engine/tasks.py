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
from collections.abc import Awaitable, Callable, Collection, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol import modern
from ..protocol import tasks as wire
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from ..protocol.tasks import TaskRecord
from ..tools.context import Context
from .paging import page_of
from .task_store import InMemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from ..protocol.jsonrpc import RequestId
    from ..tools.tool import Tool
    from .connection import IncomingRequest

__all__ = ["TASK_HANDLERS", "TaskManager", "runs_as_task"]

log = logging.getLogger("mcp_notebook.engine.tasks")

TaskHandler = Callable[["ServerSession", "IncomingRequest"], Awaitable[dict[str, Any]]]


# What tasks need from the server and its sessions (engine/server.py, engine/server_session.py), declared
# here so that the import runs one way (server_session -> tasks; tests/test_layers.py).
class _TaskServer(Protocol):
    tasks: TaskManager
    tasks_enabled: bool
    page_size: int
    run_sync: Callable[[Callable[[], Any]], Awaitable[Any]]
    run_async: Callable[[Coroutine[Any, Any, Any]], Awaitable[Any]] | None

    @property
    def sessions(self) -> Collection[ServerSession]: ...

    def _emit(self, event: str, data: dict[str, Any]) -> None: ...


class ServerSession(Protocol):
    @property
    def server(self) -> _TaskServer: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...

    @property
    def listens(self) -> dict[RequestId, dict[str, Any]]: ...

    def principal(self, request: IncomingRequest) -> str | None: ...

    def notify_soon(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    def _spawn_notify(self, method: str, params: dict[str, Any], related_id: RequestId) -> None: ...


@dataclass
class _Running:
    """A task this process is running: how to stop it and where its input answers arrive."""

    record_id: str
    modern: bool
    session: ServerSession
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
        max_ttl_ms: int = 86_400_000,
        poll_interval_ms: int = 500,
        watch_interval: float = 0.2,
    ) -> None:
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.watch_interval = watch_interval
        self._running: dict[str, _Running] = {}
        self._jobs: set[asyncio.Task[None]] = set()
        self._changed: dict[str, asyncio.Event] = {}

    # ---- records -----------------------------------------------------------------------------------------
    def create(self, *, modern: bool, tool: str, ttl_ms: int | None, owner: str | None) -> TaskRecord:
        self.store.purge_expired()
        ttl = self.default_ttl_ms if ttl_ms is None else min(ttl_ms, self.max_ttl_ms)
        record = TaskRecord(
            wire.new_task_id(),
            "modern" if modern else "legacy",
            tool,
            ttl_ms=int(ttl),
            poll_interval_ms=int(self.poll_interval_ms),
            owner=owner,
        )
        self.store.create(record)  # durable before the CreateTaskResult goes out (SEP-2663)
        return record

    def find(self, task_id: str, owner: str | None) -> TaskRecord:
        """The task, or -32602 when it is unknown, expired, or bound to another principal."""
        record = self.store.get(task_id)
        if record is None or record.expired() or (record.owner is not None and record.owner != owner):
            raise JSONRPCError(INVALID_PARAMS, f"Unknown task: {task_id}")
        return record

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
        while True:
            record = self.find(task_id, owner)
            if record.terminal:
                return record
            event = self._changed.setdefault(task_id, asyncio.Event())
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=max(self.poll_interval_ms / 1000, 0.05))
            event.clear()

    def _poke(self, task_id: str) -> None:
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
        session: ServerSession,
        run: Callable[[_Running], Awaitable[tuple[dict[str, Any] | None, dict[str, Any] | None]]],
    ) -> None:
        """Run ``run`` in the background; it returns ``(result, error)`` and the task settles on it."""
        self.run(self.register(record, session), run)

    def register(self, record: TaskRecord, session: ServerSession) -> _Running:
        running = _Running(record.task_id, record.era == "modern", session)
        self._running[record.task_id] = running
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
                result, error = await run(running)
            except asyncio.CancelledError:
                result, error = None, {"code": INTERNAL_ERROR, "message": "the server stopped the task"}
            except JSONRPCError as exc:
                result, error = None, exc.to_wire()
            except Exception as exc:
                log.exception("task %s failed", record.record_id)
                result, error = (
                    None,
                    {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__}"},
                )
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
        """Notice what other processes did to a running task: a cancel, or input answers."""
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(running.wake.wait(), timeout=self.watch_interval)
            running.wake.clear()
            record = self.store.get(running.record_id)
            if record is None or record.status == "cancelled" or record.cancel_requested:
                self._stop(running)
                return
            self._collect(running, record)

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
        for session in sessions | set(_all_sessions(running)):
            for listen_id, honoured in list(session.listens.items()):
                if record.task_id in honoured.get("taskIds", ()):
                    tagged = {**detailed, "_meta": {modern.META_SUBSCRIPTION_ID: listen_id}}
                    with contextlib.suppress(RuntimeError):
                        if session.loop is not None:
                            session.loop.call_soon_threadsafe(
                                session._spawn_notify, "notifications/tasks", tagged, listen_id
                            )

    async def aclose(self) -> None:
        for running in list(self._running.values()):
            self._stop(running)
        jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.wait(jobs, timeout=5)


def _all_sessions(running: _Running | None) -> set[ServerSession]:
    return set(running.session.server.sessions) if running is not None else set()


# ---- tools/call as a task ------------------------------------------------------------------------------
def runs_as_task(s: ServerSession, r: IncomingRequest, tool: Tool) -> bool:
    """Whether this call becomes a task (raises the era's error when the tool cannot run this way)."""
    meta = r.modern
    return wire.wants_task(
        modern=meta is not None,
        support=wire.task_support(tool.definition),
        requested=None if meta is not None else wire.read_task_request(r.params),
        server_offers=s.server.tasks_enabled,
        client_declares=meta is not None and wire.client_declares_extension(meta.client_capabilities),
    )


class TaskBackend:
    """A tool's Context backend while it runs as a task: the request's facts, the task's cancel and input."""

    def __init__(self, manager: TaskManager, running: _Running, base: Any, request: IncomingRequest) -> None:
        self._manager, self._running, self._base, self._request = manager, running, base, request
        self.loop = asyncio.get_running_loop()

    @property
    def request_id(self) -> str | int:
        return self._running.record_id

    @property
    def client_info(self) -> dict[str, Any]:
        return dict(self._base.client_info)

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return dict(self._base.client_capabilities)

    @property
    def cancel_event(self) -> threading.Event:
        return self._running.cancel_event

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self._running.modern:
            return  # the extension has no progress for tasks
        with contextlib.suppress(Exception):  # the original request's stream may be gone
            await self._base.progress(progress, total, message)

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if self._running.modern:
            return  # nor log notifications
        with contextlib.suppress(Exception):
            await self._base.log(level, data, logger)

    async def request(self, method: str, params: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        if self._running.modern:
            capability = modern.INPUT_CAPABILITY[method]
            if not isinstance(self.client_capabilities.get(capability), dict):
                raise modern.MissingClientCapability(capability)
            if method == "elicitation/create" and params.get("mode") == "form":
                params = {k: v for k, v in params.items() if k != "mode"}
            return await self._manager.ask(self._running, method, params, key)
        if method == "elicitation/create":
            params = self._base._elicitation_params(params)
        return await self._manager.ask_legacy(self._running, method, params, self._request)


async def start_tool_task(
    s: ServerSession,
    r: IncomingRequest,
    tool: Tool,
    arguments: dict[str, Any] | None,
    base: Any,
    event: dict[str, Any],
) -> dict[str, Any]:
    """Create the task, start the tool in the background, answer with the CreateTaskResult."""
    manager = s.server.tasks
    requested = wire.read_task_request(r.params) if r.modern is None else None
    ttl = requested.get("ttl") if requested else None
    record = manager.create(modern=r.modern is not None, tool=tool.name, ttl_ms=ttl, owner=s.principal(r))
    server = s.server

    async def run(running: _Running) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        backend = TaskBackend(manager, running, base, r)
        context = Context(backend) if tool.context_param else None
        server._emit("call_started", event)
        finished: dict[str, Any] = {**event, "outcome": None, "status": "cancelled"}
        try:
            outcome = await tool.call(
                arguments, context, run_sync=server.run_sync, run_async=server.run_async
            )
            failed = outcome.result.get("isError") is True or outcome.exception is not None
            finished |= {"outcome": outcome, "status": "failed" if failed else "done"}
        except modern.MissingClientCapability as exc:
            finished["status"] = "failed"
            return None, exc.error.to_wire()
        finally:
            server._emit("call_finished", finished)
        if isinstance(outcome.exception, JSONRPCError):  # the tool chose a protocol-level failure
            return None, outcome.exception.to_wire()
        return outcome.result, None

    manager.start(record, s, run)
    return wire.create_result(record, r.modern is not None)


class _Handoff:
    """A Context backend that is the request's (MRTR) until ``ctx.start_task()``, the task's after it."""

    def __init__(self, base: Any, start: Callable[[], TaskBackend]) -> None:
        self.current: Any = base
        self._start = start
        self.started = asyncio.Event()
        self.loop = asyncio.get_running_loop()

    def __getattr__(self, name: str) -> Any:  # request_id, client_info, progress, log, request...
        return getattr(self.current, name)

    async def start_task(self) -> None:
        if not self.started.is_set():
            self.current = self._start()
            self.started.set()


async def call_then_task(
    s: ServerSession,
    r: IncomingRequest,
    tool: Tool,
    arguments: dict[str, Any] | None,
    base: Any,
    input_required: Callable[[modern.InputRequired], dict[str, Any]],
    event: dict[str, Any],
) -> dict[str, Any]:
    """2026, ``task_start="explicit"``: run the tool on the request (its input through MRTR rounds) until
    it calls ``ctx.start_task()``; then answer with the CreateTaskResult and let it go on as the task.
    A tool that finishes first answers directly (the extension's immediate-result shortcut)."""
    manager, server = s.server.tasks, s.server
    holder: dict[str, _Running] = {}

    def start() -> TaskBackend:
        record = manager.create(modern=True, tool=tool.name, ttl_ms=None, owner=s.principal(r))
        holder["running"] = running = manager.register(record, s)
        return TaskBackend(manager, running, base, r)

    handoff = _Handoff(base, start)
    context = Context(handoff) if tool.context_param else None
    call = asyncio.ensure_future(
        tool.call(arguments, context, run_sync=server.run_sync, run_async=server.run_async)
    )
    server._emit("call_started", event)
    call.add_done_callback(lambda done: server._emit("call_finished", {**event, **_finished(done)}))
    started = asyncio.ensure_future(handoff.started.wait())
    try:
        await asyncio.wait({call, started}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        call.cancel()
        raise
    finally:
        started.cancel()
    if not handoff.started.is_set():
        try:
            outcome = call.result()
        except modern.InputRequired as needed:
            return input_required(needed)
        return outcome.result
    running = holder["running"]

    async def finish(_: _Running) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        try:
            outcome = await call
        except modern.MissingClientCapability as exc:
            return None, exc.error.to_wire()
        if isinstance(outcome.exception, JSONRPCError):
            return None, outcome.exception.to_wire()
        return outcome.result, None

    manager.run(running, finish)
    record = manager.find(running.record_id, s.principal(r))
    return wire.create_result(record, True)


def _finished(done: asyncio.Future[Any]) -> dict[str, Any]:
    """The ``call_finished`` fields of a finished tool call (listeners never keep a call "running")."""
    if done.cancelled():
        return {"outcome": None, "status": "cancelled"}
    error = done.exception()
    if error is not None:
        return {
            "outcome": None,
            "status": "input required" if isinstance(error, modern.InputRequired) else "failed",
        }
    outcome = done.result()
    return {"outcome": outcome, "status": "failed" if outcome.result.get("isError") is True else "done"}


def listen_task_ids(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    """``subscriptions/listen`` ``notifications.taskIds`` (extension): honoured for a declaring client."""
    requested = r.params.get("notifications")
    ids = requested.get("taskIds") if isinstance(requested, dict) else None
    if ids is None:
        return {}
    meta = r.modern
    if meta is None or not wire.client_declares_extension(meta.client_capabilities):
        raise wire.missing_extension_error()
    if not isinstance(ids, list):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'notifications.taskIds' must be an array")
    return {"taskIds": [i for i in ids if isinstance(i, str)]}


# ---- tasks/* handlers ----------------------------------------------------------------------------------
def _gate(s: ServerSession, r: IncomingRequest) -> None:
    """Extension methods need the extension declared on this very request (-32021 otherwise)."""
    if r.modern is not None and not wire.client_declares_extension(r.modern.client_capabilities):
        raise wire.missing_extension_error()


async def _get(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    _gate(s, r)
    record = s.server.tasks.find(wire.read_task_id(r.params), s.principal(r))
    return wire.detailed_task(record) if r.modern is not None else wire.legacy_task(record)


async def _result(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    manager = s.server.tasks
    task_id = wire.read_task_id(r.params)
    manager.find(task_id, s.principal(r))
    running = manager._running.get(task_id)
    if running is not None:
        running.result_request = r
        running.result_opened.set()
    try:
        record = await manager.wait_terminal(task_id, s.principal(r))
    finally:
        if running is not None and running.result_request is r:
            running.result_request = None
            running.result_opened.clear()
    return wire.legacy_payload(record)


async def _list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    manager = s.server.tasks
    manager.store.purge_expired()
    owner = s.principal(r)
    records = [rec for rec in manager.store.list(owner) if not rec.expired()]
    items = [wire.legacy_task(rec) for rec in records]
    page, next_cursor = page_of(items, "taskId", r.params, s.server.page_size)
    result: dict[str, Any] = {"tasks": page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _cancel(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    _gate(s, r)
    manager = s.server.tasks
    task_id = wire.read_task_id(r.params)
    record = manager.find(task_id, s.principal(r))
    if record.terminal:
        if r.modern is not None:
            return {}  # the extension's cancel is an idempotent empty ack
        raise JSONRPCError(
            INVALID_PARAMS, f"Task {task_id} is already {record.status}: it cannot be cancelled"
        )
    record = manager.cancel(task_id)
    return {} if r.modern is not None else wire.legacy_task(record)


async def _update(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    _gate(s, r)
    manager = s.server.tasks
    task_id = wire.read_task_id(r.params)
    manager.find(task_id, s.principal(r))
    manager.deliver(task_id, modern.read_input_responses(r.params))
    return {}


TASK_HANDLERS: dict[str, TaskHandler] = {
    "tasks/get": _get,
    "tasks/result": _result,
    "tasks/list": _list,
    "tasks/cancel": _cancel,
}
MODERN_TASK_HANDLERS: dict[str, TaskHandler] = {
    "tasks/get": _get,
    "tasks/update": _update,
    "tasks/cancel": _cancel,
}
