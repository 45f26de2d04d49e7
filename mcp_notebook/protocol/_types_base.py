"""MCP 2025-11-25 types, part 1: JSON-RPC messages, ``_meta``, common types, lifecycle, utilities and tasks.

Import them from :mod:`mcp_notebook.protocol.types`, which documents the conventions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, TypedDict

# --- Base protocol: JSON-RPC messages --------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic#messages

RequestId: TypeAlias = str | int
ProgressToken: TypeAlias = str | int
Cursor: TypeAlias = str
Meta: TypeAlias = dict[str, Any]
"""A ``_meta`` object: https://modelcontextprotocol.io/specification/2025-11-25/basic#meta"""
JSONObject: TypeAlias = dict[str, Any]
JSONSchema: TypeAlias = dict[str, Any]
"""A JSON Schema object; JSON Schema 2020-12 unless its ``$schema`` says otherwise."""


class _JSONRPCRequestBase(TypedDict):
    jsonrpc: Literal["2.0"]
    id: RequestId
    method: str


class JSONRPCRequest(_JSONRPCRequestBase, total=False):
    # Mapping, not dict: a TypedDict such as CallToolRequestParams is a Mapping[str, Any] but never a dict.
    params: Mapping[str, Any]


class _JSONRPCNotificationBase(TypedDict):
    jsonrpc: Literal["2.0"]
    method: str


class JSONRPCNotification(_JSONRPCNotificationBase, total=False):
    params: Mapping[str, Any]


class Result(TypedDict, total=False):
    """Base of every result. Open on the wire: the concrete result types add keys."""

    _meta: Meta


EmptyResult: TypeAlias = Result


class JSONRPCResultResponse(TypedDict):
    jsonrpc: Literal["2.0"]
    id: RequestId
    result: Result


class _ErrorDataBase(TypedDict):
    code: int
    message: str


class ErrorData(_ErrorDataBase, total=False):
    """The ``error`` member of an error response (``Error`` in schema.ts)."""

    data: Any


class _JSONRPCErrorResponseBase(TypedDict):
    jsonrpc: Literal["2.0"]
    error: ErrorData


class JSONRPCErrorResponse(_JSONRPCErrorResponseBase, total=False):
    id: RequestId  # optional since 2025-11-25: absent when the request's id could not be read


JSONRPCResponse: TypeAlias = JSONRPCResultResponse | JSONRPCErrorResponse
JSONRPCMessage: TypeAlias = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse

# --- Base protocol: params, _meta ------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic#meta

RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task"
MODEL_IMMEDIATE_RESPONSE_META_KEY = "io.modelcontextprotocol/model-immediate-response"


class RelatedTaskMetadata(TypedDict):
    """Value at ``_meta["io.modelcontextprotocol/related-task"]`` on messages that belong to a task."""

    taskId: str


RequestMeta = TypedDict(
    "RequestMeta",
    {"progressToken": ProgressToken, "io.modelcontextprotocol/related-task": RelatedTaskMetadata},
    total=False,
)
"""A request's ``_meta``. Open on the wire: other prefixed keys are allowed but not typed here."""


class RequestParams(TypedDict, total=False):
    _meta: RequestMeta


class NotificationParams(TypedDict, total=False):
    _meta: Meta


class TaskMetadata(TypedDict, total=False):
    """``params.task``: asks the receiver to run the request as a task."""

    ttl: int  # requested retention from creation, in milliseconds


class TaskAugmentedRequestParams(RequestParams, total=False):
    task: TaskMetadata


# --- Common types ----------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/schema#common-types

Role: TypeAlias = Literal["user", "assistant"]


class _IconBase(TypedDict):
    src: str  # http(s) URL or data: URI


class Icon(_IconBase, total=False):
    mimeType: str
    sizes: list[str]  # "48x48", ... or "any"
    theme: Literal["light", "dark"]


class _Icons(TypedDict, total=False):
    icons: list[Icon]


class _BaseMetadataBase(TypedDict):
    name: str


class _BaseMetadata(_BaseMetadataBase, total=False):
    title: str


class Annotations(TypedDict, total=False):
    audience: list[Role]
    priority: float  # 0 (least important) .. 1 (effectively required)
    lastModified: str  # ISO 8601


# --- Lifecycle: initialize -------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization


class _ImplementationBase(_BaseMetadata, _Icons):
    version: str


class Implementation(_ImplementationBase, total=False):
    """``clientInfo`` / ``serverInfo``."""

    description: str
    websiteUrl: str


class RootsCapability(TypedDict, total=False):
    listChanged: bool


class SamplingCapability(TypedDict, total=False):
    context: JSONObject  # includeContext other than "none" allowed
    tools: JSONObject  # tools and toolChoice allowed


class ElicitationCapability(TypedDict, total=False):
    """An empty object means form mode only."""

    form: JSONObject
    url: JSONObject


class SamplingTasksCapability(TypedDict, total=False):
    createMessage: JSONObject


class ElicitationTasksCapability(TypedDict, total=False):
    create: JSONObject


class ClientTaskRequestsCapability(TypedDict, total=False):
    sampling: SamplingTasksCapability
    elicitation: ElicitationTasksCapability


class ClientTasksCapability(TypedDict, total=False):
    list: JSONObject
    cancel: JSONObject
    requests: ClientTaskRequestsCapability


class ClientCapabilities(TypedDict, total=False):
    experimental: dict[str, JSONObject]
    roots: RootsCapability
    sampling: SamplingCapability
    elicitation: ElicitationCapability
    tasks: ClientTasksCapability


class PromptsCapability(TypedDict, total=False):
    listChanged: bool


class ResourcesCapability(TypedDict, total=False):
    subscribe: bool
    listChanged: bool


class ToolsCapability(TypedDict, total=False):
    listChanged: bool


class ToolsTasksCapability(TypedDict, total=False):
    call: JSONObject


class ServerTaskRequestsCapability(TypedDict, total=False):
    tools: ToolsTasksCapability


class ServerTasksCapability(TypedDict, total=False):
    list: JSONObject
    cancel: JSONObject
    requests: ServerTaskRequestsCapability


class ServerCapabilities(TypedDict, total=False):
    experimental: dict[str, JSONObject]
    logging: JSONObject
    completions: JSONObject
    prompts: PromptsCapability
    resources: ResourcesCapability
    tools: ToolsCapability
    tasks: ServerTasksCapability


class InitializeRequestParams(RequestParams):
    protocolVersion: str
    capabilities: ClientCapabilities
    clientInfo: Implementation


class _InitializeResultBase(Result):
    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation


class InitializeResult(_InitializeResultBase, total=False):
    instructions: str


# --- Utilities: cancellation, progress, pagination -------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation
# https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress
# https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination


class CancelledNotificationParams(NotificationParams, total=False):
    requestId: RequestId  # MUST be present for non-task requests; tasks use tasks/cancel
    reason: str


class _ProgressNotificationParamsBase(NotificationParams):
    progressToken: ProgressToken
    progress: float  # increases with every notification


class ProgressNotificationParams(_ProgressNotificationParamsBase, total=False):
    total: float
    message: str


class PaginatedRequestParams(RequestParams, total=False):
    cursor: Cursor


class PaginatedResult(Result, total=False):
    nextCursor: Cursor  # absent: this was the last page


# --- Utilities: tasks (experimental) ---------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]


class _TaskBase(TypedDict):
    taskId: str
    status: TaskStatus
    createdAt: str  # ISO 8601
    lastUpdatedAt: str  # ISO 8601
    ttl: int | None  # retention from creation in milliseconds; None means unlimited


class Task(_TaskBase, total=False):
    statusMessage: str
    pollInterval: int  # suggested, in milliseconds


class CreateTaskResult(Result):
    """The immediate answer to a task-augmented request (nested, unlike the 2026 Tasks extension)."""

    task: Task


# These three params are standalone in schema.ts: they do not extend RequestParams, so no ``_meta``.
class GetTaskRequestParams(TypedDict):
    taskId: str


class GetTaskPayloadRequestParams(TypedDict):
    taskId: str


class CancelTaskRequestParams(TypedDict):
    taskId: str


class GetTaskResult(Result, Task):
    """``Result & Task``: the task's fields, flat."""


class CancelTaskResult(Result, Task):
    """``Result & Task``: the task's fields, flat."""


GetTaskPayloadResult: TypeAlias = Result
"""``tasks/result`` answers with the original request's result type (e.g. CallToolResult)."""


class ListTasksResult(PaginatedResult):
    tasks: list[Task]


class TaskStatusNotificationParams(NotificationParams, Task):
    """``NotificationParams & Task``."""
