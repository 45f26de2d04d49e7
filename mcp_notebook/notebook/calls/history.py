"""The history (audit log) as a person reads it: one narrow row per call, details on demand.

Issue 11 items 3 and 13: the table fits a 968 px output area (five columns; long values wrap), the
copy-as-code lines (``%mcp call`` and Python) sit under a row with Copy buttons, a server's request
(elicitation, sampling) is summarised instead of dumping its JSON Schema, and each call's response is
summarised in its row and expandable to its JSON (bounded), as in the MCP Inspector's history.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Container, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..rendering.base import code_block, esc, json_text, one_line, wrap

if TYPE_CHECKING:
    from .policy import AuditEntry

__all__ = ["History", "history_bundle", "request_summary", "response_summary"]

_MAX_RESPONSE = 5_000  # characters of a response's JSON kept in the history


def response_summary(result: Any) -> str:
    """One line for a CallToolResult / ElicitResult: its text, or block kinds, or structured value."""
    if not isinstance(result, Mapping):
        return "" if result is None else one_line(result, 120)
    if "action" in result:  # an elicitation's answer
        content = result.get("content")
        return str(result["action"]) + (f": {one_line(content, 100)}" if content else "")
    parts = []
    for block in result.get("content") or []:
        if isinstance(block, Mapping):
            kind = block.get("type")
            parts.append(str(block.get("text")) if kind == "text" else f"[{kind}]")
    if not parts and "structuredContent" in result:
        parts.append(json_text(result["structuredContent"], indent=None))
    prefix = "error: " if result.get("isError") is True else ""
    return prefix + one_line(" ".join(parts), 120)


def kept_response(result: Any) -> Any:
    """What the history keeps of a response: the JSON, cut to ``_MAX_RESPONSE`` characters (base64 and
    long text would otherwise stay in memory for every call)."""
    text = json_text(result)
    return result if len(text) <= _MAX_RESPONSE else text[:_MAX_RESPONSE] + "\n… (cut)"


def request_summary(entry: AuditEntry) -> str:
    """What was asked, in words: a call's arguments, or an elicitation's message and field names."""
    args = entry.arguments
    if entry.kind == "elicitation":
        schema = args.get("requestedSchema")
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        fields = f" (fields: {', '.join(map(str, props))})" if isinstance(props, Mapping) and props else ""
        url = f" (open {args['url']})" if args.get("mode") == "url" and args.get("url") else ""
        return one_line(f"asked: {args.get('message') or ''}{fields}{url}", 160)
    if entry.kind == "sampling":
        messages = args.get("messages")
        count = len(messages) if isinstance(messages, Sequence) else 0
        return f"asked for a model reply ({count} message{'s' if count != 1 else ''})"
    return one_line(args, 160) if args else "(no arguments)"


def _row(entry: AuditEntry) -> tuple[str, str]:
    when = dt.datetime.fromtimestamp(entry.time).strftime("%H:%M:%S")
    took = f" in {entry.duration:.3f} s" if entry.duration is not None else ""
    response = getattr(entry, "response", None)
    said = response_summary(response) or (entry.error or "")
    what = entry.target if entry.kind in ("call", "incoming") else f"{entry.server}: {entry.kind}"
    details = []
    if entry.magic:
        details.append(code_block("%mcp", entry.magic))
        details.append(code_block("Python", entry.python))
    if entry.kind != "call":
        details.append(code_block("request (JSON)", json_text(entry.arguments), max_chars=_MAX_RESPONSE))
    if response is not None:
        shown = response if isinstance(response, str) else json_text(response)
        details.append(code_block("response (JSON)", shown, max_chars=_MAX_RESPONSE))
    more = (
        f'<details><summary class="mcpnb-note">copy as code, request and response</summary>{"".join(details)}'
        "</details>"
        if details
        else ""
    )
    html = (
        f"<tr><td>{entry.id}</td><td>{esc(when)}</td>"
        f"<td><code>{esc(what)}</code><div>{esc(request_summary(entry))}</div>{more}</td>"
        f'<td>{esc(entry.decision)}<div class="mcpnb-note">{esc(entry.decided_by)}</div></td>'
        f"<td>{esc(entry.status)}{esc(took)}<div>{esc(said)}</div></td></tr>"
    )
    text = f"#{entry.id} {when} {what} {request_summary(entry)} | {entry.decision} ({entry.decided_by}) | "
    text += f"{entry.status}{took} {said}".rstrip()
    if entry.magic:
        text += f"\n    {entry.magic}\n    {entry.python}"
    return html, text


def history_bundle(entries: Sequence[AuditEntry], title: str) -> dict[str, str]:
    if not entries:
        return {
            "text/html": wrap(
                f'<div class="mcpnb-title">{esc(title)}</div><div class="mcpnb-note">(none yet)</div>'
            ),
            "text/plain": f"{title}\n(none yet)",
        }
    rows = [_row(entry) for entry in entries]
    head = "".join(f"<th>{h}</th>" for h in ("#", "time", "what", "decided", "outcome"))
    table = (
        f'<table class="mcpnb-table mcpnb-history"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(html for html, _text in rows)}</tbody></table>"
    )
    return {
        "text/html": wrap(f'<div class="mcpnb-title">{esc(title)}</div>{table}'),
        "text/plain": "\n".join([title, *(text for _html, text in rows)]),
    }


class History:
    """A snapshot of the audit log as a table; ``h[i].magic`` / ``h[i].python`` give an entry as code."""

    def __init__(self, entries: list[AuditEntry]) -> None:
        self.entries = entries

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index: int) -> AuditEntry:
        return self.entries[index]

    def __iter__(self) -> Iterator[AuditEntry]:
        return iter(self.entries)

    def rows(self) -> list[dict[str, Any]]:
        return [entry.row() for entry in self.entries]

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        title = "MCP calls (open a row to copy it as %mcp or Python, and to see its response)"
        return history_bundle(self.entries, title)

    def __repr__(self) -> str:
        return f"<History {len(self.entries)} calls>"
