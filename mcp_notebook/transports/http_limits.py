"""The limits of the Streamable HTTP server, in one object (DESIGN decisions 12 and 14).

``mcp-notebook serve --http`` and the in-kernel server (``%mcp serve``) both build a
:class:`~.http_server.StreamableHTTPServer` with an :class:`HTTPLimits`, so both get the same defences:

============================  ==========  ==================================================================
limit                         default     what happens to the one client that exceeds it
============================  ==========  ==================================================================
``rate`` / ``burst``          100/s, 200  429 with ``Retry-After`` (a token bucket per session, else per
                                          address and credential)
``max_body_size``             4 MiB       413
``body_timeout``              30 s        408 when the body has not fully arrived in time
``header_timeout``            10 s        the connection is closed when no complete request head arrives in
                                          time (also the idle time allowed between keep-alive requests)
``session_idle_timeout``      600 s       the session ends (later requests with its id get 404) when no
                                          request used it and no stream was open for that long
``max_sessions_per_client``   100         a new session evicts that client's idlest session
``max_sessions``              1000        a new session evicts the idlest session of anyone; 503 only when
                                          every session is busy (a request or a stream in progress)
============================  ==========  ==================================================================

A "client" for the session cap is the credential it authenticated with and its address. Abandoned sessions
therefore never lock out a newcomer: they are the idlest, and go first.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Awaitable, Callable, Container
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Middleware

from ..protocol.jsonrpc import ErrorResponse, serialize

__all__ = [
    "TOO_MANY_REQUESTS",
    "HTTPLimits",
    "RateLimiter",
    "client_key",
    "rate_limit_middleware",
    "rate_limit_response",
]

TOO_MANY_REQUESTS = -32029  # JSON-RPC error code in the 429 body (implementation-defined range)


@dataclass(frozen=True)
class HTTPLimits:
    """Every bound the HTTP server enforces; see the module's table. ``rate=None`` turns rate limiting off."""

    rate: float | None = 100.0
    burst: int = 200
    max_body_size: int = 4 * 1024 * 1024
    body_timeout: float = 30.0
    header_timeout: float = 10.0
    session_idle_timeout: float = 600.0
    max_sessions_per_client: int = 100
    max_sessions: int = 1000

    def __post_init__(self) -> None:
        if self.rate is not None and (self.rate <= 0 or self.burst < 1):
            raise ValueError("rate must be > 0 (or None) and burst >= 1")
        positive = {
            "max_body_size": self.max_body_size,
            "body_timeout": self.body_timeout,
            "header_timeout": self.header_timeout,
            "session_idle_timeout": self.session_idle_timeout,
            "max_sessions_per_client": self.max_sessions_per_client,
            "max_sessions": self.max_sessions,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"HTTPLimits.{name} must be positive, not {value!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(cls.__dataclass_fields__)


class RateLimiter:
    """A token bucket per client key: ``rate`` tokens a second, at most ``burst`` saved up."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 10_000
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate, self.burst, self.clock, self.max_keys = rate, float(burst), clock, max_keys
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last time)

    def take(self, key: str) -> float:
        """Spend one token: 0.0 if allowed, else the seconds until one is available."""
        now = self.clock()
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            self._prune(now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _prune(self, now: float) -> None:
        if len(self._buckets) <= self.max_keys:
            return
        full = self.burst / self.rate  # a bucket idle this long is full again: forgetting it changes nothing
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < full}


def client_key(request: web.Request, sessions: Container[str] = ()) -> str:
    """Who is asking: a live MCP session, else the remote address and (a digest of) the credentials."""
    session_id = request.headers.get("Mcp-Session-Id", "")
    if session_id and session_id in sessions:
        return f"session:{session_id}"
    auth = hashlib.sha256(request.headers.get("Authorization", "").encode()).hexdigest()[:16]
    return f"addr:{request.remote}:{auth}"


def rate_limit_response(wait: float) -> web.Response:
    body = serialize(ErrorResponse(None, TOO_MANY_REQUESTS, "Too Many Requests: slow down and retry"))
    headers = {"Retry-After": str(max(1, math.ceil(wait)))}
    return web.Response(status=429, text=body, content_type="application/json", headers=headers)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def rate_limit_middleware(limiter: RateLimiter, key: Callable[[web.Request], str] = client_key) -> Middleware:
    """An aiohttp middleware answering 429 (with ``Retry-After``) once a client's bucket is empty."""

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        wait = limiter.take(key(request))
        if wait > 0:
            return rate_limit_response(wait)
        return await handler(request)

    return limit
