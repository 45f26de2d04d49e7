"""Small displayable values returned by the ``mcp`` API: tables, tool lists, traces, resources, prompts.

Each keeps the raw data (``.rows``, ``.data``) for code and renders as a static mimebundle (DESIGN decision
10) through the shared renderers, so terminal IPython and saved notebooks show the same thing.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

from .base import esc, json_pre, one_line, table_bundle, wrap
from .diagram import diagram_bundle, diagram_toggle
from .trace import trace_bundle

__all__ = ["BundleView", "TableView", "ToolsView", "TraceView", "filter_bundle"]


def filter_bundle(
    bundle: dict[str, Any], include: Container[str] | None, exclude: Container[str] | None
) -> dict[str, Any]:
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


class BundleView:
    """A value (``.data``) with a ready mimebundle."""

    def __init__(self, data: Any, bundle: dict[str, str], name: str = "view") -> None:
        self.data = data
        self._bundle = bundle
        self._name = name

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        return filter_bundle(dict(self._bundle), include, exclude)

    def __repr__(self) -> str:
        return f"<{self._name}>"


class TableView:
    """Rows of dicts shown as a table."""

    def __init__(
        self,
        rows: list[dict[str, Any]],
        columns: Sequence[str] | None = None,
        *,
        title: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self.rows = rows
        self.columns = list(columns) if columns is not None else None
        self.title = title
        self.notes = list(notes)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.rows[index]

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        bundle = table_bundle(self.rows, self.columns, title=self.title)
        if self.notes:
            bundle["text/html"] += "".join(f'<div class="mcpnb-note">{esc(n)}</div>' for n in self.notes)
            bundle["text/plain"] += "".join(f"\n{n}" for n in self.notes)
        return filter_bundle(bundle, include, exclude)

    def __repr__(self) -> str:
        return f"<{self.title or 'table'}: {len(self.rows)} rows>"


class ToolsView(TableView):
    """The tools table; each tool's input/output schema on demand (``.schema(name)``, or expand in HTML)."""

    def __init__(self, tools: list[tuple[str, dict[str, Any]]], notes: Sequence[str] = ()) -> None:
        self.tools = tools  # (server, wire definition)
        rows = [_tool_row(server, tool) for server, tool in tools]
        columns = ["call as", "title", "description", "parameters", "hints"]
        if not any(row["title"] for row in rows):  # no tool has one: no empty column (issue 11 item 12)
            columns.remove("title")
        super().__init__(rows, columns, title="MCP tools", notes=notes)

    def schema(self, name: str) -> dict[str, Any]:
        for row, (_server, tool) in zip(self.rows, self.tools, strict=True):
            if name in (row["call as"], tool.get("name")):
                return tool
        raise KeyError(f"no tool {name!r} in this list")

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_()
        details = []
        for row, (_server, tool) in zip(self.rows, self.tools, strict=True):
            parts = [f"<b>inputSchema</b>{json_pre(tool.get('inputSchema'))}"]
            if "outputSchema" in tool:
                parts.append(f"<b>outputSchema</b>{json_pre(tool.get('outputSchema'))}")
            if tool.get("annotations"):
                parts.append(f"<b>annotations</b>{json_pre(tool.get('annotations'))}")
            details.append(
                f'<details><summary class="mcpnb-note">schemas of {esc(row["call as"])}</summary>'
                f"{''.join(parts)}</details>"
            )
        if details:
            bundle["text/html"] += wrap("".join(details))
        return filter_bundle(bundle, include, exclude)


def _tool_row(server: str, tool: Mapping[str, Any]) -> dict[str, Any]:
    name = str(tool.get("name"))
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    required = schema.get("required") if isinstance(schema, Mapping) else None
    required_set = set(required) if isinstance(required, list) else set()
    params = [f"{p}*" if p in required_set else str(p) for p in (props or {})]
    ann = tool.get("annotations") if isinstance(tool.get("annotations"), Mapping) else {}
    assert isinstance(ann, Mapping)
    hints = [
        k.removesuffix("Hint") for k in ("readOnlyHint", "destructiveHint", "idempotentHint") if ann.get(k)
    ]
    title = tool.get("title") or ann.get("title") or ""
    call_as = name if server == "local" and "." not in name else f"{server}.{name}"
    return {
        "call as": call_as,
        "title": title,
        "description": one_line(tool.get("description") or "", 100),
        "parameters": ", ".join(params),
        "hints": ", ".join(hints),
    }


class TraceView:
    """The JSON-RPC conversation of one or more connections, one section each.

    As a table with the sequence diagram a click away (a collapsed toggle above it), or, with
    ``diagram=True`` (``%mcp trace --diagram``), as the diagram itself.
    """

    def __init__(self, sections: list[tuple[str, list[dict[str, Any]]]], *, diagram: bool = False) -> None:
        self.sections = sections
        self.diagram = diagram

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [entry for _title, entries in self.sections for entry in entries]

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        html: list[str] = []
        text: list[str] = []
        for title, entries in self.sections:
            if self.diagram:
                bundle = diagram_bundle(entries, server=title)
            else:
                bundle = trace_bundle(entries)
                bundle["text/html"] = diagram_toggle(entries, title, bundle["text/html"])
            html.append(f'<div class="mcpnb-title">{esc(title)}</div>{bundle["text/html"]}')
            text.append(f"== {title}\n{bundle['text/plain']}")
        if not self.sections:
            html.append('<div class="mcpnb-note">(no connections)</div>')
            text.append("(no connections)")
        return filter_bundle({"text/html": "".join(html), "text/plain": "\n".join(text)}, include, exclude)

    def __repr__(self) -> str:
        return f"<TraceView {len(self.entries)} messages>"
