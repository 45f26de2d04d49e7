"""Tool calls as tasks, and the ``tasks/*`` handlers (both eras): what ``server_methods.py`` calls.

The task engine itself (records, background runs, input, notifications) is :mod:`.tasks`; the wire rules
are :mod:`mcp_notebook.protocol.tasks`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol import modern
from ..protocol import tasks as wire
from ..protocol.errors import INVALID_PARAMS, INVALID_REQUEST, JSONRPCError
from ..tools.context import Context
from ..tools.tool import shown_result
from .tasks import TaskManager, TaskSession, _Running

if TYPE_CHECKING:
    from ..tools.tool import Tool
    from .connection import IncomingRequest

__all__ = [
    "MODERN_TASK_HANDLERS",
    "TASK_HANDLERS",
    "call_then_task",
    "listen_catch_up",
    "listen_task_ids",
    "runs_as_task",
    "start_tool_task",
]

TaskHandler = Callable[[TaskSession, "IncomingRequest"], Awaitable[dict[str, Any]]]


# ---- tools/call as a task ------------------------------------------------------------------------------
def runs_as_task(s: TaskSession, r: IncomingRequest, tool: Tool) -> bool:
    """Whether this call becomes a task (raises the era's error when the tool cannot run this way)."""
    meta = r.modern
    support = wire.task_support(tool.definition)
    if meta is not None and support == "forbidden":
        return False  # (wants_task's first rule, without the client's capabilities read for it)
    return wire.wants_task(
        modern=meta is not None,
        support=support,
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
    def principal(self) -> str | None:
        return getattr(self._base, "principal", None)

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
        # the request's own checks and shaping (declared capabilities and modes, the era's fields, the
        # answer against requestedSchema): one code path, so the task path cannot drift from it again
        return await self._base.input_request(method, params, key, self._deliver)  # type: ignore[no-any-return]

    async def _deliver(self, method: str, params: dict[str, Any], key: str | None) -> dict[str, Any]:
        if self._running.modern:
            return await self._manager.ask(self._running, method, params, key)
        return await self._manager.ask_legacy(self._running, method, params, self._request)


async def start_tool_task(
    s: TaskSession,
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
    owner = s.principal(r)
    record = await manager.acreate(modern=r.modern is not None, tool=tool.name, ttl_ms=ttl, owner=owner)
    server = s.server

    async def run(running: _Running) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        backend = TaskBackend(manager, running, base, r)
        context = Context(backend) if tool.context_param else None
        server.emit("call_started", event)
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
            server.emit("call_finished", finished)
        if isinstance(outcome.exception, JSONRPCError):  # the tool chose a protocol-level failure
            return None, outcome.exception.to_wire()
        return shown_result(outcome, tool.name, server.mask_errors), None

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
    s: TaskSession,
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
    server.emit("call_started", event)
    call.add_done_callback(lambda done: server.emit("call_finished", {**event, **_finished(done)}))
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
        return shown_result(outcome, tool.name, s.server.mask_errors)
    running = holder["running"]

    async def finish(_: _Running) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        try:
            outcome = await call
        except modern.MissingClientCapability as exc:
            return None, exc.error.to_wire()
        if isinstance(outcome.exception, JSONRPCError):
            return None, outcome.exception.to_wire()
        return shown_result(outcome, tool.name, s.server.mask_errors), None

    manager.run(running, finish)
    record = await manager.afind(running.record_id, s.principal(r))
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


def listen_task_ids(s: TaskSession, r: IncomingRequest) -> dict[str, Any]:
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


def listen_catch_up(s: TaskSession, r: IncomingRequest, task_ids: list[str]) -> list[dict[str, Any]]:
    """The current state of each honoured task the listener may see (its own), to send right after the
    acknowledgement: a change made before the stream existed (a quick task that already finished) was
    pushed to nobody, and the client would otherwise learn of it only by polling."""
    states = []
    for task_id in task_ids:
        try:
            record = s.server.tasks.find(task_id, s.principal(r))
        except JSONRPCError:
            continue  # unknown, expired or someone else's: nothing is said about it
        states.append(wire.detailed_task(record))
    return states


# ---- tasks/* handlers ----------------------------------------------------------------------------------
def _gate(s: TaskSession, r: IncomingRequest) -> None:
    """Extension methods need the extension declared on this very request (-32021 otherwise)."""
    if r.modern is not None and not wire.client_declares_extension(r.modern.client_capabilities):
        raise wire.missing_extension_error()


async def _get(s: TaskSession, r: IncomingRequest) -> dict[str, Any]:
    _gate(s, r)
    record = await s.server.tasks.afind(wire.read_task_id(r.params), s.principal(r))
    return wire.detailed_task(record) if r.modern is not None else wire.legacy_task(record)


async def _result(s: TaskSession, r: IncomingRequest) -> dict[str, Any]:
    manager = s.server.tasks
    task_id = wire.read_task_id(r.params)
    await manager.afind(task_id, s.principal(r))
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


async def _list(s: TaskSession, r: IncomingRequest) -> dict[str, Any]:
    """One page of the caller's own tasks, through the store's owner index (O(page), off the loop)."""
    owner = s.principal(r)
    if owner is None:  # tasks#security: list only where requestors are identified
        raise JSONRPCError(INVALID_REQUEST, "tasks/list needs an identified caller; this connection has none")
    cursor = r.params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'cursor' must be a string")
    try:
        records, next_cursor = await s.server.tasks.apage(owner, cursor, s.server.page_size)
    except ValueError as exc:
        raise JSONRPCError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from exc
    live = [s.server.tasks.check_lease(rec) for rec in records if not rec.expired()]
    result: dict[str, Any] = {"tasks": [wire.legacy_task(rec) for rec in live]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _cancel(s: TaskSession, r: IncomingRequest) -> dict[str, Any]:
    _gate(s, r)
    manager = s.server.tasks
    task_id = wire.read_task_id(r.params)
    record = await manager.afind(task_id, s.principal(r))
    if record.terminal:
        if r.modern is not None:
            return {}  # the extension's cancel is an idempotent empty ack
        raise JSONRPCError(
            INVALID_PARAMS, f"Task {task_id} is already {record.status}: it cannot be cancelled"
        )
    record = manager.cancel(task_id)
    return {} if r.modern is not None else wire.legacy_task(record)


async def _update(s: TaskSession, r: IncomingRequest) -> dict[str, Any]:
    _gate(s, r)
    manager = s.server.tasks
    task_id = wire.read_task_id(r.params)
    await manager.afind(task_id, s.principal(r))
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
