"""``NotebookMCP``: the ``mcp`` object of a notebook; everything the ``%mcp`` magics do, from Python.

```python
@mcp.tool                                   # a tool on the notebook's own server (connected as "local")
def add(a: int, b: int) -> int: ...

mcp.connect("everything", ["npx", "-y", "@modelcontextprotocol/server-everything"])
mcp.tools()                                 # local and remote tools in one table
h = mcp.call("everything.echo", message="hi")   # a CallHandle; h.result, h.structured, await h
h = await mcp.call_async("add", a=1, b=2)   # in an async cell
mcp.form("add"); mcp.trace(); mcp.history(); mcp.policy
```

Tool names: ``SERVER.TOOL`` when ``SERVER`` is a connection name (``local`` included), otherwise the whole
name is a tool of the notebook's server (tool names may contain dots). Every connection lives on the one
runtime loop (DESIGN decision 3); the sync methods hop there and back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .apps import app_only, client_extension
from .authorizing import Authorizations
from .browse import Browsing
from .calls.arguments import InvalidArguments
from .calls.asking import Asking
from .calls.connections import Connections, NotebookError
from .calls.handle import CallHandle
from .calls.pipeline import Calls, Target, merge_arguments
from .calls.policy import LOCAL, AuditLog, Policy
from .calls.surface import Surface
from .calls.task_file import default_file
from .calls.tasks import TaskBook
from .calls.tool_list import ToolList
from .config import MCPNotebook
from .recording import NotebookRecording, Recordings

if TYPE_CHECKING:
    from ..engine.runtime import Runtime
    from ..engine.server import Server
    from ..engine.sync import SyncClient
    from .calls.batch import BatchHandle
    from .calls.widgets import ToolForm
    from .check import CheckReport
    from .lint import LintReport

__all__ = ["InvalidArguments", "NotebookError", "NotebookMCP", "Target"]

F = TypeVar("F", bound=Callable[..., Any])


class NotebookMCP(Browsing):
    """The notebook's MCP workbench: a local server, named connections, calls, policy, audit log."""

    def __init__(
        self, shell: Any = None, *, config: MCPNotebook | None = None, runtime: Runtime | None = None
    ):
        self.shell = shell
        self.config = (
            config
            if config is not None
            else MCPNotebook(parent=shell)
            if shell is not None
            else MCPNotebook()
        )
        cfg = self.config
        self.policy = Policy(
            cfg.approval_rules,
            trusted=cfg.trusted_servers,
            auto_allow_read_only=cfg.auto_allow_read_only,
            headless=cfg.is_headless(shell),
            headless_policy=cfg.effective_headless_policy(),
        )
        cfg.observe(self._config_changed, names=["approval_rules", "trusted_servers", "auto_allow_read_only"])
        self.audit = AuditLog(cfg.history_size)
        self._runtime = runtime
        self._server: Server | None = None
        self._connections = Connections(self._open, lambda: self.server)
        self._auth = Authorizations(lambda: self.runtime)
        self._recordings = Recordings()
        # the tasks this notebook's calls started (%mcp tasks); an HTTP server's also on disk, by URL
        self.task_book = TaskBook(default_file(), self._connections.http_url)
        self._lock = threading.RLock()
        #: The call pipeline: ``SERVER.TOOL`` resolved once, decided, built, tracked, launched or shown.
        self.calls = Calls(
            connections=self._connections,
            policy=self.policy,
            audit=self.audit,
            config=cfg,
            surface=Surface(shell),
            task_book=self.task_book,
            runtime=lambda: self.runtime,
            local_tools=self._local_tools,
            headless=lambda: self.headless,
            view=_call_view,
        )
        self._asking = Asking(self.calls.surface, self.audit, lambda: self.headless, self.calls.running_on)
        self._unshown: list[CallHandle] = []  # this cell's calls, to say where they went if not shown
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("post_run_cell", self._say_where_calls_went)
        #: The elicitation / sampling cards waiting for a person (``.answer(...)`` them from code, too).
        self.asking: list[Any] = self._asking.cards

    @property
    def answering(self) -> Asking:
        """What answers servers mid-call: elicitation, sampling (``on_sampling``), log messages."""
        return self._asking

    def _config_changed(self, change: Any) -> None:
        if change["name"] == "approval_rules":
            self.policy.rules = {}
            for pattern, verdict in change["new"].items():
                self.policy.set(pattern, verdict)
        elif change["name"] == "trusted_servers":
            self.policy.trusted = set(change["new"])
        else:
            self.policy.auto_allow_read_only = bool(change["new"])

    # ---- the notebook's own server ------------------------------------------------------------------------
    @property
    def server(self) -> Server:
        """The notebook's server (created on first use, so ``%load_ext`` stays fast)."""
        with self._lock:
            if self._server is None:
                from ..engine.server import Server

                self._server = Server("notebook", title="Jupyter notebook tools")
                self._run_tools_on_kernel_thread(self._server)
            return self._server

    def _run_tools_on_kernel_thread(self, server: Server) -> None:
        """In a kernel (a loop runs in this cell), tools run on the main thread like a cell (DESIGN 6)."""
        import asyncio
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # terminal IPython or a plain script: tools run in worker threads
        from .kernel_thread import KernelThread

        KernelThread.current(self.shell).install(server)

    def serve(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None, **options: Any) -> Any:
        """Serve the notebook's tools over Streamable HTTP (bearer token, Host/Origin checks, console).

        Returns the :class:`~mcp_notebook.notebook.serving.server.ServingHandle` (it shows how to connect);
        serving again replaces the previous server. ``%mcp serve`` calls this.
        """
        from .serving.server import serve_notebook

        return serve_notebook(
            self.server,
            host,
            port,
            token,
            runtime=self.runtime,
            audit=self.audit,
            shell=self.shell,
            headless=self.headless,
            **options,
        )

    @property
    def serving(self) -> Any:
        """The running :class:`~.serving.server.ServingHandle` (``.url``, ``.token``), or None.

        The token is never printed into an output; read it here when a client in this kernel needs it."""
        from .serving.server import active_handle

        return None if self._server is None else active_handle(self._server)

    def stop_serving(self) -> bool:
        """Stop the HTTP server started by :meth:`serve`; True if one was running."""
        from .serving.server import stop_serving

        if self._server is None:
            return False
        return bool(stop_serving(self._server))

    def tool(self, fn: F | None = None, /, **options: Any) -> Any:
        """``@mcp.tool`` or ``@mcp.tool(name=..., annotations=...)``: a tool of the notebook's server.

        ``app=HTML_or_path`` (with ``visibility=``, ``csp=``, ``permissions=``, ``domain=``, ``uri=``) also
        serves an MCP App for it: a ``ui://`` resource any Apps host renders when the tool is called.
        ``app=MyWidget`` (an anywidget class, or an instance) serves that widget as the app, updated from
        the tool's result; ``save_tool=`` / ``send_tool=`` name the tools its ``save_changes()`` / ``send()``
        call (rules: :mod:`.apps.widget_app`)."""
        if "app" not in options:
            return self.server.tool(fn, **options)
        from .apps.serve import add_app_tool

        app = options.pop("app")

        def register(f: F) -> F:
            add_app_tool(self.server, f, app, **options)
            return f

        return register(fn) if fn is not None else register

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        return self.server.resource(uri, **options)

    def prompt(self, fn: F | None = None, /, **options: Any) -> Any:
        return self.server.prompt(fn, **options)

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            from ..engine.runtime import get_runtime

            self._runtime = get_runtime()
        return self._runtime

    @property
    def headless(self) -> bool:
        return self.config.is_headless(self.shell)

    # ---- connections ---------------------------------------------------------------------------------------
    def _open(self, name: str, target: Any, **options: Any) -> SyncClient:
        from ..engine.sync import SyncClient

        return SyncClient(
            target,
            runtime=self.runtime,
            name=name,
            timeout=self.config.default_timeout,
            elicitation_handler=partial(self._asking.elicitation, name),
            sampling_handler=partial(self._asking.sampling, name),
            logging_handler=partial(self._asking.log, name),
            extensions=client_extension() if self.config.apps else None,
            **options,
        )

    def connect(
        self,
        name: str,
        target: str | Sequence[str] | Server,
        *,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        auth: Any = None,
        era: str | None = None,
    ) -> Any:
        """Connect ``target`` under ``name``: a URL (Streamable HTTP), a command list (stdio), or a
        ``Server`` object (in memory: another server defined in this notebook). ``auth`` (URLs only):
        ``True``, a dict of :class:`~mcp_notebook.auth.OAuth` options, or an ``OAuth``; when a person has
        to sign in, this returns an authorization card at once and connects when they have. ``era``: as
        :class:`~mcp_notebook.Client`'s ("auto" by default; "legacy" for the ``initialize`` handshake).

        Connecting a name again replaces the old connection (re-running a cell just works).
        """
        if auth is None or auth is False or not isinstance(target, str):
            return self._connections.connect(name, target, headers=headers, env=env, cwd=cwd, era=era)
        oauth = self._auth.oauth_for(name, target, auth)
        connect = partial(self._connections.connect, name, target, headers=headers, auth=oauth, era=era)
        return (
            self._auth.start(name, target, oauth, connect)
            if self._auth.needs_person(oauth, target)
            else connect()
        )

    def auth(self, name: str) -> Any:
        """Sign in to the ``--auth`` connection ``name`` again (a new token); returns the card."""
        oauth, url = self._auth.forget(name)
        return self.connect(name, url, auth=oauth)

    def logout(self, name: str) -> None:
        """Forget the tokens of the ``--auth`` connection ``name`` and disconnect it."""
        self._auth.forget(name)
        if name in self._connections:
            self._connections.disconnect(name)

    def disconnect(self, name: str) -> None:
        self._connections.disconnect(name)

    def close(self) -> None:
        """Close every connection (``%unload_ext``)."""
        self._connections.close()

    def connections(self) -> list[str]:
        return self._connections.names()

    # ---- tools ---------------------------------------------------------------------------------------------
    def _local_tools(self) -> dict[str, dict[str, Any]]:
        registry = self.server.tools
        return {n: t.definition for n in registry.names() if (t := registry.get(n)) is not None}

    def tools(self, server: str | None = None) -> ToolList:
        """Local and remote tools, one table; each tool's schemas expand in HTML (or ``.schema(name)``).
        In a live notebook each tool's name is a button opening its form under the table
        (``.open(name)`` from code)."""
        servers = [server] if server else self.connections()
        found: list[tuple[str, dict[str, Any]]] = []
        notes: list[str] = []
        for name in servers:
            self.calls.client(name)
            try:
                tools = self.calls.tools(name)
            except Exception as exc:  # one broken server must not hide the others' tools
                if server:
                    raise NotebookError(f"could not list the tools of {name!r}: {exc}") from exc
                notes.append(f"{name}: could not list tools: {type(exc).__name__}: {exc}")
                continue
            found.extend((name, tools[t]) for t in sorted(tools) if not app_only(tools[t]))
        surface = self.calls.surface.here()  # a row's form opens under this cell, whoever clicks
        return ToolList(
            found, notes, open_form=partial(self._tool_form, surface), surface=surface, live=not self.headless
        )

    def tool_def(self, name: str) -> dict[str, Any]:
        """The wire definition (schemas, annotations) of ``SERVER.TOOL`` or a notebook tool."""
        return self.calls.resolve(name).definition

    # ---- calls ---------------------------------------------------------------------------------------------
    def prepare(
        self,
        name: str | Target,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call_timeout: float | None = None,
        **kwargs: Any,
    ) -> CallHandle:
        """Decide and create the handle without running or showing it (``handle.approve()`` runs an ask).
        ``name``: ``SERVER.TOOL`` or a :class:`Target` already resolved (``mcp.calls.resolve(name)``)."""
        return self.calls.prepare(name, merge_arguments(arguments, kwargs), call_timeout)

    def call(
        self,
        name: str | Target,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call_timeout: float | None = None,
        **kwargs: Any,
    ) -> CallHandle:
        """Call a tool; returns a :class:`CallHandle`.

        Allowed calls block until done (a kernel interrupt cancels them) — unless the server asks the
        user something mid-call, when the handle returns at once so the cell can end and the click can
        arrive. A call that needs approval returns at once, awaiting approval (DESIGN decision 4);
        a denied one returns denied with an error result. ``call_timeout`` overrides the default timeout.
        """
        handle = self.prepare(name, arguments, call_timeout=call_timeout, **kwargs)
        if handle.interactive and handle._surface.parent is not None:
            with self._lock:
                self._unshown.append(handle)
        self._show_app(handle)
        return self.calls.run(handle)

    def _say_where_calls_went(self, *_result: Any) -> None:
        """After a cell: its calls that nothing showed (not on the cell's last line) get one line saying
        so, under the cell (issue 19 item 1: such a call used to leave no trace in the notebook)."""
        with self._lock:
            made, self._unshown = self._unshown, []
        hidden = [h for h in made if h._display_id is None]
        if not hidden:
            return
        from .rendering.base import esc, note_html, wrap

        listed = ", ".join(f"{h.label} ({h.state})" for h in hidden[:5])
        more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
        calls = "1 call" if len(hidden) == 1 else f"{len(hidden)} calls"
        text = (
            f"mcp: {calls} in this cell not shown (only a cell's last line shows its value): {listed}{more}. "
            "display(handle) shows one; %mcp history lists them all."
        )
        hidden[0]._surface.publish({"text/html": wrap(note_html(esc(text))), "text/plain": text})

    async def call_async(
        self,
        name: str | Target,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call_timeout: float | None = None,
        **kwargs: Any,
    ) -> CallHandle:
        """``await mcp.call_async(...)`` in an async cell: shows the call live and waits for it, approval
        clicks included (the kernel's loop keeps serving them while the cell awaits)."""
        target = name if isinstance(name, Target) else await self.calls.resolve_async(name)
        handle = self.calls.handle(target, merge_arguments(arguments, kwargs), call_timeout)
        self._show_app(handle)
        return await self.calls.start(handle)

    def map(
        self,
        name: str,
        rows: Any,
        /,
        *,
        concurrency: int = 8,
        on_error: Literal["collect", "raise"] = "collect",
        retries: int = 2,
        call_timeout: float | None = None,
    ) -> BatchHandle:
        """Call a tool once per row of ``rows`` (a DataFrame, a list of dicts, any iterable), ``concurrency``
        at a time, one approval and one progress bar for all; see :mod:`mcp_notebook.notebook.calls.batch`."""
        from .calls.batch import map_rows

        options = {"concurrency": concurrency, "on_error": on_error, "retries": retries}
        return map_rows(self.calls, name, rows, call_timeout=call_timeout, **options)

    async def map_async(
        self,
        name: str,
        rows: Any,
        /,
        *,
        concurrency: int = 8,
        on_error: Literal["collect", "raise"] = "collect",
        retries: int = 2,
        call_timeout: float | None = None,
    ) -> BatchHandle:
        """``await mcp.map_async(...)`` in an async cell: :meth:`map`, shown live, clicks included."""
        from .calls.batch import map_async

        options = {"concurrency": concurrency, "on_error": on_error, "retries": retries}
        return await map_async(self.calls, name, rows, call_timeout=call_timeout, **options)

    def form(self, name: str) -> ToolForm:
        """A form for the tool's inputSchema; submitting calls it and shows the call under the form."""
        return self._tool_form(self.calls.surface.here(), name)

    def _tool_form(self, surface: Surface, name: str) -> ToolForm:
        from .calls.widgets import ToolForm

        tool_def = self.tool_def(name)
        shell = surface.shell
        namespace = (lambda: shell.user_ns) if shell is not None else None  # a DataFrame by name
        return ToolForm(name, tool_def, partial(self._start_quietly, name, surface), surface, namespace)

    def start(
        self,
        name: str | Target,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call_timeout: float | None = None,
        **kwargs: Any,
    ) -> CallHandle:
        """Start a call and return at once, never blocking (approval, if needed, is shown as usual)."""
        handle = self.prepare(name, arguments, call_timeout=call_timeout, **kwargs)
        self._show_app(handle)
        return self.calls.start(handle)

    def _start_quietly(self, name: str, surface: Surface, arguments: dict[str, Any]) -> CallHandle:
        # from a click handler: never block the kernel's main thread; the form renders the handle itself,
        # in the form's cell (the click's own parent is no cell)
        handle = self.calls.prepare(name, dict(arguments), None, surface)
        return self.calls.start(handle, show=False)

    # ---- MCP Apps ------------------------------------------------------------------------------------------
    def _show_app(self, handle: CallHandle) -> None:
        """A tool with an app: its view above the call, fed the input now and the result when it ends."""
        if self.config.apps and not self.policy.headless and handle.tool_def is not None:
            from .apps.host import show_for_call

            show_for_call(self, handle)

    def app(self, name: str, *, preview: bool = False) -> Any:
        """``%mcp app TOOL``: open the tool's app without calling the tool (the app may call it itself).
        ``preview=True``: a tool's app or an HTML file in a preview (``apps/preview.py``)."""
        from .apps.host import open_app

        def opened() -> Any:
            target = self.calls.resolve(name)
            view = open_app(self, target.server, target.definition)
            if view is None:
                raise NotebookError(f"{name} has no app (no _meta.ui.resourceUri naming a ui:// resource)")
            return view

        if preview:
            from .apps.preview import open_preview

            return open_preview(self, name, opened)
        return opened()

    # ---- lint and check ------------------------------------------------------------------------------------
    def lint(self, target: str | None = None, *, long_call: float = 10.0) -> LintReport:
        """Check tools against the spec's rules and common design mistakes (``%mcp lint``): ``TOOL``,
        ``SERVER.TOOL``, ``SERVER`` (its tools and its trace) or everything; each finding says the fix.
        Calls seen in the trace count too (results vs outputSchema; calls over ``long_call`` seconds)."""
        from .lint import lint

        return lint(self.calls, target, long_call=long_call)

    def check(self, name: str, **contract: Any) -> CheckReport:
        """The exercise checker (``%mcp check``): lint, ``required`` parameters, ``annotations``, ``samples``
        (arguments, or ``(arguments, expected)``: a dict the structuredContent must contain, or a test
        function) that must succeed and match the outputSchema, ``errors`` that must come back ``isError``;
        ``timeout`` per call. See :func:`mcp_notebook.notebook.check.check`."""
        from .check import check

        return check(self, name, **contract)

    def record(self, name: str | Path, server: str | None = None) -> NotebookRecording:
        """Record ``server``'s messages (default: the notebook's own tools) into the cassette ``name``
        (``.jsonl`` added when it has no suffix) until ``.stop()``; also ``with mcp.record(...):``. Replay
        it with ``Client(Cassette(path))`` or ``mcp-notebook replay``; see :mod:`.recording`."""
        return self._recordings.start(self.calls.client(server or LOCAL), name, server)

    def stop_recording(self, server: str | None = None) -> list[NotebookRecording]:
        """Stop recording ``server`` (every recording when None)."""
        return self._recordings.stop(server)

    # ---- what servers send: elicitation, sampling, logs ----------------------------------------------------
    def on_sampling(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """Answer ``sampling/createMessage`` with ``fn(params)`` (sync or async; a str is the reply text, a
        dict a full CreateMessageResult). ``None`` goes back to asking a person. Usable as a decorator."""
        self._asking.sampling_callback = fn
        return fn

    def __repr__(self) -> str:
        local = len(self._server.tools) if self._server is not None else 0
        return f"<mcp: {local} notebook tools, connections: {', '.join(self.connections())}>"


def _call_view(handle: CallHandle, parts: dict[str, Any]) -> Any:
    from .calls.widgets import call_view  # ipywidgets only once a call is shown live

    return call_view(handle, parts)
