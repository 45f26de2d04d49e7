"""The limits of the Streamable HTTP server, in one object (DESIGN decisions 12, 14 and 20).

``mcp-notebook serve --http`` and the in-kernel server (``%mcp serve``) both build a
:class:`~.http_server.StreamableHTTPServer` with an :class:`HTTPLimits`, so both get the same defences:

============================  ==========  ==================================================================
limit                         default     what happens to the one client that exceeds it
============================  ==========  ==================================================================
``concurrency``               64          a client's requests in flight that are never rate limited
``address_concurrency``       256         the same for everything from one address, all clients together
``rate`` / ``burst``          100/s, 200  a request beyond either allowance spends a token of its client's
                                          (or its address's) bucket; none left: 429 with ``Retry-After``
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

Why the rate limit counts requests in flight (DESIGN 20: limits stop abuse, not a well-behaved client).
An HTTP/1.1 connection carries one request at a time, so a client that waits for its answers (one caller in
a loop, ``mcp.map`` at concurrency 8-16) is bounded by the server's own speed, whatever that is on the
machine: it is never charged. A flood is many requests at once: past ``concurrency`` in flight for one
client (or ``address_concurrency`` for one address: minting sessions or tokens does not escape it), every
request spends a token, and 429 comes once ``burst`` is spent faster than ``rate`` refills it. An open stream
(a GET stream, a 2026 ``subscriptions/listen``) is in flight while it lasts: 16 stateless clients each holding
a listen stream while calling make 32, half the default allowance.

A "client" is its MCP session when it names a live one, else its bearer credential (a digest of the
``Authorization`` header), else its address: stateless 2026-07-28 clients holding their own tokens are not
pooled by address. For the session cap a client is the credential it authenticated with and its address.
Abandoned sessions therefore never lock out a newcomer: they are the idlest, and go first.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Awaitable, Callable, Container
from dataclasses import dataclass
from typing import TypeVar

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from ..protocol.jsonrpc import ErrorResponse, serialize

__all__ = [
    "TOO_MANY_REQUESTS",
    "HTTPLimits",
    "RateLimiter",
    "client_key",
    "rate_limit_middleware",
    "rate_limit_response",
    "within_limit",
]

TOO_MANY_REQUESTS = -32029  # JSON-RPC error code in the 429 body (implementation-defined range)


@dataclass(frozen=True)
class HTTPLimits:
    """Every bound the HTTP server enforces; see the module's table. ``rate=None`` turns rate limiting off."""

    rate: float | None = 100.0
    burst: int = 200
    concurrency: int = 64
    address_concurrency: int = 256
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
        if self.concurrency < 0 or self.address_concurrency < 0:
            raise ValueError("HTTPLimits.concurrency and address_concurrency must be >= 0")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(cls.__dataclass_fields__)

    def limiter(self) -> RateLimiter | None:
        """The rate limiter these limits describe (None when ``rate`` is None)."""
        if self.rate is None:
            return None
        return RateLimiter(
            self.rate, self.burst, concurrency=self.concurrency, address_concurrency=self.address_concurrency
        )


class RateLimiter:
    """A token bucket per client key: ``rate`` tokens a second, at most ``burst`` saved up.

    :meth:`take` spends a token unconditionally. :meth:`admit` / :meth:`release` bracket a request: it is
    free while its client has fewer than ``concurrency`` requests in flight and its address fewer than
    ``address_concurrency`` (0, the default for both: every request is charged, as :meth:`take`)."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        concurrency: int = 0,
        address_concurrency: int = 0,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate, self.burst, self.clock, self.max_keys = rate, float(burst), clock, max_keys
        self.concurrency, self.address_concurrency = concurrency, address_concurrency
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last time)
        self._in_flight: dict[str, int] = {}  # key (client or address) -> requests admitted, not released

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

    def admit(self, key: str, address: str) -> float:
        """A request of client ``key`` from ``address`` begins: 0.0 if it may proceed (then :meth:`release`
        it when it ends), else the seconds until its bucket has a token (the request is refused)."""
        in_flight, address_key = self._in_flight, "from:" + address
        client_count, address_count = in_flight.get(key, 0), in_flight.get(address_key, 0)
        over_client = client_count >= self.concurrency
        if over_client or address_count >= self.address_concurrency:
            wait = self.take(key if over_client else address_key)
            if wait > 0:
                return wait
        in_flight[key] = client_count + 1
        in_flight[address_key] = address_count + 1
        return 0.0

    def release(self, key: str, address: str) -> None:
        _decrement(self._in_flight, key)
        _decrement(self._in_flight, "from:" + address)

    def in_flight(self, key: str) -> int:
        """Requests of client ``key`` in flight (``from:ADDRESS``: of everyone at that address)."""
        return self._in_flight.get(key, 0)

    def _prune(self, now: float) -> None:
        if len(self._buckets) <= self.max_keys:
            return
        full = self.burst / self.rate  # a bucket idle this long is full again: forgetting it changes nothing
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < full}


def _decrement(counts: dict[str, int], name: str) -> None:
    left = counts.get(name, 0) - 1
    if left > 0:
        counts[name] = left
    else:
        counts.pop(name, None)


def client_key(request: web.BaseRequest, sessions: Container[str] = ()) -> str:
    """Who is asking: a live MCP session, else (a digest of) the bearer credential, else the address.

    Stateless (2026-07-28) clients have no session: with a token each is its own client, not one of everyone
    at its address. A made-up token buys nothing: the address's own allowance still bounds them all."""
    session_id = request.headers.get("Mcp-Session-Id", "")
    if session_id and session_id in sessions:
        return f"session:{session_id}"
    authorization = request.headers.get("Authorization", "")
    if authorization:
        return "credential:" + hashlib.sha256(authorization.encode()).hexdigest()[:24]
    return f"address:{request.remote}"


def rate_limit_response(wait: float) -> web.Response:
    body = serialize(ErrorResponse(None, TOO_MANY_REQUESTS, "Too Many Requests: slow down and retry"))
    headers = {"Retry-After": str(max(1, math.ceil(wait)))}
    return web.Response(status=429, text=body, content_type="application/json", headers=headers)


R = TypeVar("R", bound=web.BaseRequest)  # a request: aiohttp's low-level one, or an Application's


async def within_limit(
    limiter: RateLimiter,
    key: Callable[[R], str],
    request: R,
    handler: Callable[[R], Awaitable[web.StreamResponse]],
) -> web.StreamResponse:
    """``handler(request)``, or 429 (with ``Retry-After``) once the client, past its allowance of requests
    in flight, has an empty bucket. A request is in flight until its response (a stream too) ends."""
    client, address = key(request), str(request.remote)
    wait = limiter.admit(client, address)
    if wait > 0:
        return rate_limit_response(wait)
    try:
        return await handler(request)
    finally:
        limiter.release(client, address)


def rate_limit_middleware(
    limiter: RateLimiter, key: Callable[[web.BaseRequest], str] = client_key
) -> Middleware:
    """:func:`within_limit` as an aiohttp middleware."""

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        return await within_limit(limiter, key, request, handler)

    return limit
