"""``Calls``: one notebook tool call from ``SERVER.TOOL`` to a running or shown handle (issue 17 item 1).

``resolve`` reads the name once (connection, tool, the tool list through the client's cache, the tool's
definition) into a :class:`Target`; ``decide`` asks the policy; ``handle`` builds the :class:`CallHandle`
with its audit entry and tracks it until it ends; ``run`` and ``start`` launch it, or show it when a person
must approve. The ``mcp`` object (``api.NotebookMCP``) composes one ``Calls``; batches (``batch.py``), lint,
check, browse, tasks and the Apps host use its public methods, not the ``mcp`` object's insides.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from .arguments import check_arguments
from .connections import Connections, NotebookError
from .handle import CallHandle, CallView
from .policy import LOCAL, AuditEntry, AuditLog, Decision, Policy, check_verdict
from .surface import Surface
from .tasks import TaskBook

if TYPE_CHECKING:
    from ...engine.runtime import Runtime
    from ...engine.sync import SyncClient
    from ..config import MCPNotebook

__all__ = ["Calls", "Target", "merge_arguments"]

Tools = dict[str, dict[str, Any]]
H = TypeVar("H", bound=CallHandle)


def merge_arguments(arguments: Mapping[str, Any] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments: the dict given, then keyword arguments over it."""
    if arguments is not None and not isinstance(arguments, Mapping):
        raise NotebookError(f"tool arguments must be a dict, not {type(arguments).__name__}")
    return {**(arguments or {}), **kwargs}


@dataclass(frozen=True)
class Target:
    """``SERVER.TOOL`` resolved: the name as given, the connection's name, the tool's, its client and its
    wire definition."""

    name: str
    server: str
    tool: str
    client: SyncClient
    definition: dict[str, Any]


class Calls:
    """The notebook's call pipeline: resolve once, decide, build and track the handle, launch or show it."""

    def __init__(
        self,
        *,
        connections: Connections,
        policy: Policy,
        audit: AuditLog,
        config: MCPNotebook,
        surface: Surface,
        task_book: TaskBook,
        runtime: Callable[[], Runtime],
        local_tools: Callable[[], Tools],
        headless: Callable[[], bool],
        view: CallView,
    ) -> None:
        self.connections = connections
        self.policy = policy
        self.audit = audit
        self.config = config
        self.surface = surface
        self.task_book = task_book
        self._runtime = runtime
        self._local_tools = local_tools
        self._headless = headless
        self.view = view  # a call's live widget (``widgets.call_view``), built when a handle is shown
        self._active: list[CallHandle] = []
        self._lock = threading.Lock()

    @property
    def runtime(self) -> Runtime:
        return self._runtime()

    # ---- names and tools -----------------------------------------------------------------------------------
    def split(self, name: str) -> tuple[str, str]:
        """``SERVER.TOOL`` when ``SERVER`` is a connection; otherwise all of it names a notebook tool."""
        return self.connections.split(name)

    def client(self, server: str) -> SyncClient:
        return self.connections.get(server)

    def tools(self, server: str, want: str | None = None) -> Tools:
        """The server's tools by name, through its client's cache (``want``: a tool that must be there)."""
        if server == LOCAL:
            return self._local_tools()
        return self.connections.tools(server, want)

    async def tools_async(self, server: str, want: str | None = None) -> Tools:
        if server == LOCAL:
            return self._local_tools()
        return await self.connections.tools_async(server, self.runtime, want)

    @staticmethod
    def definition(server: str, tool: str, tools: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """The tool's definition from ``tools``, or a :class:`NotebookError` naming the tools there are."""
        found = tools.get(tool)
        if found is None:
            names = ", ".join(sorted(tools)) or "none"
            where = "the notebook's server" if server == LOCAL else f"server {server!r}"
            hint = ""
            if server == LOCAL and "." in tool:
                hint = f"; and no server named {tool.partition('.')[0]!r} is connected"
            raise NotebookError(f"{where} has no tool {tool!r} (tools: {names}){hint}")
        return found

    def resolve(self, name: str) -> Target:
        """``SERVER.TOOL`` read once: connection, client, the tool list (cache), the tool's definition."""
        server, tool = self.split(name)
        client = self.client(server)
        return Target(name, server, tool, client, self.definition(server, tool, self.tools(server, tool)))

    async def resolve_async(self, name: str) -> Target:
        """:meth:`resolve` in an async cell: a tool list to read again is awaited, not blocked on."""
        server, tool = self.split(name)
        client = self.client(server)
        tools = await self.tools_async(server, tool)
        return Target(name, server, tool, client, self.definition(server, tool, tools))

    # ---- decide, build, track ------------------------------------------------------------------------------
    def decide(self, target: Target) -> Decision:
        """The policy's answer for calling ``target`` now (headless or not, as the notebook is now)."""
        self.policy.headless = self._headless()
        self.policy.headless_policy = check_verdict(self.config.effective_headless_policy())
        return self.policy.decide(target.server, target.tool, target.definition)

    def context(self, target: Target, surface: Surface | None = None) -> dict[str, Any]:
        """What every call handle of this notebook shares: where it runs and shows, and the policy's say.
        ``surface``: where the call shows when not the running cell (a form's Call: the form's cell)."""
        return {
            "runtime": self.runtime,
            # the asking cell: its output lands there, from any thread
            "surface": surface if surface is not None else self.surface.here(),
            "interactive": not self.policy.headless,
            "trusted": self.policy.is_trusted(target.server),
            "remember": partial(self.policy.always_allow, target.server, target.tool),
            "trace": target.client.trace,
            "max_text": self.config.max_text,
            "max_image_bytes": self.config.max_image_bytes,
        }

    def handle(
        self,
        target: Target,
        arguments: dict[str, Any],
        timeout: float | None = None,
        surface: Surface | None = None,
    ) -> CallHandle:
        """Decide, write the audit entry and build the (tracked) handle; nothing runs yet."""
        decision = self.decide(target)
        server, tool, client = target.server, target.tool, target.client
        if decision.verdict == "ask":
            # checked before the card: a person is never asked to approve a call that cannot run. Calls
            # that go ahead unasked get the server's answer instead (an isError result, per the spec).
            check_arguments(target.name, target.definition, arguments)
        status = "awaiting-approval" if decision.verdict == "ask" else "running"
        entry = self.audit.add(
            AuditEntry(server, tool, dict(arguments), decision.verdict, decision.by, status)
        )
        seconds = timeout if timeout is not None else self.config.default_timeout
        made: list[CallHandle] = []

        def on_task(task: dict[str, Any]) -> None:  # a call that runs as a task shows its status live
            self.task_book.note(server, tool, task)
            made[0].on_task(task)

        async def runner(progress: Any) -> Any:
            result = await client.aio.call_tool(
                tool, arguments, timeout=seconds, progress_callback=progress, on_task=on_task
            )
            from ..rendering.links import read_links

            made[0].linked = await read_links(client.aio, result)  # resource links, opened inline
            return result

        handle = CallHandle(
            server=server,
            tool=tool,
            arguments=arguments,
            tool_def=target.definition,
            decision=decision,
            entry=entry,
            runner=runner,
            view=self.view,
            **self.context(target, surface),
        )
        made.append(handle)
        self.track(handle)
        return handle

    def prepare(
        self,
        name: str | Target,
        arguments: dict[str, Any],
        timeout: float | None = None,
        surface: Surface | None = None,
    ) -> CallHandle:
        """:meth:`resolve` (unless given a :class:`Target`) then :meth:`handle`: the name is read once."""
        target = name if isinstance(name, Target) else self.resolve(name)
        return self.handle(target, arguments, timeout, surface)

    def track(self, handle: CallHandle) -> None:
        """Keep a running handle until it ends (closing the notebook's connections cancels it)."""
        if not handle.done():
            with self._lock:
                self._active.append(handle)
            handle.on_change(self._forget_when_done)

    def _forget_when_done(self, handle: CallHandle) -> None:
        if handle.done():
            with self._lock:
                if handle in self._active:
                    self._active.remove(handle)

    @property
    def active(self) -> list[CallHandle]:
        """The handles not yet ended, oldest first."""
        with self._lock:
            return list(self._active)

    def running_on(self, server: str) -> CallHandle | None:
        """The latest running call on ``server`` (where a server's mid-call question is shown)."""
        running = [h for h in self.active if h.server == server and h.state == "running"]
        return running[-1] if running else None

    # ---- launch or show ------------------------------------------------------------------------------------
    def run(self, handle: H) -> H:
        """Block until an allowed call ends (a kernel interrupt cancels it); an ask is shown and returned."""
        if handle.state == "awaiting-approval":
            handle.show()
            return handle
        if handle.done():
            return handle
        try:
            handle._launch()
            handle._settle()
        except KeyboardInterrupt:
            handle.cancel()
            raise
        return handle

    def start(self, handle: H, *, show: bool = True) -> H:
        """Launch an allowed call and return at once; show it live unless headless (or ``show=False``)."""
        if not show:
            handle._auto_show = False
        if handle.state == "running":
            handle._launch()
        if show and not handle.done() and not self.policy.headless:
            handle.show()
        return handle
