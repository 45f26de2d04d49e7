"""The modern era (2026-07-28): stateless requests, as pure functions and tables.

A modern request carries its version and the client's capabilities in ``params._meta``; nothing is
inferred from earlier requests (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
This module decides everything era-specific and does no I/O: which requests are modern, whether their
``_meta`` and HTTP headers are valid, how a result is finished (``resultType``, ``serverInfo``, caching
hints), and MRTR bookkeeping (input rounds; ``engine/sealed_state.py`` seals ``requestState``).

MRTR choice (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr): a Python tool is
a plain function, so a retry *re-runs it from the start*. Its input requests (elicitation, sampling, roots)
are answered in order from the responses collected so far; the first one without an answer ends the run
with ``input_required``. Answers from earlier rounds travel in the encrypted ``requestState``, so the server
keeps nothing between rounds. Tools must therefore be safe to re-run up to their input requests.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError, MCPError
from .header_params import header_params, mirrored_value, value_at
from .jsonrpc import Request, Wire
from .versions import MODERN_VERSIONS, ProtocolVersion

__all__ = [
    "CACHEABLE",
    "EXTENSION_METHODS",
    "HEADER_MISMATCH",
    "LOG_LEVELS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "MISSING_CLIENT_CAPABILITY",
    "MODERN_METHODS",
    "MRTR_METHODS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "InputRequired",
    "InputRound",
    "MissingClientCapability",
    "RequestEscalation",
    "RequestMeta",
    "check_headers",
    "check_meta",
    "check_param_headers",
    "checked_meta",
    "complete",
    "http_status",
    "input_required_result",
    "is_modern",
    "listen_filter",
    "listen_matches",
    "read_meta",
    "request_digest",
    "state_error",
    "state_key",
]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

# 2026 error codes (basic/index: -32020..-32099 are reserved for the spec).
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Client requests of the 2026-07-28 core (ping, logging/setLevel, initialize, resources/subscribe are gone).
MODERN_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "subscriptions/listen",
    }
)
# Methods of the Tasks extension (io.modelcontextprotocol/tasks); gated per request on the declaration.
EXTENSION_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
# Only these may answer with input_required (mrtr: "MUST NOT be used on any other request").
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
# Results that MUST carry ttlMs and cacheScope (server/utilities/caching).
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
# The body field the Mcp-Name header mirrors (transports#required-headers).
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # the Tasks extension: Mcp-Name is the taskId
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
# Input request method -> the client capability it needs (mrtr: never ask for an undeclared capability).
INPUT_CAPABILITY = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
# Listen filter field -> (notification method, server capability path that must be declared).
LISTEN_FLAGS = {
    "toolsListChanged": ("notifications/tools/list_changed", ("tools", "listChanged")),
    "promptsListChanged": ("notifications/prompts/list_changed", ("prompts", "listChanged")),
    "resourcesListChanged": ("notifications/resources/list_changed", ("resources", "listChanged")),
}


_KNOWN_VERSIONS = {name: ProtocolVersion(name) for name in MODERN_VERSIONS}  # immutable, so shared


_UNREAD: Any = object()  # read_meta's and check_headers' meta when their caller has not read it


def _meta(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    # a dict first: isinstance against the Mapping ABC is the slow check, twice per modern request
    meta = params.get("_meta") if type(params) is dict or isinstance(params, Mapping) else None
    return meta if isinstance(meta, dict) else None


def is_modern(params: Mapping[str, Any] | None) -> bool:
    """A request is modern when its ``_meta`` carries the per-request fields (versioning#era-detection);
    legacy clients never send them. One of them alone still selects the era, so the answer names what
    is missing (-32602) instead of a legacy "not initialized"."""
    # _meta(params), inline (one call less, twice per modern request); the fields spelled out: any() over a
    # generator cost 0.5 us
    meta = params.get("_meta") if type(params) is dict or isinstance(params, Mapping) else None
    return isinstance(meta, dict) and (
        META_PROTOCOL_VERSION in meta or META_CLIENT_CAPABILITIES in meta or META_CLIENT_INFO in meta
    )


# Immutable by type (Final fields, checked by mypy), not frozen=True: a frozen dataclass's __init__ sets each
# field through object.__setattr__, about 3x the cost of a plain one, and these are made for every message.
@dataclass(slots=True, unsafe_hash=True)
class RequestMeta:
    """What a modern request says about itself; valid for this request only."""

    version: Final[ProtocolVersion]
    client_capabilities: Final[dict[str, Any]]
    client_info: Final[dict[str, Any]]
    log_level: Final[str | None] = None

    def wants_log(self, level: str) -> bool:
        """No logLevel: no notifications/message at all (2026 logging)."""
        if self.log_level is None:
            return False
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


def read_meta(
    method: str,
    params: Mapping[str, Any] | None,
    supported: tuple[str, ...] = MODERN_VERSIONS,
    *,
    also: tuple[str, ...] = (),
    meta: Any = _UNREAD,
) -> RequestMeta:
    """Validate a modern request's ``_meta`` and method; JSONRPCError with the spec's code otherwise.

    Missing fields: -32602; unknown version: -32022 with ``supported``/``requested``; a method the modern
    era does not have (``ping``, ``initialize``...): -32601. ``meta``: ``_meta(params)``, already read.
    """
    if meta is _UNREAD:
        meta = _meta(params)
    if meta is None:
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: '_meta' is required")
    requested = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(requested, str):
        raise JSONRPCError(INVALID_PARAMS, f"Invalid params: '_meta' must contain {META_PROTOCOL_VERSION!r}")
    if requested not in supported:
        raise JSONRPCError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": [*supported, *also], "requested": requested},  # also: a dual-era server's legacy
        )
    capabilities = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid params: '_meta' must contain {META_CLIENT_CAPABILITIES!r} (an object)"
        )
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise JSONRPCError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
    if method not in MODERN_METHODS and method not in EXTENSION_METHODS:
        raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
    info = meta.get(META_CLIENT_INFO)
    known = _KNOWN_VERSIONS.get(requested)  # one ProtocolVersion per known name, not one per request
    return RequestMeta(
        known or ProtocolVersion(requested), capabilities, info if isinstance(info, dict) else {}, level
    )


def check_meta(
    wire: Wire,
    request: Request,
    supported: tuple[str, ...] = MODERN_VERSIONS,
    *,
    also: tuple[str, ...] = (),
    headers: Mapping[str, str] | None = None,
) -> RequestMeta:
    """:func:`read_meta` of a request read from ``wire`` (its one message), remembered on the Wire: the engine
    that receives this Wire takes it (:func:`checked_meta`) instead of reading ``_meta`` again. ``headers``:
    an HTTP POST's, checked first (:func:`check_headers`, its error raised) against the same ``_meta``."""
    params = request.params
    meta = _meta(params)
    if headers is not None:
        error = check_headers(headers, request.method, params, meta)
        if error is not None:
            raise error
    found = read_meta(request.method, params, supported, also=also, meta=meta)
    wire.checked = (supported, found)
    return found


def checked_meta(data: str | bytes, supported: tuple[str, ...]) -> RequestMeta | None:
    """What :func:`check_meta` found for ``data``'s one message, when it checked against ``supported`` (an
    engine serving fewer versions checks again, for its own -32022); None otherwise."""
    checked = data.checked if type(data) is Wire else None
    if checked is None or (checked[0] is not supported and checked[0] != supported):
        return None
    meta: RequestMeta = checked[1]
    return meta


def http_status(code: int) -> int:
    """The HTTP status of a modern error answer (transports: 404 for -32601, 400 for request errors)."""
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (
        INVALID_PARAMS,
        -32600,
        HEADER_MISMATCH,
        MISSING_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    ):
        return 400
    return 200


def decode_header_value(value: str) -> str | None:
    """An ``Mcp-Name``/``Mcp-Param-*`` value: ``=?base64?...?=`` is decoded; None when it is malformed."""
    value = value.strip()
    if not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def check_headers(
    headers: Mapping[str, str], method: str, params: Mapping[str, Any] | None, meta: Any = _UNREAD
) -> JSONRPCError | None:
    """Streamable HTTP 2026: the routing headers must match the body (-32020 HeaderMismatch otherwise).

    ``headers`` must be looked up case-insensitively (aiohttp's CIMultiDict is); values are case-sensitive
    and surrounding whitespace is ignored. ``meta``: ``_meta(params)``, already read.
    """

    sent_version = headers.get("MCP-Protocol-Version")
    if meta is _UNREAD:
        meta = _meta(params)
    body_version = meta.get(META_PROTOCOL_VERSION) if meta is not None else None
    if sent_version is None:
        return _mismatch("the MCP-Protocol-Version header is required")
    if body_version is not None and sent_version.strip() != body_version:
        return _mismatch("MCP-Protocol-Version does not match _meta protocolVersion")
    sent_method = headers.get("Mcp-Method")
    if sent_method is None:
        return _mismatch("the Mcp-Method header is required")
    if sent_method.strip() != method:
        return _mismatch(f"Mcp-Method {sent_method.strip()!r} does not match the body method {method!r}")
    name_field = NAME_PARAMS.get(method)
    if name_field is not None:
        sent_name = headers.get("Mcp-Name")
        if sent_name is None:
            return _mismatch("the Mcp-Name header is required for this method")
        body_name = params.get(name_field) if type(params) is dict or isinstance(params, Mapping) else None
        if decode_header_value(sent_name) != body_name:
            return _mismatch(f"Mcp-Name does not match params.{name_field}")
    return None


def _mismatch(what: str) -> JSONRPCError:
    return JSONRPCError(HEADER_MISMATCH, f"Header mismatch: {what}")


def check_param_headers(
    input_schema: Mapping[str, Any], arguments: Any, headers: Mapping[str, str]
) -> JSONRPCError | None:
    """``x-mcp-header`` parameters (SEP-2243), nested ones included: a value in the body needs its
    ``Mcp-Param-{Name}`` header, equal after decoding (integers compare numerically, booleans as
    ``true``/``false``). A value a client does not mirror (an integer outside JavaScript's safe range) needs
    no header."""
    arguments = arguments if isinstance(arguments, dict) else {}
    for param in header_params(input_schema)[0]:
        name, prop = param.name, param.where
        if not isinstance(name, str):
            continue
        value, sent = value_at(arguments, param.path), headers.get(f"Mcp-Param-{name}")
        if isinstance(value, int) and not isinstance(value, bool) and mirrored_value(value) is None:
            continue  # an integer outside JavaScript's safe range: clients do not mirror it
        if value is None and sent is None:
            continue
        if value is None or sent is None:
            return JSONRPCError(HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{name} and arguments.{prop}")
        decoded = decode_header_value(sent)
        if decoded is None or not _same_param(value, decoded):
            return JSONRPCError(
                HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{name} does not match arguments.{prop}"
            )
    return None


def _same_param(value: Any, header: str) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return int(header) == value
        except ValueError:
            return False
    return isinstance(value, str) and header == value


def complete(
    result: dict[str, Any], method: str, server_info: dict[str, Any], *, ttl_ms: int, cache_scope: str
) -> dict[str, Any]:
    """Finish a modern result: ``resultType``, ``serverInfo`` in ``_meta`` and, when cacheable, the hints."""
    finished = dict(result)
    finished.setdefault("resultType", "complete")
    meta = finished.get("_meta")
    finished["_meta"] = {**(meta if isinstance(meta, dict) else {}), META_SERVER_INFO: server_info}
    if method in CACHEABLE and finished["resultType"] == "complete":
        finished.setdefault("ttlMs", ttl_ms)
        finished.setdefault("cacheScope", cache_scope)
    return finished


# ---- MRTR -------------------------------------------------------------------------------------------------
class RequestEscalation(MCPError):
    """Raised inside a handler (through a tool) to end the whole request with a protocol-level answer."""


class InputRequired(RequestEscalation):
    """The request needs answers from the client first: ``requests`` maps keys to ``{method, params}``."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


class MissingClientCapability(RequestEscalation):
    """The request needs a client capability it did not declare (-32021)."""

    def __init__(self, capability: str, detail: dict[str, Any] | None = None) -> None:
        """``detail``: what inside the capability is needed, e.g. ``{"url": {}}`` for elicitation."""
        shown = capability + "".join(f".{key}" for key in detail or {})
        super().__init__(f"the client did not declare the {shown!r} capability")
        self.error = JSONRPCError(
            MISSING_CLIENT_CAPABILITY,
            f"Server requires the {shown} capability for this request",
            {"requiredCapabilities": {capability: dict(detail or {})}},
        )


@dataclass
class InputRound:
    """One run of an MRTR request: answers known so far, and what this run asked for without an answer."""

    meta: RequestMeta
    responses: dict[str, Any] = field(default_factory=dict)
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    _count: int = 0

    def ask(self, method: str, params: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        """The answer to this input request, or raise InputRequired (or MissingClientCapability)."""
        capability = INPUT_CAPABILITY[method]
        if not _declared(self.meta.client_capabilities, capability):
            raise MissingClientCapability(capability)
        self._count += 1
        key = key or f"{method.split('/')[0]}_{self._count}"
        answer = self.responses.get(key)
        if isinstance(answer, dict):
            return answer
        self.pending[key] = {"method": method, "params": params}
        # The same dict, not a copy: requests made concurrently (asyncio.gather) in this run all join it.
        raise InputRequired(self.pending)


def _declared(capabilities: dict[str, Any], name: str) -> bool:
    return isinstance(capabilities.get(name), dict)


def read_input_responses(params: Mapping[str, Any]) -> dict[str, Any]:
    """``inputResponses``: an object of objects; anything else is -32602. Unknown keys are kept (ignored)."""
    responses = params.get("inputResponses")
    if responses is None:
        return {}
    if not isinstance(responses, dict) or not all(isinstance(v, dict) for v in responses.values()):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'inputResponses' must map keys to result objects")
    return dict(responses)


def input_required_result(pending: dict[str, dict[str, Any]], request_state: str) -> dict[str, Any]:
    return {"resultType": "input_required", "inputRequests": pending, "requestState": request_state}


def request_digest(method: str, params: Mapping[str, Any]) -> str:
    """The salient params of a request: everything but ``_meta`` and the MRTR fields."""
    salient = {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState")}
    text = json.dumps([method, salient], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def state_key(secret: str | bytes) -> bytes:
    """A sealing key from configuration: raw bytes as given, text (a passphrase, hex...) through SHA-256.

    Workers behind one load balancer must share it (``mcp-notebook serve --state-key``), like the C++
    SDK's ``request_state_key``; a restart with the same key keeps live states valid.
    """
    if isinstance(secret, bytes):
        if len(secret) < 16:
            raise ValueError("a requestState key needs at least 16 bytes")
        return secret
    if len(secret) < 16:
        raise ValueError("a requestState key needs at least 16 characters")
    return hashlib.sha256(secret.encode()).digest()


def state_error(reason: str, message: str) -> JSONRPCError:
    """-32602 with ``data.reason`` (tampered, malformed, other-request, other-principal, expired)."""
    return JSONRPCError(INVALID_PARAMS, f"Invalid params: {message}", {"reason": reason})


# ---- subscriptions/listen ---------------------------------------------------------------------------------
def listen_filter(params: Mapping[str, Any], server_capabilities: dict[str, Any]) -> dict[str, Any]:
    """The subset of the requested ``notifications`` filter this server honours (subscriptions#ack)."""
    requested = params.get("notifications")
    if requested is not None and not isinstance(requested, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'notifications' must be an object")
    requested = requested or {}
    honoured: dict[str, Any] = {}
    for flag, (_, path) in LISTEN_FLAGS.items():
        node: Any = server_capabilities
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if requested.get(flag) is True and node:
            honoured[flag] = True
    uris = requested.get("resourceSubscriptions")
    subscribe = server_capabilities.get("resources", {}).get("subscribe")
    if isinstance(uris, list) and subscribe:
        honoured["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    return honoured


def listen_matches(honoured: Mapping[str, Any], method: str, params: Mapping[str, Any] | None) -> bool:
    """Whether a notification belongs on a listen stream with this honoured filter."""
    if method == "notifications/resources/updated":
        uri = params.get("uri") if params else None
        return uri in honoured.get("resourceSubscriptions", ())
    return any(honoured.get(flag) and method == note for flag, (note, _) in LISTEN_FLAGS.items())
