"""One client's connection to a :class:`~mcp_notebook.engine.server.Server`: the session, its dispatch and
lifecycle. The request handlers, as tables, are :mod:`.server_methods`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
from collections.abc import Coroutine
from typing import Any

from ..protocol import downgrade, modern
from ..protocol.errors import METHOD_NOT_FOUND, JSONRPCError
from ..protocol.jsonrpc import RequestId
from ..protocol.session import Role, Session, State
from ..transports.base import Peer, Transport
from .connection import Connection, IncomingRequest
from .server_methods import (
    HANDLERS,
    LOG_LEVELS,
    MODERN_HANDLERS,
    ElicitationFallback,
    PrincipalOf,
    RunAsync,
    RunSync,
    SessionServer,
)
from .trace import Trace

__all__ = [
    "LOG_LEVELS",
    "ElicitationFallback",
    "PrincipalOf",
    "RunAsync",
    "RunSync",
    "ServerSession",
    "SessionServer",
]

log = logging.getLogger("mcp_notebook.engine.server")


class ServerSession:
    """The server side of one connection: a protocol session, its engine, and per-client state."""

    def __init__(  # (no keyword-only arguments: a class called with keywords pays for a dict of them)
        self,
        server: SessionServer,
        transport: Transport,
        peer: Peer | None = None,
        name: str = "server",
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        """``capabilities``: what the server declares (default: ``server.capabilities()``), read only."""
        self.server = server
        self.peer = peer or Peer("memory")  # who this is, as the connection knows it (approval rules)
        if capabilities is None:
            capabilities = server.capabilities()
        self.session = Session(Role.SERVER, server.info, capabilities)  # (role, info, capabilities)
        # (session, transport, request_handler, notification_handler, trace, name)
        self.connection = Connection(
            self.session, transport, self.handle, self.on_notification, Trace(server.trace_size), name
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

    def answer_inline(self, message: str) -> Coroutine[Any, Any, object] | None:
        """:meth:`answer_one`, the handler run by the caller's task (``Server.serve_inline``)."""
        self.loop = loop = asyncio.get_running_loop()
        return self.connection.answer_inline(message, loop)

    async def handle(self, request: IncomingRequest) -> dict[str, Any]:
        """A request's result. A stateless 2026-07-28 request: the same handlers, a modern finish
        (protocol/modern.py); a legacy one: the result in the shape this session's version has. One
        coroutine for both eras: each level of awaiting is paid again when a sync tool's answer resumes
        it."""
        modern_meta = request.modern
        handler = (HANDLERS if modern_meta is None else MODERN_HANDLERS).get(request.method)
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if modern_meta is None:
            result = await handler(self, request)
            if request.method == "tools/call":  # in the shape this session's version has (audit items 6, 7)
                return downgrade.call_result_for(self.session.version, result)
            if request.method == "tools/list":
                version = self.session.version
                result["tools"] = [downgrade.tool_for(version, tool) for tool in result.get("tools", [])]
            return result
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
