"""The MCP server: register tools, resources and prompts from Python, serve them over any transport.

```python
server = Server("demo")

@server.tool
def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b

await server.serve(transport)      # or server.run_stdio(), or Client(server) in memory
```
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import logging
import secrets
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar, overload

from .._version import __version__
from ..protocol import tasks as task_wire
from ..protocol.modern import state_key as _state_key
from ..tools.annotations import check_annotations, check_icons
from ..tools.prompts import PromptDef, make_prompt
from ..tools.registry import ToolRegistry
from ..tools.resources import ResourceDef, TemplateDef
from ..tools.tool import Tool, make_tool
from ..transports.base import Peer, Transport
from .approval import Approver
from .sealed_state import StateSealer
from .server_session import ElicitationFallback, PrincipalOf, RunAsync, RunSync, ServerSession
from .task_store import TaskStore, open_task_store
from .tasks import TaskManager
from .workers import to_worker

__all__ = ["Server"]

log = logging.getLogger("mcp_notebook.engine.server")

F = TypeVar("F", bound=Callable[..., Any])
Listener = Callable[[str, dict[str, Any]], Any]

_VERSION = __version__


class Server:
    """An MCP server. Thread-safe to mutate from any thread: connected clients hear about changes."""

    def __init__(
        self,
        name: str = "mcp-notebook",
        version: str = _VERSION,
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        page_size: int = 100,
        run_sync: RunSync | None = None,
        run_async: RunAsync | None = None,
        trace_size: int = 2000,
        cache_ttl_ms: int = 60_000,
        cache_scope: Literal["public", "private"] = "public",
        read_cache_ttl_ms: int = 0,
        read_cache_scope: Literal["public", "private"] = "private",
        approve: Approver | None = None,
        state_key: str | bytes | None = None,
        mask_errors: bool = False,
        task_store: TaskStore | str | None = None,
    ) -> None:
        info: dict[str, Any] = {"name": name, "version": version}
        extra = {"title": title, "description": description, "websiteUrl": website_url, "icons": icons}
        info.update({k: v for k, v in extra.items() if v is not None})
        self.info = info
        self.extensions: dict[str, Any] = {}  # declared under capabilities.extensions (SEP-2133)
        self.instructions = instructions
        self.page_size = page_size
        # Where tool code runs: sync functions in a worker thread and coroutines on the serving loop by
        # default; the notebook points both at the kernel's main thread (DESIGN decision 6).
        self.run_sync: RunSync = run_sync or to_worker
        self.run_async: RunAsync | None = run_async
        # Who answers a tool's elicitation when the calling client cannot: (params, clientInfo) ->
        # ElicitResult. None: the tool gets an error. The notebook asks its own user, in the server console.
        self.elicitation_fallback: ElicitationFallback | None = None
        # Awaited before each tools/call runs, with the caller's identity (engine/approval.py; DESIGN 14).
        # None: every call runs. The notebook's serving installs its policy, console and audit log here.
        self.approve: Approver | None = approve
        # An exception a tool raises reaches the caller as "Error executing tool X: Type: message" unless
        # masked (then only "an internal error occurred"; the server log keeps it). ToolError always passes.
        self.mask_errors = mask_errors
        self.trace_size = trace_size
        # 2026-07-28 caching hints (server/utilities/caching) of server/discover and the lists: fresh for a
        # minute (a client listening for list_changed hears of a re-run cell at once; one that does not
        # lists again within the minute), the same for every caller, hence "public". Resource contents may
        # differ per user and change any time: stale at once and "private" unless declared otherwise.
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.read_cache_ttl_ms = read_cache_ttl_ms
        self.read_cache_scope = read_cache_scope
        # Seals MRTR requestState. A fresh key per process unless ``state_key`` is given: workers behind one
        # load balancer share it, and a restart with it keeps live states valid (DESIGN decision 18).
        self.state_sealer = StateSealer(_state_key(state_key) if state_key else secrets.token_bytes(32))
        # Tasks (both eras): in memory unless a store is given: a TaskStore, a SQLite file's path or a
        # ``redis://HOST:PORT/DB`` URL (engine/task_store.py's open_task_store; DESIGN decisions 18, 21).
        store = open_task_store(task_store) if isinstance(task_store, str) else task_store
        self.tasks = TaskManager(store)
        self.tasks.server = self
        self.tasks_enabled = True
        # (session, request) -> the principal a task is bound to; None: no authorization context.
        self.principal_of: PrincipalOf | None = None
        # Open subscriptions/listen streams (2026-07-28), per principal and in all: past either, a new
        # listen is refused (-32600) and the ones open go on.
        self.max_listens_per_principal = 16
        self.max_listens = 256
        self.tools = ToolRegistry()
        # tool name -> (its definition, a copy of its inputSchema): what tool_input_schema hands out
        self._input_schemas: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.tools.on_change(lambda: self._broadcast("notifications/tools/list_changed"))
        self._resources: dict[str, ResourceDef] = {}
        self._templates: dict[str, TemplateDef] = {}
        self._prompts: dict[str, PromptDef] = {}
        self._completer: Callable[..., Any] | None = None
        self.sessions: set[ServerSession] = set()
        self._listeners: list[Listener] = []
        # capabilities() as a one-request session reads it, and what it was made from (tasks_enabled, a copy
        # of extensions): made again when either changes, not for every 2026-07-28 POST
        self._request_capabilities: tuple[bool, dict[str, Any], dict[str, Any]] | None = None

    @property
    def name(self) -> str:
        return str(self.info["name"])

    def capabilities(self) -> dict[str, Any]:
        # Everything is declared up front: a notebook adds tools, resources and prompts after clients connect.
        return {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "logging": {},
            "completions": {},
            # 2025-11-25 tasks: tools/call may be task-augmented (only tools whose taskSupport allows it)
            **(
                {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
                if self.tasks_enabled
                else {}
            ),
            # extensions this server's own content uses (e.g. MCP Apps: io.modelcontextprotocol/ui)
            **({"extensions": dict(self.extensions)} if self.extensions else {}),
        }

    def request_capabilities(self) -> dict[str, Any]:
        """:meth:`capabilities` for a one-request session (a 2026-07-28 POST), which only reads it (does the
        server have what a method needs): the same dict while ``tasks_enabled`` and ``extensions`` are the
        same (compared by value: an edit inside ``extensions`` counts), so never to be modified. A
        subclass's or an instance's own ``capabilities()`` (``server.capabilities = ...``) is called each
        time."""
        known = self._request_capabilities
        if type(self).capabilities is not Server.capabilities or "capabilities" in self.__dict__:
            return self.capabilities()
        if known is not None and known[0] is self.tasks_enabled and known[1] == self.extensions:
            return known[2]
        capabilities = self.capabilities()
        self._request_capabilities = (self.tasks_enabled, copy.deepcopy(self.extensions), capabilities)
        return capabilities

    def modern_capabilities(self) -> dict[str, Any]:
        """What ``server/discover`` declares (2026-07-28): no ``tasks`` slot; the Tasks extension instead."""
        caps = {key: value for key, value in self.capabilities().items() if key != "tasks"}
        if self.tasks_enabled:
            caps["extensions"] = {**caps.get("extensions", {}), task_wire.EXTENSION: {}}
        return caps

    # ---- tools -------------------------------------------------------------------------------------------
    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | bool | None = True,
        execution: dict[str, Any] | None = None,
        task: Literal["forbidden", "optional", "required"] | None = None,
        task_start: Literal["call", "explicit"] = "call",
    ) -> Callable[[F], F]: ...
    def tool(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a function as a tool: ``@server.tool`` or ``@server.tool(name=..., annotations=...)``.

        ``task="optional"`` lets a client run the tool as a task (2025-11-25: when it asks; 2026-07-28 with
        the Tasks extension: always, for a client that declares it); ``task="required"`` makes it run only
        as a task. A task is cancelled cooperatively: the tool checks ``ctx.cancelled``.
        """
        if fn is not None:
            self.add_tool(fn, **options)
            return fn

        def register(f: F) -> F:
            self.add_tool(f, **options)
            return f

        return register

    def add_tool(self, fn: Callable[..., Any] | Tool, **options: Any) -> Tool:
        """Register (or replace, by name) a tool; clients hear ``notifications/tools/list_changed``."""
        task = options.pop("task", None)
        task_start = options.pop("task_start", "call")
        if task_start not in ("call", "explicit"):
            raise ValueError(f"task_start must be 'call' or 'explicit', not {task_start!r}")
        if task is not None:
            if task not in task_wire.TASK_SUPPORTS:
                raise ValueError(f"task must be one of {', '.join(task_wire.TASK_SUPPORTS)}, not {task!r}")
            options["execution"] = {**(options.get("execution") or {}), "taskSupport": task}
        tool = fn if isinstance(fn, Tool) else make_tool(fn, **options)
        tool.task_start = task_start
        self.tools.add(tool)
        return tool

    def remove_tool(self, name: str) -> bool:
        return self.tools.remove(name)

    def tool_input_schema(self, name: object) -> dict[str, Any] | None:
        """The inputSchema of tool ``name`` (None if unknown): the HTTP transport checks Mcp-Param headers.
        Read only, and the same object while the tool is unchanged (the transport walks each schema once, by
        identity): a copy made once per tool definition, never the tool's own, so that an edit of it cannot
        change what tools/list advertises."""
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None or not isinstance(name, str):  # (both: mypy narrows name by the second)
            return None
        known = self._input_schemas.get(name)
        if known is None or known[0] is not tool.definition:
            schema = copy.deepcopy(tool.definition["inputSchema"])
            known = self._input_schemas[name] = (tool.definition, schema)
        return known[1]

    # ---- resources ---------------------------------------------------------------------------------------
    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a function as a resource (fixed ``uri``) or a template (``uri`` with ``{vars}``)."""

        def register(f: F) -> F:
            self.add_resource(uri, f, **options)
            return f

        return register

    def add_resource(
        self,
        uri: str,
        value: Any,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """A resource whose contents are ``value`` (text, bytes, or a function returning them).

        A URI containing ``{variables}`` makes a template: ``value`` must then be a function taking them.
        """
        check_annotations(annotations)
        check_icons(icons)
        doc = inspect.getdoc(value) if callable(value) else None
        description = description or (doc.strip().split("\n\n")[0] if doc else None)
        default_name = getattr(value, "__name__", None) if callable(value) else None
        common: dict[str, Any] = {"title": title, "description": description, "mime_type": mime_type}
        common |= {"annotations": annotations, "icons": icons, "meta": meta}
        if "{" in uri:
            if not callable(value):
                raise TypeError(f"resource template {uri!r} needs a function taking its variables")
            self._templates[uri] = TemplateDef(uri, name or default_name or uri, value, **common)
        else:
            self._resources[uri] = ResourceDef(uri, name or default_name or uri, value, **common)
        self._broadcast("notifications/resources/list_changed")

    def remove_resource(self, uri: str) -> bool:
        found = self._resources.pop(uri, None) or self._templates.pop(uri, None)
        if found is not None:
            self._broadcast("notifications/resources/list_changed")
        return found is not None

    def notify_resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that ``uri`` changed (``notifications/resources/updated``)."""
        for session in list(self.sessions):
            if uri in session.subscriptions:
                session.notify_soon("notifications/resources/updated", {"uri": uri})
            else:
                session.publish("notifications/resources/updated", {"uri": uri})

    # ---- prompts and completion --------------------------------------------------------------------------
    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]: ...
    def prompt(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a function as a prompt; its parameters are the prompt's (string) arguments."""
        if fn is not None:
            self.add_prompt(fn, **options)
            return fn

        def register(f: F) -> F:
            self.add_prompt(f, **options)
            return f

        return register

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> PromptDef:
        prompt = make_prompt(fn, **options)
        self._prompts[prompt.name] = prompt
        self._broadcast("notifications/prompts/list_changed")
        return prompt

    def remove_prompt(self, name: str) -> bool:
        found = self._prompts.pop(name, None) is not None
        if found:
            self._broadcast("notifications/prompts/list_changed")
        return found

    def completion(self, fn: F) -> F:
        """Register the completion handler: ``fn(ref, argument, arguments) -> list[str] | dict``.

        ``ref`` is the wire reference (``{"type": "ref/prompt", "name": ...}`` or ``ref/resource``),
        ``argument`` is ``{"name", "value"}``, ``arguments`` the other arguments already filled in.
        """
        self._completer = fn
        return fn

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], arguments: dict[str, Any]
    ) -> dict[str, Any]:
        if self._completer is None:
            return {"values": []}
        value = self._completer(ref, argument, arguments)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, dict):
            return value
        values = [str(v) for v in value or []]
        # At most 100 values per response (server/utilities/completion).
        return {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}

    # ---- events for the notebook console -----------------------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        """``listener(event, data)`` hears ``session_opened``, ``call_started``, ``call_finished``, ... ."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    @property
    def resource_defs(self) -> dict[str, ResourceDef]:
        """The resources by URI (what ``resources/list`` and ``resources/read`` answer from)."""
        return self._resources

    @property
    def template_defs(self) -> dict[str, TemplateDef]:
        """The resource templates by URI template."""
        return self._templates

    @property
    def prompt_defs(self) -> dict[str, PromptDef]:
        """The prompts by name."""
        return self._prompts

    @property
    def listened(self) -> bool:
        """Whether any listener hears :meth:`emit` (a call's events are not even built otherwise)."""
        return bool(self._listeners)

    def emit(self, event: str, data: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            try:
                listener(event, data)
            except Exception:
                log.exception("server listener failed on %s", event)

    def _broadcast(self, method: str) -> None:
        for session in list(self.sessions):
            session.notify_soon(method)

    # ---- serving -----------------------------------------------------------------------------------------
    async def serve(self, transport: Transport, *, peer: Peer | None = None, name: str | None = None) -> None:
        """Serve one client over ``transport`` until it disconnects.

        ``peer``: who is at the other end, as the transport knows it (the approval hook sees it); by
        default an in-process peer (``Peer("memory")``).
        """
        peer = peer or Peer("memory")
        session = ServerSession(self, transport, peer=peer, name=name or f"{self.name} {peer.transport}")
        self.sessions.add(session)
        self.emit("session_opened", {"session": session})
        try:
            await session.run()
        finally:
            self.sessions.discard(session)
            self.emit("session_closed", {"session": session})

    def serve_one(self, transport: Transport, message: str, *, peer: Peer) -> Callable[[str], None]:
        """Answer the one stateless request ``message`` (a 2026-07-28 HTTP POST) on a connection of its own.

        Returns at once, the request's handler started; its answer and what it sends while answering go to
        ``transport``. No reader task and no task of its own: a POST costs one handler task, as a request
        of a lasting session does. Call the returned ``end(reason)`` when the exchange is over (the handler
        is cancelled if it still runs; the connection leaves :attr:`sessions`).
        """
        return self._serve_single(transport, message, peer, inline=False)[0]

    def serve_inline(
        self, transport: Transport, message: str, *, peer: Peer
    ) -> tuple[Callable[[str], None], Coroutine[Any, Any, object] | None]:
        """:meth:`serve_one` with no handler task either: returns ``end`` and the request's handler, for the
        caller to await in its own task (None: nothing to run, a refusal is on its way). ``end`` cancels
        that task while the handler runs; the handler takes that cancel back (Connection.answer_inline)."""
        return self._serve_single(transport, message, peer, inline=True)

    def _serve_single(
        self, transport: Transport, message: str, peer: Peer, *, inline: bool
    ) -> tuple[Callable[[str], None], Coroutine[Any, Any, object] | None]:
        name, capabilities = f"{self.info['name']} {peer.transport}", self.request_capabilities()
        session = ServerSession(self, transport, peer, name, capabilities)  # (positional: see its __init__)
        self.sessions.add(session)
        if self._listeners:  # (one of these per POST: no event built for nobody)
            self.emit("session_opened", {"session": session})

        def end(reason: str) -> None:
            if session not in self.sessions:
                return
            session.connection.end(reason)
            self.sessions.discard(session)
            if self._listeners:
                self.emit("session_closed", {"session": session})

        try:
            if inline:
                return end, session.answer_inline(message)
            session.answer_one(message)
        except BaseException:
            end("the request could not be started")
            raise
        return end, None

    async def run_stdio_async(self) -> None:
        """Serve one client on this process's stdin/stdout; ``print`` in tools goes to stderr meanwhile."""
        from ..transports.stdio import StdioServerTransport, redirect_stdout_to_stderr

        with redirect_stdout_to_stderr():
            transport = StdioServerTransport()
            try:
                await self.serve(transport, peer=Peer("stdio"), name=f"{self.name} stdio")
            finally:
                await self.tasks.aclose()  # tasks still running end "failed", not "working" forever

    def run_stdio(self) -> None:
        asyncio.run(self.run_stdio_async())
