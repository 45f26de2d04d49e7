"""The client's side of tasks, both eras and both roles (a mixin of :class:`.client.Client`).

As requestor: ``call_tool(..., task=True)`` (automatic for a tool whose ``execution.taskSupport`` is
"required"; with the 2026 Tasks extension the server decides) answers with the tool's result once the
task is done, polling at the server's ``pollInterval``; the caller sees each status through
``on_task``; cancelling the awaiting coroutine sends ``tasks/cancel``. ``get_task``, ``task_result``,
``list_tasks`` and ``cancel_task`` reach tasks directly, e.g. one started before a kernel restart.

As receiver (2025-11-25): a server may task-augment its ``elicitation/create`` and
``sampling/createMessage`` requests to us; we answer ``CreateTaskResult`` at once, run the handler in
the background, and serve ``tasks/get``/``tasks/result``/``tasks/list``/``tasks/cancel`` for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol import tasks as wire
from ..protocol.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from ..protocol.session import has_capability
from ..protocol.tasks import TaskRecord
from ..transports.base import wait_event
from .client_inputs import _INPUT_METHODS, InputRequest
from .task_store import InMemoryTaskStore

if TYPE_CHECKING:
    from .connection import IncomingRequest
    from .modern_client import Subscriptions
    from .trace import Trace

__all__ = ["TaskCancelledError", "TaskClientMixin", "TaskStatusCallback"]

TaskStatusCallback = Callable[[dict[str, Any]], Any]  # the task's wire dict (taskId, status, ...)
MIN_POLL = 0.02  # seconds: never poll faster, whatever the server says
MAX_POLL = 5.0  # seconds: never wait longer between looks (status notifications may not come)
DEFAULT_POLL = 0.5
_BACKGROUND: set[asyncio.Task[None]] = set()  # unwatch jobs still running (a reference keeps them alive)


class TaskCancelledError(MCPError):
    """The task ended ``cancelled`` (by us, or by anyone else holding its id)."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id} was cancelled")
        self.task_id = task_id


def _poll_seconds(task: dict[str, Any]) -> float:
    value = task.get("pollIntervalMs", task.get("pollInterval"))
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return DEFAULT_POLL
    return min(max(value / 1000, MIN_POLL), MAX_POLL)


async def _call(callback: TaskStatusCallback | None, task: dict[str, Any]) -> None:
    if callback is None:
        return
    value = callback(dict(task))
    if inspect.isawaitable(value):
        await value


class TaskClientMixin:
    """Task methods for the client (needs ``request``, ``session``, ``_modern``, the input handlers)."""

    _received_tasks: _ReceivedTasks | None = None
    if TYPE_CHECKING:  # provided by Client
        name: str
        listen: bool
        subscriptions: Subscriptions
        _modern: bool
        _tools: dict[str, dict[str, Any]]
        trace: Trace
        elicitation_handler: Any
        sampling_handler: Any

        @property
        def server_capabilities(self) -> dict[str, Any]: ...

        async def request(
            self, method: str, params: dict[str, Any] | None = None, **options: Any
        ) -> dict[str, Any]: ...

        async def answer_input(self, request: InputRequest) -> dict[str, Any]: ...

    # ---- what we declare ---------------------------------------------------------------------------------
    def _task_capabilities(self) -> dict[str, Any]:
        """2025-11-25 ``tasks``: we run the kinds of server requests we can answer as tasks."""
        requests: dict[str, Any] = {}
        if self.elicitation_handler is not None:
            requests["elicitation"] = {"create": {}}
        if self.sampling_handler is not None:
            requests["sampling"] = {"createMessage": {}}
        return {"list": {}, "cancel": {}, "requests": requests} if requests else {}

    # ---- requestor: tools/call as a task -----------------------------------------------------------------
    def _task_for_call(self, name: str, task: bool | dict[str, Any] | None) -> dict[str, Any] | None:
        """Legacy ``params.task`` for this call (None: a plain call). Refuses what the spec forbids."""
        if self._modern:
            return None  # the extension: the server decides; params.task is not sent
        support = wire.task_support(self._tools.get(name) or {})
        if task is None:
            if support != "required":
                return None  # the usual call: nothing to ask of the server's capabilities
            task = True
        offers = has_capability(self.server_capabilities, ("tasks", "requests", "tools", "call"))
        if not task:
            if support == "required":
                raise LocalProtocolError(
                    f"tool {name!r} must be called as a task (execution.taskSupport 'required'),"
                    " but the server does not declare tasks.requests.tools.call"
                    if not offers
                    else f"tool {name!r} must be called as a task: pass task=True"
                )
            return None
        if not offers:
            raise LocalProtocolError(
                f"tool {name!r} cannot be called as a task: the server does not declare "
                "tasks.requests.tools.call"
            )
        if support == "forbidden":
            raise LocalProtocolError(
                f"tool {name!r} does not support tasks (execution.taskSupport forbidden)"
            )
        return dict(task) if isinstance(task, dict) else {}

    async def _follow_task(
        self,
        name: str,
        created: dict[str, Any],
        on_task: TaskStatusCallback | None,
    ) -> dict[str, Any]:
        """From a CreateTaskResult to the tool's result: poll, answer input, cancel if we are cancelled."""
        task = created["task"] if "task" in created and not self._modern else created
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str):
            raise RemoteProtocolError(f"tool {name!r}: a CreateTaskResult without a taskId: {created!r}")
        self.trace.record("note", f"tool {name!r} runs as task {task_id}")
        try:
            await _call(on_task, task)
            if self._modern:
                return await self._follow_modern(task_id, task, on_task)
            return await self._follow_legacy(task_id, task, on_task)
        except asyncio.CancelledError:
            # tasks are cancelled with tasks/cancel, never notifications/cancelled (tasks#cancellation)
            with contextlib.suppress(Exception):
                await asyncio.shield(asyncio.wait_for(self.cancel_task(task_id), timeout=5))
            raise

    async def _follow_legacy(
        self, task_id: str, task: dict[str, Any], on_task: TaskStatusCallback | None
    ) -> dict[str, Any]:
        status = task.get("status")
        while True:
            if status == "cancelled":
                raise TaskCancelledError(task_id)
            if status in wire.TERMINAL or status == "input_required":
                # tasks/result blocks until terminal; the server's input requests come on its stream
                try:
                    result = await self.task_result(task_id)
                except RequestTimeoutError:
                    pass  # still running: back to polling
                else:
                    final = "failed" if result.get("isError") else "completed"  # failed covers isError
                    if final != status:
                        await _call(on_task, {**task, "status": final})
                    return result
            await asyncio.sleep(_poll_seconds(task))
            task = await self.get_task(task_id)
            if task.get("status") != status:
                status = task.get("status")
                await _call(on_task, task)

    async def _follow_modern(
        self, task_id: str, task: dict[str, Any], on_task: TaskStatusCallback | None
    ) -> dict[str, Any]:
        """Until the task ends: its status comes on the ``subscriptions/listen`` stream (``notifications/
        tasks``, the task named in the filter's ``taskIds``) when the server honours that, else (and as a
        fallback, since a notification can be lost) from ``tasks/get`` at the server's poll interval."""
        pushed: list[dict[str, Any]] = []
        arrived = asyncio.Event()

        def heard(params: dict[str, Any]) -> None:
            if params.get("taskId") == task_id:
                pushed.append({k: v for k, v in params.items() if k != "_meta"})
                arrived.set()

        remove = self.subscriptions.on("notifications/tasks", heard)
        listening = watched = False
        try:
            if self.listen and has_capability(self.server_capabilities, ("extensions", wire.EXTENSION)):
                watched = True  # the filter names the task from here on, however the watch ends
                with contextlib.suppress(MCPError, asyncio.TimeoutError):
                    await self.subscriptions.watch("taskIds", task_id)
                    listening = task_id in self.subscriptions.honoured.get("taskIds", ())
            return await self._track_modern(task_id, task, on_task, pushed, arrived, listening)
        finally:
            remove()
            if watched:  # in the background: a cancelled call must not wait for a new listen stream
                unwatch = asyncio.get_running_loop().create_task(self._unwatch(task_id))
                _BACKGROUND.add(unwatch)
                unwatch.add_done_callback(_BACKGROUND.discard)

    async def _unwatch(self, task_id: str) -> None:
        with contextlib.suppress(Exception):
            await self.subscriptions.unwatch("taskIds", task_id)

    async def _next_task(
        self,
        task_id: str,
        task: dict[str, Any],
        pushed: list[dict[str, Any]],
        arrived: asyncio.Event,
        listening: bool,
    ) -> dict[str, Any]:
        """The task's next state: pushed on the listen stream, else polled."""
        wait = MAX_POLL if listening else _poll_seconds(task)
        if not pushed:
            await wait_event(arrived, wait)
        arrived.clear()
        if pushed:
            latest = pushed[-1]
            pushed.clear()
            return latest
        return await self.get_task(task_id)

    async def _track_modern(
        self,
        task_id: str,
        task: dict[str, Any],
        on_task: TaskStatusCallback | None,
        pushed: list[dict[str, Any]],
        arrived: asyncio.Event,
        listening: bool,
    ) -> dict[str, Any]:
        answered: set[str] = set()
        status = task.get("status")
        while True:
            if status == "completed":
                result = task.get("result")
                if not isinstance(result, dict):
                    raise RemoteProtocolError(f"task {task_id} completed without a result")
                return result
            if status == "failed":
                error = task["error"] if isinstance(task.get("error"), dict) else {}
                raise JSONRPCError(
                    int(error.get("code", -32603)), str(error.get("message", "")), error.get("data")
                )
            if status == "cancelled":
                raise TaskCancelledError(task_id)
            requests = task.get("inputRequests")
            if status == "input_required" and isinstance(requests, dict):
                fresh = {k: v for k, v in requests.items() if k not in answered and isinstance(v, dict)}
                if fresh:  # keys are unique over the task's life: answer each once
                    responses = {key: await self._answer_request(req) for key, req in fresh.items()}
                    answered.update(fresh)
                    await self.request("tasks/update", {"taskId": task_id, "inputResponses": responses})
                    task = await self.get_task(task_id)
                    status = task.get("status")
                    await _call(on_task, task)
                    continue
            task = await self._next_task(task_id, task, pushed, arrived, listening)
            if task.get("status") != status or status == "input_required":
                if task.get("status") != status:
                    await _call(on_task, task)
                status = task.get("status")

    async def _answer_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """One ``inputRequests`` entry of a task, through the client's input handlers."""
        kind = _INPUT_METHODS.get(request.get("method", ""))
        if kind is None:
            raise RemoteProtocolError(f"the task asked for unknown input {request.get('method')!r}")
        params = request.get("params")
        return await self.answer_input(
            InputRequest(kind, params if isinstance(params, dict) else {}, self.name)
        )

    # ---- requestor: tasks/* ------------------------------------------------------------------------------
    async def get_task(self, task_id: str) -> dict[str, Any]:
        """``tasks/get``: the task (2026: with ``result``, ``error`` or ``inputRequests`` per its status)."""
        return await self.request("tasks/get", {"taskId": task_id})

    async def task_result(self, task_id: str) -> dict[str, Any]:
        """The tool's result of a finished task: ``tasks/result`` (2025-11-25, waits until the task is done)
        or the ``result`` that 2026's ``tasks/get`` inlines (waits by polling)."""
        if not self._modern:
            return await self.request("tasks/result", {"taskId": task_id})
        task = await self.get_task(task_id)
        return await self._follow_modern(task_id, task, None)

    async def list_tasks(self) -> list[dict[str, Any]]:
        """``tasks/list`` (2025-11-25; the 2026 extension has no listing: an error there)."""
        if self._modern:
            raise LocalProtocolError("the 2026-07-28 Tasks extension has no tasks/list")
        tasks: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.request("tasks/list", {"cursor": cursor} if cursor is not None else None)
            tasks.extend(result.get("tasks", []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return tasks

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        """``tasks/cancel``: the task (2025-11-25) or an empty ack (2026; the status follows on tasks/get)."""
        return await self.request("tasks/cancel", {"taskId": task_id})

    # ---- receiver: the server's task-augmented requests to us (2025-11-25) -------------------------------
    def _task_table(self) -> _ReceivedTasks:
        if self._received_tasks is None:
            self._received_tasks = _ReceivedTasks()
        return self._received_tasks

    async def _on_task_request(self, request: IncomingRequest) -> dict[str, Any] | None:
        """Answer ``tasks/*`` from the server, or start a task for an augmented request; None: not ours."""
        table = self._task_table()
        if request.method.startswith("tasks/"):
            return await table.handle(request)
        requested = request.params.get("task")
        kind = {
            "elicitation/create": ("elicitation", "create"),
            "sampling/createMessage": ("sampling", "createMessage"),
        }
        path = kind.get(request.method)
        if requested is None or path is None:
            return None
        if not has_capability(self._task_capabilities(), ("requests", *path)):
            return None  # not declared for this kind: process it normally, ignoring params.task
        wire.read_task_request(request.params)
        params = {k: v for k, v in request.params.items() if k != "task"}
        return table.start(request.method, params, requested.get("ttl"), self)


class _ReceivedTasks:
    """The tasks the server asked us to run (in memory: they end with this client)."""

    def __init__(self) -> None:
        self.store = InMemoryTaskStore()
        self.poll_interval_ms = 200
        self._done: dict[str, asyncio.Event] = {}
        self._jobs: dict[str, asyncio.Task[None]] = {}

    def start(self, method: str, params: dict[str, Any], ttl: Any, client: TaskClientMixin) -> dict[str, Any]:

        record = TaskRecord(
            wire.new_task_id(),
            "legacy",
            method,
            ttl_ms=ttl if isinstance(ttl, int) else 600_000,
            poll_interval_ms=self.poll_interval_ms,
        )
        self.store.create(record)
        done = self._done[record.task_id] = asyncio.Event()

        async def run() -> None:
            try:
                self._set(record.task_id, "input_required" if method == "elicitation/create" else "working")
                answer = await client.answer_input(InputRequest(_INPUT_METHODS[method], params, client.name))
                self._set(record.task_id, "completed", result=answer)
            except asyncio.CancelledError:
                self._set(record.task_id, "cancelled")
            except JSONRPCError as exc:
                self._set(record.task_id, "failed", error=exc.to_wire())
            except Exception as exc:
                self._set(
                    record.task_id,
                    "failed",
                    error={"code": -32603, "message": f"{type(exc).__name__}: {exc}"},
                )
            finally:
                done.set()

        self._jobs[record.task_id] = asyncio.get_running_loop().create_task(run())
        return wire.create_result(record, modern=False)

    def _set(self, task_id: str, status: str, **fields: Any) -> None:
        def apply(record: TaskRecord) -> None:
            if record.terminal:
                return
            wire.check_transition(record.status, status)
            record.status = status
            for key, value in fields.items():
                setattr(record, key, value)
            record.updated_at = time.time()

        self.store.update(task_id, apply)

    def _find(self, request: IncomingRequest) -> TaskRecord:
        task_id = wire.read_task_id(request.params)
        record = self.store.get(task_id)
        if record is None or record.expired():
            raise JSONRPCError(INVALID_PARAMS, f"Unknown task: {task_id}")
        return record

    async def handle(self, request: IncomingRequest) -> dict[str, Any]:
        method = request.method
        if method == "tasks/list":
            return {"tasks": [wire.legacy_task(r) for r in self.store.list() if not r.expired()]}
        record = self._find(request)
        if method == "tasks/get":
            return wire.legacy_task(record)
        if method == "tasks/result":
            await self._done[record.task_id].wait()
            return wire.legacy_payload(self._find(request))
        if method == "tasks/cancel":
            if record.terminal:
                raise JSONRPCError(INVALID_PARAMS, f"Task {record.task_id} is already {record.status}")
            self._set(record.task_id, "cancelled")
            job = self._jobs.get(record.task_id)
            if job is not None:
                job.cancel()
            return wire.legacy_task(self._find(request))
        raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
