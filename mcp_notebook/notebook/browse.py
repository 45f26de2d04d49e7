"""The notebook ``mcp`` object's read-only views: connections, resources, prompts, the trace, a server's log
and the history (``%mcp servers``, ``resources``, ``read``, ``prompts``, ``prompt``, ``trace``, ``log``,
``history``). A mixin of :class:`~mcp_notebook.notebook.api.NotebookMCP`; what it needs from that object is
declared as :class:`Browsed`, so the import runs one way (api -> browse; tests/test_layers.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .calls.connections import NotebookError
from .calls.history import History
from .calls.pipeline import Calls, merge_arguments
from .calls.policy import LOCAL, AuditLog, Policy
from .rendering.views import BundleView, TableView, TraceView

if TYPE_CHECKING:
    from .config import MCPNotebook

__all__ = ["Browsing"]


class Browsed(Protocol):
    """What the views read of the ``mcp`` object: its settings, policy, audit log and call pipeline."""

    config: MCPNotebook
    policy: Policy
    audit: AuditLog
    calls: Calls

    def connections(self) -> list[str]: ...

    def resources(self, server: str | None = None) -> TableView: ...


class Browsing:
    """Views over what the connections know; nothing here calls a tool."""

    def servers(self: Browsed) -> TableView:
        self.calls.client(LOCAL)
        rows = []
        for name in self.connections():
            client = self.calls.client(name)
            kind, shown = self.calls.connections.target(name)
            info = client.server_info or {}
            version = client.negotiated_version
            rows.append(
                {
                    "name": name,
                    "transport": kind,
                    "target": shown,
                    "server": f"{info.get('name', '?')} {info.get('version', '')}".strip(),
                    "title": info.get("title") or "",
                    "instructions": client.aio.instructions or "",
                    "protocol": version.name if version is not None else "",
                    "trusted": self.policy.is_trusted(name),
                }
            )
        return TableView(rows, title="MCP connections")

    # ---- resources, prompts, trace, history ----------------------------------------------------------------
    def resources(self: Browsed, server: str | None = None) -> TableView:
        rows: list[dict[str, Any]] = []
        for name in [server] if server else self.connections():
            client = self.calls.client(name)
            if not client.server_capabilities.get("resources"):
                continue
            for r in client.list_resources():
                rows.append(
                    {
                        "server": name,
                        "uri": r.get("uri"),
                        "name": r.get("name"),
                        "title": r.get("title"),
                        "mimeType": r.get("mimeType"),
                        "description": r.get("description"),
                    }
                )
            for t in client.list_resource_templates():
                rows.append(
                    {
                        "server": name,
                        "uri": t.get("uriTemplate"),
                        "name": t.get("name"),
                        "title": t.get("title"),
                        "mimeType": t.get("mimeType"),
                        "description": t.get("description"),
                    }
                )
        return TableView(
            rows, ["server", "uri", "name", "title", "mimeType", "description"], title="MCP resources"
        )

    def read(self: Browsed, uri: str, server: str | None = None) -> BundleView:
        """``resources/read``; ``SERVER.URI`` names the connection as ``SERVER.TOOL`` does; otherwise from
        ``server``, or the connection that lists ``uri`` (local first)."""
        from .rendering.results import resource_contents_bundle

        head, dot, rest = uri.partition(".")
        if server is None and dot and "://" in rest and "://" not in head and head in self.calls.connections:
            server, uri = head, rest
        if server is None:
            listed = [row["server"] for row in self.resources().rows if row["uri"] == uri]
            if not listed:
                remotes = [n for n in self.connections() if n != LOCAL]
                if len(remotes) > 1:
                    raise NotebookError(
                        f"no connection lists {uri!r}; say which server reads it (server=...)"
                    )
                listed = remotes or [LOCAL]
            server = listed[0]
        result = self.calls.client(server).read_resource(uri)
        bundle = resource_contents_bundle(
            result, max_text=self.config.max_text, max_image_bytes=self.config.max_image_bytes
        )
        return BundleView(result, bundle, f"resource {uri}")

    def prompts(self: Browsed, server: str | None = None) -> TableView:
        rows: list[dict[str, Any]] = []
        for name in [server] if server else self.connections():
            client = self.calls.client(name)
            if not client.server_capabilities.get("prompts"):
                continue
            for p in client.list_prompts():
                args = [
                    f"{a.get('name')}{'*' if a.get('required') else ''}" for a in p.get("arguments") or []
                ]
                call_as = p.get("name") if name == LOCAL else f"{name}.{p.get('name')}"
                rows.append(
                    {
                        "call as": call_as,
                        "title": p.get("title"),
                        "description": p.get("description"),
                        "arguments": ", ".join(args),
                    }
                )
        return TableView(rows, ["call as", "title", "description", "arguments"], title="MCP prompts")

    def prompt_get(
        self: Browsed, name: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any
    ) -> BundleView:
        """``prompts/get``; prompt arguments are strings on the wire, so values are converted with ``str``."""
        from .rendering.results import prompt_bundle

        server, prompt = self.calls.split(name)
        args = {
            k: v if isinstance(v, str) else _jsonish(v) for k, v in merge_arguments(arguments, kwargs).items()
        }
        result = self.calls.client(server).get_prompt(prompt, args)
        return BundleView(result, prompt_bundle(result, max_text=self.config.max_text), f"prompt {name}")

    def task(self: Browsed, task_id: str, server: str | None = None) -> Any:
        """A task's result by id, waiting until it is done (``%mcp task get``): this kernel's task, or an
        earlier kernel's whose HTTP server the task book remembers; ``SERVER.ID`` or ``server`` names it."""
        from .calls.tasks import get_task

        return get_task(self.calls, task_id, server)

    def trace(
        self: Browsed,
        server: str | None = None,
        last: int | None = 50,
        *,
        diagram: bool = False,
        live: bool = False,
        otlp: str | None = None,
    ) -> Any:
        """The JSON-RPC conversation of ``server`` (every connection when None), the ``last`` messages;
        ``diagram=True`` draws it as a sequence diagram (inline SVG; click an arrow for its JSON);
        ``live=True`` keeps the shown output current as messages arrive (``%mcp trace --live``);
        ``otlp="FILE"`` writes it as OTLP/JSON spans instead, one per request (``engine/otel.py``)."""
        names = [server] if server else self.connections()

        traces = [(name, self.calls.client(name).trace) for name in names]
        if otlp is not None:
            import json

            from ..engine.otel import otlp_json

            exported = [otlp_json(trace, f"mcp-notebook {name}") for name, trace in traces]
            data = {"resourceSpans": [r for e in exported for r in e["resourceSpans"]]}
            with open(otlp, "w") as out:
                json.dump(data, out)
            count = sum(len(s["spans"]) for r in data["resourceSpans"] for s in r["scopeSpans"])
            return f"{count} spans of {', '.join(names)} written to {otlp} (OTLP/JSON)"

        def view() -> TraceView:
            sections = []
            for name, trace in traces:
                entries = trace.entries()
                sections.append((f"{name}", entries[-last:] if last else entries))
            return TraceView(sections, diagram=diagram)

        if not live:
            return view()
        from .live import LivePane

        return LivePane([t for _n, t in traces], lambda: view()._repr_mimebundle_(), self.calls.surface)

    def log(self: Browsed, server: str, last: int = 200, level: str | None = "info") -> Any:
        """A live pane of ``server``'s log messages and other notifications (``%mcp log NAME``).

        ``level`` asks the server for log messages from that level up (``logging/setLevel``, or the
        request ``_meta`` of the 2026 era); None leaves it as it is."""
        from .live import LivePane, notifications_bundle

        client = self.calls.client(server)
        if level is not None and (client.server_capabilities.get("logging") is not None):
            client.set_logging_level(level)
        trace = client.trace
        return LivePane(
            [trace], lambda: notifications_bundle(server, trace.entries(), last), self.calls.surface
        )

    def history(self: Browsed, last: int | None = None) -> History:
        """The audit log: every decision and call, each with its ``%mcp call`` line and Python call."""
        entries = self.audit.entries()
        return History(entries[-last:] if last else entries)


def _jsonish(value: Any) -> str:
    return json.dumps(value)
