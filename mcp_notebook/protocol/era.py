"""The client's side of the two eras: which one to speak, and how modern requests and results look.

A dual-era client probes with ``server/discover`` (2026-07-28 basic/versioning#era-detection): a
``DiscoverResult`` naming a modern version we speak means modern; a recognised modern error means modern
(retry at a version the server names, never fall back); *anything else* -- any other error code, a
transport-level HTTP failure, no answer in time -- means legacy, and the ``initialize`` handshake follows.
The fallback is deliberately not keyed to one error code. Everything here is pure: the engine
(``engine/client.py``) sends what these functions build and feeds them what came back.

Modern requests carry ``_meta`` (version, capabilities, client info) on every request; results carry
``resultType``. An ``input_required`` result (MRTR, basic/patterns/mrtr) is answered and the request is
retried with ``inputResponses`` and the echoed ``requestState``, under a new JSON-RPC id.
"""

from __future__ import annotations

import base64
import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import RemoteProtocolError
from .header_params import header_params, mirrored_value, value_at
from .modern import (
    CACHEABLE,
    EXTENSION_METHODS,
    HEADER_MISMATCH,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MISSING_CLIENT_CAPABILITY,
    MODERN_METHODS,
    MRTR_METHODS,
    NAME_PARAMS,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .versions import LEGACY_VERSIONS, MODERN_VERSIONS

__all__ = [
    "ERA_MODES",
    "MAX_INPUT_ROUNDS",
    "EraMode",
    "EraResult",
    "InputRequired",
    "ModernServer",
    "ProbeVerdict",
    "Retry",
    "UseLegacy",
    "UseModern",
    "cache_deadline",
    "classify_discover_error",
    "classify_discover_result",
    "client_capabilities",
    "era_meta",
    "http_headers",
    "invalid_param_headers",
    "is_modern_method",
    "modern_params",
    "param_headers",
    "plain_result",
    "read_result",
    "retry_params",
]

EraMode = Literal["auto", "legacy", "modern"]
ERA_MODES: tuple[str, ...] = ("auto", "legacy", "modern")
# MRTR rounds one call may take before we give up (the server MAY ask again; it must not loop forever).
MAX_INPUT_ROUNDS = 16
# Error codes that only a modern server sends (versioning#era-detection, HTTP: -32020/-32021/-32022).
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})


# ---- the probe --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ModernServer:
    """What ``server/discover`` told us: the version we now speak and the server's self-description."""

    version: str
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    instructions: str | None
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class UseModern:
    server: ModernServer


@dataclass(frozen=True, slots=True)
class Retry:
    """A modern server that does not speak our preferred version: probe again at ``version``."""

    version: str


@dataclass(frozen=True, slots=True)
class UseLegacy:
    """Do the ``initialize`` handshake, requesting ``version`` when the server named one (else ours)."""

    reason: str
    version: str | None = None


ProbeVerdict = UseModern | Retry | UseLegacy


def classify_discover_result(
    result: Any, requested: str, modern_versions: tuple[str, ...] = MODERN_VERSIONS
) -> ProbeVerdict:
    """A successful answer to ``server/discover``: modern only when it is a DiscoverResult naming a modern
    version we speak; anything malformed or legacy-only is not modern evidence (fall back)."""
    if not isinstance(result, dict):
        return UseLegacy("server/discover answered with something that is not an object")
    supported = result.get("supportedVersions")
    capabilities = result.get("capabilities")
    if not isinstance(supported, list) or not isinstance(capabilities, dict):
        return UseLegacy("server/discover answered without supportedVersions/capabilities")
    mutual = [v for v in modern_versions if v in supported]
    if not mutual:
        legacy = _best_legacy(supported)
        return UseLegacy(f"the server advertises no modern version we speak ({supported})", legacy)
    version = requested if requested in mutual else max(mutual)
    meta = result.get("_meta")
    info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    instructions = result.get("instructions")
    return UseModern(
        ModernServer(
            version,
            capabilities,
            info if isinstance(info, dict) else {},
            instructions if isinstance(instructions, str) else None,
            result,
        )
    )


def classify_discover_error(
    code: int | None, data: Any, requested: str, modern_versions: tuple[str, ...] = MODERN_VERSIONS
) -> ProbeVerdict:
    """An error (or ``code=None``: a timeout, a transport failure) in answer to ``server/discover``.

    Only ``-32022`` UnsupportedProtocolVersion with a usable ``supported`` list is modern evidence that
    changes the probe; every other error means legacy (never keyed on one specific code).
    """
    if code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(data, dict):
        supported = data.get("supported")
        if isinstance(supported, list):
            mutual = [v for v in modern_versions if v in supported]
            if mutual:  # (the caller retries at most once, so naming our own version cannot loop)
                return Retry(max(mutual))
            legacy = _best_legacy(supported)
            if legacy is not None:
                return UseLegacy("the server speaks no modern version we do, but a legacy one", legacy)
            raise RemoteProtocolError(
                f"the server supports only protocol versions {supported}; this client speaks "
                f"{', '.join(modern_versions + LEGACY_VERSIONS)}"
            )
    what = "no answer" if code is None else f"error {code}"
    return UseLegacy(f"server/discover got {what}: not a modern server")


def _best_legacy(supported: list[Any]) -> str | None:
    legacy = [v for v in LEGACY_VERSIONS if v in supported]
    return max(legacy) if legacy else None


# ---- modern requests --------------------------------------------------------------------------------------
def client_capabilities(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """Legacy capabilities in their 2026 shape: ``roots`` has no ``listChanged`` (notifications are gone)."""
    modern = {k: v for k, v in capabilities.items()}
    if "roots" in modern:
        modern["roots"] = {}
    return modern


def modern_params(
    params: Mapping[str, Any] | None,
    version: str,
    capabilities: Mapping[str, Any],
    client_info: Mapping[str, Any],
) -> dict[str, Any]:
    """``params`` with the required per-request ``_meta`` (basic/index#request-meta) merged in."""
    sent = dict(params or {})
    meta = sent.get("_meta")
    sent["_meta"] = {
        **(meta if isinstance(meta, dict) else {}),
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: dict(capabilities),
        META_CLIENT_INFO: dict(client_info),
    }
    return sent


def is_modern_method(method: str) -> bool:
    return method in MODERN_METHODS or method in EXTENSION_METHODS


def _header_value(value: str) -> str:
    """A header-safe value: visible ASCII as is, anything else ``=?base64?...?=`` (transports#encoding)."""
    plain = (
        value == value.strip()
        and all(0x20 <= ord(c) <= 0x7E for c in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    return value if plain else "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


_name_header = functools.lru_cache(maxsize=256)(_header_value)  # a tool's name: the same every call


def http_headers(method: str, params: Mapping[str, Any] | None) -> dict[str, str]:
    """The 2026 Streamable HTTP routing headers of a modern request: ``MCP-Protocol-Version`` (equal to
    ``_meta``), ``Mcp-Method`` and, for tools/call, prompts/get and resources/read, ``Mcp-Name``."""
    headers = {"Mcp-Method": method}
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if isinstance(version, str):
        headers["MCP-Protocol-Version"] = version
    name_field = NAME_PARAMS.get(method)
    name = params.get(name_field) if name_field and isinstance(params, Mapping) else None
    if isinstance(name, str):
        headers["Mcp-Name"] = _name_header(name)
    return headers


def param_headers(input_schema: Mapping[str, Any] | None, arguments: Any) -> dict[str, str]:
    """``Mcp-Param-{Name}`` headers for the ``x-mcp-header`` properties (SEP-2243), nested ones included:
    each value is read at its property's path; absent, null and unsafe integers are not mirrored."""
    if not isinstance(arguments, dict):
        return {}
    headers: dict[str, str] = {}
    for param in header_params(input_schema)[0]:
        text = mirrored_value(value_at(arguments, param.path))
        if isinstance(param.name, str) and text is not None:
            headers[f"Mcp-Param-{param.name}"] = _header_value(text)
    return headers


_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def invalid_param_headers(input_schema: Any) -> str | None:
    """Why a tool's ``x-mcp-header`` annotations are invalid (SEP-2243), or None when they are fine.

    Over the whole schema: each annotation on a property reached through ``properties`` alone (nested
    objects allowed; never under ``items``, a combinator, a conditional or ``$ref``), its name a non-empty
    RFC 9110 token unique case-insensitively, on a string, integer or boolean property. Such a tool MUST be
    left out of an HTTP client's tool list.
    """
    params, misplaced = header_params(input_schema)
    if misplaced is not None:
        return misplaced
    seen: set[str] = set()
    for param in params:
        name, prop = param.name, param.where
        if not isinstance(name, str) or not name or not set(name) <= _TOKEN_CHARS:
            return f"property {prop!r}: x-mcp-header {name!r} is not a header token"
        if name.lower() in seen:
            return f"property {prop!r}: x-mcp-header {name!r} is used twice"
        seen.add(name.lower())
        if param.schema.get("type") not in ("string", "integer", "boolean"):
            return f"property {prop!r}: x-mcp-header is only allowed on string, integer or boolean"
    return None


# ---- modern results ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class InputRequired:
    """An ``input_required`` result: answer ``requests`` (key -> {method, params}), then retry."""

    requests: dict[str, dict[str, Any]]
    request_state: Any  # opaque: echoed verbatim, never parsed
    has_state: bool = field(default=False)


def read_result(method: str, result: Mapping[str, Any]) -> InputRequired | None:
    """None for a complete result (``resultType`` "complete" or absent); the MRTR step otherwise.

    An unknown ``resultType`` (or ``input_required`` on a method that may not use it) is the server's
    protocol error.
    """
    kind = result.get("resultType", "complete")
    if kind == "complete" or (kind == "task" and method == "tools/call"):
        return None  # a task (Tasks extension) is followed by the caller
    if kind != "input_required":
        raise RemoteProtocolError(f"{method}: unknown resultType {kind!r}")
    if method not in MRTR_METHODS:
        raise RemoteProtocolError(f"{method}: input_required is only allowed on {sorted(MRTR_METHODS)}")
    requests = result.get("inputRequests")
    if requests is not None and not (
        isinstance(requests, dict)
        and all(isinstance(r, dict) and isinstance(r.get("method"), str) for r in requests.values())
    ):
        raise RemoteProtocolError(f"{method}: malformed inputRequests in an input_required result")
    has_state = "requestState" in result
    if not requests and not has_state:
        raise RemoteProtocolError(f"{method}: input_required result with neither inputRequests nor state")
    return InputRequired(dict(requests or {}), result.get("requestState"), has_state)


def retry_params(
    original: Mapping[str, Any], step: InputRequired, responses: dict[str, Any]
) -> dict[str, Any]:
    """The retry's params: the original ones plus ``inputResponses`` and the ``requestState`` echoed
    verbatim (omitted when the server sent none); answers from an earlier round are not carried over."""
    params = {k: v for k, v in original.items() if k not in ("inputResponses", "requestState")}
    if responses:
        params["inputResponses"] = responses
    if step.has_state:
        params["requestState"] = step.request_state
    return params


def cache_deadline(result: Mapping[str, Any], now: float | None = None) -> float:
    """When a cacheable result goes stale (server/utilities/caching): absent or negative ``ttlMs`` = now."""
    ttl = result.get("ttlMs")
    seconds = ttl / 1000.0 if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0 else 0.0
    return (time.monotonic() if now is None else now) + seconds


# ---- one result shape in both eras ------------------------------------------------------------------------
# Methods both eras have: their 2026-07-28 results lose what legacy results never carry.
_PLAIN_METHODS = frozenset(
    {
        "tools/call",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    }
)


class EraResult(dict[str, Any]):
    """A result in its legacy shape; ``era_meta`` holds the 2026-07-28 fields taken out of it
    (``resultType``, ``ttlMs``, ``cacheScope``, ``serverInfo``) for a caller who wants them.

    A slot, not an instance ``__dict__``: a batch keeps every row's result, and each ``__dict__`` was one
    more object per result for the garbage collector to walk (issue 21 round 6)."""

    __slots__ = ("era_meta",)
    era_meta: dict[str, Any]


def plain_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A complete modern result in the shape a legacy session gets (one shape for callers); the protocol
    fields move to :attr:`EraResult.era_meta`. Other results (``resultType: "task"``, methods only one
    era has) are returned as they are."""
    if method not in _PLAIN_METHODS or result.get("resultType", "complete") != "complete":
        return result
    plain = EraResult(result)
    moved: dict[str, Any] = {"resultType": plain.pop("resultType", "complete")}
    if method in CACHEABLE:
        for key in ("ttlMs", "cacheScope"):
            if key in plain:
                moved[key] = plain.pop(key)
    meta = plain.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        moved["serverInfo"] = meta[META_SERVER_INFO]
        if len(meta) == 1:  # the usual case: nothing else in _meta
            del plain["_meta"]
        else:  # the rest, in a copy: the server's object is left as it came
            rest = dict(meta)
            del rest[META_SERVER_INFO]
            plain["_meta"] = rest
    plain.era_meta = moved
    return plain


def era_meta(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """The 2026-07-28 fields of a result: :attr:`EraResult.era_meta`, or the result itself."""
    meta: Mapping[str, Any] = getattr(result, "era_meta", result)
    return meta
