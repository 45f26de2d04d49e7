"""The in-kernel server: the notebook's tools over Streamable HTTP (DESIGN decisions 6, 11, 12 and 14).

```python
h = serve(server)                    # 127.0.0.1, a free port, a random bearer token; shows how to connect
h.url, h.token, h.mcp_servers_entry  # ready-to-paste client configuration
h.stop()                             # in-flight calls answered or cancelled; the port is free again
```

Security (decision 12) is the HTTP transport's, the same as ``mcp-notebook serve --http``: 127.0.0.1 by
default, a random token (``secrets.token_urlsafe``), Host/Origin validation and every bound of
:class:`~mcp_notebook.transports.http_limits.HTTPLimits` (rate, body size, header/body timeouts, session
expiry and caps). Incoming ``tools/call`` requests pass the server's approval hook (decision 14,
:mod:`mcp_notebook.engine.approval`), here a :class:`~.policy.PolicyApprover`: :class:`IncomingPolicy`
allows read-only and ordinary notebook tools, asks about tools that declare ``destructiveHint`` (in the
server console), with rules per tool and per caller principal; every decision goes to the audit log.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import html
import json
import secrets
import shlex
import threading
from collections.abc import Container
from typing import TYPE_CHECKING, Any

from ...engine.approval import Approver, IncomingCall
from ...transports.http_limits import HTTPLimits, RateLimiter
from ...transports.http_server import StreamableHTTPServer
from ..calls.policy import AuditLog, IncomingPolicy, PolicyApprover
from ..rendering.base import wrap

if TYPE_CHECKING:
    from ...auth.resource import ProtectedResource
    from ...engine.runtime import Runtime
    from ...engine.server import Server
    from ..kernel_thread import KernelThread
    from .console import ServerConsole

__all__ = [
    "Approver",
    "HTTPLimits",
    "IncomingCall",
    "IncomingPolicy",
    "ServingHandle",
    "active_handle",
    "serve",
    "serve_notebook",
    "stop_serving",
]

STOP_TIMEOUT = 15.0
STOP_REASON = "the notebook stopped serving before answering"


# ---- the handle --------------------------------------------------------------------------------------------
_active: dict[int, ServingHandle] = {}  # id(server) -> its live handle (re-serving replaces it)
_active_lock = threading.Lock()
#: The environment variable the shown client configuration reads the token from.
TOKEN_ENV = "MCP_NOTEBOOK_TOKEN"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


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
        approve: Approver | None = None,
    ) -> None:
        self.server, self.http, self.runtime = server, http, runtime
        self.approve = approve  # the hook this handle installed on the server (removed by stop)
        self.url, self.token, self.name = url, token, name
        self.console, self.policy, self.audit, self.kernel = console, policy, audit, kernel
        self.stopped = False
        self.auth: ProtectedResource | None = None  # set when clients sign in with OAuth instead
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
        try:
            await self.http.stop(STOP_REASON)
        finally:
            if isinstance(self.approve, PolicyApprover):
                self.approve.uninstall(self.server)
            elif self.approve is not None and self.server.approve is self.approve:
                self.server.approve = None

    def __enter__(self) -> ServingHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self.stopped else "serving"
        return f"<ServingHandle {state} {self.name!r} at {self.url}>"

    # ---- what a person sees: never the token (issue 11 item 2) ---------------------------------------------
    @property
    def masked_token(self) -> str:
        """The token as shown: none of it (issue 19: its first 4 characters were shown and saved, and every
        character given away makes a guess easier), only its length."""
        return f"•••• ({len(self.token)} characters, hidden)"

    @property
    def shown_entry(self) -> dict[str, Any]:
        """The ``mcpServers`` entry as shown and saved: the token through ``${MCP_NOTEBOOK_TOKEN}``."""
        if self.auth is not None:  # OAuth: the client signs in, nothing to paste
            return {"mcpServers": {self.name: {"type": "http", "url": self.url}}}
        headers = {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"}
        return {"mcpServers": {self.name: {"type": "http", "url": self.url, "headers": headers}}}

    @property
    def shown_inspector_command(self) -> str:
        auth = f'--header "Authorization: Bearer ${TOKEN_ENV}" ' if self.auth is None else ""
        return (
            f"npx -y @modelcontextprotocol/inspector --cli {shlex.quote(self.url)} --transport http "
            f"{auth}--method tools/list"
        )

    @property
    def shown_python_snippet(self) -> str:
        if self.auth is not None:
            return (
                "from mcp_notebook import connect\nfrom mcp_notebook.auth import OAuth\n"
                f"c = connect({self.url!r}, auth=OAuth())  # you sign in\nc.list_tools()"
            )
        return (
            "import os\n"
            "from mcp_notebook import connect\n"
            f"token = os.environ[{TOKEN_ENV!r}]  # in this notebook: mcp.serving.token\n"
            f"c = connect({self.url!r}, headers={{'Authorization': f'Bearer {{token}}'}})\n"
            "c.list_tools()"
        )

    def reveal(self) -> str:
        """The token itself, for you to copy (printed nowhere: a cell's output would save it)."""
        return self.token

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        return {"text/plain": self._text(), "text/html": self._html()}

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        count = getattr(shell, "execution_count", None)
        if count is not None and count == self._shown_in:
            return  # %mcp serve already showed it in this cell: once is enough (issue 11 item 2)
        display(self._repr_mimebundle_(), raw=True)  # type: ignore[no-untyped-call]

    _shown_in: int | None = None

    def _token_note(self) -> str:
        if self.auth is not None:
            return f"OAuth: clients sign in with {self.auth.issuer}; tokens must be issued for this URL"
        return (
            f"token: {self.masked_token}; in this notebook mcp.serving.token, for clients "
            f"${TOKEN_ENV} (send 'Authorization: Bearer <token>')"
        )

    def _text(self) -> str:
        if self.stopped:
            return f"MCP server {self.name!r}: stopped ({self.url})"
        return "\n".join(
            [
                f"MCP server {self.name!r} serving at {self.url}",
                self._token_note(),
                "",
                "Client configuration (mcpServers entry):",
                json.dumps(self.shown_entry, indent=2),
                "",
                "MCP Inspector (CLI):",
                self.shown_inspector_command,
                "",
                "From another notebook:",
                self.shown_python_snippet,
            ]
        )

    def _html(self) -> str:
        from ..rendering.base import code_block

        if self.stopped:
            return f"<div class='mcpnb'>MCP server <b>{html.escape(self.name)}</b>: stopped</div>"
        return wrap(
            f"<div>MCP server <b>{html.escape(self.name)}</b> serving at "
            f"<code>{html.escape(self.url)}</code></div>"
            + (
                f"<div>Token: <code>{html.escape(self.masked_token)}</code>. Set it as "
                f"<code>${TOKEN_ENV}</code> where the client runs: <b>Reveal token</b> (below, in the live "
                "notebook) shows it with a Copy button, or read "
                "<code>mcp.serving.token</code> in this notebook.</div>"
                if self.auth is None
                else f"<div>{html.escape(self._token_note())}</div>"
            )
            + code_block("Client configuration (mcpServers entry)", json.dumps(self.shown_entry, indent=2))
            + code_block("MCP Inspector (CLI)", self.shown_inspector_command)
            + code_block("From another notebook", self.shown_python_snippet)
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
    limits: HTTPLimits | None = None,
    limiter: RateLimiter | None = None,
    tokens: dict[str, str] | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: tuple[str, ...] = (),
    auth: ProtectedResource | None = None,
    **limit_values: Any,
) -> ServingHandle:
    """Serve ``server`` over Streamable HTTP on the runtime loop; re-serving the same server replaces the
    previous one. ``approve``: the approval hook for incoming ``tools/call`` (default: the server's own hook
    if it has one, else ``policy`` decides, ``console`` asks, ``audit`` records). ``limits`` (or single
    :class:`HTTPLimits` fields as keywords: ``rate=None``, ``max_body_size=...``): the HTTP bounds;
    ``limiter``: your own rate limiter. ``tokens``: more bearer tokens, by name (the principal approval rules
    see). ``kernel``: a :class:`KernelThread` to run the server's sync tools on. ``auth``: serve as an OAuth
    protected resource instead of checking a static token (:mod:`mcp_notebook.auth.resource`)."""
    from ...engine.runtime import get_runtime

    previous = active_handle(server)
    if previous is not None:
        previous.stop()
    runtime = runtime or get_runtime()
    token = token or secrets.token_urlsafe(32)
    interactive = console is not None and console.interactive
    policy = policy or IncomingPolicy(headless=not interactive)
    audit = audit if audit is not None else AuditLog()
    installed: Approver | None = None
    if approve is not None:
        server.approve = installed = approve
    else:
        gate = PolicyApprover(
            policy,
            audit,
            ask=console.ask if console is not None and interactive else None,
            on_denied=console.denied if console is not None else None,
        )
        installed = gate if gate.install(server) else None
    if kernel is not None:
        kernel.install(server)
    http = StreamableHTTPServer(
        server,
        token=token if auth is None else None,
        tokens=tokens,
        middlewares=[auth.middleware] if auth is not None else [],
        identify=auth.identity if auth is not None else None,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        limits=dataclasses.replace(limits or HTTPLimits(), **limit_values),
        limiter=limiter,
    )
    if auth is not None:
        auth.body_timeout = http.limits.body_timeout  # the tool-scope check reads bodies too
    url = runtime.run(http.start(host, port), timeout=STOP_TIMEOUT)
    if auth is not None and not auth.resource:
        auth.bind(url)
    handle = ServingHandle(
        server,
        http,
        runtime,
        url,
        token if auth is None else "",
        name=name or server.name,
        console=console,
        policy=policy,
        audit=audit,
        kernel=kernel,
        approve=installed,
    )
    handle.auth = auth
    with _active_lock:
        _active[id(server)] = handle
    if console is not None:
        console.attach(server, kernel, url, policy)
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
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    *,
    runtime: Runtime | None = None,
    audit: AuditLog | None = None,
    shell: Any = None,
    headless: bool = True,
    show: bool = True,
    **options: Any,
) -> ServingHandle | None:
    """What ``%mcp serve`` does with the notebook's server: run tools on the kernel's main thread, serve
    over HTTP, show the console and how to connect. While a notebook is loaded by ``mcp-notebook serve
    NOTEBOOK.ipynb`` it does nothing (the command line serves it)."""
    from ..config import loading_notebook
    from ..kernel_thread import KernelThread
    from .console import ServerConsole, show_console

    if loading_notebook():
        print("%mcp serve: ignored while mcp-notebook serves this notebook from the command line")
        return None
    kernel: KernelThread | None = options.pop("kernel", None)
    if kernel is None:
        with contextlib.suppress(RuntimeError):  # no running loop (terminal IPython): worker threads
            kernel = KernelThread.current(shell)
    console = ServerConsole(interactive=not headless)
    policy = options.pop("policy", None) or IncomingPolicy(headless=headless)
    handle = serve(
        server,
        host,
        port,
        token,
        runtime=runtime,
        policy=policy,
        audit=audit,
        console=console,
        kernel=kernel,
        **options,
    )
    if show:
        intro: dict[str, Any] = handle._repr_mimebundle_()
        if not headless and handle.auth is None:  # Reveal / Copy: the token reaches the page only on request
            from ..calls.widgets import TokenView

            intro[WIDGET_MIME] = TokenView(handle).widget._repr_mimebundle_()[WIDGET_MIME]
        show_console(console, shell, intro)
        handle._shown_in = getattr(shell, "execution_count", None)
    return handle
