"""Every MCP 2025-11-25 type, as TypedDicts in exactly the wire shape (camelCase keys, ``_meta``).

Normative source: ``schema/2025-11-25/schema.ts`` in
https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2025-11-25/schema.ts
(rendered: https://modelcontextprotocol.io/specification/2025-11-25/schema).

Conventions, so that this runs on Python 3.10 with the standard library only:

- A type with required and optional keys is two classes: ``_XBase`` holds the required keys and
  ``X(_XBase, total=False)`` adds the optional ones (``NotRequired`` needs 3.11).
- TS ``unknown``/``object`` values are ``Any``; open JSON objects are ``dict[str, Any]``. A TypedDict is
  closed for mypy, but most TS interfaces here are open (``Result`` has an index signature, capabilities
  are "not a closed set"): keys these types do not name are still legal on the wire.
- TS ``number`` is ``int`` where the generated ``schema.json`` says ``integer`` (sizes, counts,
  milliseconds) and ``float`` where it says ``number`` (progress, priorities, temperature).
- Keys that are not identifiers (``$schema``, ``io.modelcontextprotocol/related-task``) use the functional
  ``TypedDict("Name", {...})`` form. Tool input/output schemas are arbitrary JSON Schema: :data:`JSONSchema`.
- Per-method envelopes (``CallToolRequest`` = envelope + ``method`` + params) are not repeated here:
  :class:`JSONRPCRequest` plus the ``*RequestParams`` types carry the same information.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, TypedDict

__all__ = [
    "LOGGING_LEVELS",
    "MODEL_IMMEDIATE_RESPONSE_META_KEY",
    "RELATED_TASK_META_KEY",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "BooleanSchema",
    "CallToolRequestParams",
    "CallToolResult",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "ClientTaskRequestsCapability",
    "ClientTasksCapability",
    "CompleteArgument",
    "CompleteContext",
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "ContentBlock",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "CreateTaskResult",
    "Cursor",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitRequestedSchema",
    "ElicitResult",
    "ElicitationCapability",
    "ElicitationCompleteNotificationParams",
    "ElicitationTasksCapability",
    "EmbeddedResource",
    "EmptyResult",
    "EnumOption",
    "EnumSchema",
    "ErrorData",
    "GetPromptRequestParams",
    "GetPromptResult",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequestParams",
    "GetTaskResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "IncludeContext",
    "InitializeRequestParams",
    "InitializeResult",
    "JSONObject",
    "JSONRPCErrorResponse",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONRPCResultResponse",
    "JSONSchema",
    "LegacyTitledEnumSchema",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsResult",
    "ListTasksResult",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "Meta",
    "ModelHint",
    "ModelPreferences",
    "MultiSelectEnumSchema",
    "NotificationParams",
    "NumberSchema",
    "PaginatedRequestParams",
    "PaginatedResult",
    "PrimitiveSchemaDefinition",
    "ProgressNotificationParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "PromptsCapability",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "RelatedTaskMetadata",
    "RequestId",
    "RequestMeta",
    "RequestParams",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceRequestParams",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedNotificationParams",
    "ResourcesCapability",
    "Result",
    "Role",
    "Root",
    "RootsCapability",
    "SamplingCapability",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "SamplingTasksCapability",
    "ServerCapabilities",
    "ServerTaskRequestsCapability",
    "ServerTasksCapability",
    "SetLevelRequestParams",
    "SingleSelectEnumSchema",
    "StringSchema",
    "SubscribeRequestParams",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotificationParams",
    "TextContent",
    "TextResourceContents",
    "TitledMultiSelectEnumSchema",
    "TitledMultiSelectItems",
    "TitledSingleSelectEnumSchema",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolExecution",
    "ToolResultContent",
    "ToolUseContent",
    "ToolsCapability",
    "ToolsTasksCapability",
    "URLElicitationRequiredErrorData",
    "UnsubscribeRequestParams",
    "UntitledMultiSelectEnumSchema",
    "UntitledMultiSelectItems",
    "UntitledSingleSelectEnumSchema",
]

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


# --- Server features: content blocks ---------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result


class _ContentExtras(TypedDict, total=False):
    annotations: Annotations
    _meta: Meta


class TextContent(_ContentExtras):
    type: Literal["text"]
    text: str


class ImageContent(_ContentExtras):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class AudioContent(_ContentExtras):
    type: Literal["audio"]
    data: str  # base64
    mimeType: str


class _ResourceBase(_BaseMetadata, _Icons):
    uri: str


class Resource(_ResourceBase, total=False):
    description: str
    mimeType: str
    annotations: Annotations
    size: int  # raw bytes, before base64 encoding
    _meta: Meta


class ResourceLink(Resource):
    """A resource in a tool result or prompt; it need not appear in ``resources/list``."""

    type: Literal["resource_link"]


class _ResourceContentsBase(TypedDict):
    uri: str


class ResourceContents(_ResourceContentsBase, total=False):
    mimeType: str
    _meta: Meta


class TextResourceContents(ResourceContents):
    text: str


class BlobResourceContents(ResourceContents):
    blob: str  # base64


class EmbeddedResource(_ContentExtras):
    type: Literal["resource"]
    resource: TextResourceContents | BlobResourceContents


ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

# --- Server features: tools ------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/tools


class ToolAnnotations(TypedDict, total=False):
    """Hints only; never trust them from an untrusted server. Defaults are in the comments."""

    title: str
    readOnlyHint: bool  # False
    destructiveHint: bool  # True (meaningful only when not read-only)
    idempotentHint: bool  # False (meaningful only when not read-only)
    openWorldHint: bool  # True


class ToolExecution(TypedDict, total=False):
    taskSupport: Literal["forbidden", "optional", "required"]  # "forbidden" when absent


class _ToolBase(_BaseMetadata, _Icons):
    # schema.ts pins {type: "object", properties?, required?, $schema?}; real schemas carry more keywords.
    inputSchema: JSONSchema


class Tool(_ToolBase, total=False):
    """A tool definition. Display name precedence: ``title``, ``annotations.title``, ``name``."""

    description: str
    outputSchema: JSONSchema  # root type "object"; describes structuredContent
    annotations: ToolAnnotations
    execution: ToolExecution
    _meta: Meta


class ListToolsResult(PaginatedResult):
    tools: list[Tool]


class _CallToolRequestParamsBase(TaskAugmentedRequestParams):
    name: str


class CallToolRequestParams(_CallToolRequestParamsBase, total=False):
    arguments: JSONObject


class _CallToolResultBase(Result):
    content: list[ContentBlock]


class CallToolResult(_CallToolResultBase, total=False):
    structuredContent: JSONObject
    isError: bool  # tool errors go here, not in a JSON-RPC error, so the model can see them


# --- Server features: resources --------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/resources


class _ResourceTemplateBase(_BaseMetadata, _Icons):
    uriTemplate: str  # RFC 6570


class ResourceTemplate(_ResourceTemplateBase, total=False):
    description: str
    mimeType: str
    annotations: Annotations
    _meta: Meta


class ListResourcesResult(PaginatedResult):
    resources: list[Resource]


class ListResourceTemplatesResult(PaginatedResult):
    resourceTemplates: list[ResourceTemplate]


class ResourceRequestParams(RequestParams):
    uri: str


ReadResourceRequestParams: TypeAlias = ResourceRequestParams
SubscribeRequestParams: TypeAlias = ResourceRequestParams
UnsubscribeRequestParams: TypeAlias = ResourceRequestParams


class ReadResourceResult(Result):
    contents: list[TextResourceContents | BlobResourceContents]


class ResourceUpdatedNotificationParams(NotificationParams):
    uri: str  # may be a sub-resource of the subscribed one


# --- Server features: prompts ----------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/prompts


class PromptArgument(_BaseMetadata, total=False):
    description: str
    required: bool


class Prompt(_BaseMetadata, _Icons, total=False):
    description: str
    arguments: list[PromptArgument]
    _meta: Meta


class ListPromptsResult(PaginatedResult):
    prompts: list[Prompt]


class _GetPromptRequestParamsBase(RequestParams):
    name: str


class GetPromptRequestParams(_GetPromptRequestParamsBase, total=False):
    arguments: dict[str, str]


class PromptMessage(TypedDict):
    role: Role
    content: ContentBlock


class _GetPromptResultBase(Result):
    messages: list[PromptMessage]


class GetPromptResult(_GetPromptResultBase, total=False):
    description: str


# --- Server features: completion -------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion


class PromptReference(_BaseMetadata):
    type: Literal["ref/prompt"]


class ResourceTemplateReference(TypedDict):
    type: Literal["ref/resource"]
    uri: str  # a URI or a URI template


class CompleteArgument(TypedDict):
    name: str
    value: str  # the partial value to complete


class CompleteContext(TypedDict, total=False):
    arguments: dict[str, str]  # already-resolved arguments


class _CompleteRequestParamsBase(RequestParams):
    ref: PromptReference | ResourceTemplateReference
    argument: CompleteArgument


class CompleteRequestParams(_CompleteRequestParamsBase, total=False):
    context: CompleteContext


class _CompletionBase(TypedDict):
    values: list[str]  # at most 100


class Completion(_CompletionBase, total=False):
    total: int
    hasMore: bool


class CompleteResult(Result):
    completion: Completion


# --- Server features: logging ----------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging

LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

LOGGING_LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""The RFC 5424 severities, least severe first: a level's index orders it."""


class SetLevelRequestParams(RequestParams):
    level: LoggingLevel  # send this level and everything more severe


class _LoggingMessageNotificationParamsBase(NotificationParams):
    level: LoggingLevel
    data: Any  # any JSON value


class LoggingMessageNotificationParams(_LoggingMessageNotificationParamsBase, total=False):
    logger: str


# --- Client features: roots ------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/client/roots


class _RootBase(TypedDict):
    uri: str  # file:// for now


class Root(_RootBase, total=False):
    name: str
    _meta: Meta


class ListRootsResult(Result):
    roots: list[Root]


# --- Client features: sampling ---------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/client/sampling


class _ToolUseContentBase(TypedDict):
    type: Literal["tool_use"]
    id: str  # matched by ToolResultContent.toolUseId
    name: str
    input: JSONObject


class ToolUseContent(_ToolUseContentBase, total=False):
    _meta: Meta  # clients SHOULD keep it when resending (provider caching)


class _ToolResultContentBase(TypedDict):
    type: Literal["tool_result"]
    toolUseId: str
    content: list[ContentBlock]


class ToolResultContent(_ToolResultContentBase, total=False):
    structuredContent: JSONObject
    isError: bool
    _meta: Meta


SamplingMessageContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)


class _SamplingMessageBase(TypedDict):
    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]


class SamplingMessage(_SamplingMessageBase, total=False):
    _meta: Meta


class ModelHint(TypedDict, total=False):
    name: str  # treated as a substring of a model name


class ModelPreferences(TypedDict, total=False):
    hints: list[ModelHint]  # evaluated in order
    costPriority: float  # 0 .. 1
    speedPriority: float  # 0 .. 1
    intelligencePriority: float  # 0 .. 1


class ToolChoice(TypedDict, total=False):
    mode: Literal["auto", "required", "none"]  # "auto" when absent


# "thisServer" and "allServers" are soft-deprecated and need ClientCapabilities.sampling.context.
IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]


class _CreateMessageRequestParamsBase(TaskAugmentedRequestParams):
    messages: list[SamplingMessage]
    maxTokens: int


class CreateMessageRequestParams(_CreateMessageRequestParamsBase, total=False):
    modelPreferences: ModelPreferences
    systemPrompt: str
    includeContext: IncludeContext
    temperature: float
    stopSequences: list[str]
    metadata: JSONObject  # provider-specific
    tools: list[Tool]  # only if the client declared sampling.tools
    toolChoice: ToolChoice


class _CreateMessageResultBase(Result, SamplingMessage):
    model: str


class CreateMessageResult(_CreateMessageResultBase, total=False):
    # An open string: "endTurn", "stopSequence", "maxTokens", "toolUse" or provider-specific.
    stopReason: str


# --- Client features: elicitation ------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#requested-schema


class _StringSchemaBase(TypedDict):
    type: Literal["string"]


class StringSchema(_StringSchemaBase, total=False):
    title: str
    description: str
    minLength: int
    maxLength: int
    format: Literal["email", "uri", "date", "date-time"]
    default: str


class _NumberSchemaBase(TypedDict):
    type: Literal["number", "integer"]


class NumberSchema(_NumberSchemaBase, total=False):
    title: str
    description: str
    minimum: float
    maximum: float
    default: float


class _BooleanSchemaBase(TypedDict):
    type: Literal["boolean"]


class BooleanSchema(_BooleanSchemaBase, total=False):
    title: str
    description: str
    default: bool


class EnumOption(TypedDict):
    """One titled choice: ``{"const": value, "title": label}``."""

    const: str
    title: str


class _UntitledSingleSelectEnumSchemaBase(TypedDict):
    type: Literal["string"]
    enum: list[str]


class UntitledSingleSelectEnumSchema(_UntitledSingleSelectEnumSchemaBase, total=False):
    title: str
    description: str
    default: str


class _TitledSingleSelectEnumSchemaBase(TypedDict):
    type: Literal["string"]
    oneOf: list[EnumOption]


class TitledSingleSelectEnumSchema(_TitledSingleSelectEnumSchemaBase, total=False):
    title: str
    description: str
    default: str


class UntitledMultiSelectItems(TypedDict):
    type: Literal["string"]
    enum: list[str]


class TitledMultiSelectItems(TypedDict):
    anyOf: list[EnumOption]


class _MultiSelectEnumSchemaExtras(TypedDict, total=False):
    title: str
    description: str
    minItems: int
    maxItems: int
    default: list[str]


class UntitledMultiSelectEnumSchema(_MultiSelectEnumSchemaExtras):
    type: Literal["array"]
    items: UntitledMultiSelectItems


class TitledMultiSelectEnumSchema(_MultiSelectEnumSchemaExtras):
    type: Literal["array"]
    items: TitledMultiSelectItems


class _LegacyTitledEnumSchemaBase(TypedDict):
    type: Literal["string"]
    enum: list[str]


class LegacyTitledEnumSchema(_LegacyTitledEnumSchemaBase, total=False):
    """Deprecated: use TitledSingleSelectEnumSchema. ``enumNames`` is not standard JSON Schema."""

    title: str
    description: str
    enumNames: list[str]
    default: str


SingleSelectEnumSchema: TypeAlias = UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
MultiSelectEnumSchema: TypeAlias = UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema
EnumSchema: TypeAlias = SingleSelectEnumSchema | MultiSelectEnumSchema | LegacyTitledEnumSchema
# Several variants share type "string": tell them apart by key ("enum", "oneOf", "enumNames"), not by type.
# mypy drops LegacyTitledEnumSchema from these unions inside containers (it is a structural subtype of
# UntitledSingleSelectEnumSchema): annotate a legacy literal as LegacyTitledEnumSchema before nesting it.
PrimitiveSchemaDefinition: TypeAlias = StringSchema | NumberSchema | BooleanSchema | EnumSchema

_ElicitRequestedSchemaExtras = TypedDict(
    "_ElicitRequestedSchemaExtras", {"$schema": str, "required": list[str]}, total=False
)


class ElicitRequestedSchema(_ElicitRequestedSchemaExtras):
    """A flat object schema: each property is a primitive, no nesting."""

    type: Literal["object"]
    properties: dict[str, PrimitiveSchemaDefinition]


class _ElicitRequestFormParamsBase(TaskAugmentedRequestParams):
    message: str
    requestedSchema: ElicitRequestedSchema


class ElicitRequestFormParams(_ElicitRequestFormParamsBase, total=False):
    mode: Literal["form"]  # form mode when absent


class ElicitRequestURLParams(TaskAugmentedRequestParams):
    mode: Literal["url"]
    message: str
    elicitationId: str  # unique within the server; opaque to the client
    url: str


ElicitRequestParams: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams


class _ElicitResultBase(Result):
    action: Literal["accept", "decline", "cancel"]


class ElicitResult(_ElicitResultBase, total=False):
    # Only for action "accept" in form mode. schema.ts says number; the generated JSON says integer.
    content: dict[str, str | int | float | bool | list[str]]


class ElicitationCompleteNotificationParams(TypedDict):
    """Standalone in schema.ts (no ``_meta``)."""

    elicitationId: str


class URLElicitationRequiredErrorData(TypedDict):
    """``error.data`` of a -32042 (URL elicitation required) error response."""

    elicitations: list[ElicitRequestURLParams]
