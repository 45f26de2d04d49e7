"""The 2026-07-28 half of the Streamable HTTP server: one stateless request per POST, answered on a
short-lived engine of its own (``StreamableHTTPServer`` takes these methods from :class:`ModernPosts`).
Spec: https://modelcontextprotocol.io/specification/2026-07-28/basic/transports#streamable-http
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mcp_notebook.protocol import modern
from mcp_notebook.protocol.errors import INVALID_PARAMS, JSONRPCError
from mcp_notebook.protocol.header_params import header_params
from mcp_notebook.protocol.jsonrpc import (
    ErrorResponse,
    Notification,
    Request,
    Response,
    Wire,
    peek,
    serialize,
)
from mcp_notebook.protocol.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from ._http_guard import Guard
from ._http_sessions import Exchange, ExchangeHooks, FirstActivity, _Session, _Stream
from .base import Peer, Serves

__all__ = ["ModernPosts", "modern_answer", "ready"]

_LEGACY_NEWEST_FIRST = tuple(reversed(SUPPORTED_VERSIONS))  # what a -32022 answer lists after the modern ones


class ModernPosts:
    """A modern POST: header and ``_meta`` checks, then its engine (``serve_inline``, ``serve_one`` or a
    ``serve`` loop), then its answer as one JSON body or its SSE stream."""

    if TYPE_CHECKING:  # what StreamableHTTPServer provides
        server: Serves
        guard: Guard
        json_response: bool
        _requests: int
        _modern: set[_Session | Exchange]
        _serve_one: Callable[..., Callable[[str], None]] | None
        _serve_inline: Callable[..., tuple[Callable[[str], None], Coroutine[Any, Any, object] | None]] | None
        _first: FirstActivity
        _exchange_hooks: ExchangeHooks
        _header_schemas: dict[int, tuple[dict[str, Any], bool]]
        _peers: dict[tuple[str | None, str | None], Peer]

        def _session(self, session_id: str, request: web.BaseRequest, client: str = "") -> _Session: ...

        def _who(self, request: web.BaseRequest) -> str | None: ...

        def _forget(self, session: _Session | Exchange) -> None: ...

        async def _run_session(self, session: _Session) -> None: ...

        async def _stream(
            self,
            request: web.BaseRequest,
            session: _Session,
            stream: _Stream,
            after: int,
            headers: dict[str, str],
            *,
            watch: bool = False,
        ) -> web.StreamResponse: ...

    def _is_modern(
        self, request: web.BaseRequest, message: Request | Notification | Response | ErrorResponse
    ) -> bool:
        """No session id, and modern ``_meta`` or a modern MCP-Protocol-Version (versioning#dual-era)."""
        if request.headers.get("Mcp-Session-Id") or not isinstance(message, Request | Notification):
            return False
        return modern.is_modern(message.params) or (
            request.headers.get("MCP-Protocol-Version", "").strip() in MODERN_VERSIONS
        )

    def _post_modern(
        self, request: web.BaseRequest, message: Request | Notification, text: Wire
    ) -> Awaitable[web.StreamResponse]:
        """Serve one modern request on a short-lived engine of its own: nothing outlives the response.

        Header and ``_meta`` errors are answered here with their HTTP status (400, or 404 for an unknown
        method). Closing the response stream cancels the request (2026 transports#cancellation). A plain
        function returning what to await: one coroutine level fewer to resume with the request's handler.
        """
        if not isinstance(message, Request):
            return ready(web.Response(status=202))  # the 2026 core defines no client notifications over HTTP
        try:
            # the headers, then _meta (read once for both): remembered on the Wire, the engine that receives
            # it takes it (protocol.session)
            modern.check_meta(text, message, also=_LEGACY_NEWEST_FIRST, headers=request.headers)
            self._check_param_headers(request, message)
        except JSONRPCError as exc:
            return ready(modern_answer(serialize(ErrorResponse(message.id, exc.code, exc.message, exc.data))))
        self._requests += 1
        request_id = f"request-{self._requests}"  # no session: the id is for logs
        # A listen request's answer IS a stream (basic/patterns/subscriptions: "the POST response is a
        # long-lived SSE stream"), so it gets SSE even from a server that answers other requests in JSON.
        json_mode = self.json_response and message.method != "subscriptions/listen"
        if self._serve_inline is not None and message.method != "subscriptions/listen":  # (a long stream)
            return self._post_inline(request, message, request_id, text, json_mode)
        return self._post_served(request, message, request_id, text, json_mode)

    async def _post_served(
        self, request: web.BaseRequest, message: Request, request_id: str, text: str, json_mode: bool
    ) -> web.StreamResponse:
        """A modern request served by ``serve_one`` (its handler in a task of its own) or a ``serve`` loop."""
        session = self._session(request_id, request)
        stream = session.open_modern_request(message, json_mode=json_mode)
        self._modern.add(session)  # so that stop() answers it like a legacy session's requests
        peer = self._peer(session.credential, session.identity)
        if self._serve_one is not None:
            session.end_engine = self._serve_one(session.transport, text, peer=peer)
        else:
            session.task = asyncio.get_running_loop().create_task(
                self._run_session(session), name=f"MCP HTTP request {message.method} {message.id!r}"
            )
            session.inbox.put_nowait(text)
        try:
            return await self._modern_response(request, session, stream)
        finally:
            session.terminate("the request ended")

    async def _modern_response(
        self, request: web.BaseRequest, session: _Session, stream: _Stream
    ) -> web.StreamResponse:
        if not await self._first.wait(request, stream) or stream.abandoned:
            return web.Response(status=202)  # the client left: its request is cancelled
        if stream.finished and stream.answer is not None and (stream.json_mode or stream.next_seq == 1):
            return modern_answer(stream.answer, handled=True)
        return await self._stream(request, session, stream, -1, {}, watch=True)

    async def _post_inline(
        self, request: web.BaseRequest, message: Request, request_id: str, text: str, json_mode: bool
    ) -> web.StreamResponse:
        """A modern request whose handler runs in this POST's own task: no handler task, no wait for its
        first event, and no session or stream unless it sends more than its answer (:class:`Exchange`).
        Whatever it sends before its answer is streamed live (SSE) by a task started then; a client that
        leaves first (the watcher) or while streamed (the writer) ends the request, which cancels the
        handler (Server.serve_inline)."""
        assert self._serve_inline is not None
        exchange = Exchange(request_id, message, request, json_mode, self._exchange_hooks)
        self._modern.add(exchange)  # so that stop() answers it like a legacy session's requests
        try:
            peer = self._peer(self.guard.credential(request), self._who(request))
            exchange.end_engine, run = self._serve_inline(exchange, text, peer=peer)
            if run is not None:
                exchange.running = True
                self._first.hold(request, exchange)
                try:
                    await run
                finally:
                    self._first.release(exchange)
                    exchange.running = False
            if exchange.writer is not None:
                written: web.StreamResponse = await exchange.writer
                return written
            if exchange.session is None:
                if exchange.abandoned:
                    return web.Response(status=202)  # the client left: its request is cancelled
                if exchange.answer is not None:
                    return modern_answer(exchange.answer, handled=True)
            exchange.open()  # no answer yet (one on its way): wait for it on the request's stream
            assert exchange.session is not None and exchange.stream is not None
            return await self._modern_response(request, exchange.session, exchange.stream)
        finally:
            if exchange.writer is not None and not exchange.writer.done():
                exchange.writer.cancel()
            exchange.terminate("the request ended")

    def _exchange_session(self, exchange: Exchange) -> _Session:
        return self._session(exchange.id, exchange.http_request)

    def _exchange_writer(self, exchange: Exchange) -> asyncio.Task[web.StreamResponse]:
        assert exchange.session is not None and exchange.stream is not None
        writing = self._stream(exchange.http_request, exchange.session, exchange.stream, -1, {}, watch=True)
        return asyncio.get_running_loop().create_task(writing, name="MCP HTTP stream")

    def _peer(self, credential: str | None, identity: str | None) -> Peer:
        """Who a modern POST comes from: one (immutable) Peer per credential and identity, not per POST."""
        key = (credential, identity)
        peer = self._peers.get(key)
        if peer is None:
            if len(self._peers) >= 1024:
                self._peers.clear()
            peer = self._peers[key] = Peer("http", None, credential, identity, lasting=False)
        return peer

    def _check_param_headers(self, request: web.BaseRequest, message: Request) -> None:
        """``Mcp-Param-*`` headers against the called tool's ``x-mcp-header`` parameters (SEP-2243)."""
        params = message.params or {}
        if message.method != "tools/call":
            return
        schema = self.server.tool_input_schema(params.get("name"))
        if isinstance(schema, dict) and self._has_header_params(schema):
            error = modern.check_param_headers(schema, params.get("arguments"), request.headers)
            if error is not None:
                raise error

    def _has_header_params(self, schema: dict[str, Any]) -> bool:
        """Whether ``schema`` declares ``x-mcp-header`` parameters; a tool's schema is walked once."""
        known = self._header_schemas.get(id(schema))
        if known is None or known[0] is not schema:
            if len(self._header_schemas) >= 1024:
                self._header_schemas.clear()
            known = self._header_schemas[id(schema)] = (schema, bool(header_params(schema)[0]))
        return known[1]


async def ready(response: web.StreamResponse) -> web.StreamResponse:
    """``response``, to be awaited where a coroutine is expected."""
    return response


def modern_answer(text: str, *, handled: bool = False) -> web.Response:
    """A modern answer as one JSON body; an error gets its HTTP status (400, 404 for -32601). A handler's
    invalid-params error (an unknown tool, a bad cursor) is a JSON-RPC answer to a well-formed HTTP
    request: 200, so that a dual-era client does not read a 400 as "legacy server"."""
    parsed = peek(text)
    status = 200
    if isinstance(parsed, ErrorResponse) and not (handled and parsed.code == INVALID_PARAMS):
        status = modern.http_status(parsed.code)
    return web.Response(status=status, text=text, content_type="application/json")
