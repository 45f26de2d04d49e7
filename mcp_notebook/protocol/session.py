"""The sans-IO MCP session: one object per connection, fed bytes, returning events and bytes to send.

Like h11, it does no I/O: the async engine (``engine/connection.py``) reads from a transport, calls
:meth:`Session.receive`, acts on the events, and writes what the ``send_*`` methods return. Every legal
handshake transition is one row of :data:`TRANSITIONS`; which requests may flow in each state, and which
capability each method needs, are tables too. Anything else is an error naming the role, state and message.

Lifecycle: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle
"""

from __future__ import annotations

import enum
import functools
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from . import jsonrpc, modern
from .errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
)
from .jsonrpc import ErrorResponse, Invalid, Notification, Request, RequestId, Response
from .modern import RequestMeta
from .versions import LATEST_LEGACY, MODERN_VERSIONS, SUPPORTED_VERSIONS, ProtocolVersion, negotiate

__all__ = [
    "TRANSITIONS",
    "ErrorReceived",
    "Event",
    "NotificationReceived",
    "ProtocolViolation",
    "RequestReceived",
    "ResultReceived",
    "Role",
    "Session",
    "State",
]


# per version name: a C lookup, where supports() is a Python call per message
@functools.lru_cache(maxsize=32)
def _batching(version: str) -> bool:
    return ProtocolVersion(version).supports("batching")


@functools.lru_cache(maxsize=32)  # the same: ProtocolVersion.era is a Python call per request sent
def _modern_version(version: str) -> bool:
    return ProtocolVersion(version).era == "modern"


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"


class State(enum.Enum):
    NEW = "new"  # nothing exchanged
    INITIALIZING = "initializing"  # initialize sent (client) / received (server), no answer yet
    INITIALIZED = "initialized"  # initialize answered; notifications/initialized not yet sent/received
    READY = "ready"  # normal operation
    CLOSED = "closed"

    # Hashed by identity, in C: Enum's own __hash__ is a Python function (hash of the name), called for each
    # lookup in the tables keyed by state (one per request sent). Members are singletons compared by
    # identity, so the hash agrees with equality as before.
    __hash__ = object.__hash__


class Trigger(enum.Enum):
    SEND_INITIALIZE = "send initialize"
    RECV_INITIALIZE_RESULT = "receive initialize result"
    RECV_INITIALIZE_ERROR = "receive initialize error"
    SEND_INITIALIZED = "send notifications/initialized"
    RECV_INITIALIZE = "receive initialize"
    SEND_INITIALIZE_RESULT = "send initialize result"
    SEND_INITIALIZE_ERROR = "send initialize error"
    RECV_INITIALIZED = "receive notifications/initialized"
    ADOPT_MODERN = "adopt a server/discover result (2026-07-28: no handshake)"


C, S = Role.CLIENT, Role.SERVER

# Every legal handshake transition (legacy era). CLOSED is reachable from anywhere through close().
TRANSITIONS: dict[tuple[Role, State, Trigger], State] = {
    (C, State.NEW, Trigger.SEND_INITIALIZE): State.INITIALIZING,
    (C, State.INITIALIZING, Trigger.RECV_INITIALIZE_RESULT): State.INITIALIZED,
    (C, State.INITIALIZING, Trigger.RECV_INITIALIZE_ERROR): State.CLOSED,
    (C, State.INITIALIZED, Trigger.SEND_INITIALIZED): State.READY,
    (C, State.NEW, Trigger.ADOPT_MODERN): State.READY,
    (S, State.NEW, Trigger.RECV_INITIALIZE): State.INITIALIZING,
    (S, State.INITIALIZING, Trigger.SEND_INITIALIZE_RESULT): State.INITIALIZED,
    (S, State.INITIALIZING, Trigger.SEND_INITIALIZE_ERROR): State.NEW,  # the client may try again
    (S, State.INITIALIZED, Trigger.RECV_INITIALIZED): State.READY,
}

ALL = None  # "any method" in the tables below
_PING = frozenset({"ping"})
_HANDSHAKE = frozenset({"initialize", "ping"})
# A dual-era client opens with the server/discover probe, then initialize if the server is legacy.
_CLIENT_OPENING = frozenset({"initialize", "ping", "server/discover"})

# Requests the CLIENT may send, per client state (the server checks the same table on receipt).
# The client SHOULD NOT send requests other than ping before the initialize result (lifecycle#initialization).
CLIENT_REQUESTS: dict[State, frozenset[str] | None] = {
    State.NEW: _CLIENT_OPENING,
    State.INITIALIZING: _PING,
    State.INITIALIZED: ALL,
    State.READY: ALL,
    State.CLOSED: frozenset(),
}
# Requests the SERVER may send, per server state: only ping before notifications/initialized.
SERVER_REQUESTS: dict[State, frozenset[str] | None] = {
    State.NEW: _PING,
    State.INITIALIZING: _PING,
    State.INITIALIZED: _PING,
    State.READY: ALL,
    State.CLOSED: frozenset(),
}
# What a server accepts from the client in each *server* state. INITIALIZED accepts everything: a client
# may race its first request against its notifications/initialized, and refusing it helps nobody.
SERVER_ACCEPTS: dict[State, frozenset[str] | None] = {
    State.NEW: _HANDSHAKE,
    State.INITIALIZING: _PING,
    State.INITIALIZED: ALL,
    State.READY: ALL,
    State.CLOSED: frozenset(),
}
CLIENT_ACCEPTS: dict[State, frozenset[str] | None] = {
    State.NEW: _PING,
    State.INITIALIZING: _PING,
    State.INITIALIZED: ALL,
    State.READY: ALL,
    State.CLOSED: frozenset(),
}

# The capability (path into the capabilities object) a method needs from the side that answers it.
REQUIRED_CAPABILITY: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "completion/complete": ("completions",),
    "logging/setLevel": ("logging",),
    "sampling/createMessage": ("sampling",),
    "elicitation/create": ("elicitation",),
    "roots/list": ("roots",),
    # 2025-11-25 tasks (the 2026 Tasks extension is gated per request instead)
    "tasks/get": ("tasks",),
    "tasks/result": ("tasks",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
}


def has_capability(capabilities: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = capabilities
    for key in path:
        if not isinstance(node, dict) or key not in node or node[key] in (None, False):
            return False
        node = node[key]
    return True


# ---- events -----------------------------------------------------------------------------------------------
# Immutable by type (Final fields, checked by mypy), not frozen=True: a frozen dataclass's __init__ sets each
# field through object.__setattr__, about 3x the cost of a plain one, and these are made for every message.
@dataclass(slots=True, unsafe_hash=True)
class RequestReceived:
    id: Final[RequestId]
    method: Final[str]
    params: Final[dict[str, Any]]
    modern: Final[RequestMeta | None] = None  # set for a stateless 2026-07-28 request


@dataclass(slots=True, unsafe_hash=True)
class NotificationReceived:
    method: Final[str]
    params: Final[dict[str, Any]]


@dataclass(slots=True, unsafe_hash=True)
class ResultReceived:
    id: Final[RequestId]
    method: Final[str]
    result: Final[dict[str, Any]]


@dataclass(slots=True, unsafe_hash=True)
class ErrorReceived:
    id: Final[RequestId]
    method: Final[str]
    error: Final[MCPError]


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """The peer sent something invalid. ``reply`` (already serialized) must be sent back when not None."""

    reason: str
    reply: str | None = None


Event = RequestReceived | NotificationReceived | ResultReceived | ErrorReceived | ProtocolViolation


@dataclass
class Session:
    """One side of one MCP connection, as a state machine: the legacy handshake, plus (server) modern
    stateless requests, which pass no state gate and carry their own version and capabilities."""

    role: Role
    info: dict[str, Any] = field(default_factory=lambda: {"name": "mcp-notebook", "version": "0"})
    capabilities: dict[str, Any] = field(default_factory=dict)
    supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS
    modern_versions: tuple[str, ...] = MODERN_VERSIONS  # a server answers these statelessly (dual-era)
    state: State = State.NEW
    version: ProtocolVersion | None = None
    peer_info: dict[str, Any] = field(default_factory=dict)
    peer_capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    _next_id: int = 0
    _outgoing: dict[RequestId, str] = field(default_factory=dict)  # our requests awaiting an answer
    _incoming: dict[RequestId, str] = field(default_factory=dict)  # peer requests we still owe an answer
    _abandoned: deque[RequestId] | None = None  # the last 1024 requests we cancelled (made at the first)

    # ---- state -------------------------------------------------------------------------------------------
    def _fire(self, trigger: Trigger) -> None:
        try:
            self.state = TRANSITIONS[(self.role, self.state, trigger)]
        except KeyError:
            raise LocalProtocolError(
                f"{self.role.value} in state {self.state.value!r} cannot {trigger.value}"
            ) from None

    def close(self) -> None:
        self.state = State.CLOSED

    def outstanding(self) -> dict[RequestId, str]:
        """Our requests still waiting for an answer (id -> method)."""
        return dict(self._outgoing)

    def _allowed_to_receive(self) -> dict[State, frozenset[str] | None]:
        return SERVER_ACCEPTS if self.role is Role.SERVER else CLIENT_ACCEPTS

    # ---- sending -----------------------------------------------------------------------------------------
    def send_request(self, method: str, params: dict[str, Any] | None = None) -> tuple[RequestId, str]:
        allowed = (CLIENT_REQUESTS if self.role is Role.CLIENT else SERVER_REQUESTS)[self.state]  # (inline)
        if allowed is not ALL and method not in allowed:
            raise LocalProtocolError(
                f"{self.role.value} in state {self.state.value!r} may not send {method!r}"
                + (" (connect first)" if self.state is State.NEW else "")
            )
        is_modern = self.version is not None and _modern_version(self.version.name)
        if is_modern and method not in modern.MODERN_METHODS and method not in modern.EXTENSION_METHODS:
            raise LocalProtocolError(f"{method!r} does not exist in protocol version {self.version}")
        # 2026-07-28 tasks are an extension, declared in server/discover's capabilities.extensions
        needed = None if is_modern and method in modern.EXTENSION_METHODS else REQUIRED_CAPABILITY.get(method)
        if (
            needed
            and not has_capability(self.peer_capabilities, needed)
            and not self._peer_declared(method, needed)
        ):
            peer = "server" if self.role is Role.CLIENT else "client"
            raise LocalProtocolError(
                f"the {peer} did not declare the capability {'.'.join(needed)!r} needed for {method!r}"
            )
        if method == "initialize":
            self._fire(Trigger.SEND_INITIALIZE)
        self._next_id += 1
        request_id = self._next_id
        self._outgoing[request_id] = method
        return request_id, jsonrpc.serialize(Request(request_id, method, params))

    def _peer_declared(self, method: str, needed: tuple[str, ...]) -> bool:
        if has_capability(self.peer_capabilities, needed):
            return True
        # 2024-11-05 had no "completions" capability: completion/complete was always allowed.
        return (
            method == "completion/complete"
            and self.version is not None
            and not self.version.supports("completions_capability")
        )

    def adopt_modern(
        self,
        version: str,
        capabilities: dict[str, Any],
        server_info: dict[str, Any],
        instructions: str | None = None,
    ) -> None:
        """Client: the server answered ``server/discover``; speak ``version`` statelessly from now on
        (2026-07-28 has no handshake: every request carries its own ``_meta``)."""
        if self.role is not Role.CLIENT:
            raise LocalProtocolError("only a client adopts a server/discover result")
        self._fire(Trigger.ADOPT_MODERN)
        self.version = ProtocolVersion(version)
        self.peer_capabilities = dict(capabilities)
        self.peer_info = dict(server_info)
        self.instructions = instructions

    def initialize_request(self, version: str = LATEST_LEGACY) -> tuple[RequestId, str]:
        """The client's first message."""
        params = {"protocolVersion": version, "capabilities": self.capabilities, "clientInfo": self.info}
        return self.send_request("initialize", params)

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> str:
        if self.state is State.CLOSED:
            raise LocalProtocolError(f"{self.role.value} cannot send {method!r}: the session is closed")
        if method == "notifications/initialized":
            self._fire(Trigger.SEND_INITIALIZED)
        return jsonrpc.serialize(Notification(method, params))

    def cancel(self, request_id: RequestId, reason: str | None = None) -> str:
        """Give up on a request of ours: returns notifications/cancelled to send; late answers are dropped."""
        if self._outgoing.get(request_id) == "initialize":
            raise LocalProtocolError("the initialize request cannot be cancelled (lifecycle)")
        self._outgoing.pop(request_id, None)
        if self._abandoned is None:
            self._abandoned = deque(maxlen=1024)
        self._abandoned.append(request_id)
        params: dict[str, Any] = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        return jsonrpc.serialize(Notification("notifications/cancelled", params))

    def send_result(self, request_id: RequestId, result: dict[str, Any]) -> str:
        method = self._owed(request_id)
        text = jsonrpc.serialize(Response(request_id, result))  # may raise (NaN...): the request stays owed
        if method == "initialize":
            self._fire(Trigger.SEND_INITIALIZE_RESULT)
        del self._incoming[request_id]
        return text

    def send_error(self, request_id: RequestId | None, code: int, message: str, data: Any = None) -> str:
        text = jsonrpc.serialize(ErrorResponse(request_id, code, message, data))
        if request_id is not None:
            if self._owed(request_id) == "initialize":
                self._fire(Trigger.SEND_INITIALIZE_ERROR)
            del self._incoming[request_id]
        return text

    def _owed(self, request_id: RequestId) -> str:
        try:
            return self._incoming[request_id]
        except KeyError:
            raise LocalProtocolError(f"no request {request_id!r} from the peer awaits an answer") from None

    def forget(self, request_id: RequestId) -> None:
        """The peer cancelled its request: we must not answer it (cancellation#behavior-requirements)."""
        self._incoming.pop(request_id, None)

    def accept_initialize(self, params: dict[str, Any], instructions: str | None = None) -> dict[str, Any]:
        """Server: negotiate the version from ``initialize`` params and build the result to send.

        https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation
        """
        if self.state is not State.INITIALIZING:
            raise LocalProtocolError(f"server in state {self.state.value!r} has no initialize to accept")
        self.version = negotiate(params.get("protocolVersion"), self.supported_versions)
        caps = params.get("capabilities")
        self.peer_capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        self.peer_info = info if isinstance(info, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": self.version.name,
            "capabilities": self.capabilities,
            "serverInfo": self.info,
        }
        if instructions:
            result["instructions"] = instructions
        return result

    # ---- receiving ---------------------------------------------------------------------------------------
    def receive(self, data: str | bytes) -> list[Event]:
        allow_batch = self.version is not None and _batching(self.version.name)
        items = jsonrpc.parse(data, allow_batch=allow_batch)
        if len(items) == 1:  # every message but a batch: no comprehension's frame
            message = items[0]
            if type(data) is jsonrpc.Wire and data.checked is not None and self.role is Role.SERVER:
                # a transport that checked this modern request's _meta (2026 HTTP) handed that on: read once
                checked = modern.checked_meta(data, self.modern_versions)
                if checked is not None and type(message) is Request and message.id not in self._incoming:
                    return [self._on_modern_request(message, checked)]
            if type(message) is Response:  # an answer, the client's usual message: no call through _event
                return [self._on_answer(message)]
            return [self._event(message)]
        return [self._event(item) for item in items]

    def _event(self, message: jsonrpc.Message | Invalid) -> Event:
        if isinstance(message, Invalid):
            method = self._outgoing.pop(message.answers, None) if message.answers is not None else None
            if message.answers is not None and method is not None:  # the request fails now, not at timeout
                return ErrorReceived(
                    message.answers, method, RemoteProtocolError(f"{method}: {message.reason}")
                )
            reply = jsonrpc.serialize(message.reply) if message.reply else None
            return ProtocolViolation(message.reason, reply)
        if isinstance(message, Request):
            return self._on_request(message)
        if isinstance(message, Notification):
            return self._on_notification(message)
        return self._on_answer(message)

    def _refuse(self, request: Request, code: int, reason: str, data: Any = None) -> ProtocolViolation:
        reply = jsonrpc.serialize(ErrorResponse(request.id, code, reason, data))
        return ProtocolViolation(f"{reason} (request {request.id!r})", reply)

    def _is_modern(self, request: Request) -> bool:
        """Era detection (2026 versioning#dual-era): modern ``_meta`` selects the stateless era; so does a
        modern-only method before any ``initialize`` (its missing ``_meta`` is then reported as such)."""
        if self.role is not Role.SERVER or not self.modern_versions:
            return False
        if modern.is_modern(request.params):
            return True
        return self.state is State.NEW and request.method in ("server/discover", "subscriptions/listen")

    def _on_modern_request(self, request: Request, meta: RequestMeta | None = None) -> Event:
        if meta is None:
            try:
                meta = modern.read_meta(
                    request.method, request.params, self.modern_versions, also=self.supported_versions[::-1]
                )
            except JSONRPCError as exc:
                return self._refuse(request, exc.code, exc.message, exc.data)
        needed = REQUIRED_CAPABILITY.get(request.method)
        if needed and not has_capability(self.capabilities, needed):
            return self._refuse(request, METHOD_NOT_FOUND, f"Method not found: {request.method}")
        self._incoming[request.id] = request.method
        return RequestReceived(request.id, request.method, request.params or {}, meta)

    def _on_request(self, request: Request) -> Event:
        method = request.method
        if request.id in self._incoming:
            return self._refuse(request, INVALID_REQUEST, f"Request id {request.id!r} is already in use")
        if self._is_modern(request):
            return self._on_modern_request(request)
        allowed = self._allowed_to_receive()[self.state]
        if allowed is not ALL and method not in allowed:
            why = "before initialization" if self.state is not State.CLOSED else "after the session closed"
            return self._refuse(request, INVALID_REQUEST, f"Request {method!r} is not allowed {why}")
        if method == "initialize":
            if self.role is Role.CLIENT or self.state is not State.NEW:
                return self._refuse(request, INVALID_REQUEST, "The session is already initialized")
            self._fire(Trigger.RECV_INITIALIZE)
        needed = REQUIRED_CAPABILITY.get(method)
        if needed and not has_capability(self.capabilities, needed):
            return self._refuse(request, METHOD_NOT_FOUND, f"Method not found: {method}")
        self._incoming[request.id] = method
        return RequestReceived(request.id, method, request.params or {})

    def _on_notification(self, note: Notification) -> Event:
        if note.method == "notifications/initialized" and self.role is Role.SERVER:
            if self.state is not State.INITIALIZED:
                return ProtocolViolation(f"notifications/initialized in state {self.state.value!r}")
            self._fire(Trigger.RECV_INITIALIZED)
        return NotificationReceived(note.method, note.params or {})

    def _on_answer(self, answer: Response | ErrorResponse) -> Event | ProtocolViolation:
        method = self._outgoing.pop(answer.id, None) if answer.id is not None else None
        if method is None:
            if self._abandoned is not None and answer.id in self._abandoned:
                return ProtocolViolation(f"late answer to cancelled request {answer.id!r} ignored")
            if isinstance(answer, ErrorResponse):
                return ProtocolViolation(f"error from peer without a matching request: {answer.message}")
            return ProtocolViolation(f"answer to unknown request id {answer.id!r}")
        assert answer.id is not None
        if isinstance(answer, ErrorResponse):
            if method == "initialize":
                self._fire(Trigger.RECV_INITIALIZE_ERROR)
            return ErrorReceived(answer.id, method, JSONRPCError(answer.code, answer.message, answer.data))
        if method == "initialize":
            return self._on_initialize_result(answer)
        return ResultReceived(answer.id, method, answer.result)

    def _on_initialize_result(self, answer: Response) -> Event:
        result = answer.result
        chosen = result.get("protocolVersion")
        if not isinstance(chosen, str) or chosen not in self.supported_versions:
            self._fire(Trigger.RECV_INITIALIZE_ERROR)
            supported = ", ".join(self.supported_versions)
            error = RemoteProtocolError(
                f"the server chose protocol version {chosen!r},"
                f" which this client does not support ({supported})"
            )
            return ErrorReceived(answer.id, "initialize", error)
        self._fire(Trigger.RECV_INITIALIZE_RESULT)
        self.version = ProtocolVersion(chosen)
        caps = result.get("capabilities")
        self.peer_capabilities = caps if isinstance(caps, dict) else {}
        info = result.get("serverInfo")
        self.peer_info = info if isinstance(info, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        return ResultReceived(answer.id, "initialize", result)
