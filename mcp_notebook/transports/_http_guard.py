"""Who may talk to the Streamable HTTP server: Host, Origin and bearer-token checks (DESIGN decision 12).

DNS rebinding defence (transports#security-warning): ``Host`` must name an allowed host with our port, and
an ``Origin``, when sent, an allowed host (any port) or an exact allowed origin; otherwise 403. With tokens,
``Authorization: Bearer <token>`` is required (401 with ``WWW-Authenticate``). A token may have a name: the
name (never the secret) is the credential the connection's :class:`~.base.Peer` carries, which approval
rules match. Secrets are compared in constant time.
"""

from __future__ import annotations

import functools
import hmac
import math
import time
from collections.abc import Iterable, Mapping

from aiohttp import web
from yarl import URL

from ..protocol.errors import INVALID_REQUEST
from ..protocol.jsonrpc import ErrorResponse, serialize
from .base import CREDENTIAL_NAME

TOO_MANY_REQUESTS = -32029  # as in http_limits: the JSON-RPC code of a 429 body

__all__ = ["DEFAULT_ALLOWED_HOSTS", "Guard", "accepts", "error_response"]

DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost", "::1")


def error_response(
    status: int, message: str, code: int = INVALID_REQUEST, headers: dict[str, str] | None = None
) -> web.Response:
    """An HTTP error whose body is a JSON-RPC error without id (transports: the body MAY be one)."""
    body = serialize(ErrorResponse(None, code, message))
    return web.Response(status=status, text=body, content_type="application/json", headers=headers)


def bare(host: str) -> str:
    return host.strip().lower().removeprefix("[").removesuffix("]")


class Guard:
    """The checks every request passes before anything else looks at it."""

    def __init__(
        self,
        *,
        token: str | None,
        tokens: Mapping[str, str] | None,
        allowed_hosts: Iterable[str] | None,
        allowed_origins: Iterable[str],
        failure_rate: float = 1.0,
        failure_burst: int = 20,
    ) -> None:
        named = dict(tokens or {})
        for name in named:
            if not CREDENTIAL_NAME.fullmatch(name):
                raise ValueError(f"a token's name is a letter then letters, digits, '_' or '-', not {name!r}")
        # secret -> name (None: the unnamed token, whose callers' principal is their transport)
        self._secrets: list[tuple[bytes, str | None]] = [(s.encode(), n) for n, s in named.items()]
        if token is not None:
            self._secrets.append((token.encode(), None))
        # Wrong-token guesses, per address: a bucket of ``failure_burst`` that refills ``failure_rate`` a
        # second. Empty, the address gets 429 (Retry-After) before its token is even compared, so a guess
        # that happens to be right is not told apart from a wrong one meanwhile.
        self.failure_rate, self.failure_burst = failure_rate, failure_burst
        self._failures: dict[str, tuple[float, float]] = {}  # address -> (guesses left, when)
        hosts = DEFAULT_ALLOWED_HOSTS if allowed_hosts is None else tuple(allowed_hosts)
        self.allowed_hosts = {bare(h) for h in hosts}  # add through allow_host (its verdicts are cached)
        self._allowed_origins = {o.lower().rstrip("/") for o in allowed_origins}
        self._port = 0
        # Host header value -> allowed: a client sends the same Host with every request. Cleared when the
        # port or the allowed hosts change; bounded, so distinct made-up values cannot grow it.
        self._host_verdicts: dict[str, bool] = {}

    @property
    def port(self) -> int:
        """The port the server listens on (0 before it starts): ``Host`` must name it."""
        return self._port

    @port.setter
    def port(self, port: int) -> None:
        self._port = port
        self._host_verdicts.clear()

    def allow_host(self, name: str) -> None:
        """Accept ``name`` in ``Host`` (with our port) and ``Origin`` from now on."""
        self.allowed_hosts.add(bare(name))
        self._host_verdicts.clear()

    def check(self, request: web.BaseRequest) -> web.Response | None:
        """None when the request may proceed (its credential's name is then ``credential(request)``)."""
        if "*" not in self.allowed_hosts:
            host = request.headers.get("Host", "")
            allowed = self._host_verdicts.get(host)
            if allowed is None:
                if len(self._host_verdicts) >= 256:
                    self._host_verdicts.clear()
                allowed = self._host_verdicts[host] = self._host_allowed(host)
            if not allowed:
                return error_response(403, "Forbidden: Host header not allowed")
        origin = request.headers.get("Origin")
        if origin is not None and not self._origin_allowed(origin):
            return error_response(403, "Forbidden: Origin not allowed")
        if not self._secrets:
            return None
        address = request.remote or ""
        left = self._guesses_left(address)
        if left < 1.0:
            wait = (1.0 - left) / self.failure_rate
            return error_response(
                429,
                "Too Many Requests: too many wrong tokens from this address; retry later",
                code=TOO_MANY_REQUESTS,
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )
        if self._identify(request) is None:
            self._failures[address] = (left - 1.0, time.monotonic())
            if len(self._failures) > 10_000:  # forget addresses whose bucket is full again
                full = self.failure_burst / self.failure_rate
                now = time.monotonic()
                self._failures = {k: v for k, v in self._failures.items() if now - v[1] < full}
            given = request.headers.get("Authorization", "").partition(" ")[2]
            challenge = 'Bearer error="invalid_token"' if given else "Bearer"
            return error_response(
                401,
                "Unauthorized: a valid bearer token is required",
                headers={"WWW-Authenticate": challenge},
            )
        return None

    def identity(self, request: web.BaseRequest) -> str | None:
        """Who the token says the caller is: ``"token:NAME"``, ``"token"`` (the unnamed token), or None
        when no token is required (the caller is then its connection)."""
        found = self._identify(request)
        if found is None:
            return None
        return f"token:{found[0]}" if found[0] is not None else "token"

    def _guesses_left(self, address: str) -> float:
        left, when = self._failures.get(address, (float(self.failure_burst), 0.0))
        return min(float(self.failure_burst), left + (time.monotonic() - when) * self.failure_rate)

    def credential(self, request: web.BaseRequest) -> str | None:
        """The name of the token ``request`` carries (None: the unnamed token, or none is required)."""
        found = self._identify(request)
        return found[0] if found is not None else None

    def _identify(self, request: web.BaseRequest) -> tuple[str | None] | None:
        if not self._secrets:
            return None  # no token is required: nobody is identified by one
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        return self._match(given.strip().encode()) if scheme.lower() == "bearer" else None

    def _match(self, given: bytes) -> tuple[str | None] | None:
        match: tuple[str | None] | None = None
        for secret, name in self._secrets:  # every secret compared: the time says nothing about which
            if hmac.compare_digest(given, secret) and match is None:
                match = (name,)
        return match

    def _host_allowed(self, host: str) -> bool:
        if host.strip().lower() in self.allowed_hosts:
            return True  # named with its port (or none) exactly: a load balancer's public name
        if host.startswith("["):
            name, _, rest = host[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            name, _, port = host.partition(":")
        if bare(name) not in self.allowed_hosts:
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
            url.scheme in ("http", "https") and url.host is not None and bare(url.host) in self.allowed_hosts
        )


def accepts(request: web.BaseRequest, *types: str) -> bool:
    """Whether the request's ``Accept`` header takes every one of ``types`` (``*/*`` and ``type/*`` count)."""
    return _accepted(request.headers.get("Accept", ""), types)


@functools.lru_cache(maxsize=64)  # a client sends the same Accept with every request
def _accepted(accept: str, types: tuple[str, ...]) -> bool:
    ranges = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    if "*/*" in ranges:
        return True
    return all(t in ranges or f"{t.split('/')[0]}/*" in ranges for t in types)
