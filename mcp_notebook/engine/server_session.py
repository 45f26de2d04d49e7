"""One client's connection to a :class:`~mcp_notebook.engine.server.Server`: the request handlers, as a table.

Each handler takes the session and the incoming request and returns the result dict, or raises
:class:`JSONRPCError` for a protocol error. Tool failures are not protocol errors: they come back as
``isError`` results (server/tools#error-handling).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, Protocol

from ..protocol import downgrade, modern
from ..protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
)
from ..protocol.jsonrpc import RequestId
from ..protocol.session import Role, Session, State
from ..tools.context import Context
from ..tools.input_checks import check_declared, check_elicit_answer, client_elicits
from ..tools.prompts import PromptArgumentError, PromptDef
from ..tools.registry import ToolRegistry
from ..tools.resources import ResourceDef, TemplateDef
from ..tools.tool import Tool, shown_result
from ..transports.base import Peer, Transport
from . import task_calls as task_engine
from .approval import Approver, IncomingCall, check, denied_result
from .connection import Connection, IncomingRequest
from .paging import page_of
from .sealed_state import StateSealer
from .tasks import TaskManager
from .trace import Trace

RunSync = Callable[[Callable[[], Any]], Awaitable[Any]]
RunAsync = Callable[[Coroutine[Any, Any, Any]], Awaitable[Any]]
ElicitationFallback = Callable[[dict[str, Any], dict[str, Any]], Awaitable[dict[str, Any]]]
PrincipalOf = Callable[["ServerSession", Any], "str | None"]  # (session, request) -> who, for task ownership


class SessionServer(Protocol):
    """What a session needs from its :class:`~mcp_notebook.engine.server.Server`, declared here so that the
    import runs one way (server -> server_session). Add a member here when a handler needs a new one."""

    info: dict[str, Any]
    instructions: str | None
    page_size: int
    trace_size: int
    cache_ttl_ms: int
    cache_scope: Literal["public", "private"]
    read_cache_ttl_ms: int
    read_cache_scope: Literal["public", "private"]
    mask_errors: bool
    run_sync: RunSync
    run_async: RunAsync | None
    elicitation_fallback: ElicitationFallback | None
    approve: Approver | None
    state_sealer: StateSealer
    tools: ToolRegistry

    tasks: TaskManager
    tasks_enabled: bool
    principal_of: PrincipalOf | None
    max_listens: int
    max_listens_per_principal: int

    @property
    def sessions(self) -> set[ServerSession]: ...

    @property
    def resource_defs(self) -> dict[str, ResourceDef]: ...

    @property
    def template_defs(self) -> dict[str, TemplateDef]: ...

    @property
    def prompt_defs(self) -> dict[str, PromptDef]: ...

    def capabilities(self) -> dict[str, Any]: ...

    def modern_capabilities(self) -> dict[str, Any]: ...

    def emit(self, event: str, data: dict[str, Any]) -> None: ...

    @property
    def listened(self) -> bool: ...

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], arguments: dict[str, Any]
    ) -> dict[str, Any]: ...


__all__ = ["LOG_LEVELS", "ServerSession"]

log = logging.getLogger("mcp_notebook.engine.server")

LOG_LEVELS = modern.LOG_LEVELS  # RFC 5424 severities, lowest first


class ServerSession:
    """The server side of one connection: a protocol session, its engine, and per-client state."""

    def __init__(
        self, server: SessionServer, transport: Transport, *, peer: Peer | None = None, name: str = "server"
    ) -> None:
        self.server = server
        self.peer = peer or Peer("memory")  # who this is, as the connection knows it (approval rules)
        self.session = Session(Role.SERVER, info=server.info, capabilities=server.capabilities())
        self.connection = Connection(
            self.session,
            transport,
            request_handler=self.handle,
            notification_handler=self.on_notification,
            trace=Trace(server.trace_size),
            name=name,
        )
        self.log_level: str | None = None  # None: the client never set one; we send everything
        self.subscriptions: set[str] = set()
        # Open 2026-07-28 subscriptions/listen requests on this connection: id -> the filter we honour.
        self.listens: dict[RequestId, dict[str, Any]] = {}
        self.listen_principals: dict[RequestId, str | None] = {}  # who opened each listen stream
        self._held: list[tuple[str, dict[str, Any] | None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    @functools.cached_property
    def connection_key(self) -> str:
        """The principal of a lasting anonymous connection (drawn when first needed: a 2026 POST never is)."""
        return secrets.token_urlsafe(16)

    @property
    def client_info(self) -> dict[str, Any]:
        return self.session.peer_info

    async def run(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.connection.start()
        try:
            await self.connection.wait_closed()
        finally:
            await self.connection.aclose()

    def answer_one(self, message: str) -> None:
        """Start answering ``message``, this connection's only request (``Server.serve_one``)."""
        self.loop = asyncio.get_running_loop()
        self.connection.answer_one(message)

    def answer_inline(self, message: str) -> Coroutine[Any, Any, None] | None:
        """:meth:`answer_one`, the handler run by the caller's task (``Server.serve_inline``)."""
        self.loop = asyncio.get_running_loop()
        return self.connection.answer_inline(message)

    async def handle(self, request: IncomingRequest) -> dict[str, Any]:
        if request.modern is not None:
            return await self._handle_modern(request)
        handler = HANDLERS.get(request.method)
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        result = await handler(self, request)
        if request.method == "tools/call":  # in the shape this session's version has (audit items 6, 7)
            return downgrade.call_result_for(self.session.version, result)
        if request.method == "tools/list":
            version = self.session.version
            result["tools"] = [downgrade.tool_for(version, tool) for tool in result.get("tools", [])]
        return result

    async def _handle_modern(self, request: IncomingRequest) -> dict[str, Any]:
        """A stateless 2026-07-28 request: same handlers, modern finish (protocol/modern.py)."""
        handler = MODERN_HANDLERS.get(request.method)
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        try:
            result = await handler(self, request)
        except modern.MissingClientCapability as exc:
            raise exc.error from None
        server = self.server
        if request.method == "resources/read":  # contents: per user, changing (never assumed public)
            ttl, scope = server.read_cache_ttl_ms, server.read_cache_scope
        else:
            ttl, scope = server.cache_ttl_ms, server.cache_scope
        if request.method == "tools/call":
            result = downgrade.call_result_for(None, result)  # a text copy of structured content
        return modern.complete(result, request.method, server.info, ttl_ms=ttl, cache_scope=scope)

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            held, self._held = self._held, []
            for held_method, held_params in dict.fromkeys((m, _freeze(p)) for m, p in held):
                await self._notify_quietly(held_method, dict(held_params) if held_params else None)
        elif method == "notifications/roots/list_changed":
            self.server.emit("roots_changed", {"session": self})

    # ---- messages the server sends on its own ------------------------------------------------------------
    def notify_soon(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification from any thread, without waiting (list_changed, resources/updated)."""
        loop = self.loop
        if loop is None or self.connection.closed:
            return
        self.publish(method, params)
        if self.session.state in (State.NEW, State.CLOSED):
            return  # no legacy session (yet): nothing to announce; a later initialize lists afresh
        if self.session.state is not State.READY:
            # Not before notifications/initialized (lifecycle#operation): keep it until then.
            self._held.append((method, params))
            return
        # RuntimeError: the loop already closed, so the connection is gone.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(lambda: loop.create_task(self._notify_quietly(method, params)))

    def publish(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Deliver a change notification to this connection's matching ``subscriptions/listen`` streams."""
        loop = self.loop
        if loop is None or self.connection.closed:
            return
        for listen_id, honoured in list(self.listens.items()):
            if modern.listen_matches(honoured, method, params):
                tagged = {**(params or {}), "_meta": {modern.META_SUBSCRIPTION_ID: listen_id}}
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self.spawn_notify, method, tagged, listen_id)

    def spawn_notify(self, method: str, params: dict[str, Any], related_id: RequestId) -> None:
        assert self.loop is not None
        self.loop.create_task(self._notify_quietly(method, params, related_id))

    async def _notify_quietly(
        self, method: str, params: dict[str, Any] | None, related_id: RequestId | None = None
    ) -> None:
        try:
            await self.connection.notify(method, params, related_id=related_id)
        except Exception as exc:  # a closed peer must not break the sender
            log.debug("%s not delivered: %s", method, exc)

    def principal(self, request: IncomingRequest) -> str | None:
        """Who is asking: the key tasks, listen streams and sealed states are bound to.

        The server's ``principal_of`` hook if set; else who the connection authenticated (a token's name,
        an OAuth subject and client: :attr:`Peer.identity`); else this connection itself (memory, stdio,
        an HTTP session: ``connection:<random>``). None only for an unauthenticated one-request connection
        (a 2026-07-28 HTTP POST): no authorization context, so a task's unguessable id is its only key.
        """
        hook = self.server.principal_of
        if hook is not None:
            return hook(self, request)
        if self.peer.identity is not None:
            return self.peer.identity
        return f"connection:{self.connection_key}" if self.peer.lasting else None

    def wants_log(self, level: str) -> bool:
        if self.log_level is None:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


def _freeze(params: dict[str, Any] | None) -> tuple[tuple[str, Any], ...] | None:
    """Held notifications are deduplicated (one list_changed is enough); their params are flat."""
    return tuple(sorted(params.items())) if params else None


#: How an input request reaches the client: ``(method, params, key) -> answer``.
Deliver = Callable[[str, dict[str, Any], "str | None"], Awaitable[dict[str, Any]]]


class _ContextBackend:
    """What a tool's :class:`Context` talks to: this request on this session."""

    def __init__(
        self, owner: ServerSession, request: IncomingRequest, inputs: modern.InputRound | None = None
    ) -> None:
        self._owner = owner
        self._request = request
        self._inputs = inputs
        self._last_progress: float | None = None
        self.loop = asyncio.get_running_loop()

    @property
    def request_id(self) -> str | int:
        return self._request.id

    @property
    def principal(self) -> str | None:
        return self._owner.principal(self._request)

    @property
    def client_info(self) -> dict[str, Any]:
        meta = self._request.modern
        return meta.client_info if meta is not None else self._owner.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        meta = self._request.modern
        return meta.client_capabilities if meta is not None else self._owner.session.peer_capabilities

    @property
    def cancel_event(self) -> threading.Event:
        return self._request.cancel_event

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        token = self._request.progress_token
        if token is None:
            return  # the caller did not ask for progress
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(
                f"progress must increase with each report ({progress} after {self._last_progress})"
            )
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        version = self._request.modern.version if self._request.modern else self._owner.session.version
        if message is not None and version is not None and version.supports("progress_message"):
            params["message"] = message
        await self._request.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        meta = self._request.modern
        if not (meta.wants_log(level) if meta is not None else self._owner.wants_log(level)):
            return  # modern: only at or above the request's own logLevel, and none without one
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._request.notify("notifications/message", params)

    async def request(self, method: str, params: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        """One "input request": a server->client request (legacy) or an MRTR round (modern)."""
        return await self.input_request(method, params, key, self._deliver)

    async def input_request(
        self, method: str, params: dict[str, Any], key: str | None, deliver: Deliver
    ) -> dict[str, Any]:
        """Every input request a tool makes, on this request or in the task it became (``deliver`` is what
        differs): asks only what the client declared, in the era's shape, and checks the answer.

        An elicitation the calling client cannot take (it declared no such mode) goes to the server's
        ``elicitation_fallback`` when one is set: the notebook asks its own user, in the server console.
        """
        fallback = self._owner.server.elicitation_fallback
        if method == "elicitation/create" and fallback is not None and not self._client_elicits(params):
            return await fallback(dict(params), dict(self.client_info))
        modern_era = self._request.modern is not None
        check_declared(method, params, self.client_capabilities, modern=modern_era)
        if modern_era:
            capability = modern.INPUT_CAPABILITY[method]
            if not isinstance(self.client_capabilities.get(capability), dict):
                raise modern.MissingClientCapability(capability)
            if method == "elicitation/create":
                # form is the default mode; elicitationId is gone in 2026-07-28
                drop = ("mode", "elicitationId") if params.get("mode") == "form" else ("elicitationId",)
                params = {k: v for k, v in params.items() if k not in drop}
        elif method == "elicitation/create":
            params = self._elicitation_params(params)
        answer = await deliver(method, params, key)
        if method == "elicitation/create":
            check_elicit_answer(params, answer)
        return answer

    async def _deliver(self, method: str, params: dict[str, Any], key: str | None) -> dict[str, Any]:
        if self._request.modern is not None:
            if self._inputs is None:
                raise LocalProtocolError(f"{self._request.method} cannot ask the client for input (MRTR)")
            return self._inputs.ask(method, params, key)
        return await self._request.request(method, params)

    def _client_elicits(self, params: dict[str, Any]) -> bool:
        return client_elicits(self.client_capabilities, params)  # 2025-06-18 knew no modes at all

    def _elicitation_params(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self._owner.session
        mode = params.get("mode", "form")
        if not self._client_elicits(params):
            raise LocalProtocolError(f"the client did not declare elicitation mode {mode!r}")
        if session.version is not None and not session.version.supports("elicitation_url"):
            params = {k: v for k, v in params.items() if k != "mode"}
        return params


# ---- handlers --------------------------------------------------------------------------------------------
Handler = Callable[[ServerSession, IncomingRequest], Awaitable[dict[str, Any]]]


def _str_param(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise JSONRPCError(INVALID_PARAMS, f"Invalid params: {key!r} must be a string")
    return value


def _page(
    items: list[dict[str, Any]], key: str, params: dict[str, Any], server: SessionServer
) -> tuple[list[Any], str | None]:
    return page_of(items, key, params, server.page_size)


def _listing(
    field: str, items: list[dict[str, Any]], key: str, s: ServerSession, r: IncomingRequest
) -> dict[str, Any]:
    page, next_cursor = _page(items, key, r.params, s.server)
    result: dict[str, Any] = {field: page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _input_round(s: ServerSession, r: IncomingRequest) -> modern.InputRound | None:
    """Modern only: the answers this retry brings (sealed earlier ones plus ``inputResponses``)."""
    if r.modern is None:
        return None
    responses = modern.read_input_responses(r.params)
    if "requestState" not in r.params:
        # answers sent before any question (the conformance suite's input-required-result-ignore-extra-params
        # expects them taken) are checked like every answer: against the schema of the question they answer
        return modern.InputRound(r.modern, responses)
    sealer = s.server.state_sealer
    earlier = sealer.open(r.params["requestState"], r.method, r.params, principal=s.principal(r))
    return modern.InputRound(r.modern, {**responses, **earlier})  # sealed answers are not re-answered


def _input_required(
    s: ServerSession, r: IncomingRequest, inputs: modern.InputRound | None, needed: modern.InputRequired
) -> dict[str, Any]:
    """End this round: earlier answers ride along in the sealed state; the retry re-runs and replays them."""
    if inputs is None:  # only a modern request's context asks through an input round
        raise LocalProtocolError("input_required outside an MRTR request")
    state = s.server.state_sealer.seal(r.method, r.params, inputs.responses, principal=s.principal(r))
    return modern.input_required_result(needed.requests, state)


async def _discover(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    """server/discover (2026-07-28): versions, capabilities, instructions; serverInfo goes in _meta."""
    result: dict[str, Any] = {
        # dual-era: the legacy versions too (initialize negotiates them), newest first
        "supportedVersions": [*s.session.modern_versions, *reversed(s.session.supported_versions)],
        "capabilities": s.server.modern_capabilities(),
    }
    if s.server.instructions:
        result["instructions"] = s.server.instructions
    return result


async def _listen(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    """subscriptions/listen: acknowledge, then carry matching notifications until the client hangs up.

    The ack is the stream's first message; every notification is tagged with the listen request's id
    (basic/patterns/subscriptions). Ends by cancellation: a closed HTTP stream or notifications/cancelled.
    """
    honoured = modern.listen_filter(r.params, s.server.modern_capabilities())
    honoured.update(task_engine.listen_task_ids(s, r))
    principal = s.principal(r)
    _check_listen_room(s, principal)
    if "taskIds" in honoured:
        await s.server.tasks.following()  # a shared store: other workers' task changes reach this stream
    meta = {modern.META_SUBSCRIPTION_ID: r.id}
    await r.notify("notifications/subscriptions/acknowledged", {"_meta": meta, "notifications": honoured})
    s.listens[r.id] = honoured
    s.listen_principals[r.id] = principal  # task notifications reach only their owner's streams
    for state in task_engine.listen_catch_up(s, r, honoured.get("taskIds", [])):
        await r.notify("notifications/tasks", {**state, "_meta": meta})
    try:
        await asyncio.Event().wait()  # until cancelled
    finally:
        s.listens.pop(r.id, None)
        s.listen_principals.pop(r.id, None)
    return {"_meta": meta}  # pragma: no cover - the wait above only ends by cancellation


def _check_listen_room(s: ServerSession, principal: str | None) -> None:
    """Open listen streams are bounded per principal and in all (each holds a connection open)."""
    sessions = list(s.server.sessions)
    total = sum(len(session.listens) for session in sessions)
    if total >= s.server.max_listens:
        raise JSONRPCError(
            INVALID_REQUEST, f"Too many listen streams on this server (at most {s.server.max_listens})"
        )
    if principal is None:
        return
    mine = sum(1 for x in sessions for who in x.listen_principals.values() if who == principal)
    if mine >= s.server.max_listens_per_principal:
        raise JSONRPCError(
            INVALID_REQUEST,
            f"Too many listen streams: at most {s.server.max_listens_per_principal} per caller;"
            " close one first",
        )


async def _initialize(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return s.session.accept_initialize(r.params, s.server.instructions)


async def _ping(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return {}


async def _tools_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    try:
        tools, next_cursor = s.server.tools.page(r.params.get("cursor"), s.server.page_size)
    except ValueError as exc:
        raise JSONRPCError(INVALID_PARAMS, f"Invalid cursor: {r.params.get('cursor')!r}") from exc
    version = r.modern.version if r.modern is not None else s.session.version
    no_tasks = not s.server.tasks_enabled  # no tasks capability: taskSupport would promise what is not there
    if no_tasks or r.modern is not None or version is None or not version.supports("tool_execution"):
        # execution.taskSupport is 2025-11-25 only: gone from 2026-07-28 and unknown before
        tools = [{k: v for k, v in tool.items() if k != "execution"} for tool in tools]
    result: dict[str, Any] = {"tools": tools}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _tools_call(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    name = _str_param(r.params, "name")
    tool = s.server.tools.get(name)
    if tool is None:
        raise JSONRPCError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = r.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'arguments' must be an object")
    # The call as approval and listeners (console, audit log) see it; not built when nobody would look
    watched = s.server.approve is not None or s.server.listened
    event: dict[str, Any] = _call_event(s, r, name, arguments, tool.definition) if watched else {}
    if s.server.approve is not None:  # the one approval point, for every transport (DESIGN decision 14)
        approval = await check(s.server.approve, event["call"])
        if not approval.allowed:
            s.server.emit("call_denied", {**event, "reason": approval.reason})
            return denied_result(event["call"], approval)
    as_task = task_engine.runs_as_task(s, r, tool)
    if as_task and not watched:
        event = _call_event(s, r, name, arguments, tool.definition)
    if as_task and (r.modern is None or tool.task_start == "call"):
        return await task_engine.start_tool_task(s, r, tool, arguments, _ContextBackend(s, r, None), event)
    inputs = _input_round(s, r)
    if as_task:  # 2026, task_start="explicit": MRTR rounds on this request, then the task
        backend = _ContextBackend(s, r, inputs)
        escalate = functools.partial(_input_required, s, r, inputs)
        return await task_engine.call_then_task(s, r, tool, arguments, backend, escalate, event)
    context = Context(_ContextBackend(s, r, inputs)) if tool.context_param else None
    if not watched:
        return await _run_unwatched(s, r, tool, arguments, context, inputs)
    s.server.emit("call_started", event)
    finished: dict[str, Any] = {**event, "outcome": None, "status": "cancelled"}
    try:
        outcome = await tool.call(
            arguments, context, run_sync=s.server.run_sync, run_async=s.server.run_async
        )
    except modern.RequestEscalation as escalation:
        finished["status"] = "input required"
        if not isinstance(escalation, modern.InputRequired):
            raise
        return _input_required(s, r, inputs, escalation)
    else:
        if outcome.exception is not None:
            log.info("tool %s failed: %s\n%s", name, outcome.exception, outcome.traceback or "")
            outcome.result = shown_result(outcome, name, s.server.mask_errors)  # ToolError always shown
        failed = outcome.result.get("isError") is True
        finished |= {"outcome": outcome, "status": "failed" if failed else "done"}
        return outcome.result
    finally:  # also when cancelled, so listeners (console, audit) never keep a call "running"
        s.server.emit("call_finished", finished)


def _call_event(
    s: ServerSession, r: IncomingRequest, name: str, arguments: Any, definition: dict[str, Any]
) -> dict[str, Any]:
    call = IncomingCall(
        s.peer, name, dict(arguments or {}), definition, r.id, _declared(s, r), principal=s.principal(r)
    )
    return {"session": s, "request": r, "tool": name, "arguments": arguments, "call": call}


async def _run_unwatched(
    s: ServerSession,
    r: IncomingRequest,
    tool: Tool,
    arguments: Any,
    context: Context | None,
    inputs: modern.InputRound | None,
) -> dict[str, Any]:
    """The call when no approval hook nor listener is there: what the watched path does, less the events."""
    try:
        outcome = await tool.call(
            arguments, context, run_sync=s.server.run_sync, run_async=s.server.run_async
        )
    except modern.InputRequired as escalation:
        return _input_required(s, r, inputs, escalation)
    if outcome.exception is not None:
        log.info("tool %s failed: %s\n%s", tool.name, outcome.exception, outcome.traceback or "")
        outcome.result = shown_result(outcome, tool.name, s.server.mask_errors)  # ToolError always shown
    return outcome.result


def _declared(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    """The clientInfo the caller declared (per request in the modern era): for display only."""
    return dict(r.modern.client_info if r.modern is not None else s.client_info)


async def _resources_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return _listing("resources", [d.definition for d in s.server.resource_defs.values()], "uri", s, r)


async def _templates_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    items = [d.definition for d in s.server.template_defs.values()]
    return _listing("resourceTemplates", items, "uriTemplate", s, r)


async def _resources_read(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    uri = _str_param(r.params, "uri")
    # 2026-07-28 (SEP-2164): a missing resource is -32602 (Invalid params), and -32002 MUST NOT be sent;
    # up to 2025-11-25 it is -32002. A resource function may raise either: it is answered in the era's code.
    code = INVALID_PARAMS if r.modern is not None else RESOURCE_NOT_FOUND
    try:
        resource = s.server.resource_defs.get(uri)
        if resource is not None:
            return {"contents": await resource.read(s.server.run_sync)}
        for template in s.server.template_defs.values():
            variables = template.match(uri)
            if variables is not None:
                return {"contents": await template.read(uri, variables, s.server.run_sync)}
    except JSONRPCError as exc:
        if exc.code == RESOURCE_NOT_FOUND and exc.code != code:
            raise JSONRPCError(code, exc.message, exc.data) from exc
        raise
    raise JSONRPCError(code, "Resource not found", {"uri": uri})


async def _subscribe(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    s.subscriptions.add(_str_param(r.params, "uri"))
    return {}


async def _unsubscribe(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    s.subscriptions.discard(_str_param(r.params, "uri"))
    return {}


async def _prompts_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return _listing("prompts", [p.definition for p in s.server.prompt_defs.values()], "name", s, r)


async def _prompts_get(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    name = _str_param(r.params, "name")
    prompt = s.server.prompt_defs.get(name)
    if prompt is None:
        raise JSONRPCError(INVALID_PARAMS, f"Unknown prompt: {name}")
    arguments = r.params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'arguments' must be an object")
    inputs = _input_round(s, r)
    context = Context(_ContextBackend(s, r, inputs)) if prompt.context_param else None
    try:
        return await prompt.render(arguments, s.server.run_sync, context)
    except PromptArgumentError as exc:
        raise JSONRPCError(INVALID_PARAMS, str(exc)) from exc
    except modern.InputRequired as needed:
        return _input_required(s, r, inputs, needed)


async def _complete(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    ref, argument = r.params.get("ref"), r.params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'ref' and 'argument' must be objects")
    context = r.params.get("context")
    arguments = context.get("arguments", {}) if isinstance(context, dict) else {}
    return {"completion": await s.server.complete(ref, argument, arguments)}


async def _set_level(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    level = r.params.get("level")
    if level not in LOG_LEVELS:
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}"
        )
    s.log_level = level
    return {}


HANDLERS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "resources/list": _resources_list,
    "resources/templates/list": _templates_list,
    "resources/read": _resources_read,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "prompts/list": _prompts_list,
    "prompts/get": _prompts_get,
    "completion/complete": _complete,
    "logging/setLevel": _set_level,
    **task_engine.TASK_HANDLERS,
}

# The modern era's methods (protocol/modern.py MODERN_METHODS): no initialize, ping, logging/setLevel or
# resources/(un)subscribe; server/discover and subscriptions/listen instead.
MODERN_HANDLERS: dict[str, Handler] = {
    **{method: HANDLERS[method] for method in modern.MODERN_METHODS if method in HANDLERS},
    "server/discover": _discover,
    "subscriptions/listen": _listen,
    **task_engine.MODERN_TASK_HANDLERS,
}
