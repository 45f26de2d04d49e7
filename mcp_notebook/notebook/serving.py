"""The in-kernel server: the notebook's tools over Streamable HTTP (DESIGN decisions 6, 11 and 12).

```python
h = serve(server)                    # 127.0.0.1, a free port, a random bearer token; shows how to connect
h.url, h.token, h.mcp_servers_entry  # ready-to-paste client configuration
h.stop()                             # in-flight calls answered or cancelled; the port is free again
```

Security (decision 12): 127.0.0.1 by default, a random token (``secrets.token_urlsafe``), Host/Origin
validation, a body size cap, unguessable session ids (all in :mod:`~mcp_notebook.transports.http_server`),
and a per-client token-bucket rate limit (429). Incoming ``tools/call`` requests from outside clients pass
an approval gate first (decision 11): :class:`IncomingPolicy` allows read-only and ordinary notebook tools,
asks about tools that declare ``destructiveHint`` (in the server console), with per-tool and per-client
rules; every decision goes to the audit log. The gate sits between the HTTP session and the engine, so
pings and lists never wait for a click, and a denied call is answered with a clean ``isError`` result.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import html
import json
import math
import secrets
import shlex
import threading
import time
from collections.abc import Awaitable, Callable, Container
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from ..protocol.jsonrpc import ErrorResponse, serialize
from ..transports.http_server import StreamableHTTPServer
from .policy import AuditLog
from .serving_gate import Approver, Gate, IncomingCall, IncomingPolicy, PolicyApprover

if TYPE_CHECKING:
    from ..engine.runtime import Runtime
    from ..engine.server import Server
    from .console import ServerConsole
    from .kernel_thread import KernelThread

__all__ = [
    "Approver",
    "IncomingCall",
    "IncomingPolicy",
    "RateLimiter",
    "ServingHandle",
    "active_handle",
    "rate_limit_middleware",
    "serve",
    "serve_notebook",
    "stop_serving",
]

DEFAULT_RATE = 100.0  # requests per second per client, sustained ...
DEFAULT_BURST = 200  # ... and in a burst
TOO_MANY_REQUESTS = -32029  # JSON-RPC error code in the 429 body (implementation-defined range)
STOP_TIMEOUT = 15.0


# ---- rate limiting -----------------------------------------------------------------------------------------
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


# ---- the handle --------------------------------------------------------------------------------------------
_active: dict[int, ServingHandle] = {}  # id(server) -> its live handle (re-serving replaces it)
_active_lock = threading.Lock()


class ServingHandle:
    """A running in-kernel server: how to connect (it renders that), and :meth:`stop`."""

    def __init__(
        self,
        server: Server,
        http: StreamableHTTPServer,
        runtime: Runtime,
        url: str,
        token: str,
        *,
        name: str,
        console: ServerConsole | None = None,
        policy: IncomingPolicy | None = None,
        audit: AuditLog | None = None,
        kernel: KernelThread | None = None,
    ) -> None:
        self.server, self.http, self.runtime = server, http, runtime
        self.url, self.token, self.name = url, token, name
        self.console, self.policy, self.audit, self.kernel = console, policy, audit, kernel
        self.stopped = False
        self._lock = threading.Lock()
        atexit.register(self.stop)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def mcp_servers_entry(self) -> dict[str, Any]:
        """``{"mcpServers": {...}}`` for hosts speaking Streamable HTTP (Claude Code, Cursor, VS Code...)."""
        return {"mcpServers": {self.name: {"type": "http", "url": self.url, "headers": self.headers}}}

    @property
    def inspector_command(self) -> str:
        auth = shlex.quote(f"Authorization: Bearer {self.token}")
        return (
            f"npx -y @modelcontextprotocol/inspector --cli {shlex.quote(self.url)} --transport http "
            f"--header {auth} --method tools/list"
        )

    @property
    def python_snippet(self) -> str:
        return (
            "from mcp_notebook import connect\n"
            f"c = connect({self.url!r}, headers={self.headers!r})\n"
            "c.list_tools()"
        )

    def stop(self) -> None:
        """End every session (unanswered requests get an error), stop listening, free the port. Idempotent."""
        with self._lock:
            if self.stopped:
                return
            self.stopped = True
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        with _active_lock:
            if _active.get(id(self.server)) is self:
                del _active[id(self.server)]
        try:
            self.runtime.run(self._shutdown(), timeout=STOP_TIMEOUT)
        finally:
            if self.console is not None:
                self.console.set_status(f"stopped; {self.url} is closed")
                if self.server.elicitation_fallback == self.console.elicit:
                    self.server.elicitation_fallback = None

    async def _shutdown(self) -> None:
        gate = self.http.server
        if isinstance(gate, Gate):
            await gate.abort_in_flight("the notebook stopped serving before answering")
        await self.http.stop()

    def __enter__(self) -> ServingHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self.stopped else "serving"
        return f"<ServingHandle {state} {self.name!r} at {self.url}>"

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        return {"text/plain": self._text(), "text/html": self._html()}

    def _text(self) -> str:
        if self.stopped:
            return f"MCP server {self.name!r}: stopped ({self.url})"
        return "\n".join(
            [
                f"MCP server {self.name!r} serving at {self.url}",
                f"token: {self.token}  (send 'Authorization: Bearer <token>')",
                "",
                "Client configuration (mcpServers entry):",
                json.dumps(self.mcp_servers_entry, indent=2),
                "",
                "MCP Inspector (CLI):",
                self.inspector_command,
                "",
                "From another notebook:",
                self.python_snippet,
            ]
        )

    def _html(self) -> str:
        if self.stopped:
            return f"<div class='mcpnb'>MCP server <b>{html.escape(self.name)}</b>: stopped</div>"

        def block(title: str, text: str) -> str:
            pre = f"<pre style='margin:2px 0 8px'>{html.escape(text)}</pre>"
            return f"<div><b>{html.escape(title)}</b></div>{pre}"

        return (
            "<div class='mcpnb'>"
            f"<div>MCP server <b>{html.escape(self.name)}</b> serving at "
            f"<code>{html.escape(self.url)}</code></div>"
            f"<div>Token: <code>{html.escape(self.token)}</code> "
            "(as <code>Authorization: Bearer …</code>)</div>"
            + block("Client configuration (mcpServers entry)", json.dumps(self.mcp_servers_entry, indent=2))
            + block("MCP Inspector (CLI)", self.inspector_command)
            + block("From another notebook", self.python_snippet)
            + "</div>"
        )


def active_handle(server: Server) -> ServingHandle | None:
    with _active_lock:
        return _active.get(id(server))


def serve(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    *,
    name: str | None = None,
    runtime: Runtime | None = None,
    approve: Approver | None = None,
    policy: IncomingPolicy | None = None,
    audit: AuditLog | None = None,
    console: ServerConsole | None = None,
    kernel: KernelThread | None = None,
    rate: float | None = DEFAULT_RATE,
    burst: int = DEFAULT_BURST,
    limiter: RateLimiter | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: tuple[str, ...] = (),
    max_body_size: int = 4 * 1024 * 1024,
) -> ServingHandle:
    """Serve ``server`` over Streamable HTTP on the runtime loop; re-serving the same server replaces the
    previous one. ``approve``: the gate for incoming ``tools/call`` (default: ``policy`` decides, ``console``
    asks, ``audit`` records). ``rate`` requests a second per client (``burst`` at once; ``None``: no limit;
    ``limiter``: your own). ``kernel``: a :class:`KernelThread` to run the server's sync tools on."""
    from ..engine.runtime import get_runtime

    previous = active_handle(server)
    if previous is not None:
        previous.stop()
    runtime = runtime or get_runtime()
    token = token or secrets.token_urlsafe(32)
    interactive = console is not None and console.interactive
    policy = policy or IncomingPolicy(headless=not interactive)
    audit = audit if audit is not None else AuditLog()
    if approve is None:
        approve = PolicyApprover(
            policy,
            audit,
            ask=console.ask if console is not None and interactive else None,
            on_denied=console.denied if console is not None else None,
        )
    if kernel is not None:
        kernel.install(server)
    limiter = limiter or (RateLimiter(rate, burst) if rate else None)
    middlewares: list[Middleware] = []
    if limiter is not None:  # keyed by MCP session where there is one (looked up at request time)
        middlewares.append(rate_limit_middleware(limiter, lambda request: client_key(request, http.sessions)))
    http = StreamableHTTPServer(
        Gate(server, approve),
        token=token,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        max_body_size=max_body_size,
        middlewares=middlewares,
    )
    url = runtime.run(http.start(host, port), timeout=STOP_TIMEOUT)
    handle = ServingHandle(
        server,
        http,
        runtime,
        url,
        token,
        name=name or server.name,
        console=console,
        policy=policy,
        audit=audit,
        kernel=kernel,
    )
    with _active_lock:
        _active[id(server)] = handle
    if console is not None:
        console.attach(server, kernel, handle)
        # A served tool's ctx.elicit() reaches the notebook's user when the calling client cannot answer.
        server.elicitation_fallback = console.elicit
    return handle


def stop_serving(server: Server) -> bool:
    """Stop ``server``'s in-kernel HTTP server; False if it was not serving."""
    handle = active_handle(server)
    if handle is None:
        return False
    handle.stop()
    return True


def serve_notebook(
    api: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    *,
    show: bool = True,
    **options: Any,
) -> ServingHandle | None:
    """What ``%mcp serve`` does with the notebook's ``mcp`` object (a ``NotebookMCP``): run tools on the
    kernel's main thread, serve over HTTP, show the console and how to connect. While a notebook is loaded
    by ``mcp-notebook serve NOTEBOOK.ipynb`` it does nothing (the command line serves it)."""
    from .console import ServerConsole, show_console
    from .kernel_thread import KernelThread
    from .notebook_file import loading_notebook

    if loading_notebook():
        print("%mcp serve: ignored while mcp-notebook serves this notebook from the command line")
        return None
    shell = getattr(api, "shell", None)
    headless = bool(getattr(api, "headless", True))
    kernel: KernelThread | None = options.pop("kernel", None)
    if kernel is None:
        with contextlib.suppress(RuntimeError):  # no running loop (terminal IPython): worker threads
            kernel = KernelThread.current(shell)
    console = ServerConsole(interactive=not headless)
    policy = options.pop("policy", None) or IncomingPolicy(headless=headless)
    handle = serve(
        api.server,
        host,
        port,
        token,
        runtime=api.runtime,
        policy=policy,
        audit=api.audit,
        console=console,
        kernel=kernel,
        **options,
    )
    if show:
        show_console(console, shell, handle)
    return handle
