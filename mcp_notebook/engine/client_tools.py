"""The client's tools cache and its structured-result checks (a mixin of :class:`.client.Client`).

One cache of the listed tools, read by ``call_tool``, ``map`` and the notebook: listed again only when
outdated (never listed, after ``list_changed``, past a modern ``ttlMs``, or missing the tool asked for).
Malformed tools are left out with a warning naming them (``dropped_tools``). A tool's ``structuredContent``
is checked against its listed ``outputSchema``, compiled once per listing.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from ..protocol import era as eras
from ..protocol.errors import JSONRPCError, RemoteProtocolError
from ..protocol.session import has_capability
from ..protocol.shapes import tool_problem
from ..tools.validation import SchemaCheck, schema_check
from ..transports.base import NeedsToolDefinitions
from .shared_run import SharedRun

if TYPE_CHECKING:
    from .connection import Connection
    from .modern_client import Subscriptions
    from .trace import Trace

__all__ = ["ToolsCache"]

log = logging.getLogger("mcp_notebook.engine.client")


class ToolsCache:
    """The tools cache and the outputSchema checks (needs ``request`` paging, ``connection``, ``_modern``)."""

    # the cache's state, set in Client.__init__ (where each is described)
    _tools: dict[str, dict[str, Any]]
    _output_checks: dict[str, tuple[dict[str, Any], SchemaCheck]]
    dropped_tools: dict[str, str]
    _tools_stale: bool
    _tools_deadline: float | None
    # (a tool's name, the listing it was missing from): that listing is not asked again for it
    _missing: tuple[str, dict[str, dict[str, Any]]] | None = None
    _listing: SharedRun  # the refresh's listing in flight: later callers wait for it (set by Client)

    if TYPE_CHECKING:  # provided by Client
        name: str
        trace: Trace
        subscriptions: Subscriptions
        _modern: bool

        @property
        def connection(self) -> Connection: ...

        @property
        def server_capabilities(self) -> dict[str, Any]: ...

        async def _all_pages(self, method: str, field: str) -> tuple[list[dict[str, Any]], float]: ...

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, across all pages; refreshes the client's tools cache (:meth:`tools_by_name`)."""
        items, deadline = await self._all_pages("tools/list", "tools")
        tools = []
        self.dropped_tools = {}
        for index, tool in enumerate(items):
            # one malformed tool is left out with a warning naming it, never the whole list; SEP-2243: a
            # tool with an invalid x-mcp-header MUST be excluded (modern HTTP), with a warning
            reason = tool_problem(tool, index)
            if reason is None and self._modern:
                reason = eras.invalid_param_headers(tool.get("inputSchema"))
            if reason is None:
                tools.append(tool)
                continue
            name = tool.get("name") if isinstance(tool, dict) and isinstance(tool.get("name"), str) else None
            shown = name if name is not None else f"#{index}"
            self.dropped_tools[shown] = reason
            log.warning("%s: tool %r left out: %s", self.name, shown, reason)
            self.trace.record("note", f"tool {shown!r} left out: {reason}")
        self._tools = {tool["name"]: tool for tool in tools}
        transport = self.connection.transport
        if isinstance(transport, NeedsToolDefinitions):
            transport.tools = self._tools  # Mcp-Param-* headers of modern HTTP tool calls
        self._tools_stale = False
        # Modern servers send no list_changed (without a listen stream): the list is fresh for its ttlMs.
        self._tools_deadline = deadline if self._modern else None
        return tools

    def cached_tool(self, name: str) -> dict[str, Any] | None:
        return self._tools.get(name)

    async def tools_by_name(self, want: str | None = None) -> dict[str, dict[str, Any]]:
        """The tools from the one cache the client and the notebook read, listed again only when outdated:
        never listed, after list_changed, past a modern ``ttlMs``, or missing ``want`` (a tool a cell just
        added: its list_changed may still be on the way)."""
        if self._tools_outdated(want):
            await self.list_tools()
        return dict(self._tools)

    def _tools_outdated(self, want: str | None) -> bool:
        return self._tools_stale or self._tools_expired() or (want is not None and want not in self._tools)

    def _tools_expired(self) -> bool:
        """Past a modern list's ``ttlMs``, unless a listen stream carries tools/list_changed (caching)."""
        if self._tools_deadline is None or self.subscriptions.listening_for("toolsListChanged"):
            return False
        return time.monotonic() >= self._tools_deadline

    async def _refresh_tools_if_needed(self, name: str) -> None:
        """The tool cache (outputSchema, execution) is refreshed once per list_changed, not per call; past
        its ttlMs it is still used, and listed again only if a result then fails its outputSchema. A tool
        missing from it is looked for in a new listing once, not at every call (a map over a tool the server
        no longer lists), until list_changed or, in 2026-07-28, the listing's ttlMs. Calls that need a
        refresh while one is in flight wait for it (the rows of a map in flight: one listing)."""
        missing = name not in self._tools and (
            self._missing is None
            or self._missing[0] != name
            or self._missing[1] is not self._tools
            or self._tools_expired()
        )
        if (self._tools_stale or missing) and has_capability(self.server_capabilities, ("tools",)):
            await self._listing.join(self._list_quietly)  # a listing in flight is shared, not sent again
            self._tools_stale = False  # even when listing failed: do not retry on every call
            self._missing = (name, self._tools) if name not in self._tools else None

    async def _list_quietly(self) -> None:
        with contextlib.suppress(JSONRPCError):
            await self.list_tools()

    async def _check_structured(self, name: str, result: dict[str, Any]) -> None:
        """Structured results are checked against the tool's outputSchema (server/tools#output-schema);
        judged by a cached list past its ttlMs, a mismatch is checked again against a fresh list."""
        problem = self._structured_problem(name, result)
        if problem is not None and self._tools_expired():
            with contextlib.suppress(JSONRPCError):
                await self.list_tools()
            problem = self._structured_problem(name, result)
        if problem is not None:
            raise RemoteProtocolError(problem)

    def _structured_problem(self, name: str, result: dict[str, Any]) -> str | None:
        schema = (self._tools.get(name) or {}).get("outputSchema")
        if not isinstance(schema, dict):
            return None
        if "structuredContent" not in result:
            return f"tool {name!r} has an outputSchema but returned no structuredContent"
        known = self._output_checks.get(name)
        if known is not None and known[0] is schema:  # this listing's schema: no key to compute again
            check = known[1]
        else:
            try:
                check = schema_check(schema)  # compiled once per distinct schema, shared (tools/validation)
            except ValueError as exc:
                return f"tool {name!r} has an unusable outputSchema: {exc}"
            self._output_checks[name] = (schema, check)
        problems = check.problems(result["structuredContent"])
        return (
            f"tool {name!r} returned structuredContent not matching its outputSchema: {problems[0]}"
            if problems
            else None
        )

    def _forget_tools(self) -> None:
        self._tools_stale = True
