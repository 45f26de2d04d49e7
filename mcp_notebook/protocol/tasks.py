"""Tasks, sans-IO: the record a task store keeps, its wire shapes in both eras, and the rules.

Two designs share one record (spec notes §6):

- **2025-11-25** (core, experimental): the client asks for a task with ``params.task`` on a tool whose
  ``execution.taskSupport`` allows it; the answer is ``{"task": Task}`` (nested); ``tasks/get``,
  ``tasks/result`` (blocks until terminal), ``tasks/list``, ``tasks/cancel``; ``ttl``/``pollInterval``.
  https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
- **2026-07-28**, extension ``io.modelcontextprotocol/tasks`` (SEP-2663): the server decides; the answer is
  flat (``resultType: "task"``, ``ttlMs``/``pollIntervalMs``); ``tasks/get`` inlines ``result``, ``error``
  or ``inputRequests``; ``tasks/update`` carries ``inputResponses``; ``tasks/cancel`` is an empty ack.

Nothing here does I/O: the engine (``engine/tasks.py``) runs tasks and keeps records in a store.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from .errors import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError

__all__ = [
    "EXTENSION",
    "LEGACY_METHODS",
    "META_RELATED_TASK",
    "MODERN_METHODS",
    "STATUSES",
    "TERMINAL",
    "TaskRecord",
    "TaskSupport",
    "check_transition",
    "client_declares_extension",
    "create_result",
    "decode_cursor",
    "detailed_task",
    "encode_cursor",
    "legacy_payload",
    "legacy_task",
    "missing_extension_error",
    "modern_task",
    "new_task_id",
    "read_task_id",
    "read_task_request",
    "task_support",
    "wants_task",
]

EXTENSION = "io.modelcontextprotocol/tasks"
META_RELATED_TASK = "io.modelcontextprotocol/related-task"
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = frozenset({"completed", "failed", "cancelled"})
TaskSupport = Literal["forbidden", "optional", "required"]
TASK_SUPPORTS: tuple[str, ...] = ("forbidden", "optional", "required")

# Methods of each design (the extension removed tasks/result and tasks/list, and added tasks/update).
LEGACY_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
MODERN_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

# Legal moves (tasks#task-status-lifecycle): terminal states never change.
_TRANSITIONS = {
    "working": {"input_required", "completed", "failed", "cancelled"},
    "input_required": {"working", "completed", "failed", "cancelled"},
}


def new_task_id() -> str:
    """Unguessable: without an authorization context a task id is the only thing guarding the task. Never
    begins with ``-``, so it can be pasted into a command line (``%mcp task get ID``, a shell) as it is."""
    task_id = secrets.token_urlsafe(24)
    while task_id.startswith("-"):
        task_id = secrets.token_urlsafe(24)
    return task_id


def encode_cursor(record: TaskRecord) -> str:
    """A position in an owner's tasks (a store's ``page``): after this record, by creation time then id."""
    return f"{record.created_at!r}~{record.task_id}"


def decode_cursor(cursor: str) -> tuple[float, str]:
    """(creation time, id) of a cursor from :func:`encode_cursor`; ValueError for anything else."""
    created, sep, task_id = cursor.partition("~")
    if not sep or not task_id:
        raise ValueError(f"not a task cursor: {cursor!r}")
    return float(created), task_id


def iso(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclasses.dataclass
class TaskRecord:
    """Everything a store keeps about one task (JSON-able through :meth:`to_json`)."""

    task_id: str
    era: Literal["legacy", "modern"]
    tool: str
    status: str = "working"
    status_message: str | None = None
    created_at: float = dataclasses.field(default_factory=time.time)
    updated_at: float = 0.0
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    owner: str | None = None  # the principal (or session) the task is bound to; None: the id is the key
    result: dict[str, Any] | None = None  # the CallToolResult, once completed
    error: dict[str, Any] | None = None  # a JSON-RPC error object {code, message, data?}, once failed
    input_requests: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # outstanding
    input_responses: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # delivered
    cancel_requested: bool = False
    # the running worker's lease (epoch seconds): renewed while it runs the task; past it, the worker is
    # taken for dead and the task fails (engine/tasks.py). None: no worker holds it (not started, or over)
    lease_expires: float | None = None

    def __post_init__(self) -> None:
        if not self.updated_at:
            self.updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expires_at(self) -> float | None:
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float | None = None) -> bool:
        deadline = self.expires_at()
        return deadline is not None and (now if now is not None else time.time()) > deadline

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def check_transition(old: str, new: str) -> None:
    """Raise ValueError for a move the lifecycle forbids (a terminal task never changes)."""
    if new not in STATUSES:
        raise ValueError(f"unknown task status {new!r}")
    if old != new and new not in _TRANSITIONS.get(old, set()):
        raise ValueError(f"a task cannot go from {old!r} to {new!r}")


# ---- wire shapes -------------------------------------------------------------------------------------------
def _common(record: TaskRecord) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso(record.created_at),
        "lastUpdatedAt": iso(record.updated_at),
    }
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    return task


def legacy_task(record: TaskRecord) -> dict[str, Any]:
    """2025-11-25 ``Task``: ``ttl`` (ms or null) and ``pollInterval``."""
    task = _common(record)
    task["ttl"] = record.ttl_ms
    if record.poll_interval_ms is not None:
        task["pollInterval"] = record.poll_interval_ms
    return task


def modern_task(record: TaskRecord) -> dict[str, Any]:
    """Extension ``Task``: ``ttlMs`` (integer ms or null) and ``pollIntervalMs``."""
    task = _common(record)
    task["ttlMs"] = record.ttl_ms
    if record.poll_interval_ms is not None:
        task["pollIntervalMs"] = record.poll_interval_ms
    return task


def create_result(record: TaskRecord, modern: bool) -> dict[str, Any]:
    """``CreateTaskResult``: nested ``{task}`` (2025-11-25), flat with ``resultType: "task"`` (extension)."""
    if modern:
        return {"resultType": "task", **modern_task(record)}
    return {"task": legacy_task(record)}


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """Extension ``tasks/get``: the task plus what its status implies (inputRequests, result or error).

    The inlined result carries no ``related-task`` key: the ``taskId`` is at the root already.
    """
    task = modern_task(record)
    if record.status == "input_required":
        task["inputRequests"] = dict(record.input_requests)
    elif record.status == "completed" and record.result is not None:
        task["result"] = record.result
    elif record.status == "failed" and record.error is not None:
        task["error"] = record.error
    return task


def legacy_payload(record: TaskRecord) -> dict[str, Any]:
    """2025-11-25 ``tasks/result`` of a terminal task: what ``tools/call`` would have answered, tagged.

    A failed task's JSON-RPC error is raised; a cancelled one is an error too (it has no result).
    """
    related = {META_RELATED_TASK: {"taskId": record.task_id}}
    if record.status in ("completed", "failed") and record.result is not None:  # failed: isError (2025-11-25)
        meta = record.result.get("_meta")
        return {**record.result, "_meta": {**(meta if isinstance(meta, dict) else {}), **related}}
    if record.status == "failed" and record.error is not None:
        raise JSONRPCError(
            int(record.error.get("code", -32603)),
            str(record.error.get("message", "")),
            record.error.get("data"),
        )
    raise JSONRPCError(INVALID_PARAMS, f"Task {record.task_id} was {record.status}: it has no result")


# ---- reading requests -------------------------------------------------------------------------------------
def read_task_id(params: Mapping[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'taskId' must be a non-empty string")
    return task_id


def read_task_request(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """2025-11-25 ``params.task`` (``{ttl?}``): None when absent; -32602 when malformed."""
    task = params.get("task")
    if task is None:
        return None
    if not isinstance(task, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'task' must be an object")
    ttl = task.get("ttl")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'task.ttl' must be a non-negative integer")
    return task


def task_support(definition: Mapping[str, Any]) -> str:
    """A tool definition's ``execution.taskSupport`` ("forbidden" when absent)."""
    execution = definition.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in TASK_SUPPORTS else "forbidden"


def client_declares_extension(capabilities: Mapping[str, Any]) -> bool:
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def missing_extension_error() -> JSONRPCError:
    """-32021: the request needs the tasks extension the client did not declare (SEP-2575/SEP-2663)."""
    return JSONRPCError(
        -32021,
        f"Missing required client capability: extension {EXTENSION}",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def wants_task(
    *,
    modern: bool,
    support: str,
    requested: dict[str, Any] | None,
    server_offers: bool,
    client_declares: bool,
) -> bool:
    """Whether this ``tools/call`` runs as a task; raises the spec's error when it may not run at all.

    2025-11-25 (server/tools#tool-execution): augmenting a "forbidden" tool, or not augmenting a
    "required" one, is -32601; a server that declares no task support ignores ``params.task``.
    Extension: the server decides (a task whenever the tool supports one and the client declared the
    extension on this request); ``params.task`` is ignored; a "required" tool without the extension
    is -32021.
    """
    if modern:
        if support == "forbidden" or not server_offers:
            return False
        if client_declares:
            return True
        if support == "required":
            raise missing_extension_error()
        return False
    if not server_offers:
        if support == "required":  # it cannot run at all: never quietly without its task
            raise JSONRPCError(METHOD_NOT_FOUND, "This tool needs tasks, which this server does not run")
        return False
    if requested is not None and support == "forbidden":
        raise JSONRPCError(METHOD_NOT_FOUND, "This tool does not support task-augmented calls")
    if requested is None and support == "required":
        raise JSONRPCError(
            METHOD_NOT_FOUND, "This tool must be called as a task (execution.taskSupport: required)"
        )
    return requested is not None


def input_key_filter(requests: Mapping[str, Any], responses: Mapping[str, Any]) -> dict[str, Any]:
    """The outstanding input requests once ``responses`` are in (answered keys drop out)."""
    return {key: value for key, value in requests.items() if key not in responses}
