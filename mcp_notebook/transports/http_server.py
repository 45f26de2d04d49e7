"""Streamable HTTP server, dual-era: legacy sessions (2025-03-26 .. 2025-11-25) and stateless 2026-07-28
requests on one endpoint.

Modern (2026-07-28): a POST without ``Mcp-Session-Id`` whose ``_meta`` (or ``MCP-Protocol-Version``) is
modern is checked here (``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*`` headers, -32020; ``_meta``, -32602/-32022;
unknown method, 404 + -32601), then answered by ``server.serve_one`` (the engine starts the request's
handler at once and ends it with the exchange; a server without it, a cassette, gets a ``serve`` loop per
POST). Its response waits for the first message, so an early error carries its HTTP status; closing the
stream cancels the request. No session id, no priming events, no resumption
(https://modelcontextprotocol.io/specification/2026-07-28/basic/transports).

Legacy:

Each ``initialize`` POST creates a session: a :class:`HTTPSessionTransport` handed to
``server.serve(transport)`` in its own task. A POSTed request gets its own SSE stream (or one JSON body with
``json_response=True``); everything the engine sends with ``related_id`` set to that request travels on it.
Other server messages go on the session's GET stream, buffered while none is open. Every SSE event has an id
``<stream>_<seq>``, so a client can resume any stream with GET + ``Last-Event-ID``. Sending never blocks on,
or fails because of, a slow or vanished HTTP client: events go to bounded buffers that connections drain.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http; security
(DESIGN decisions 12 and 14): 127.0.0.1 by default, Host/Origin validation and bearer tokens
(``_http_guard.py``), and every bound of :class:`~.http_limits.HTTPLimits` (rate, body size, header and body
timeouts, session idle expiry, per-client and total session caps that evict the idlest session).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import socket
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, cast

from aiohttp import HttpVersion11, web
from aiohttp.typedefs import Middleware

from mcp_notebook.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
)
from mcp_notebook.protocol.jsonrpc import (
    ErrorResponse,
    Invalid,
    Notification,
    Request,
    parse,
    read,
    serialize,
)
from mcp_notebook.protocol.versions import SUPPORTED_VERSIONS

from ._heap import reads_from_the_heap
from ._http_common import media_type
from ._http_guard import DEFAULT_ALLOWED_HOSTS, Guard, accepts
from ._http_guard import error_response as _error
from ._http_modern import ModernPosts, ready
from ._http_sessions import (
    Exchange,
    ExchangeHooks,
    FirstActivity,
    HTTPSessionTransport,
    Sessions,
    _Session,
    _Stream,
)
from ._http_streams import _WATCH_SECONDS, SSEStreams, _gone
from .base import INLINE, Peer, Serves, ServesOne
from .http_limits import HTTPLimits, RateLimiter, client_key, rate_limit_middleware, within_limit

__all__ = ["DEFAULT_ALLOWED_HOSTS", "HTTPLimits", "HTTPSessionTransport", "StreamableHTTPServer"]

log = logging.getLogger("mcp_notebook.http")

_DRAIN_SECONDS = 0.5


class StreamableHTTPServer(ModernPosts, SSEStreams):
    """Serves ``server`` (anything with ``async def serve(transport, peer=...)``) over Streamable HTTP.

    ``token``: require ``Authorization: Bearer <token>``; ``tokens``: more, by name
    (``{"inspector": "..."}``): a caller's :class:`~.base.Peer` carries the name of the token it used,
    never the secret, and a session only answers to the token that opened it. ``allowed_hosts``: host
    names accepted in ``Host`` (with our port) and ``Origin`` (any port); ``"*"`` accepts every Host.
    ``allowed_origins``: more exact origins. ``limits``: every bound (:class:`~.http_limits.HTTPLimits`);
    ``limiter``: your own rate limiter (tests give it a clock).
    ``json_response``: answer requests with one JSON body instead of an SSE stream (a 2026-07-28
    ``subscriptions/listen`` still gets its SSE stream: that stream is its answer).
    ``sse_polling`` (2025-11-25, SEP-1699): every stream starts with a priming event (an id, empty data and
    ``retry: sse_retry_ms``), and a request's stream is closed when its answer takes longer than
    ``sse_poll_seconds``; the client resumes it with GET + ``Last-Event-ID``.
    """

    def __init__(
        self,
        server: Serves,
        *,
        path: str = "/mcp",
        token: str | None = None,
        tokens: Mapping[str, str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] = (),
        limits: HTTPLimits | None = None,
        limiter: RateLimiter | None = None,
        json_response: bool = False,
        sse_polling: bool = False,
        sse_retry_ms: int = 500,
        sse_poll_seconds: float = 0.25,
        replay_events: int = 256,
        retained_streams: int = 32,
        keepalive: float | None = 15.0,
        shutdown_timeout: float = 5.0,
        middlewares: Iterable[Middleware] = (),
        identify: Callable[[web.Request], str | None] | None = None,
    ) -> None:
        self.server = server
        self.limits = limits or HTTPLimits()
        self.limiter = limiter or self.limits.limiter()
        self.middlewares = tuple(middlewares)  # aiohttp middlewares (OAuth): after the rate limit, before us
        # Who a request is, when a middleware authenticated it (OAuth: ProtectedResource.identity); else
        # the bearer token the guard matched. Sessions, tasks and sealed states are bound to it.
        self.identify = identify
        self.path = path
        self.guard = Guard(
            token=token, tokens=tokens, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins
        )
        self.json_response = json_response
        self.sse_polling = sse_polling
        self.sse_retry_ms = sse_retry_ms
        self.sse_poll_seconds = sse_poll_seconds
        self.replay_events = replay_events
        self.retained_streams = retained_streams
        self.keepalive = keepalive
        # Open SSE streams (each holds a connection and a file descriptor): per client (its identity, else
        # its address) and in all. Past either, a new stream is 429 with Retry-After; open ones go on.
        self.max_streams_per_client = 128
        self.max_streams = 512
        self._streams: Counter[str] = Counter()
        self.shutdown_timeout = shutdown_timeout
        self.sessions = Sessions(self.limits)
        self._modern: set[_Session | Exchange] = set()  # 2026-07-28 requests in flight (listen streams too)
        # A 2026-07-28 POST is answered by serve_one (no engine loop of its own) when the server offers it.
        self._serve_one = server.serve_one if isinstance(server, ServesOne) else None
        # ... and its handler runs in the POST's own task when the server can (Server.serve_inline)
        self._serve_inline = getattr(server, "serve_inline", None) if INLINE else None
        self._requests = 0  # 2026-07-28 POSTs so far: their (log-only) ids
        self._runner: web.BaseRunner | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._first = FirstActivity(_gone, _WATCH_SECONDS)  # POSTs waiting for their first message
        self._exchange_hooks = ExchangeHooks(self._exchange_session, self._exchange_writer, self._forget)
        self._watcher: asyncio.Task[None] | None = None
        # id(inputSchema) -> (the schema, whether it has x-mcp-header parameters): walked once per schema
        self._header_schemas: dict[int, tuple[dict[str, Any], bool]] = {}
        self._peers: dict[tuple[str | None, str | None], Peer] = {}  # modern POSTs' Peers, by who they are
        self._url: str | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("the server is not started")
        return self._url

    # ---- lifecycle ---------------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0, *, reuse_port: bool = False) -> str:
        """Listen on ``host:port`` (port 0: any free port); returns the endpoint URL. ``reuse_port``: share
        the port with other processes (SO_REUSEPORT; ``mcp-notebook serve --workers``)."""
        if self._runner is not None:
            raise RuntimeError("the server is already started")
        reads_from_the_heap()  # no mmap per socket read (transports/_heap.py)
        # keepalive_timeout bounds how long a connection may sit without a complete request head (aiohttp
        # closes it when its handler still waits for one): slow-headers clients do not hold the server.
        # By cleanup time our sessions and streams have ended: only requests racing the shutdown remain.
        options: dict[str, Any] = {"access_log": None, "keepalive_timeout": self.limits.header_timeout}
        runner: web.BaseRunner
        if self.middlewares or self.identify is not None:  # an Application: the rate limit, then theirs
            middlewares: list[Middleware] = list(self.middlewares)
            if self.limiter is not None:  # (it also bounds credential guessing)
                middlewares.insert(0, rate_limit_middleware(self.limiter, self._client_key))
            app = web.Application(client_max_size=self.limits.max_body_size, middlewares=middlewares)
            app.router.add_route("*", self.path, self._routed)
            runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=_DRAIN_SECONDS, **options)
        else:  # one path, no middleware: aiohttp's low-level server calls _entry, which does the same
            # requests made as the Application makes them: request.read() raises past max_body_size
            size, loop = self.limits.max_body_size, asyncio.get_running_loop()
            factory = functools.partial(web.BaseRequest, loop=loop, client_max_size=size)
            server = web.Server(self._entry, request_factory=factory, **options)
            runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=_DRAIN_SECONDS)
        await runner.setup()
        sock: socket.socket | None = None
        try:
            sock = socket.create_server(
                (host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET, reuse_port=reuse_port
            )
            await web.SockSite(runner, sock).start()
        except BaseException:
            if sock is not None:
                sock.close()
            await runner.cleanup()
            raise
        self._runner = runner
        self.guard.port = sock.getsockname()[1]
        if host not in ("0.0.0.0", "::", ""):
            self.guard.allow_host(host)
        shown = f"[{host}]" if ":" in host else host
        self._url = f"http://{shown}:{self.guard.port}{self.path}"
        loop = asyncio.get_running_loop()
        self._sweeper = loop.create_task(self._sweep(), name="MCP HTTP session sweeper")
        self._start_watcher(loop)
        return self._url

    def _start_watcher(self, loop: asyncio.AbstractEventLoop) -> None:
        self._watcher = loop.create_task(self._first.watch(), name="MCP HTTP disconnect watcher")
        self._watcher.add_done_callback(self._watcher_ended)

    def _watcher_ended(self, task: asyncio.Task[None]) -> None:
        """The watcher ends only when the server stops; if not, POSTs waiting for their first event would
        never hear that their client left: say so, loudly, and (unless cancelled: the loop is ending, and a
        task made now would be destroyed pending) start it again."""
        if task is not self._watcher or self._runner is None:
            return  # stopped, or restarted, by stop() and start()
        if task.cancelled():
            log.warning("the MCP HTTP disconnect watcher was cancelled while the server runs")
            return
        error = task.exception()
        log.error("the MCP HTTP disconnect watcher ended: starting it again", exc_info=error)
        self._start_watcher(task.get_loop())

    async def stop(self, reason: str = "the server stopped before answering") -> None:
        """End every session, stop listening, free the port. Bounded. Requests still unanswered get a
        JSON-RPC error carrying ``reason``; the tools' late answers are dropped."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        helpers = [task for task in (self._sweeper, self._watcher) if task is not None]
        for task in helpers:
            task.cancel()
        sessions = [*self.sessions.values(), *self._modern]
        for session in sessions:
            session.terminate(reason, answer_pending=True)
        tasks = [s.task for s in sessions if s.task is not None and not s.task.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self.shutdown_timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=self.shutdown_timeout)
        if helpers:  # ended, not left pending: a loop closed after stop() destroys no task
            await asyncio.wait(helpers, timeout=self.shutdown_timeout)
        await runner.cleanup()

    async def _sweep(self) -> None:
        """End sessions idle longer than ``session_idle_timeout`` (checked a few times per timeout)."""
        idle = self.limits.session_idle_timeout
        while True:
            await asyncio.sleep(min(max(idle / 4, 0.05), 30.0))
            self.sessions.expire(asyncio.get_running_loop().time())

    def _entry(self, request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        """Every request when no aiohttp middleware is given, as an Application would route it: an
        ``Expect`` answered first, then the rate limit (keyed by MCP session where there is one), then our
        one path (any other: 404). A plain function returning what to await, as :meth:`_handle` is: each
        coroutine level would be resumed again whenever the request's handler is."""
        if request.headers.get("Expect"):
            return self._expected(request)
        return self._limited(request)

    async def _expected(self, request: web.BaseRequest) -> web.StreamResponse:
        await _expect(request)
        return await self._limited(request)

    def _limited(self, request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        if self.limiter is None:
            return self._handle(request)
        return within_limit(self.limiter, self._client_key, request, self._handle)

    async def _routed(self, request: web.BaseRequest) -> web.StreamResponse:
        """What an Application's router calls (it wants a coroutine function)."""
        return await self._handle(request)

    def _client_key(self, request: web.BaseRequest) -> str:
        return client_key(request, self.sessions)

    def _who(self, request: web.BaseRequest) -> str | None:
        """The request's identity: the OAuth token's subject and client, a token's name, or None."""
        # (with identify an Application serves: its requests are web.Request)
        found = self.identify(cast(web.Request, request)) if self.identify is not None else None
        return found if found is not None else self.guard.identity(request)

    def _session(self, session_id: str, request: web.BaseRequest, client: str = "") -> _Session:
        return _Session(
            session_id,
            replay_events=self.replay_events,
            retained_streams=self.retained_streams,
            on_end=self._forget,
            credential=self.guard.credential(request),
            client=client,
            identity=self._who(request),
        )

    def _forget(self, session: _Session | Exchange) -> None:
        self.sessions.pop(session.id, None)
        self._modern.discard(session)
        end_engine, session.end_engine = session.end_engine, None  # it refers to the session: no cycle
        if end_engine is not None:
            end_engine(session.close_reason or "the request ended")

    async def _run_session(self, session: _Session) -> None:
        lasting = session.id in self.sessions  # a legacy session; else one 2026-07-28 request
        peer = Peer(
            "http", session.id if lasting else None, session.credential, session.identity, lasting=lasting
        )
        try:
            await self.server.serve(session.transport, peer=peer)
        except Exception:
            log.exception("HTTP session %s: serve() failed", session.id[:8])
        finally:
            session.terminate("the MCP session ended")

    # ---- request handling --------------------------------------------------------------------------------
    def _handle(self, request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        if request.rel_url.path_safe != self.path:  # (an Application routes only our path here)
            raise web.HTTPNotFound()
        refusal = self.guard.check(request)
        if refusal is not None:
            return ready(refusal)
        method = request.method
        if method == "POST":
            return self._post(request)
        if method == "GET":
            return self._get(request)
        if method == "DELETE":
            return ready(self._delete(request))
        return ready(_error(405, "Method not allowed", headers={"Allow": "GET, POST, DELETE"}))

    def _session_for(self, request: web.BaseRequest) -> _Session | web.Response:
        session_id = request.headers.get("Mcp-Session-Id")
        if not session_id:
            return _error(400, "Bad Request: missing Mcp-Session-Id header")
        session = self.sessions.get(session_id)
        # A session answers only to whoever opened it (token, OAuth subject): to anyone else, no such session.
        if session is None or session.identity != self._who(request):
            return _error(404, "Session not found", code=-32001)
        version = request.headers.get("MCP-Protocol-Version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            supported = ", ".join(SUPPORTED_VERSIONS)
            return _error(
                400, f"Bad Request: unsupported MCP-Protocol-Version {version!r} (supported: {supported})"
            )
        session.touch()
        return session

    def _body_at_hand(self, request: web.BaseRequest) -> str | web.Response | None:
        """The body when it came with its head on aiohttp's low-level server (no middleware read it): taken at
        once (read() would await two reads, then copy it); refused past the limit as read() is. None: still
        on its way, or an Application's request (:meth:`_read_body`)."""
        limit, length = self.limits.max_body_size, request.content_length
        if length is not None and length > limit:
            return _error(413, f"Payload Too Large: the limit is {limit} bytes")
        content = request.content
        if not content.is_eof() or type(request) is not web.BaseRequest:
            return None
        body = content.read_nowait()
        if len(body) > limit:
            return _error(413, f"Payload Too Large: the limit is {limit} bytes")
        return _decoded(body)

    async def _read_body(self, request: web.BaseRequest) -> str | web.Response:
        limit = self.limits.max_body_size
        try:
            if not request.content.is_eof():  # wait_for runs the read in a task of its own: a body on its way
                body = await asyncio.wait_for(request.read(), self.limits.body_timeout)
            else:  # an Application's request, whose middleware (OAuth) may have read it: read() has it
                body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"Payload Too Large: the limit is {limit} bytes")
        except asyncio.TimeoutError:
            timeout = self.limits.body_timeout
            return _error(408, f"Request Timeout: the body did not arrive within {timeout:g} s")
        return _decoded(body)

    def _post(self, request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        """A POST. A plain function returning what to await: when the body came with its head (the usual
        POST), that is the request's own coroutine (``_post_modern``'s, ``_answer``), one level fewer for its
        answer to resume; its checks and refusals happen when it is called, inside aiohttp's handler."""
        if media_type(request.headers.get("Content-Type")) != "application/json":
            return ready(_error(415, "Unsupported Media Type: Content-Type must be application/json"))
        if not accepts(request, "application/json", "text/event-stream"):
            return ready(
                _error(406, "Not Acceptable: Accept must include application/json and text/event-stream")
            )
        text = self._body_at_hand(request)
        if text is None:
            return self._post_read(request)
        return self._post_text(request, text)

    async def _post_read(self, request: web.BaseRequest) -> web.StreamResponse:
        return await self._post_text(request, await self._read_body(request))

    def _post_text(self, request: web.BaseRequest, text: str | web.Response) -> Awaitable[web.StreamResponse]:
        if not isinstance(text, str):  # an error (a web.Response: an ABC, slower to check against)
            return ready(text)
        text = read(text)  # decoded here, once: the engine gets this Wire and does not decode it again
        first = text[:1]  # (lstrip would copy a whole Wire, a str subclass, to look at one character)
        if first == "[" or (first.isspace() and text.lstrip().startswith("[")):
            return self._post_batch(request, text)
        message = parse(text)[0]
        if isinstance(message, Invalid):
            return ready(_refused(message))
        if isinstance(message, Request | Notification) and self._is_modern(request, message):
            return self._post_modern(request, message, text)
        if isinstance(message, Request) and message.method == "initialize":
            if request.headers.get("Mcp-Session-Id"):
                return ready(_error(400, "Bad Request: initialize must not carry an Mcp-Session-Id"))
            client = f"{self._who(request)}@{request.remote}"
            if not self.sessions.make_room(client):
                return ready(_error(503, "Service Unavailable: every session is in use", code=INTERNAL_ERROR))
            session = self._new_session(request, client)
        else:
            found = self._session_for(request)
            if isinstance(found, web.Response):
                return ready(found)
            session = found
        if not isinstance(message, Request):
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                session.cancel((message.params or {}).get("requestId"))
            session.inbox.put_nowait(text)
            return ready(web.Response(status=202, headers={"Mcp-Session-Id": session.id}))
        if message.id in session.active:
            return ready(_error(400, f"Invalid Request: request id {message.id!r} is already in use"))
        stream = session.open_request(message, json_mode=self.json_response)
        session.inbox.put_nowait(text)
        return self._answer(request, session, stream)

    async def _post_batch(self, request: web.BaseRequest, text: str) -> web.StreamResponse:
        """A JSON-RPC batch: only in a 2025-03-26 session, which has them (basic#batching); later versions
        require a single message per POST. The engine answers the batch with one array."""
        found = self._session_for(request)
        if isinstance(found, web.Response):
            return found
        session = found
        if session.protocol_version != "2025-03-26":
            why = f"JSON-RPC batches are not supported in protocol version {session.protocol_version}"
            return _error(400, f"Invalid request: {why}")
        items = parse(text, allow_batch=True)
        requests = [m for m in items if isinstance(m, Request)]
        invalid = None if requests else next((m for m in items if isinstance(m, Invalid)), None)
        if invalid is not None:  # no request, and no message ([], [1]): not accepted, as one invalid message
            return _refused(invalid)
        ids = [r.id for r in requests]
        if len(set(ids)) < len(ids) or any(i in session.active for i in ids):
            return _error(400, "Invalid Request: a request id in the batch is already in use")
        for item in items:
            if isinstance(item, Notification) and item.method == "notifications/cancelled":
                session.cancel((item.params or {}).get("requestId"))
        if not requests:
            session.inbox.put_nowait(text)
            return web.Response(status=202, headers={"Mcp-Session-Id": session.id})
        stream = session.open_batch(requests, json_mode=self.json_response)
        session.inbox.put_nowait(text)
        return await self._answer(request, session, stream)

    async def _answer(
        self, request: web.BaseRequest, session: _Session, stream: _Stream
    ) -> web.StreamResponse:
        """The HTTP response to a POSTed request (or batch): one JSON body, or its SSE stream."""
        headers = {"Mcp-Session-Id": session.id}
        if stream.json_mode:
            await stream.done.wait()  # always set: by the answer, a cancellation or the session's end
            if stream.answer is None:
                if session.close_reason is not None:
                    return _error(404, "Session not found", code=-32001)
                return web.Response(status=202, headers=headers)  # cancelled by the client: nothing to say
            return web.Response(text=stream.answer, content_type="application/json", headers=headers)
        if not self.sse_polling:
            # Start answering at the first message: a request whose answer is all there is gets one JSON
            # body (transports#sending-messages-to-the-server lets the server choose), which costs one
            # write instead of headers, priming event, event and end of stream.
            if not await self._first.wait(request, stream):
                return web.Response(status=202, headers=headers)  # the client left; a resume finds the rest
            if stream.finished and stream.answer is not None and stream.next_seq == 1:
                return web.Response(text=stream.answer, content_type="application/json", headers=headers)
        return await self._stream(request, session, stream, -1, headers)

    def _new_session(self, request: web.BaseRequest, client: str) -> _Session:
        session = self._session(secrets.token_urlsafe(32), request, client)
        self.sessions[session.id] = session
        session.task = asyncio.get_running_loop().create_task(
            self._run_session(session), name=f"MCP HTTP session {session.id[:8]}"
        )
        return session

    async def _get(self, request: web.BaseRequest) -> web.StreamResponse:
        if not accepts(request, "text/event-stream"):
            return _error(406, "Not Acceptable: Accept must include text/event-stream")
        found = self._session_for(request)
        if isinstance(found, web.Response):
            return found
        session = found
        last_event_id = request.headers.get("Last-Event-ID")
        if last_event_id:
            resumed = session.find(last_event_id)
            if resumed is None:
                return _error(
                    400, f"Bad Request: cannot resume from unknown or expired event {last_event_id!r}"
                )
            stream, after = resumed
        else:
            stream, after = session.standalone, session.standalone.delivered
        return await self._stream(request, session, stream, after, {"Mcp-Session-Id": session.id})

    def _delete(self, request: web.BaseRequest) -> web.Response:
        found = self._session_for(request)
        if isinstance(found, web.Response):
            return found
        found.terminate("the client ended the session (DELETE)")
        return web.Response(status=200)


def _refused(invalid: Invalid) -> web.Response:
    """What is no valid message (or a batch of no request with such an item): 400 with its JSON-RPC error."""
    reply = invalid.reply or ErrorResponse(None, INVALID_REQUEST, f"Invalid request: {invalid.reason}")
    return web.Response(status=400, text=serialize(reply), content_type="application/json")


async def _expect(request: web.BaseRequest) -> None:
    """What aiohttp's router does with ``Expect`` (its default expect handler): ``100-continue`` is answered
    at once (curl sends it with bodies over 1 KB and waits for it); any other expectation, 417."""
    if request.version == HttpVersion11:
        expect = request.headers.get("Expect", "")
        if expect.lower() != "100-continue":
            raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the response's own size starts after it


def _decoded(body: bytes) -> str | web.Response:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return _error(400, "Parse error: the body is not UTF-8", code=PARSE_ERROR)
