"""The SSE side of :class:`~.http_server.StreamableHTTPServer` (kept apart for size): writing a stream's
events to an HTTP connection until the stream finishes or is replaced, under the per-client and total caps
on open streams, with keep-alive comments, SSE polling (2025-11-25) and, for a 2026-07-28 request, a watch
on its client (closing the stream cancels the request).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import TYPE_CHECKING

from aiohttp import web

from ._http_guard import error_response as _error
from ._http_sessions import _Session, _Stream, _Writer
from .base import wait_event
from .sse import encode_comment

__all__ = ["SSEStreams"]

log = logging.getLogger("mcp_notebook.http")

_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_WATCH_SECONDS = 0.25  # how often a modern request's stream checks that its client is still there
_DISCONNECTED = (ConnectionError, OSError)  # aiohttp's ClientConnectionResetError is a ConnectionResetError


class SSEStreams:
    """A stream's events written to one HTTP connection (``StreamableHTTPServer`` takes these methods)."""

    if TYPE_CHECKING:  # what StreamableHTTPServer provides
        max_streams_per_client: int
        max_streams: int
        _streams: Counter[str]
        sse_polling: bool
        sse_retry_ms: int
        sse_poll_seconds: float
        keepalive: float | None

        def _who(self, request: web.BaseRequest) -> str | None: ...

    async def _stream(
        self,
        request: web.BaseRequest,
        session: _Session,
        stream: _Stream,
        after: int,
        headers: dict[str, str],
        *,
        watch: bool = False,
    ) -> web.StreamResponse:
        """Write ``stream``'s events after ``after`` to this connection until it finishes or is replaced."""
        holder = self._who(request) or f"address:{request.remote}"
        if self._streams[holder] >= self.max_streams_per_client or self._streams.total() >= self.max_streams:
            return _error(
                429,
                f"Too Many Requests: at most {self.max_streams_per_client} open SSE streams per client and "
                f"{self.max_streams} in all; close one first",
                code=-32029,
                headers={"Retry-After": "1"},
            )
        self._streams[holder] += 1
        try:
            return await self._stream_held(request, session, stream, after, headers, watch=watch)
        finally:
            self._streams[holder] -= 1
            if not self._streams[holder]:
                del self._streams[holder]

    async def _stream_held(
        self,
        request: web.BaseRequest,
        session: _Session,
        stream: _Stream,
        after: int,
        headers: dict[str, str],
        *,
        watch: bool = False,
    ) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={**_SSE_HEADERS, **headers})
        writer = stream.attach()
        try:
            await response.prepare(request)
            deadline = None
            if _polling(session.protocol_version):
                await response.write(stream.priming(self.sse_retry_ms if self.sse_polling else None))
                if self.sse_polling and stream is not session.standalone:
                    deadline = asyncio.get_running_loop().time() + self.sse_poll_seconds
            await self._pump(response, stream, writer, after, deadline, request if watch else None)
            await response.write_eof()
        except _DISCONNECTED as exc:
            # The client went away: what it missed stays buffered for a resume. Nothing reaches the engine.
            log.debug("HTTP session %s: stream %s lost its client: %r", session.id[:8], stream.id, exc)
        finally:
            stream.detach(writer)
            session.touch()  # idle time counts from when the client let go of the stream
        return response

    async def _pump(
        self,
        response: web.StreamResponse,
        stream: _Stream,
        writer: _Writer,
        after: int,
        deadline: float | None,
        watch: web.BaseRequest | None = None,
    ) -> None:
        loop = asyncio.get_running_loop()
        last = after
        quiet_since = loop.time()
        while True:
            pending = stream.after(last)
            if pending:
                if writer.stopped:
                    return
                await response.write(b"".join(data for _, data in pending))  # one write for all that waits
                last = pending[-1][0]
                stream.delivered = max(stream.delivered, last)
            if writer.stopped or (stream.finished and not stream.pending(last)):
                return
            writer.wake.clear()
            if stream.pending(last):
                continue  # something arrived while we were writing
            wait = self.keepalive
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    return  # SSE polling: end this connection; the client resumes with Last-Event-ID
                wait = left if wait is None else min(wait, left)
            if watch is not None:
                wait = _WATCH_SECONDS if wait is None else min(wait, _WATCH_SECONDS)
            if await wait_event(writer.wake, wait):
                quiet_since = loop.time()
            else:
                if watch is not None:
                    if _gone(watch):
                        raise ConnectionResetError("the client closed the stream") from None
                    if self.keepalive is None or loop.time() - quiet_since < self.keepalive:
                        continue
                    quiet_since = loop.time()
                if deadline is None or loop.time() < deadline:
                    await response.write(encode_comment())  # keeps proxies open and finds dead clients


def _gone(request: web.BaseRequest) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _polling(version: str | None) -> bool:
    # Priming events (empty data) confuse clients older than 2025-11-25, which added them.
    return version is not None and version >= "2025-11-25"
