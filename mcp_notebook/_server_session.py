"""One client's connection to a :class:`~mcp_notebook.server.Server`: the request handlers, as a table.

Each handler takes the session and the incoming request and returns the result dict, or raises
:class:`JSONRPCError` for a protocol error. Tool failures are not protocol errors: they come back as
``isError`` results (server/tools#error-handling).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .connection import Connection, IncomingRequest
from .protocol.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
)
from .protocol.session import Role, Session, State, has_capability
from .tools.context import Context
from .tools.prompts import PromptArgumentError
from .tools.registry import paginate
from .trace import Trace
from .transports.base import Transport

if TYPE_CHECKING:
    from .server import Server

__all__ = ["LOG_LEVELS", "ServerSession"]

log = logging.getLogger("mcp_notebook.server")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class ServerSession:
    """The server side of one connection: a protocol session, its engine, and per-client state."""

    def __init__(self, server: Server, transport: Transport, *, name: str = "server") -> None:
        self.server = server
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
        self._held: list[tuple[str, dict[str, Any] | None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

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

    async def handle(self, request: IncomingRequest) -> dict[str, Any]:
        handler = HANDLERS.get(request.method)
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return await handler(self, request)

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            held, self._held = self._held, []
            for held_method, held_params in dict.fromkeys((m, _freeze(p)) for m, p in held):
                await self._notify_quietly(held_method, dict(held_params) if held_params else None)
        elif method == "notifications/roots/list_changed":
            self.server._emit("roots_changed", {"session": self})

    # ---- messages the server sends on its own ------------------------------------------------------------
    def notify_soon(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification from any thread, without waiting (list_changed, resources/updated)."""
        loop = self.loop
        if loop is None or self.connection.closed:
            return
        if self.session.state is not State.READY:
            # Not before notifications/initialized (lifecycle#operation): keep it until then.
            self._held.append((method, params))
            return
        # RuntimeError: the loop already closed, so the connection is gone.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(lambda: loop.create_task(self._notify_quietly(method, params)))

    async def _notify_quietly(self, method: str, params: dict[str, Any] | None) -> None:
        try:
            await self.connection.notify(method, params)
        except Exception as exc:  # a closed peer must not break the sender
            log.debug("%s not delivered: %s", method, exc)

    def wants_log(self, level: str) -> bool:
        if self.log_level is None:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


def _freeze(params: dict[str, Any] | None) -> tuple[tuple[str, Any], ...] | None:
    """Held notifications are deduplicated (one list_changed is enough); their params are flat."""
    return tuple(sorted(params.items())) if params else None


class _ContextBackend:
    """What a tool's :class:`Context` talks to: this request on this session."""

    def __init__(self, owner: ServerSession, request: IncomingRequest) -> None:
        self._owner = owner
        self._request = request
        self._last_progress: float | None = None
        self.loop = asyncio.get_running_loop()

    @property
    def request_id(self) -> str | int:
        return self._request.id

    @property
    def client_info(self) -> dict[str, Any]:
        return self._owner.client_info

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
        if (
            message is not None
            and self._owner.session.version
            and self._owner.session.version.supports("progress_message")
        ):
            params["message"] = message
        await self._request.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if not self._owner.wants_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._request.notify("notifications/message", params)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "elicitation/create":
            params = self._elicitation_params(params)
        return await self._request.request(method, params)

    def _elicitation_params(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self._owner.session
        caps = session.peer_capabilities.get("elicitation")
        mode = params.get("mode", "form")
        # {} means form only (client/elicitation#capabilities); 2025-06-18 knew no modes at all.
        declared = isinstance(caps, dict) and (has_capability(caps, (mode,)) or (mode == "form" and not caps))
        if not declared:
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
    items: list[dict[str, Any]], key: str, params: dict[str, Any], server: Server
) -> tuple[list[Any], str | None]:
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'cursor' must be a string")
    try:
        return paginate(items, lambda item: str(item[key]), cursor, server.page_size)
    except ValueError as exc:
        raise JSONRPCError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from exc


def _listing(
    field: str, items: list[dict[str, Any]], key: str, s: ServerSession, r: IncomingRequest
) -> dict[str, Any]:
    page, next_cursor = _page(items, key, r.params, s.server)
    result: dict[str, Any] = {field: page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _initialize(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return s.session.accept_initialize(r.params, s.server.instructions)


async def _ping(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return {}


async def _tools_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    try:
        tools, next_cursor = s.server.tools.page(r.params.get("cursor"), s.server.page_size)
    except ValueError as exc:
        raise JSONRPCError(INVALID_PARAMS, f"Invalid cursor: {r.params.get('cursor')!r}") from exc
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
    context = Context(_ContextBackend(s, r)) if tool.context_param else None
    s.server._emit("call_started", {"session": s, "request": r, "tool": name, "arguments": arguments})
    outcome = await tool.call(arguments, context, run_sync=s.server.run_sync, run_async=s.server.run_async)
    if outcome.exception is not None:
        log.info("tool %s failed: %s\n%s", name, outcome.exception, outcome.traceback or "")
    s.server._emit("call_finished", {"session": s, "request": r, "tool": name, "outcome": outcome})
    return outcome.result


async def _resources_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return _listing("resources", [d.definition for d in s.server._resources.values()], "uri", s, r)


async def _templates_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    items = [d.definition for d in s.server._templates.values()]
    return _listing("resourceTemplates", items, "uriTemplate", s, r)


async def _resources_read(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    uri = _str_param(r.params, "uri")
    resource = s.server._resources.get(uri)
    if resource is not None:
        return {"contents": await resource.read(s.server.run_sync)}
    for template in s.server._templates.values():
        variables = template.match(uri)
        if variables is not None:
            return {"contents": await template.read(uri, variables, s.server.run_sync)}
    raise JSONRPCError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})


async def _subscribe(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    s.subscriptions.add(_str_param(r.params, "uri"))
    return {}


async def _unsubscribe(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    s.subscriptions.discard(_str_param(r.params, "uri"))
    return {}


async def _prompts_list(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    return _listing("prompts", [p.definition for p in s.server._prompts.values()], "name", s, r)


async def _prompts_get(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    name = _str_param(r.params, "name")
    prompt = s.server._prompts.get(name)
    if prompt is None:
        raise JSONRPCError(INVALID_PARAMS, f"Unknown prompt: {name}")
    arguments = r.params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'arguments' must be an object")
    try:
        return await prompt.render(arguments, s.server.run_sync)
    except PromptArgumentError as exc:
        raise JSONRPCError(INVALID_PARAMS, str(exc)) from exc


async def _complete(s: ServerSession, r: IncomingRequest) -> dict[str, Any]:
    ref, argument = r.params.get("ref"), r.params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'ref' and 'argument' must be objects")
    context = r.params.get("context")
    arguments = context.get("arguments", {}) if isinstance(context, dict) else {}
    return {"completion": await s.server._complete(ref, argument, arguments)}


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
}
