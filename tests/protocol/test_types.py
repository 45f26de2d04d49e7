"""The 2025-11-25 wire types: typed examples, and conformance with the generated JSON schema.

Every example below is a literal annotated with its TypedDict, so ``mypy --strict`` checks it against
``mcp_notebook.protocol.types``; the tests then validate it against the normative schema. The vendored
``schema-2025-11-25.json`` is ``schema/2025-11-25/schema.json`` from
https://github.com/modelcontextprotocol/modelcontextprotocol at b0f60ba5409db7a6582440a7b473cc0398890f15
(generated from ``schema.ts``; last changed in c4c367f9).
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp_notebook.protocol import types as t

SCHEMA: dict[str, Any] = json.loads((Path(__file__).parent / "schema-2025-11-25.json").read_text("utf-8"))
DEFS: dict[str, Any] = SCHEMA["$defs"]

# --- Base protocol -------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic#messages

CALL_PARAMS: t.CallToolRequestParams = {
    "name": "get_weather",
    "arguments": {"location": "New York"},
    "task": {"ttl": 60000},
    "_meta": {"progressToken": "call-1", "io.modelcontextprotocol/related-task": {"taskId": "task-9"}},
}
REQUEST: t.JSONRPCRequest = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL_PARAMS}
PROGRESS: t.ProgressNotificationParams = {
    "progressToken": "call-1",
    "progress": 2.5,
    "total": 10,
    "message": "...",
}
NOTIFICATION: t.JSONRPCNotification = {
    "jsonrpc": "2.0",
    "method": "notifications/progress",
    "params": PROGRESS,
}
CANCELLED: t.CancelledNotificationParams = {"requestId": "123", "reason": "User requested cancellation"}
EMPTY: t.EmptyResult = {}
RESULT_RESPONSE: t.JSONRPCResultResponse = {"jsonrpc": "2.0", "id": "a", "result": EMPTY}
URL_PARAMS: t.ElicitRequestURLParams = {
    "mode": "url",
    "message": "Please authorize access to your files.",
    "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
    "url": "https://mcp.example.com/connect?elicitationId=550e8400-e29b-41d4-a716-446655440000",
}
URL_REQUIRED: t.URLElicitationRequiredErrorData = {"elicitations": [URL_PARAMS]}
ERROR_RESPONSE: t.JSONRPCErrorResponse = {
    "jsonrpc": "2.0",
    "id": 2,
    "error": {"code": -32042, "message": "This request requires more information.", "data": URL_REQUIRED},
}
PARSE_ERROR_RESPONSE: t.JSONRPCErrorResponse = {
    "jsonrpc": "2.0",
    "error": {"code": -32700, "message": "Parse error"},
}

# --- Lifecycle -----------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization

INITIALIZE_PARAMS: t.InitializeRequestParams = {
    "protocolVersion": "2025-11-25",
    "capabilities": {
        "roots": {"listChanged": True},
        "sampling": {"context": {}, "tools": {}},
        "elicitation": {"form": {}, "url": {}},
        "tasks": {
            "list": {},
            "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
        },
        "experimental": {"com.example/feature": {}},
    },
    "clientInfo": {
        "name": "mcp-notebook",
        "title": "MCP Notebook",
        "version": "0.1.0",
        "description": "MCP from Jupyter cells",
        "websiteUrl": "https://example.com",
        "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
    },
}
INITIALIZE_RESULT: t.InitializeResult = {
    "protocolVersion": "2025-11-25",
    "capabilities": {
        "logging": {},
        "completions": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    },
    "serverInfo": {
        "name": "weather",
        "version": "1.0.0",
        "icons": [{"src": "data:image/svg+xml;base64,PHN2Zz4="}],
    },
    "instructions": "Call get_weather for forecasts.",
}

# --- Tools and content ---------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/tools

ANNOTATIONS: t.Annotations = {
    "audience": ["user", "assistant"],
    "priority": 0.8,
    "lastModified": "2025-01-12T15:00:58Z",
}
TOOL: t.Tool = {
    "name": "get_weather",
    "title": "Weather",
    "description": "Get current weather information for a location",
    "icons": [{"src": "https://example.com/sun.png", "theme": "light", "sizes": ["any"]}],
    "inputSchema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
        "additionalProperties": False,
    },
    "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
    "annotations": {"title": "Weather", "readOnlyHint": True, "openWorldHint": True},
    "execution": {"taskSupport": "optional"},
    "_meta": {"com.example/version": 2},
}
LIST_TOOLS: t.ListToolsResult = {"tools": [TOOL], "nextCursor": "page-2"}
TEXT: t.TextContent = {"type": "text", "text": "72°F and sunny", "annotations": ANNOTATIONS}
IMAGE: t.ImageContent = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
AUDIO: t.AudioContent = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "_meta": {}}
LINK: t.ResourceLink = {"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs"}
EMBEDDED: t.EmbeddedResource = {
    "type": "resource",
    "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello"},
    "annotations": {"priority": 1},
}
CALL_RESULT: t.CallToolResult = {
    "content": [TEXT, IMAGE, AUDIO, LINK, EMBEDDED],
    "structuredContent": {"temperature": 22.5},
    "isError": False,
}

# --- Resources -----------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/resources

RESOURCE: t.Resource = {
    "uri": "file:///project/README.md",
    "name": "README.md",
    "title": "Project readme",
    "mimeType": "text/markdown",
    "size": 1024,
    "annotations": ANNOTATIONS,
}
LIST_RESOURCES: t.ListResourcesResult = {"resources": [RESOURCE]}
TEMPLATE: t.ResourceTemplate = {
    "uriTemplate": "file:///{path}",
    "name": "Project Files",
    "mimeType": "text/plain",
}
LIST_TEMPLATES: t.ListResourceTemplatesResult = {"resourceTemplates": [TEMPLATE]}
READ_PARAMS: t.ReadResourceRequestParams = {"uri": "file:///project/README.md"}
READ_RESULT: t.ReadResourceResult = {
    "contents": [
        {"uri": "file:///project/README.md", "mimeType": "text/markdown", "text": "# Hi"},
        {"uri": "file:///project/logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
    ]
}
SUBSCRIBE: t.SubscribeRequestParams = {"uri": "file:///project/README.md"}
UPDATED: t.ResourceUpdatedNotificationParams = {"uri": "file:///project/README.md"}
PAGE: t.PaginatedRequestParams = {"cursor": "page-2"}

# --- Prompts and completion ----------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/prompts
# https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion

PROMPT: t.Prompt = {
    "name": "code_review",
    "title": "Request Code Review",
    "description": "Asks the LLM to analyze code quality",
    "arguments": [{"name": "code", "description": "The code to review", "required": True}],
}
LIST_PROMPTS: t.ListPromptsResult = {"prompts": [PROMPT]}
GET_PROMPT: t.GetPromptRequestParams = {"name": "code_review", "arguments": {"code": "def hello(): ..."}}
PROMPT_RESULT: t.GetPromptResult = {
    "description": "Code review prompt",
    "messages": [{"role": "user", "content": TEXT}, {"role": "assistant", "content": EMBEDDED}],
}
COMPLETE_PARAMS: t.CompleteRequestParams = {
    "ref": {"type": "ref/resource", "uri": "file:///{path}"},
    "argument": {"name": "path", "value": "src/"},
    "context": {"arguments": {"language": "python"}},
}
COMPLETE_PROMPT_PARAMS: t.CompleteRequestParams = {
    "ref": {"type": "ref/prompt", "name": "code_review"},
    "argument": {"name": "language", "value": "py"},
}
COMPLETE_RESULT: t.CompleteResult = {
    "completion": {"values": ["python", "pytorch"], "total": 10, "hasMore": True}
}

# --- Logging -------------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging

SET_LEVEL: t.SetLevelRequestParams = {"level": "info"}
LOG_MESSAGE: t.LoggingMessageNotificationParams = {
    "level": "error",
    "logger": "database",
    "data": {"error": "Connection failed", "details": {"host": "localhost", "port": 5432}},
}

# --- Roots and sampling --------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/client/roots
# https://modelcontextprotocol.io/specification/2025-11-25/client/sampling

LIST_ROOTS: t.ListRootsResult = {
    "roots": [{"uri": "file:///home/user/projects/myproject", "name": "My Project"}]
}
TOOL_USE: t.ToolUseContent = {
    "type": "tool_use",
    "id": "call_abc123",
    "name": "get_weather",
    "input": {"city": "Paris"},
}
TOOL_RESULT: t.ToolResultContent = {
    "type": "tool_result",
    "toolUseId": "call_abc123",
    "content": [{"type": "text", "text": "18°C, partly cloudy"}],
    "structuredContent": {"temperature": 18},
    "isError": False,
}
CREATE_MESSAGE: t.CreateMessageRequestParams = {
    "messages": [
        {"role": "user", "content": {"type": "text", "text": "What's the weather in Paris?"}},
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT]},
    ],
    "modelPreferences": {
        "hints": [{"name": "claude-3-sonnet"}],
        "costPriority": 0.3,
        "speedPriority": 0.8,
        "intelligencePriority": 0.5,
    },
    "systemPrompt": "You are a helpful assistant.",
    "includeContext": "none",
    "temperature": 0.7,
    "maxTokens": 1000,
    "stopSequences": ["\n\nHuman:"],
    "metadata": {"provider": "x"},
    "tools": [TOOL],
    "toolChoice": {"mode": "auto"},
}
CREATE_MESSAGE_RESULT: t.CreateMessageResult = {
    "role": "assistant",
    "content": [TOOL_USE],
    "model": "claude-3-sonnet-20240307",
    "stopReason": "toolUse",
}

# --- Elicitation ---------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation

# Annotated on its own: inside dict[str, PrimitiveSchemaDefinition] mypy simplifies the union and drops
# LegacyTitledEnumSchema (a structural subtype of UntitledSingleSelectEnumSchema), so an inline literal
# with "enumNames" is rejected there.
LEGACY_ENUM: t.LegacyTitledEnumSchema = {
    "type": "string",
    "enum": ["a", "b"],
    "enumNames": ["Option A", "Option B"],
}
FORM_PARAMS: t.ElicitRequestFormParams = {
    "mode": "form",
    "message": "Please provide your contact information",
    "requestedSchema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50, "default": "Ada"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 18, "maximum": 150, "default": 30},
            "subscribe": {"type": "boolean", "default": False},
            "color": {"type": "string", "enum": ["Red", "Green"], "default": "Red"},
            "hex": {
                "type": "string",
                "oneOf": [{"const": "#FF0000", "title": "Red"}, {"const": "#00FF00", "title": "Green"}],
            },
            "colors": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["Red", "Green"]}},
            "hexes": {
                "type": "array",
                "maxItems": 2,
                "items": {"anyOf": [{"const": "#FF0000", "title": "Red"}]},
                "default": ["#FF0000"],
            },
            "legacy": LEGACY_ENUM,
        },
        "required": ["name", "email"],
    },
}
ELICIT_RESULT: t.ElicitResult = {
    "action": "accept",
    "content": {"name": "Ada", "email": "ada@example.com", "age": 36, "subscribe": True, "colors": ["Red"]},
}
ELICIT_DECLINED: t.ElicitResult = {"action": "decline"}
ELICIT_COMPLETE: t.ElicitationCompleteNotificationParams = {
    "elicitationId": "550e8400-e29b-41d4-a716-446655440000"
}

# --- Tasks ---------------------------------------------------------------------------------------
# https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks

TASK: t.Task = {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "working",
    "statusMessage": "The operation is now in progress.",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:40:00Z",
    "ttl": 60000,
    "pollInterval": 5000,
}
CREATE_TASK: t.CreateTaskResult = {
    "task": TASK,
    "_meta": {"io.modelcontextprotocol/model-immediate-response": "Started; I'll report back."},
}
GET_TASK_PARAMS: t.GetTaskRequestParams = {"taskId": TASK["taskId"]}
GET_TASK: t.GetTaskResult = {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "completed",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:50:00Z",
    "ttl": None,
}
PAYLOAD_PARAMS: t.GetTaskPayloadRequestParams = {"taskId": TASK["taskId"]}
PAYLOAD: t.GetTaskPayloadResult = CALL_RESULT
CANCEL_PARAMS: t.CancelTaskRequestParams = {"taskId": TASK["taskId"]}
CANCEL_RESULT: t.CancelTaskResult = {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "cancelled",
    "statusMessage": "Cancelled by the user.",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:45:00Z",
    "ttl": 30000,
}
LIST_TASKS: t.ListTasksResult = {"tasks": [TASK], "nextCursor": "next"}
TASK_STATUS: t.TaskStatusNotificationParams = {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "input_required",
    "statusMessage": "Waiting for the user.",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:42:00Z",
    "ttl": 60000,
    "pollInterval": 5000,
}

# (schema $defs name, example). Every example must also survive a JSON round trip unchanged.
EXAMPLES: list[tuple[str, Mapping[str, Any]]] = [
    ("JSONRPCRequest", REQUEST),
    ("JSONRPCNotification", NOTIFICATION),
    ("JSONRPCResultResponse", RESULT_RESPONSE),
    ("JSONRPCErrorResponse", ERROR_RESPONSE),
    ("JSONRPCErrorResponse", PARSE_ERROR_RESPONSE),
    ("URLElicitationRequiredError", ERROR_RESPONSE),
    ("CallToolRequestParams", CALL_PARAMS),
    ("ProgressNotificationParams", PROGRESS),
    ("CancelledNotificationParams", CANCELLED),
    ("InitializeRequestParams", INITIALIZE_PARAMS),
    ("InitializeResult", INITIALIZE_RESULT),
    ("Tool", TOOL),
    ("ListToolsResult", LIST_TOOLS),
    ("CallToolResult", CALL_RESULT),
    ("Resource", RESOURCE),
    ("ListResourcesResult", LIST_RESOURCES),
    ("ListResourceTemplatesResult", LIST_TEMPLATES),
    ("ReadResourceRequestParams", READ_PARAMS),
    ("ReadResourceResult", READ_RESULT),
    ("SubscribeRequestParams", SUBSCRIBE),
    ("ResourceUpdatedNotificationParams", UPDATED),
    ("PaginatedRequestParams", PAGE),
    ("ListPromptsResult", LIST_PROMPTS),
    ("GetPromptRequestParams", GET_PROMPT),
    ("GetPromptResult", PROMPT_RESULT),
    ("CompleteRequestParams", COMPLETE_PARAMS),
    ("CompleteRequestParams", COMPLETE_PROMPT_PARAMS),
    ("CompleteResult", COMPLETE_RESULT),
    ("SetLevelRequestParams", SET_LEVEL),
    ("LoggingMessageNotificationParams", LOG_MESSAGE),
    ("ListRootsResult", LIST_ROOTS),
    ("CreateMessageRequestParams", CREATE_MESSAGE),
    ("CreateMessageResult", CREATE_MESSAGE_RESULT),
    ("ElicitRequestFormParams", FORM_PARAMS),
    ("ElicitRequestURLParams", URL_PARAMS),
    ("ElicitResult", ELICIT_RESULT),
    ("ElicitResult", ELICIT_DECLINED),
    ("ElicitationCompleteNotification/properties/params", ELICIT_COMPLETE),
    ("CreateTaskResult", CREATE_TASK),
    ("GetTaskRequest/properties/params", GET_TASK_PARAMS),
    ("GetTaskResult", GET_TASK),
    ("GetTaskPayloadRequest/properties/params", PAYLOAD_PARAMS),
    ("GetTaskPayloadResult", PAYLOAD),
    ("CancelTaskRequest/properties/params", CANCEL_PARAMS),
    ("CancelTaskResult", CANCEL_RESULT),
    ("ListTasksResult", LIST_TASKS),
    ("TaskStatusNotificationParams", TASK_STATUS),
]


@pytest.mark.parametrize(("def_path", "example"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_example_round_trips_and_matches_schema(def_path: str, example: Mapping[str, Any]) -> None:
    assert json.loads(json.dumps(example)) == example
    # No check_schema() per example: the vendored schema is upstream's, and checking it costs ~0.2 s each.
    jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{def_path}"}).validate(example)


def test_logging_levels_in_severity_order() -> None:
    # RFC 5424 section 6.2.1, least to most severe.
    expected = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    assert expected == t.LOGGING_LEVELS
    assert typing.get_args(t.LoggingLevel) == t.LOGGING_LEVELS
    assert t.LOGGING_LEVELS.index("warning") < t.LOGGING_LEVELS.index("error")


# --- Conformance of the TypedDicts with schema.json ----------------------------------------------

# Our names for the types schema.ts leaves anonymous (or names differently), as paths under $defs.
SCHEMA_LOCATION = {
    "ErrorData": "Error",
    "RequestMeta": "RequestParams/properties/_meta",
    "RootsCapability": "ClientCapabilities/properties/roots",
    "SamplingCapability": "ClientCapabilities/properties/sampling",
    "ElicitationCapability": "ClientCapabilities/properties/elicitation",
    "ClientTasksCapability": "ClientCapabilities/properties/tasks",
    "ClientTaskRequestsCapability": "ClientCapabilities/properties/tasks/properties/requests",
    "SamplingTasksCapability": "ClientCapabilities/properties/tasks/properties/requests/properties/sampling",
    "ElicitationTasksCapability": (
        "ClientCapabilities/properties/tasks/properties/requests/properties/elicitation"
    ),
    "PromptsCapability": "ServerCapabilities/properties/prompts",
    "ResourcesCapability": "ServerCapabilities/properties/resources",
    "ToolsCapability": "ServerCapabilities/properties/tools",
    "ServerTasksCapability": "ServerCapabilities/properties/tasks",
    "ServerTaskRequestsCapability": "ServerCapabilities/properties/tasks/properties/requests",
    "ToolsTasksCapability": "ServerCapabilities/properties/tasks/properties/requests/properties/tools",
    "GetTaskRequestParams": "GetTaskRequest/properties/params",
    "GetTaskPayloadRequestParams": "GetTaskPayloadRequest/properties/params",
    "CancelTaskRequestParams": "CancelTaskRequest/properties/params",
    "ElicitationCompleteNotificationParams": "ElicitationCompleteNotification/properties/params",
    "URLElicitationRequiredErrorData": "URLElicitationRequiredError/properties/error/allOf/1/properties/data",
    "ElicitRequestedSchema": "ElicitRequestFormParams/properties/requestedSchema",
    "EnumOption": "TitledSingleSelectEnumSchema/properties/oneOf/items",
    "UntitledMultiSelectItems": "UntitledMultiSelectEnumSchema/properties/items",
    "TitledMultiSelectItems": "TitledMultiSelectEnumSchema/properties/items",
    "CompleteArgument": "CompleteRequestParams/properties/argument",
    "CompleteContext": "CompleteRequestParams/properties/context",
    "Completion": "CompleteResult/properties/completion",
}
# Keys that schema.json does not list but the spec prose defines for an open object.
EXTRA_KEYS = {"RequestMeta": {"io.modelcontextprotocol/related-task"}}  # basic/utilities/tasks
# $defs with no counterpart here, on purpose.
NOT_MODELLED = {
    # Per-method envelopes: JSONRPCRequest/JSONRPCNotification plus the params types instead.
    *(name for name in DEFS if name.endswith(("Request", "Notification")) and not name.startswith("JSONRPC")),
    *("ClientRequest", "ClientNotification", "ClientResult", "ServerRequest", "ServerResult"),
    "ServerNotification",
    "BaseMetadata",  # private mixin _BaseMetadata
    "Icons",  # private mixin _Icons
    "Error",  # named ErrorData
    "URLElicitationRequiredError",  # the data member is URLElicitationRequiredErrorData
}


def _resolve(path: str) -> dict[str, Any]:
    node: Any = DEFS
    for part in path.split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    assert isinstance(node, dict)
    return node


def _deref(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = _resolve(node["$ref"].removeprefix("#/$defs/"))
    return node


def _object_shape(node: dict[str, Any]) -> tuple[set[str], set[str], dict[str, Any]]:
    """(required keys, all keys, property schemas) of an object schema, following $ref and allOf."""
    node = _deref(node)
    required, props = set(node.get("required", ())), dict(node.get("properties", {}))
    for part in node.get("allOf", ()):
        part_required, _, part_props = _object_shape(part)
        required |= part_required
        props.update(part_props)
    return required, set(props), props


def _union_leaves(node: dict[str, Any]) -> set[str]:
    """Names of the $defs a schema anyOf (or $ref to one) finally consists of."""
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        return _union_leaves(DEFS[name]) if "anyOf" in DEFS[name] else {name}
    return set().union(*(_union_leaves(option) for option in node["anyOf"]))


def _typed_dicts() -> dict[str, Any]:
    exported = {name: getattr(t, name) for name in t.__all__}
    return {name: obj for name, obj in exported.items() if typing.is_typeddict(obj)}


def test_all_lists_every_public_name() -> None:
    # isidentifier: pytest rewrites this module (mcp-notebook ships a pytest11 plugin, so pytest marks the
    # whole distribution for assertion rewriting) and adds "@py_builtins" and "@pytest_ar" to its globals
    public = {name for name in vars(t) if name.isidentifier() and not name.startswith("_")}
    imported = {"annotations", "Any", "Literal", "Mapping", "TypeAlias", "TypedDict"}
    assert set(t.__all__) == public - imported
    assert len(t.__all__) == len(set(t.__all__))


@pytest.mark.parametrize("name", sorted(_typed_dicts()))
def test_typeddict_keys_match_schema(name: str) -> None:
    cls = _typed_dicts()[name]
    required, keys, props = _object_shape(_resolve(SCHEMA_LOCATION.get(name, name)))
    extra = EXTRA_KEYS.get(name, set())
    assert set(cls.__required_keys__) == required
    assert set(cls.__required_keys__) | set(cls.__optional_keys__) == keys | extra
    # Discriminators and enum-ish strings: the Literal values must be the schema's, exactly.
    hints = typing.get_type_hints(cls)
    for key, prop in props.items():
        allowed = [prop["const"]] if "const" in prop else prop.get("enum")
        if allowed is not None:
            assert typing.get_origin(hints[key]) is typing.Literal, key
            assert set(typing.get_args(hints[key])) == set(allowed), key


@pytest.mark.parametrize(
    "alias",
    [
        "ContentBlock",
        "SamplingMessageContentBlock",
        "PrimitiveSchemaDefinition",
        "EnumSchema",
        "SingleSelectEnumSchema",
        "MultiSelectEnumSchema",
        "ElicitRequestParams",
        "JSONRPCResponse",
        "JSONRPCMessage",
    ],
)
def test_union_alias_matches_schema(alias: str) -> None:
    members = {member.__name__ for member in typing.get_args(getattr(t, alias))}
    assert members == _union_leaves(DEFS[alias])


@pytest.mark.parametrize("alias", ["Role", "LoggingLevel", "TaskStatus"])
def test_literal_alias_matches_schema(alias: str) -> None:
    assert set(typing.get_args(getattr(t, alias))) == set(DEFS[alias]["enum"])


def test_every_schema_definition_is_modelled() -> None:
    covered = set(t.__all__) | {SCHEMA_LOCATION[name].split("/")[0] for name in SCHEMA_LOCATION}
    assert set(DEFS) - covered - NOT_MODELLED == set()
    assert set(DEFS) >= NOT_MODELLED
