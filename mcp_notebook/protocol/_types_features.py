"""MCP 2025-11-25 types, part 2: server features (content, tools, resources, prompts, completion, logging) and
client features (roots, sampling, elicitation).

Import them from :mod:`mcp_notebook.protocol.types`, which documents the conventions.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, TypedDict

from ._types_base import (
    Annotations,
    JSONObject,
    JSONSchema,
    Meta,
    NotificationParams,
    PaginatedResult,
    RequestParams,
    Result,
    Role,
    TaskAugmentedRequestParams,
    _BaseMetadata,
    _Icons,
)

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
