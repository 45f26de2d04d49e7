"""Streamable HTTP server (protocol 2025-03-26 .. 2025-11-25): one endpoint, one MCP session per client.

Each ``initialize`` POST creates a session: a :class:`HTTPSessionTransport` handed to
``server.serve(transport)`` in its own task. A POSTed request gets its own SSE stream (or one JSON body with
``json_response=True``); everything the engine sends with ``related_id`` set to that request travels on it.
Other server messages go on the session's GET stream, buffered while none is open. Every SSE event has an id
``<stream>_<seq>``, so a client can resume any stream with GET + ``Last-Event-ID``. Sending never blocks on,
or fails because of, a slow or vanished HTTP client: events go to bounded buffers that connections drain.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http; security
(DESIGN decision 12): 127.0.0.1 by default, Host/Origin validation, optional bearer token, body size cap.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import socket
from collections import deque
from collections.abc import Iterable
from typing import Protocol

from aiohttp import web
from aiohttp.typedefs import Middleware
from yarl import URL

from mcp_notebook.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from mcp_notebook.protocol.jsonrpc import (
    ErrorResponse,
    Invalid,
    Notification,
    Request,
    RequestId,
    Response,
    parse,
    serialize,
)
from mcp_notebook.protocol.versions import SUPPORTED_VERSIONS

from .base import Transport, TransportClosed
from .sse import encode_comment, encode_event

__all__ = ["DEFAULT_ALLOWED_HOSTS", "HTTPSessionTransport", "StreamableHTTPServer"]

log = logging.getLogger("mcp_notebook.http")

DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost", "::1")
_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_DRAIN_SECONDS = 0.5
_DISCONNECTED = (ConnectionError, OSError)  # aiohttp's ClientConnectionResetError is a ConnectionResetError


class Serves(Protocol):
    async def serve(self, transport: Transport) -> None: ...


def _error(
    status: int, message: str, code: int = INVALID_REQUEST, headers: dict[str, str] | None = None
) -> web.Response:
    """An HTTP error whose body is a JSON-RPC error without id (transports: the body MAY be one)."""
    body = serialize(ErrorResponse(None, code, message))
    return web.Response(status=status, text=body, content_type="application/json", headers=headers)


class _Writer:
    """One HTTP connection draining a stream. A newer connection for the same stream replaces it."""

    def __init__(self) -> None:
        self.wake = asyncio.Event()
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True
        self.wake.set()


class _Stream:
    """The events of one SSE stream: a POSTed request's, or the session's standalone (GET) stream."""

    def __init__(self, stream_id: str, request: Request | None, *, json_mode: bool, buffer: int) -> None:
        self.id = stream_id
        self.request = request
        self.json_mode = json_mode
        self.events: deque[tuple[int, bytes]] = deque(maxlen=buffer)
        self.next_seq = 0
        self.delivered = -1  # highest seq written to some connection
        self.finished = False  # no event will be added any more
        self.done = asyncio.Event()  # JSON mode: the answer is there
        self.answer: str | None = None
        self.writer: _Writer | None = None

    def event_id(self, seq: int) -> str:
        return f"{self.id}_{seq}"

    def add(self, message: str) -> None:
        seq = self.next_seq
        self.next_seq += 1
        self.events.append((seq, encode_event(message, event_id=self.event_id(seq))))
        if self.writer is not None:
            self.writer.wake.set()

    def priming(self, retry_ms: int | None) -> bytes:
        """An event with an id, empty data and, when polling, ``retry``: lets clients resume (2025-11-25)."""
        seq = self.next_seq
        self.next_seq += 1
        return encode_event("", event_id=self.event_id(seq), retry=retry_ms)

    def finish(self, answer: str | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        if answer is not None:
            self.answer = answer
            if not self.json_mode:
                self.add(answer)
        self.done.set()
        if self.writer is not None:
            self.writer.wake.set()

    def attach(self) -> _Writer:
        if self.writer is not None:
            self.writer.stop()  # a client reconnecting replaces its dead connection: one writer per stream
        self.writer = _Writer()
        return self.writer

    def detach(self, writer: _Writer) -> None:
        if self.writer is writer:
            self.writer = None

    def after(self, seq: int) -> list[tuple[int, bytes]]:
        return [event for event in self.events if event[0] > seq]


class _Session:
    """One client's MCP session: the engine's transport, its inbox and its streams."""

    def __init__(self, owner: StreamableHTTPServer, session_id: str) -> None:
        self.owner = owner
        self.id = session_id
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.close_reason: str | None = None
        self.protocol_version: str | None = None
        self.transport = HTTPSessionTransport(self)
        self.streams: dict[str, _Stream] = {}
        self.active: dict[RequestId, _Stream] = {}  # requests not yet answered
        self._counter = 0
        self.standalone = self._new_stream(None, json_mode=False)
        self.task: asyncio.Task[None] | None = None

    def _new_stream(self, request: Request | None, *, json_mode: bool) -> _Stream:
        self._counter += 1
        stream = _Stream(f"s{self._counter}", request, json_mode=json_mode, buffer=self.owner.replay_events)
        self.streams[stream.id] = stream
        self._evict()
        return stream

    def _evict(self) -> None:
        finished = [
            s for s in self.streams.values() if s.finished and s.writer is None and s is not self.standalone
        ]
        for stream in finished[: max(0, len(finished) - self.owner.retained_streams)]:
            del self.streams[stream.id]

    def open_request(self, request: Request, *, json_mode: bool) -> _Stream:
        stream = self._new_stream(request, json_mode=json_mode)
        self.active[request.id] = stream
        return stream

    def find(self, last_event_id: str) -> tuple[_Stream, int] | None:
        stream_id, _, seq = last_event_id.rpartition("_")
        stream = self.streams.get(stream_id)
        if stream is None or not seq.isdigit():
            return None
        return stream, int(seq)

    def deliver(self, message: str, related_id: RequestId | None) -> None:
        """Route one outgoing message to its stream (transports#multiple-connections: one stream each)."""
        if self.close_reason is not None:
            raise TransportClosed(f"HTTP session {self.id[:8]}: {self.close_reason}")
        parsed = parse(message)[0]
        if isinstance(parsed, Response | ErrorResponse):
            stream = self.active.pop(parsed.id, None) if parsed.id is not None else None
            if stream is None:
                log.debug(
                    "HTTP session %s: dropping an answer nobody waits for: %.200s", self.id[:8], message
                )
                return
            self._on_answer(stream, parsed)
            stream.finish(message)
            return
        stream = self.active.get(related_id) if related_id is not None else None
        if stream is None or stream.json_mode:
            stream = self.standalone
        stream.add(message)

    def _on_answer(self, stream: _Stream, answer: Response | ErrorResponse) -> None:
        if stream.request is None or stream.request.method != "initialize":
            return
        if isinstance(answer, Response):
            version = answer.result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None
        else:  # a failed initialize leaves nothing worth keeping; the client starts over without a session id
            asyncio.get_running_loop().call_soon(self.terminate, "initialization failed")

    def cancel(self, request_id: object) -> None:
        """The client cancelled a request: the engine sends no answer, so end its stream here."""
        if isinstance(request_id, str | int) and not isinstance(request_id, bool):
            stream = self.active.pop(request_id, None)
            if stream is not None:
                stream.finish()

    def close_stream(self, related_id: RequestId) -> bool:
        """End the HTTP connection of a request's stream, keeping the stream: the client resumes it by GET."""
        stream = self.active.get(related_id)
        if stream is None or stream.writer is None:
            return False
        stream.writer.stop()
        return True

    def terminate(self, reason: str) -> None:
        if self.close_reason is not None:
            return
        self.close_reason = reason
        self.inbox.put_nowait(None)
        for stream in list(self.active.values()):
            stream.finish()  # unanswered: the client resumes, gets 404 and learns the session is gone
        self.active.clear()
        self.standalone.finish()
        self.owner._forget(self)


class HTTPSessionTransport:
    """The server side of one HTTP session, as a :class:`~.base.Transport` for ``server.serve``."""

    def __init__(self, session: _Session) -> None:
        self._session = session

    @property
    def session_id(self) -> str:
        return self._session.id

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        self._session.deliver(message, related_id)

    async def receive(self) -> str:
        item = await self._session.inbox.get()
        if item is None:
            self._session.inbox.put_nowait(None)
            raise TransportClosed(f"HTTP session {self._session.id[:8]}: {self._session.close_reason}")
        return item

    async def aclose(self) -> None:
        self._session.terminate("closed by the server")

    def close_sse_stream(self, related_id: RequestId) -> bool:
        """Close the connection carrying request ``related_id``'s SSE stream, mid-call (SSE polling).

        Later messages for the request are buffered; the client resumes with GET + ``Last-Event-ID`` after the
        ``retry`` delay (meaningful with ``sse_polling``). False when no connection carries that stream.
        """
        return self._session.close_stream(related_id)


class StreamableHTTPServer:
    """Serves ``server`` (anything with ``async def serve(transport)``) over Streamable HTTP at ``path``.

    ``token``: require ``Authorization: Bearer <token>``. ``allowed_hosts``: host names accepted in ``Host``
    (with our port) and ``Origin`` (any port); ``"*"`` accepts every Host. ``allowed_origins``: more exact
    origins. ``json_response``: answer requests with one JSON body instead of an SSE stream.
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
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] = (),
        json_response: bool = False,
        sse_polling: bool = False,
        sse_retry_ms: int = 500,
        sse_poll_seconds: float = 0.25,
        max_body_size: int = 4 * 1024 * 1024,
        max_sessions: int = 100,
        replay_events: int = 256,
        retained_streams: int = 32,
        keepalive: float | None = 15.0,
        shutdown_timeout: float = 5.0,
        middlewares: Iterable[Middleware] = (),
    ) -> None:
        self.server = server
        self.middlewares = tuple(middlewares)  # aiohttp middlewares run before ours (rate limits, logging)
        self.path = path
        self._token = token
        hosts = DEFAULT_ALLOWED_HOSTS if allowed_hosts is None else tuple(allowed_hosts)
        self._allowed_hosts = {_bare(h) for h in hosts}
        self._allowed_origins = {o.lower().rstrip("/") for o in allowed_origins}
        self.json_response = json_response
        self.sse_polling = sse_polling
        self.sse_retry_ms = sse_retry_ms
        self.sse_poll_seconds = sse_poll_seconds
        self.max_body_size = max_body_size
        self.max_sessions = max_sessions
        self.replay_events = replay_events
        self.retained_streams = retained_streams
        self.keepalive = keepalive
        self.shutdown_timeout = shutdown_timeout
        self.sessions: dict[str, _Session] = {}
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._port = 0

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("the server is not started")
        return self._url

    # ---- lifecycle ---------------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (port 0: any free port); returns the endpoint URL."""
        if self._runner is not None:
            raise RuntimeError("the server is already started")
        app = web.Application(client_max_size=self.max_body_size, middlewares=self.middlewares)
        app.router.add_route("*", self.path, self._handle)
        # By cleanup time our sessions and streams have ended: only requests racing the shutdown remain.
        runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=_DRAIN_SECONDS)
        await runner.setup()
        sock: socket.socket | None = None
        try:
            sock = socket.create_server(
                (host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET
            )
            await web.SockSite(runner, sock).start()
        except BaseException:
            if sock is not None:
                sock.close()
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = sock.getsockname()[1]
        if host not in ("0.0.0.0", "::", ""):
            self._allowed_hosts.add(_bare(host))
        shown = f"[{host}]" if ":" in host else host
        self._url = f"http://{shown}:{self._port}{self.path}"
        return self._url

    async def stop(self) -> None:
        """End every session (unanswered requests get an error), stop listening, free the port. Bounded."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        sessions = list(self.sessions.values())
        for session in sessions:
            session.terminate("the server is stopping")
        tasks = [s.task for s in sessions if s.task is not None and not s.task.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self.shutdown_timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=self.shutdown_timeout)
        await runner.cleanup()

    def _forget(self, session: _Session) -> None:
        self.sessions.pop(session.id, None)

    async def _run_session(self, session: _Session) -> None:
        try:
            await self.server.serve(session.transport)
        except Exception:
            log.exception("HTTP session %s: serve() failed", session.id[:8])
        finally:
            session.terminate("the MCP session ended")

    # ---- request handling --------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        refusal = self._check_security(request)
        if refusal is not None:
            return refusal
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET":
            return await self._get(request)
        if request.method == "DELETE":
            return self._delete(request)
        return _error(405, "Method not allowed", headers={"Allow": "GET, POST, DELETE"})

    def _check_security(self, request: web.Request) -> web.Response | None:
        # DNS rebinding defence (transports#security-warning; MCP-NOTES section 9): Host and Origin.
        if "*" not in self._allowed_hosts and not self._host_allowed(request.headers.get("Host", "")):
            return _error(403, "Forbidden: Host header not allowed")
        origin = request.headers.get("Origin")
        if origin is not None and not self._origin_allowed(origin):
            return _error(403, "Forbidden: Origin not allowed")
        if self._token is not None:
            scheme, _, given = request.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), self._token.encode()
            ):
                challenge = 'Bearer error="invalid_token"' if given else "Bearer"
                return _error(
                    401,
                    "Unauthorized: a valid bearer token is required",
                    headers={"WWW-Authenticate": challenge},
                )
        return None

    def _host_allowed(self, host: str) -> bool:
        if host.startswith("["):
            name, _, rest = host[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            name, _, port = host.partition(":")
        if _bare(name) not in self._allowed_hosts:
            return False
        return port == str(self._port) or (not port and self._port == 80)

    def _origin_allowed(self, origin: str) -> bool:
        if origin.lower().rstrip("/") in self._allowed_origins:
            return True
        try:
            url = URL(origin)
        except ValueError:
            return False
        return (
            url.scheme in ("http", "https")
            and url.host is not None
            and _bare(url.host) in self._allowed_hosts
        )

    def _session_for(self, request: web.Request) -> _Session | web.Response:
        session_id = request.headers.get("Mcp-Session-Id")
        if not session_id:
            return _error(400, "Bad Request: missing Mcp-Session-Id header")
        session = self.sessions.get(session_id)
        if session is None:
            return _error(404, "Session not found", code=-32001)
        version = request.headers.get("MCP-Protocol-Version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            supported = ", ".join(SUPPORTED_VERSIONS)
            return _error(
                400, f"Bad Request: unsupported MCP-Protocol-Version {version!r} (supported: {supported})"
            )
        return session

    async def _post(self, request: web.Request) -> web.StreamResponse:
        if request.content_type != "application/json":
            return _error(415, "Unsupported Media Type: Content-Type must be application/json")
        if not _accepts(request, "application/json", "text/event-stream"):
            return _error(406, "Not Acceptable: Accept must include application/json and text/event-stream")
        if request.content_length is not None and request.content_length > self.max_body_size:
            return _error(413, f"Payload Too Large: the limit is {self.max_body_size} bytes")
        try:
            text = (await request.read()).decode("utf-8")
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"Payload Too Large: the limit is {self.max_body_size} bytes")
        except UnicodeDecodeError:
            return _error(400, "Parse error: the body is not UTF-8", code=PARSE_ERROR)
        message = parse(text)[0]
        if isinstance(message, Invalid):
            reply = message.reply or ErrorResponse(
                None, INVALID_REQUEST, f"Invalid request: {message.reason}"
            )
            return web.Response(status=400, text=serialize(reply), content_type="application/json")
        if isinstance(message, Request) and message.method == "initialize":
            if request.headers.get("Mcp-Session-Id"):
                return _error(400, "Bad Request: initialize must not carry an Mcp-Session-Id")
            if len(self.sessions) >= self.max_sessions:
                return _error(503, "Service Unavailable: too many sessions", code=INTERNAL_ERROR)
            session = self._new_session()
        else:
            found = self._session_for(request)
            if isinstance(found, web.Response):
                return found
            session = found
        headers = {"Mcp-Session-Id": session.id}
        if not isinstance(message, Request):
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                session.cancel((message.params or {}).get("requestId"))
            session.inbox.put_nowait(text)
            return web.Response(status=202, headers=headers)
        if message.id in session.active:
            return _error(400, f"Invalid Request: request id {message.id!r} is already in use")
        stream = session.open_request(message, json_mode=self.json_response)
        session.inbox.put_nowait(text)
        if stream.json_mode:
            await stream.done.wait()  # always set: by the answer, a cancellation or the session's end
            if stream.answer is None:
                if session.close_reason is not None:
                    return _error(404, "Session not found", code=-32001)
                return web.Response(status=202, headers=headers)  # cancelled by the client: nothing to say
            return web.Response(text=stream.answer, content_type="application/json", headers=headers)
        return await self._stream(request, session, stream, -1, headers)

    def _new_session(self) -> _Session:
        session = _Session(self, secrets.token_urlsafe(32))
        self.sessions[session.id] = session
        session.task = asyncio.get_running_loop().create_task(
            self._run_session(session), name=f"MCP HTTP session {session.id[:8]}"
        )
        return session

    async def _get(self, request: web.Request) -> web.StreamResponse:
        if not _accepts(request, "text/event-stream"):
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

    def _delete(self, request: web.Request) -> web.Response:
        found = self._session_for(request)
        if isinstance(found, web.Response):
            return found
        found.terminate("the client ended the session (DELETE)")
        return web.Response(status=200)

    async def _stream(
        self, request: web.Request, session: _Session, stream: _Stream, after: int, headers: dict[str, str]
    ) -> web.StreamResponse:
        """Write ``stream``'s events after ``after`` to this connection until it finishes or is replaced."""
        response = web.StreamResponse(status=200, headers={**_SSE_HEADERS, **headers})
        writer = stream.attach()
        try:
            await response.prepare(request)
            deadline = None
            if _polling(session.protocol_version):
                await response.write(stream.priming(self.sse_retry_ms if self.sse_polling else None))
                if self.sse_polling and stream is not session.standalone:
                    deadline = asyncio.get_running_loop().time() + self.sse_poll_seconds
            await self._pump(response, stream, writer, after, deadline)
            await response.write_eof()
        except _DISCONNECTED as exc:
            # The client went away: what it missed stays buffered for a resume. Nothing reaches the engine.
            log.debug("HTTP session %s: stream %s lost its client: %r", session.id[:8], stream.id, exc)
        finally:
            stream.detach(writer)
        return response

    async def _pump(
        self,
        response: web.StreamResponse,
        stream: _Stream,
        writer: _Writer,
        after: int,
        deadline: float | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        last = after
        while True:
            for seq, data in stream.after(last):
                if writer.stopped:
                    return
                await response.write(data)
                last = seq
                stream.delivered = max(stream.delivered, seq)
            if writer.stopped or (stream.finished and not stream.after(last)):
                return
            writer.wake.clear()
            if stream.after(last):
                continue  # something arrived while we were writing
            wait = self.keepalive
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    return  # SSE polling: end this connection; the client resumes with Last-Event-ID
                wait = left if wait is None else min(wait, left)
            try:
                await asyncio.wait_for(writer.wake.wait(), wait)
            except asyncio.TimeoutError:
                if deadline is None or loop.time() < deadline:
                    await response.write(encode_comment())  # keeps proxies open and finds dead clients


def _bare(host: str) -> str:
    return host.strip().lower().removeprefix("[").removesuffix("]")


def _accepts(request: web.Request, *types: str) -> bool:
    ranges = {part.split(";", 1)[0].strip().lower() for part in request.headers.get("Accept", "").split(",")}
    if "*/*" in ranges:
        return True
    return all(t in ranges or f"{t.split('/')[0]}/*" in ranges for t in types)


def _polling(version: str | None) -> bool:
    # Priming events (empty data) confuse clients older than 2025-11-25, which added them.
    return version is not None and version >= "2025-11-25"
