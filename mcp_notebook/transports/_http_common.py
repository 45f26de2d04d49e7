"""What the HTTP client transports share: the inbox, the error a failed exchange becomes, SSE reading."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from mcp_notebook.protocol.jsonrpc import ErrorResponse, RequestId, serialize

from .base import TransportClosed
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "TRANSPORT_ERROR",
    "ClientInbox",
    "SessionExpired",
    "error_response",
    "http_failure",
    "iter_sse",
    "owned_session",
    "request_body",
    "snippet",
]

TRANSPORT_ERROR = -32000  # JSON-RPC "server error" range: the HTTP exchange failed, not the method


class SessionExpired(TransportClosed):
    """The server no longer knows our session (HTTP 404): start a new one with a fresh ``initialize``."""


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
    return f"{text}: {snippet(body)}" if body.strip() else text


def error_response(
    request_id: RequestId | None, reason: str, *, status: int | None = None, body: str = ""
) -> str:
    """A JSON-RPC error answering ``request_id``, so the waiting call fails with the HTTP reason."""
    data: dict[str, Any] = {}
    if status is not None:
        data["httpStatus"] = status
    if body:
        data["body"] = snippet(body, 2000)
    return serialize(ErrorResponse(request_id, TRANSPORT_ERROR, reason, data or None))


def request_body(message: str) -> bytes | io.BytesIO:
    data = message.encode()
    # aiohttp warns that a large bytes body blocks the loop while it is copied; a stream is sent in chunks.
    return io.BytesIO(data) if len(data) > 512 * 1024 else data


def owned_session(session: aiohttp.ClientSession | None) -> tuple[aiohttp.ClientSession, bool]:
    return (session, False) if session is not None else (aiohttp.ClientSession(), True)


async def iter_sse(resp: aiohttp.ClientResponse, last_event_id: str | None) -> AsyncIterator[SSEEvent]:
    decoder = SSEDecoder(last_event_id=last_event_id)
    async for chunk in resp.content.iter_any():
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.close():
        yield event
