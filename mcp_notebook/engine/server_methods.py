"""The server's request handlers, as tables (``HANDLERS``, ``MODERN_HANDLERS``), and what a tool's
:class:`Context` talks to (``_ContextBackend``): what :class:`~.server_session.ServerSession` dispatches to.

Each handler takes the session and the incoming request and returns the result dict, or raises
:class:`JSONRPCError` for a protocol error. Tool failures are not protocol errors: they come back as
``isError`` results (server/tools#error-handling).

The import runs one way (server -> server_session -> server_methods): what the handlers need from the
session and its server is declared here, as :class:`MethodSession` and :class:`SessionServer`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Awaitable, Callable, Collection, Coroutine
from typing import Any, Literal, Protocol

from ..protocol import modern
from ..protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    RESOURCE_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
)
from ..protocol.session import Session
from ..tools.context import Context
from ..tools.input_checks import check_declared, check_elicit_answer, client_elicits
from ..tools.prompts import PromptArgumentError, PromptDef
from ..tools.registry import ToolRegistry
from ..tools.resources import ResourceDef, TemplateDef
from ..tools.tool import Tool, ToolOutcome, shown_result
from ..transports.base import Peer
from . import task_calls as task_engine
from .approval import Approver, IncomingCall, check, denied_result
from .connection import IncomingRequest
from .paging import page_of
from .sealed_state import StateSealer
from .tasks import TaskManager, TaskSession

RunSync = Callable[[Callable[[], Any]], Awaitable[Any]]
RunAsync = Callable[[Coroutine[Any, Any, Any]], Awaitable[Any]]
ElicitationFallback = Callable[[dict[str, Any], dict[str, Any]], Awaitable[dict[str, Any]]]
PrincipalOf = Callable[["MethodSession", Any], "str | None"]  # (session, request) -> who, for task ownership

__all__ = ["HANDLERS", "LOG_LEVELS", "MODERN_HANDLERS", "MethodSession", "SessionServer"]

log = logging.getLogger("mcp_notebook.engine.server")

LOG_LEVELS = modern.LOG_LEVELS  # RFC 5424 severities, lowest first


class SessionServer(Protocol):
    """What a session needs from its :class:`~mcp_notebook.engine.server.Server`, declared here so that the
    import runs one way (server -> server_session -> server_methods). Add a member here when a handler needs
    a new one."""

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
    def sessions(self) -> Collection[MethodSession]: ...

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


class MethodSession(TaskSession, Protocol):
    """What the handlers use of their session (:class:`~.server_session.ServerSession`)."""

    session: Session
    peer: Peer
    subscriptions: set[str]
    log_level: str | None

    @property
    def server(self) -> SessionServer: ...

    @property
    def client_info(self) -> dict[str, Any]: ...

    def wants_log(self, level: str) -> bool: ...


#: How an input request reaches the client: ``(method, params, key) -> answer``.
Deliver = Callable[[str, dict[str, Any], "str | None"], Awaitable[dict[str, Any]]]


class _ContextBackend:
    """What a tool's :class:`Context` talks to: this request on this session."""

    def __init__(
        self, owner: MethodSession, request: IncomingRequest, inputs: modern.InputRound | None = None
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
Handler = Callable[[MethodSession, IncomingRequest], Awaitable[dict[str, Any]]]


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
    field: str, items: list[dict[str, Any]], key: str, s: MethodSession, r: IncomingRequest
) -> dict[str, Any]:
    page, next_cursor = _page(items, key, r.params, s.server)
    result: dict[str, Any] = {field: page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _input_round(s: MethodSession, r: IncomingRequest) -> modern.InputRound | None:
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
    s: MethodSession, r: IncomingRequest, inputs: modern.InputRound | None, needed: modern.InputRequired
) -> dict[str, Any]:
    """End this round: earlier answers ride along in the sealed state; the retry re-runs and replays them."""
    if inputs is None:  # not made up front (a tools/call whose tool takes no Context): made now
        inputs = _input_round(s, r)
    if inputs is None:  # only a modern request's context asks through an input round
        raise LocalProtocolError("input_required outside an MRTR request")
    state = s.server.state_sealer.seal(r.method, r.params, inputs.responses, principal=s.principal(r))
    return modern.input_required_result(needed.requests, state)


async def _discover(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    """server/discover (2026-07-28): versions, capabilities, instructions; serverInfo goes in _meta."""
    result: dict[str, Any] = {
        # dual-era: the legacy versions too (initialize negotiates them), newest first
        "supportedVersions": [*s.session.modern_versions, *reversed(s.session.supported_versions)],
        "capabilities": s.server.modern_capabilities(),
    }
    if s.server.instructions:
        result["instructions"] = s.server.instructions
    return result


async def _listen(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
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


def _check_listen_room(s: MethodSession, principal: str | None) -> None:
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


async def _initialize(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    return s.session.accept_initialize(r.params, s.server.instructions)


async def _ping(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    return {}


async def _tools_list(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
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


def _tools_call(s: MethodSession, r: IncomingRequest) -> Awaitable[dict[str, Any]]:
    """A plain function returning what to await (its checks raise when it is called, inside the awaiting
    ``handle``): the usual call's coroutine is :func:`_run` itself, one level fewer for a tool's
    answer to resume."""
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
    if s.server.approve is None:
        return _call(s, r, tool, arguments, watched, event)
    return _approved_call(s, r, tool, arguments, event, s.server.approve)


async def _approved_call(
    s: MethodSession, r: IncomingRequest, tool: Tool, arguments: Any, event: Any, approve: Approver
) -> dict[str, Any]:
    """The one approval point, for every transport (DESIGN decision 14)."""
    approval = await check(approve, event["call"])
    if not approval.allowed:
        s.server.emit("call_denied", {**event, "reason": approval.reason})
        return denied_result(event["call"], approval)
    return await _call(s, r, tool, arguments, True, event)


def _call(
    s: MethodSession, r: IncomingRequest, tool: Tool, arguments: Any, watched: bool, event: dict[str, Any]
) -> Awaitable[dict[str, Any]]:
    """The call, once allowed: as a task, or its tool run (with the events when ``watched``)."""
    as_task = task_engine.runs_as_task(s, r, tool)
    if as_task and not watched:
        event = _call_event(s, r, tool.name, arguments, tool.definition)
    if as_task and (r.modern is None or tool.task_start == "call"):
        return task_engine.start_tool_task(s, r, tool, arguments, _ContextBackend(s, r, None), event)
    # a tool without a Context cannot ask for input: its round is made up front only when the request brings
    # answers (checked, as ever, before the tool runs), else only if it ends up asking (_input_required)
    params = r.params
    asks = as_task or tool.context_param or "inputResponses" in params or "requestState" in params
    inputs = _input_round(s, r) if asks else None
    if as_task:  # 2026, task_start="explicit": MRTR rounds on this request, then the task
        backend = _ContextBackend(s, r, inputs)
        escalate = functools.partial(_input_required, s, r, inputs)
        return task_engine.call_then_task(s, r, tool, arguments, backend, escalate, event)
    context = Context(_ContextBackend(s, r, inputs)) if tool.context_param else None
    return _run(s, r, tool, arguments, context, inputs, event)


async def _run(
    s: MethodSession,
    r: IncomingRequest,
    tool: Tool,
    arguments: Any,
    context: Context | None,
    inputs: modern.InputRound | None,
    event: dict[str, Any],
) -> dict[str, Any]:
    """The tool's run; with its events when ``event`` is there (approval hook, listeners: console, audit)."""
    if event:
        s.server.emit("call_started", event)
    outcome: ToolOutcome | modern.RequestEscalation | None = None
    try:
        outcome = await tool.call(
            arguments, context, run_sync=s.server.run_sync, run_async=s.server.run_async
        )
        if outcome.exception is not None:
            log.info("tool %s failed: %s\n%s", tool.name, outcome.exception, outcome.traceback or "")
            outcome.result = shown_result(outcome, tool.name, s.server.mask_errors)  # ToolError always shown
        return outcome.result
    except modern.RequestEscalation as escalation:
        outcome = escalation
        if not isinstance(escalation, modern.InputRequired):
            raise
        return _input_required(s, r, inputs, escalation)
    finally:  # also when cancelled, so listeners (console, audit) never keep a call "running"
        if event:
            s.server.emit("call_finished", _finished(event, outcome))


def _finished(
    event: dict[str, Any], outcome: ToolOutcome | modern.RequestEscalation | None
) -> dict[str, Any]:
    """A call's ``call_finished`` event: its outcome (None: cancelled or input required) and status."""
    if outcome is None:
        return {**event, "outcome": None, "status": "cancelled"}
    if isinstance(outcome, modern.RequestEscalation):
        return {**event, "outcome": None, "status": "input required"}
    return {
        **event,
        "outcome": outcome,
        "status": "failed" if outcome.result.get("isError") is True else "done",
    }


def _call_event(
    s: MethodSession, r: IncomingRequest, name: str, arguments: Any, definition: dict[str, Any]
) -> dict[str, Any]:
    call = IncomingCall(
        s.peer, name, dict(arguments or {}), definition, r.id, _declared(s, r), principal=s.principal(r)
    )
    return {"session": s, "request": r, "tool": name, "arguments": arguments, "call": call}


def _declared(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    """The clientInfo the caller declared (per request in the modern era): for display only."""
    return dict(r.modern.client_info if r.modern is not None else s.client_info)


async def _resources_list(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    return _listing("resources", [d.definition for d in s.server.resource_defs.values()], "uri", s, r)


async def _templates_list(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    items = [d.definition for d in s.server.template_defs.values()]
    return _listing("resourceTemplates", items, "uriTemplate", s, r)


async def _resources_read(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
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


async def _subscribe(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    s.subscriptions.add(_str_param(r.params, "uri"))
    return {}


async def _unsubscribe(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    s.subscriptions.discard(_str_param(r.params, "uri"))
    return {}


async def _prompts_list(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    return _listing("prompts", [p.definition for p in s.server.prompt_defs.values()], "name", s, r)


async def _prompts_get(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
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


async def _complete(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
    ref, argument = r.params.get("ref"), r.params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'ref' and 'argument' must be objects")
    context = r.params.get("context")
    arguments = context.get("arguments", {}) if isinstance(context, dict) else {}
    return {"completion": await s.server.complete(ref, argument, arguments)}


async def _set_level(s: MethodSession, r: IncomingRequest) -> dict[str, Any]:
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
