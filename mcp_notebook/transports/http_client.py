"""HTTP client transport: Streamable HTTP (2025-03-26 .. 2025-11-25, and stateless 2026-07-28 requests).

Every client message is one POST. A request's answer comes back as one JSON body or as an SSE stream that may
carry progress, logs and server->client requests first; server-initiated messages arrive on an optional GET
stream. Whatever goes wrong on the HTTP side ends as a message the engine understands: an HTTP error for a
request becomes a JSON-RPC error response for that request id (so no call hangs), and the loss of the session
ends the transport with :class:`SessionExpired`.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http and
#backwards-compatibility.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy

from mcp_notebook.protocol import era, modern
from mcp_notebook.protocol.header_params import header_params
from mcp_notebook.protocol.jsonrpc import (
    ErrorResponse,
    Notification,
    Request,
    RequestId,
    Response,
    Wire,
    parse,
    peek,
    read,
)
from mcp_notebook.protocol.modern import META_PROTOCOL_VERSION, NAME_PARAMS
from mcp_notebook.protocol.versions import LATEST_LEGACY

from ._heap import reads_from_the_heap
from ._http_common import (
    ClientInbox,
    ExchangeFailed,
    ServerUnreachable,
    SessionExpired,
    content_type,
    error_response,
    exchange,
    http_failure,
    iter_sse,
    owned_session,
    snippet,
)
from .base import TransportClosed
from .http_legacy import LegacySSEClientTransport

__all__ = [
    "LegacySSEClientTransport",
    "ServerUnreachable",
    "SessionExpired",
    "StreamableHTTPClientTransport",
]

log = logging.getLogger("mcp_notebook.http")

FALLBACK_STATUSES = frozenset({400, 404, 405})  # transports#backwards-compatibility (2025-11-25)
_ACCEPT = "application/json, text/event-stream"  # a POST's answer: one JSON body or an SSE stream
_DEFAULT_RETRY = 0.5  # seconds before resuming a stream, when the server gave no ``retry:``
_ROUTED_HEADERS = 256  # modern requests' header sets kept, one per method, version and name
_MAX_RECONNECTS = 3  # consecutive reconnect attempts that bring nothing; a refused connection ends at once


@dataclass
class _StreamState:
    last_event_id: str | None = None
    retry_ms: int | None = None
    ended_at: float | None = None  # loop time at which the last connection of the stream was seen to end


FallbackHook = Callable[[str, int, str], Awaitable[None]]


class StreamableHTTPClientTransport:
    """Client side of Streamable HTTP. Create with :meth:`start`."""

    def __init__(
        self,
        url: str,
        http: aiohttp.ClientSession,
        *,
        owns_http: bool,
        headers: Mapping[str, str] | None,
        timeout: float,
        inbox: ClientInbox | None = None,
    ) -> None:
        reads_from_the_heap()  # no mmap per socket read (transports/_heap.py)
        self.url = url
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._http = http
        self._owns_http = owns_http
        self._headers = dict(headers or {})
        # what every 2026-07-28 POST carries besides its own routing headers (made once)
        self._modern_base = {**self._headers, "Content-Type": "application/json", "Accept": _ACCEPT}
        self._timeout = timeout
        # a request's own wait is its caller's; connecting is bounded (immutable, so made once)
        self._request_timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, connect=timeout)
        self._inbox = inbox if inbox is not None else ClientInbox(f"MCP server at {url}")
        self._tasks: set[asyncio.Task[None]] = set()
        self._requests: dict[RequestId, asyncio.Task[None]] = {}
        self._modern: set[RequestId] = set()  # in-flight 2026-07-28 requests: cancelled by closing
        # The client's view of the tools (name -> Tool), for the Mcp-Param-* headers of modern tools/call,
        # and whether each one has any (its schema walked once per listing, not once per call).
        self._tools: Mapping[str, Mapping[str, Any]] = {}
        self._mirrors: dict[str, bool] = {}
        self._routed: dict[tuple[str, str | None, str | None], CIMultiDictProxy[str]] = {}
        self._posting: tuple[object, CIMultiDictProxy[str]] = (None, CIMultiDictProxy(CIMultiDict()))
        self._get_task: asyncio.Task[None] | None = None
        self._closed = False
        self._on_fallback: FallbackHook | None = None  # set by http_connect.HTTPClientTransport while probing
        # The engine's Connection.take_answer: an answer in a JSON body, with nothing queued before it, goes
        # straight to the engine (no queue, no turn of the loop for its reader task).
        self.take_answer: Callable[[str], bool] | None = None

    @classmethod
    async def start(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        session: aiohttp.ClientSession | None = None,
    ) -> StreamableHTTPClientTransport:
        """``headers`` go on every HTTP request (e.g. ``Authorization``); ``timeout`` bounds connecting and
        every exchange that should be quick (202s, DELETE); a request's own wait is the caller's timeout."""
        http, owned = owned_session(session)
        return cls(url, http, owns_http=owned, headers=headers, timeout=timeout)

    # ---- Transport interface -----------------------------------------------------------------------------
    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        if self._closed:
            raise TransportClosed(f"{self._inbox.name}: the transport is closed")
        self._inbox.raise_if_failed()
        parsed = peek(message)  # our own message: nothing to decode
        if isinstance(parsed, Request):
            if modern.is_modern(parsed.params):
                self._modern.add(parsed.id)
            task = asyncio.get_running_loop().create_task(
                self._post_request(message, parsed), name=f"POST {parsed.method} {parsed.id}"
            )
            self._track(task)
            self._requests[parsed.id] = task
            task.add_done_callback(functools.partial(self._forget_request, parsed.id))
            return
        if (
            isinstance(parsed, Notification)
            and parsed.method == "notifications/cancelled"
            and parsed.params
            and parsed.params.get("requestId") in self._modern
        ):
            # 2026-07-28 HTTP: cancelling is closing the request's stream; no notification is POSTed.
            running = self._requests.get(parsed.params["requestId"])
            if running is not None:
                running.cancel()
            return
        await self._post_other(message, parsed)

    def post_inline(self, message: str) -> Coroutine[Any, Any, None]:
        """:meth:`send` for a 2026-07-28 request (the caller knows) that its caller waits for, run in its own
        task (no task per POST): await it; it returns once the exchange is over, its messages delivered as
        :meth:`send`'s task would (the answer straight to the engine or queued behind what came first; an
        HTTP failure as an error for the request). Cancelling the caller closes the request's stream, which
        in 2026-07-28 is the request's cancellation: nothing more is to be sent for it. The exchange's own
        coroutine is returned (no coroutine around it); a closed or failed transport refuses at once."""
        if self._closed:
            raise TransportClosed(f"{self._inbox.name}: the transport is closed")
        self._inbox.raise_if_failed()
        request = peek(message)
        if not isinstance(request, Request):  # not what this is for (the engine checked the era): as usual
            return self.send(message)
        return self._post_request(message, request, inline=True)

    async def receive(self) -> str:
        if self._closed:
            raise TransportClosed(f"{self._inbox.name}: the transport is closed")
        return await self._inbox.get()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=self._timeout)
        try:
            if self.session_id is not None and not self._http.closed:
                # The client SHOULD end the session it no longer needs; 405 means the server keeps it.
                delete_timeout = aiohttp.ClientTimeout(total=min(self._timeout, 5.0))
                headers = self._base_headers()
                async with exchange(self._http, "DELETE", self.url, headers=headers, timeout=delete_timeout):
                    pass
        except ExchangeFailed as exc:
            log.debug("DELETE %s failed: %s", self.url, exc)
        finally:
            if self._owns_http:
                await self._http.close()
            self._inbox.fail(TransportClosed(f"{self._inbox.name}: closed by this side"))

    @property
    def tools(self) -> Mapping[str, Mapping[str, Any]]:
        return self._tools

    @tools.setter
    def tools(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        self._tools = tools
        self._mirrors = {}

    def _forget_request(self, request_id: RequestId, _task: object) -> None:
        self._requests.pop(request_id, None)
        self._modern.discard(request_id)

    # ---- HTTP details ------------------------------------------------------------------------------------
    def _track(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _base_headers(self) -> dict[str, str]:
        headers = dict(self._headers)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _post_headers(self) -> Mapping[str, str]:
        """A session's POST headers, made again only when its id or version changed (as aiohttp's read-only
        multidict, which it would otherwise build from a dict on every request)."""
        key = (self.session_id, self.protocol_version)
        if self._posting[0] != key:
            headers = self._base_headers()
            headers["Content-Type"] = "application/json"
            headers["Accept"] = _ACCEPT
            self._posting = (key, CIMultiDictProxy(CIMultiDict(headers)))
        return self._posting[1]

    def _post(self, message: str, headers: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> exchange:
        """``async with`` it: POST ``message``; a 429 is retried after its ``Retry-After`` while the waits
        stay within MAX_RETRY_AFTER in total, then handed over like any other error status."""
        return exchange(
            self._http,
            "POST",
            self.url,
            message=message,
            name=self._inbox.name,
            headers=headers,
            timeout=timeout,
        )

    async def _post_other(self, message: str, parsed: object) -> None:
        """A notification or a response: the server answers 202 (or an error we can only report)."""
        sent_session = self.session_id is not None
        try:
            async with self._post(
                message, self._post_headers(), aiohttp.ClientTimeout(total=self._timeout)
            ) as resp:
                if resp.status == 404 and sent_session:
                    self._expire(f"HTTP 404 for POST {self.url}")
                    raise SessionExpired(f"{self._inbox.name}: the server ended the session (HTTP 404)")
                if resp.status >= 400:
                    body = await resp.text(errors="replace")
                    # Notifications get no answer, so there is nobody to hand a JSON-RPC error to.
                    log.warning(
                        "%s: POST of a notification got %s", self._inbox.name, http_failure(resp, body)
                    )
                    return
        except ExchangeFailed as exc:
            raise TransportClosed(f"{self._inbox.name}: {exc}") from exc
        if isinstance(parsed, Notification):
            if parsed.method == "notifications/initialized":
                self._start_get_stream()
            elif parsed.method == "notifications/cancelled" and parsed.params:
                # The engine gave up on that request: stop reading its stream (a late answer is dropped).
                cancelled = parsed.params.get("requestId")
                task = self._requests.get(cancelled) if isinstance(cancelled, str | int) else None
                if task is not None:
                    task.cancel()

    def _modern_headers(self, request: Request) -> Mapping[str, str]:
        """A stateless 2026-07-28 request: no session id; the version, method and name as headers. The same
        routing gives the same headers: made once, as aiohttp's own (read-only) multidict, which it would
        otherwise build from a dict on every request; looked up by the values they are made of (the
        ``_meta`` version, the method, the raw name), without making the routing headers again."""
        method, params = request.method, request.params
        # The key: the method, the _meta protocol version and the raw value of the method's name field
        # (``name``, ``uri``...), each None when absent or not a string, read as era.http_headers reads them.
        version = name = None
        if isinstance(params, (dict, Mapping)):  # (dict first: no ABC check for a dict)
            meta = params.get("_meta")
            version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
            field = NAME_PARAMS.get(method)
            name = params.get(field) if field is not None else None
        key = (method, version if isinstance(version, str) else None, name if isinstance(name, str) else None)
        headers = self._routed.get(key)
        if headers is None:
            if len(self._routed) >= _ROUTED_HEADERS:  # resources/read names are URIs: keep the cache small
                self._routed.clear()
            routing = era.http_headers(method, params)
            headers = self._routed[key] = CIMultiDictProxy(CIMultiDict({**self._modern_base, **routing}))
        name = key[2]
        if method == "tools/call" and name is not None and params is not None:
            tool = self._tools.get(name) or {}
            mirrors = self._mirrors.get(name)
            if mirrors is None:  # x-mcp-header anywhere in its schema? Walked once per tools listing
                mirrors = self._mirrors[name] = bool(header_params(tool.get("inputSchema"))[0])
            if mirrors:
                mirrored = era.param_headers(tool.get("inputSchema"), params.get("arguments"))
                return {**self._modern_base, **era.http_headers(method, params), **mirrored}
        return headers

    async def _post_request(self, message: str, request: Request, inline: bool = False) -> None:
        """POST a request and deliver what comes back; ``inline``: a 2026-07-28 request of
        :meth:`post_inline`'s, in flight (``_modern``) while this runs."""
        if inline:
            self._modern.add(request.id)
        try:
            is_initialize = request.method == "initialize"
            is_modern = request.id in self._modern
            sent_session = self.session_id is not None and not is_modern
            headers = self._modern_headers(request) if is_modern else self._post_headers()
            try:
                async with self._post(message, headers, self._request_timeout) as resp:
                    if is_initialize and resp.status < 400:
                        self._take_session_id(resp)
                    await self._on_request_response(resp, message, request, sent_session)
            except ExchangeFailed as exc:
                self._exchange_failed(exc, request)
            except ValueError as exc:
                self._inbox.put(error_response(request.id, f"POST {self.url}: {exc}"))
        finally:
            if inline:
                self._modern.discard(request.id)

    def _exchange_failed(self, exc: ExchangeFailed, request: Request) -> None:
        if exc.unreachable:
            # Nothing listens there (any more): the connection is over, not just this request.
            self._inbox.fail(ServerUnreachable(f"{self._inbox.name}: {exc}"))
        else:
            self._inbox.put(error_response(request.id, str(exc)))

    def _take_session_id(self, resp: aiohttp.ClientResponse) -> None:
        session_id = resp.headers.get("Mcp-Session-Id")
        if session_id is None:
            return
        if not session_id or not all(0x21 <= ord(c) <= 0x7E for c in session_id):
            raise ValueError(f"the server sent an invalid Mcp-Session-Id {session_id!r}")
        self.session_id = session_id

    async def _on_request_response(
        self, resp: aiohttp.ClientResponse, message: str, request: Request, sent_session: bool
    ) -> None:
        if resp.status == 404 and sent_session:
            self._expire(f"HTTP 404 for POST {self.url}")  # fails every pending request, this one too
            return
        if resp.status >= 400:
            body = await resp.text(errors="replace")
            if request.id in self._modern:
                # A modern server answers errors with their JSON-RPC body (400/404): pass it on as is, so
                # the caller sees the server's code; anything else becomes a transport error.
                if not self._deliver_error_body(body, request):
                    self._inbox.put(
                        error_response(request.id, http_failure(resp, body), status=resp.status, body=body)
                    )
                return
            if self._on_fallback is not None and resp.status in FALLBACK_STATUSES:
                await self._on_fallback(message, resp.status, snippet(body))
                return
            self._inbox.put(
                error_response(request.id, http_failure(resp, body), status=resp.status, body=body)
            )
            return
        self._on_fallback = None  # the server speaks Streamable HTTP
        answer_type = content_type(resp)
        if answer_type == "application/json":
            # All of a small body came in with the headers: taken from the buffer, not through read()'s loop.
            content = resp.content
            self._take_json(content.read_nowait() if content.is_eof() else await resp.read(), request)
        elif answer_type == "text/event-stream":
            await self._follow_request_stream(resp, request)
        else:
            body = await resp.text(errors="replace")
            reason = f"unexpected answer HTTP {resp.status} {answer_type or 'without content type'}"
            self._inbox.put(error_response(request.id, f"{reason}: {snippet(body)}", status=resp.status))

    def _deliver_error_body(self, body: str, request: Request) -> bool:
        wire = read(body.strip())
        parsed = parse(wire)
        if len(parsed) == 1 and isinstance(parsed[0], ErrorResponse) and parsed[0].id == request.id:
            self._inbox.put(wire)
            return True
        return False

    def _take_json(self, data: bytes, request: Request) -> None:
        # Decoded once, from the bytes (no text made first, then encoded again to be read); the engine gets
        # the same Wire and does not decode it again. Not UTF-8 JSON: read again as text with the bad bytes
        # replaced, as before (JSON then, or the error quoting that text).
        wire = read(data)
        text: str = wire
        if not wire.is_json:
            text = data.decode("utf-8", errors="replace")
            wire = read(text)
            if not wire.is_json:
                self._inbox.put(error_response(request.id, f"invalid JSON from the server: {snippet(text)}"))
                return
        if not isinstance(wire.decoded, list):
            if self._deliver(wire, request):
                return
        else:
            answered = False
            for item in wire.decoded:  # a 2025-03-26 server may answer with a batch: one message each
                answered |= self._deliver(Wire(json.dumps(item, separators=(",", ":")), item), request)
            if answered:
                return
        # The one response to the request was not its answer: nothing else will bring it (not a timeout).
        reason = f"the server's JSON answer did not answer request {request.id!r}: {snippet(text)}"
        self._inbox.put(error_response(request.id, reason))

    def _deliver(self, text: str, request: Request | None) -> bool:
        """Queue one incoming message (decoded here once); True when it answers ``request``."""
        if type(text) is not Wire or text.message is not None:  # (a JSON body's Wire is read already)
            text = read(text)
        parsed = parse(text)[0]
        answered = (
            request is not None
            and isinstance(parsed, (Response, ErrorResponse))
            and getattr(parsed, "id", None) == request.id
        )
        if (
            answered
            and request is not None
            and request.method == "initialize"
            and isinstance(parsed, Response)
        ):
            version = parsed.result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else LATEST_LEGACY
        take = self.take_answer
        if not (answered and take is not None and self._inbox.empty() and take(text)):
            self._inbox.put(text)
        return answered

    async def _follow_request_stream(self, resp: aiohttp.ClientResponse, request: Request) -> None:
        """Read a request's SSE stream; if it ends before the answer, resume it (SSE polling, 2025-11-25)."""
        state = _StreamState()
        answered, _ = await self._read_stream(resp, state, request)
        failures = 0
        while not answered and not self._closed:
            if request.id in self._modern:  # 2026: no resumption; the engine re-issues the request
                reason = "the SSE stream ended before the answer (2026-07-28: the request is lost)"
                self._inbox.put(error_response(request.id, reason, stream_lost=True))
                return
            if state.last_event_id is None:
                reason = "the server closed the SSE stream before answering (no event id to resume from)"
                self._inbox.put(error_response(request.id, reason))
                return
            # Resume only as the server allowed (it sent event ids), after its ``retry``, a few times.
            await self._wait_retry(state)
            try:
                async with self._get(state) as again:
                    if again.status == 404 and self.session_id is not None:
                        self._expire(f"HTTP 404 for GET {self.url} (resuming request {request.id!r})")
                        return
                    if again.status >= 400 or again.content_type != "text/event-stream":
                        body = await again.text(errors="replace")
                        reason = f"resuming the SSE stream failed: {http_failure(again, body)}"
                        self._inbox.put(error_response(request.id, reason, status=again.status))
                        return
                    answered, events = await self._read_stream(again, state, request)
                    failures = 0 if events else failures + 1
            except ExchangeFailed as exc:
                if exc.unreachable:  # the server is gone: fail now, no backoff against a closed port
                    self._exchange_failed(exc, request)
                    return
                state.ended_at = asyncio.get_running_loop().time()
                failures += 1
                log.debug("%s: resuming request %r failed: %s", self._inbox.name, request.id, exc)
            if failures >= _MAX_RECONNECTS:
                self._inbox.put(error_response(request.id, "the SSE stream could not be resumed"))
                return

    def _get_headers(self, state: _StreamState) -> dict[str, str]:
        headers = self._base_headers()
        headers["Accept"] = "text/event-stream"
        if state.last_event_id is not None:
            headers["Last-Event-ID"] = state.last_event_id
        return headers

    def _get(self, state: _StreamState) -> contextlib.AbstractAsyncContextManager[aiohttp.ClientResponse]:
        timeout = aiohttp.ClientTimeout(total=None, connect=self._timeout, sock_connect=self._timeout)
        return exchange(self._http, "GET", self.url, headers=self._get_headers(state), timeout=timeout)

    @staticmethod
    def _reconnect_delay(state: _StreamState) -> float:
        # The server's ``retry`` is honoured exactly (the client MUST wait it); attempts are few, not slow.
        return state.retry_ms / 1000 if state.retry_ms is not None else _DEFAULT_RETRY

    async def _wait_retry(self, state: _StreamState) -> None:
        """Wait the reconnection time, counted from the moment the stream ended (not from whenever this
        runs), and nothing else: no backoff on top, no other wait before it. SSE: "wait the reconnection
        time, then reconnect" (https://html.spec.whatwg.org/multipage/server-sent-events.html#reestablish-the-connection);
        2025-11-25 transports#resumability-and-redelivery: the client MUST honour ``retry``."""
        loop = asyncio.get_running_loop()
        ended = state.ended_at if state.ended_at is not None else loop.time()
        remaining = ended + self._reconnect_delay(state) - loop.time()
        if remaining > 0:
            await asyncio.sleep(remaining)

    async def _read_stream(
        self, resp: aiohttp.ClientResponse, state: _StreamState, request: Request | None
    ) -> tuple[bool, int]:
        """(answered, number of events) for one SSE connection; stops at the answer."""
        count = 0
        try:
            async for event in iter_sse(resp, state.last_event_id):
                count += 1
                state.last_event_id = event.id
                if event.retry is not None:
                    state.retry_ms = event.retry
                if event.event != "message" or not event.data.strip():
                    continue  # priming events and unknown event types carry no message
                if self._deliver(event.data, request):
                    return True, count
        except ExchangeFailed as exc:
            state.ended_at = asyncio.get_running_loop().time()  # first: the retry wait counts from here
            log.debug("%s: %s", self._inbox.name, exc)
            return False, count
        state.ended_at = asyncio.get_running_loop().time()
        return False, count

    def _start_get_stream(self) -> None:
        if self._get_task is None and not self._closed:
            self._get_task = asyncio.get_running_loop().create_task(self._run_get_stream(), name="GET stream")
            self._track(self._get_task)

    async def _run_get_stream(self) -> None:
        """The standalone stream for server-initiated messages; optional (405), reconnected when it ends."""
        state = _StreamState()
        failures = 0
        while not self._closed:
            try:
                async with self._get(state) as resp:
                    if resp.status == 404 and self.session_id is not None:
                        self._expire(f"HTTP 404 for GET {self.url}")
                        return
                    if resp.status >= 400 or resp.content_type != "text/event-stream":
                        if resp.status != 405:  # 405: the server offers no GET stream, which is fine
                            log.debug("%s: no GET stream: HTTP %s", self._inbox.name, resp.status)
                        return
                    _, events = await self._read_stream(resp, state, None)
                    failures = 0 if events else failures + 1
            except ExchangeFailed as exc:
                state.ended_at = asyncio.get_running_loop().time()
                log.debug("%s: GET stream failed: %s", self._inbox.name, exc)
                if exc.unreachable:
                    return  # the server is gone; the next request says so
                failures += 1
            if failures >= _MAX_RECONNECTS:
                log.debug("%s: giving up on the GET stream", self._inbox.name)
                return
            await self._wait_retry(state)

    def _expire(self, detail: str) -> None:
        self._inbox.fail(
            SessionExpired(f"{self._inbox.name}: the server ended the MCP session; start a new one", detail)
        )
