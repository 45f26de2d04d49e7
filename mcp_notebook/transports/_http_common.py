"""What the HTTP client transports share: the inbox, the error a failed exchange becomes, SSE reading.

Foreign exceptions (aiohttp's, OSError, asyncio.TimeoutError) are translated here, once, into
:class:`ExchangeFailed` (``raise ... from exc``, like httpx's transport boundary): :func:`exchange` wraps one
HTTP request and everything read inside it, :func:`iter_sse` a stream read later.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import io
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
from aiohttp.helpers import parse_content_type

from mcp_notebook.protocol.jsonrpc import ErrorResponse, RequestId, serialize

from .base import STREAM_LOST, TransportClosed
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "MAX_RETRY_AFTER",
    "TRANSPORT_ERROR",
    "ClientInbox",
    "ExchangeFailed",
    "ServerUnreachable",
    "SessionExpired",
    "content_type",
    "error_response",
    "exchange",
    "http_failure",
    "iter_sse",
    "media_type",
    "owned_session",
    "request_body",
    "retry_after",
    "snippet",
    "translated",
]

TRANSPORT_ERROR = -32000  # JSON-RPC "server error" range: the HTTP exchange failed, not the method
log = logging.getLogger("mcp_notebook.http")  # the HTTP client transports' logger

MAX_RETRY_AFTER = 10.0  # seconds of 429 ``Retry-After`` waits one message accepts, in total


class SessionExpired(TransportClosed):
    """The server no longer knows our session (HTTP 404): start a new one with a fresh ``initialize``."""


class ServerUnreachable(TransportClosed):
    """Nothing accepted the connection (refused, no route): the server is down, perhaps restarting. The
    connection is over; the client's next request connects again (``Client._live``)."""


class ExchangeFailed(TransportClosed):
    """One HTTP exchange failed below HTTP (refused, reset, timed out, cut mid-body).

    ``unreachable``: nothing accepted the connection, so the server is gone, not merely slow."""

    def __init__(self, message: str, detail: str | None = None, *, unreachable: bool = False) -> None:
        super().__init__(message, detail)
        self.unreachable = unreachable


_FOREIGN = (aiohttp.ClientError, OSError, asyncio.TimeoutError)


def _failed(what: str, exc: BaseException) -> ExchangeFailed:
    """The one place foreign failures become :class:`ExchangeFailed` (``what`` names the exchange)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        return ExchangeFailed(f"{what}: cannot reach the server: {exc}", unreachable=True)
    return ExchangeFailed(f"{what} failed: {exc!r}")


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """A foreign failure inside the block is raised as :class:`ExchangeFailed`."""
    try:
        yield
    except _FOREIGN as exc:
        raise _failed(what, exc) from exc


class exchange:
    """``async with http.request(...)``; a foreign failure, also while reading the body inside the block,
    is raised as :class:`ExchangeFailed`. A class, not a generator-based context manager: one per HTTP
    request, and a generator (with :func:`translated` inside it) cost several times the two calls here.
    The response is awaited and released here, not through aiohttp's two context managers around it
    (their four coroutines per request did nothing else).

    With ``message`` (a POST of the Streamable HTTP client), the body is that message, made again for each
    attempt (a stream if large), and a 429 is retried after its ``Retry-After`` while the waits stay within
    MAX_RETRY_AFTER in total, then handed over like any other status; ``name`` names the transport in the
    log. Here rather than in a subclass around this: one coroutine per request, not two."""

    __slots__ = ("_http", "_message", "_method", "_name", "_options", "_response", "_url")

    def __init__(
        self,
        http: aiohttp.ClientSession,
        method: str,
        url: str,
        *,
        message: str | None = None,
        name: str = "",
        **options: Any,
    ) -> None:
        self._http, self._method, self._url, self._options = http, method, url, options
        self._message, self._name = message, name
        self._response: aiohttp.ClientResponse | None = None

    async def __aenter__(self) -> aiohttp.ClientResponse:
        waited = 0.0
        while True:
            if self._message is not None:
                self._options["data"] = request_body(self._message)  # each attempt its own
            try:
                resp: aiohttp.ClientResponse = await self._http.request(
                    self._method, self._url, **self._options
                )
            except _FOREIGN as exc:
                raise _failed(f"{self._method} {self._url}", exc) from exc
            self._response = resp
            if self._message is None or resp.status != 429:
                return resp
            delay = retry_after(resp)
            if waited + delay > MAX_RETRY_AFTER:
                return resp
            await self.__aexit__(None, None, None)
            log.debug("%s: HTTP 429, retrying in %g s", self._name, delay)
            waited += delay
            await asyncio.sleep(delay)

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        resp = self._response
        assert resp is not None
        try:
            resp.release()  # what ClientResponse.__aexit__ does
            await resp.wait_for_close()
        except _FOREIGN as failure:
            raise _failed(f"{self._method} {self._url}", failure) from failure
        if isinstance(exc, _FOREIGN):
            raise _failed(f"{self._method} {self._url}", exc) from exc


def retry_after(resp: aiohttp.ClientResponse, default: float = 1.0) -> float:
    """Seconds a 429/503 asks us to wait: ``Retry-After`` as seconds or an HTTP date (RFC 9110 10.2.3)."""
    value = resp.headers.get("Retry-After", "").strip()
    if not value:
        return default
    if value.isascii() and value.isdigit():  # delay-seconds is ASCII digits: str.isdigit() also takes '²'
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


class ClientInbox:
    """Incoming messages in arrival order; a failure, once queued, is raised to every later reader."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: asyncio.Queue[str | TransportClosed] = asyncio.Queue()
        self._failure: TransportClosed | None = None

    def put(self, message: str) -> None:
        if self._failure is None:
            self._queue.put_nowait(message)

    def fail(self, exc: TransportClosed) -> None:
        if self._failure is None:
            self._failure = exc
            self._queue.put_nowait(exc)

    def empty(self) -> bool:
        """Nothing is waiting to be read (a failure counts as something)."""
        return self._queue.empty()

    def raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure

    async def get(self) -> str:
        item = await self._queue.get()
        if isinstance(item, TransportClosed):
            self._queue.put_nowait(item)  # later receive() calls fail the same way
            raise item
        return item


def snippet(body: str, limit: int = 300) -> str:
    body = " ".join(body.split())
    return body if len(body) <= limit else body[:limit] + "..."


def http_failure(resp: aiohttp.ClientResponse, body: str) -> str:
    text = f"HTTP {resp.status} {resp.reason or ''}".rstrip() + f" from {resp.method} {resp.url}"
    if resp.status == 429:
        text += f" (the server asks to retry after {retry_after(resp):g} s; this client waits at most"
        text += f" {MAX_RETRY_AFTER:g} s per message)"
    return f"{text}: {snippet(body)}" if body.strip() else text


def error_response(
    request_id: RequestId | None,
    reason: str,
    *,
    status: int | None = None,
    body: str = "",
    stream_lost: bool = False,
) -> str:
    """A JSON-RPC error answering ``request_id``, so the waiting call fails with the HTTP reason."""
    data: dict[str, Any] = {STREAM_LOST: True} if stream_lost else {}
    if status is not None:
        data["httpStatus"] = status
    if body:
        data["body"] = snippet(body, 2000)
    return serialize(ErrorResponse(request_id, TRANSPORT_ERROR, reason, data or None))


def request_body(message: str) -> bytes | io.BytesIO:
    data = message.encode()
    # aiohttp warns that a large bytes body blocks the loop while it is copied; a stream is sent in chunks.
    return io.BytesIO(data) if len(data) > 512 * 1024 else data


@functools.lru_cache(maxsize=64)  # a peer sends the same Content-Type with every message
def media_type(raw: str | None) -> str:
    """What aiohttp's ``content_type`` gives for a ``Content-Type`` header's value (the media type, lower
    case, without parameters), parsed once per distinct value, not on each new request or response."""
    return "application/octet-stream" if raw is None else parse_content_type(raw)[0]


def content_type(resp: aiohttp.ClientResponse) -> str:
    """``resp.content_type``, without aiohttp parsing the header again for each new response."""
    return media_type(resp.headers.get("Content-Type"))


def owned_session(session: aiohttp.ClientSession | None) -> tuple[aiohttp.ClientSession, bool]:
    return (session, False) if session is not None else (aiohttp.ClientSession(), True)


async def iter_sse(resp: aiohttp.ClientResponse, last_event_id: str | None) -> AsyncIterator[SSEEvent]:
    """The events of one SSE response; a broken stream raises :class:`ExchangeFailed`."""
    decoder = SSEDecoder(last_event_id=last_event_id)
    with translated(f"the SSE stream from {resp.url}"):
        async for chunk in resp.content.iter_any():
            for event in decoder.feed(chunk):
                yield event
    for event in decoder.close():
        yield event
