"""The JSON-RPC conversation as a table, for teaching the protocol (``%mcp trace``).

Each entry is ``{"direction": "out" | "in", "time": epoch seconds, "message": <JSON-RPC message>}`` as
recorded by a session. A row shows when (ms from the first message), which way (→ client to server,
← server to client), what kind of message (MCP-NOTES §3.1), its id, its method (for a result or an error,
the method of the request it answers, matched by id and direction), a one-line summary and the full JSON,
pretty-printed and collapsed. Messages come from the peer, so everything is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from mcp_notebook.notebook.rendering.base import copy_button, esc, json_text, one_line, truncate_note, wrap

__all__ = ["trace_bundle"]

Summary = Callable[[Mapping[str, Any]], str]

# JSON-RPC and MCP error codes (MCP-NOTES §3.3), named so a reader need not look them up.
_ERROR_NAMES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32002: "Resource not found",
    -32042: "URL elicitation required",
}


def _args(value: object) -> str:
    if not isinstance(value, Mapping):
        return ""
    return ", ".join(f"{k}={one_line(v, 30)}" for k, v in value.items())


def _info(info: object) -> str:
    if not isinstance(info, Mapping):
        return "?"
    return f"{info.get('name', '?')} {info.get('version', '')}".strip()


def _names(items: object) -> str:
    if not isinstance(items, list):
        return "?"
    names = [str(i.get("name", "?")) for i in items if isinstance(i, Mapping)]
    shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    return f"{len(items)}: {shown}" if shown else "0"


def _initialize_request(p: Mapping[str, Any]) -> str:
    return f"{_info(p.get('clientInfo'))}, protocol {p.get('protocolVersion')}"


def _initialize_result(r: Mapping[str, Any]) -> str:
    caps = r.get("capabilities")
    cap_names = ", ".join(caps) if isinstance(caps, Mapping) else "?"
    return f"{_info(r.get('serverInfo'))}, protocol {r.get('protocolVersion')}, capabilities: {cap_names}"


def _call_result(r: Mapping[str, Any]) -> str:
    content = r.get("content")
    kinds = (
        [str(b.get("type")) for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
    )
    parts = [f"{len(kinds)} content block(s)" + (f" ({', '.join(dict.fromkeys(kinds))})" if kinds else "")]
    if "structuredContent" in r:
        parts.append("structuredContent")
    if r.get("isError") is True:
        parts.append("isError")
    return ", ".join(parts)


_REQUESTS: dict[str, Summary] = {
    "initialize": _initialize_request,
    "tools/call": lambda p: f"{p.get('name', '(no name)')}({_args(p.get('arguments'))})",
    "prompts/get": lambda p: f"{p.get('name', '(no name)')}({_args(p.get('arguments'))})",
    "resources/read": lambda p: str(p.get("uri")),
    "sampling/createMessage": lambda p: (
        f"{len(p.get('messages') or [])} message(s), maxTokens {p.get('maxTokens')}"
    ),
    "elicitation/create": lambda p: str(p.get("message", "")),
}

_NOTIFICATIONS: dict[str, Summary] = {
    "notifications/progress": lambda p: (
        f"{p.get('progress')}" + (f"/{p.get('total')}" if "total" in p else "") + f" {p.get('message', '')}"
    ),
    "notifications/message": lambda p: f"{p.get('level')} {p.get('logger', '')}: {one_line(p.get('data'))}",
    "notifications/cancelled": lambda p: f"request {p.get('requestId')}: {p.get('reason', '')}",
}

_RESULTS: dict[str, Summary] = {
    "initialize": _initialize_result,
    "tools/call": _call_result,
    "tools/list": lambda r: f"tools {_names(r.get('tools'))}",
    "prompts/list": lambda r: f"prompts {_names(r.get('prompts'))}",
    "resources/list": lambda r: f"resources {_names(r.get('resources'))}",
    "resources/read": lambda r: f"{len(r.get('contents') or [])} content item(s)",
    "sampling/createMessage": lambda r: f"model {r.get('model')}, stopReason {r.get('stopReason')}",
    "elicitation/create": lambda r: f"action {r.get('action')}",
}


def _kind(message: object) -> str:
    """The JSON-RPC message kind (MCP-NOTES §3.1), or how the recorder wrapped what was not one."""
    if isinstance(message, list):
        return "batch"
    if not isinstance(message, Mapping):
        return "invalid"
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "error" in message:
        return "error"
    if "result" in message:
        return "result"
    # engine.trace records transport remarks as {"note": text}, bad lines as {"unparseable": text}
    # and batches as {"batch": [...]}.
    for wrapper in ("note", "unparseable", "batch"):
        if set(message) == {wrapper}:
            return wrapper
    return "invalid"


def _summarize(table: Mapping[str, Summary], key: str | None, payload: object) -> str:
    if not isinstance(payload, Mapping):
        return "" if payload is None else one_line(payload)
    summary = table.get(key) if key is not None else None
    if summary is None:
        return one_line(payload) if payload else ""
    try:
        return summary(payload)
    except (TypeError, AttributeError, ValueError):  # an odd-shaped message still gets a row
        return one_line(payload)


def _error_summary(error: object) -> str:
    if not isinstance(error, Mapping):
        return one_line(error)
    code = error.get("code")
    name = _ERROR_NAMES.get(code) if isinstance(code, int) else None
    return f"{code}{f' ({name})' if name else ''}: {error.get('message', '')}"


class _Row:
    __slots__ = ("arrow", "dir_title", "id", "kind", "message", "method", "summary", "time")

    def __init__(self) -> None:
        self.time = ""
        self.arrow = ""
        self.dir_title = ""
        self.kind = ""
        self.id = ""
        self.method = ""
        self.summary = ""
        self.message: object = None


def _count(items: list[Any]) -> str:
    return f"{len(items)} message{'' if len(items) == 1 else 's'}"


def _rows(entries: Sequence[Mapping[str, Any]], role: str) -> list[_Row]:
    times = [e.get("time") for e in entries]
    t0 = next((t for t in times if isinstance(t, (int, float))), None)
    # (direction of the request, its id as JSON) -> (method, time); ids are per sender, so the two
    # directions have separate id spaces (a server's sampling request may reuse id 1).
    pending: dict[tuple[str, str], tuple[str, float | None]] = {}
    return [_row(entry, role, t0, pending) for entry in entries]


def _row(
    entry: Mapping[str, Any],
    role: str,
    t0: float | None,
    pending: dict[tuple[str, str], tuple[str, float | None]],
) -> _Row:
    row = _Row()
    direction = str(entry.get("direction"))
    if direction == "note":
        row.arrow, row.dir_title = "·", "transport note"
    else:
        direction = "out" if direction == "out" else "in"
        to_server = (direction == "out") == (role == "client")
        row.arrow = "→" if to_server else "←"
        row.dir_title = "client → server" if to_server else "server → client"
    time = entry.get("time")
    time = float(time) if isinstance(time, (int, float)) else None
    if time is not None and t0 is not None:
        row.time = f"{(time - t0) * 1000:.1f}"
    message = row.message = entry.get("message")
    row.kind = _kind(message)
    if not isinstance(message, Mapping) or row.kind in ("note", "unparseable", "batch", "invalid"):
        inner = message.get(row.kind, message) if isinstance(message, Mapping) else message
        row.summary = _count(inner) if isinstance(inner, list) else one_line(inner)
        return row
    key = json_text(message.get("id"), indent=None)
    row.id = key if message.get("id") is not None else ""
    if row.kind in ("request", "notification"):
        row.method = str(message.get("method"))
        table = _REQUESTS if row.kind == "request" else _NOTIFICATIONS
        row.summary = _summarize(table, row.method, message.get("params"))
        if row.kind == "request":
            pending[(direction, key)] = (row.method, time)
        return row
    other = "in" if direction == "out" else "out"
    row.method, asked_at = pending.get((other, key), ("", None))
    if row.kind == "result":
        row.summary = _summarize(_RESULTS, row.method or None, message.get("result"))
    else:
        row.summary = _error_summary(message.get("error"))
    if asked_at is not None and time is not None:
        row.summary += f" · {(time - asked_at) * 1000:.1f} ms after the request"
    return row


_LEAF = 200  # a longer string in a message (base64 data, long text) is shortened in the JSON view


def _shortened(value: object) -> object:
    if isinstance(value, str) and len(value) > _LEAF:
        return f"{value[:60]}… ({len(value):,} characters)"
    if isinstance(value, Mapping):
        return {k: _shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shortened(v) for v in value]
    return value


def _json_details(message: object, max_json: int) -> str:
    text = json_text(_shortened(message))  # whole base64 payloads taught nothing and filled the page
    note = ""
    if len(text) > max_json:
        note = truncate_note(max_json, len(text))
        text = text[:max_json]
    # Copy beside each message (issue 19: trace rows had none), copying the JSON as shown
    return (
        f'<div class="mcpnb-copyable"><span style="float:right">{copy_button()}</span>'
        f'<details><summary>JSON</summary><pre class="mcpnb-pre">{esc(text)}</pre>{note}</details></div>'
    )


def trace_bundle(
    entries: Sequence[Mapping[str, Any]],
    *,
    role: Literal["client", "server"] = "client",
    max_json: int = 20_000,
    max_summary: int = 120,
) -> dict[str, str]:
    """The recorded JSON-RPC conversation as a table (``text/html``) and aligned lines (``text/plain``).

    ``role`` says which side recorded the entries, so that "out" from a server is drawn as ← (server to
    client). Each message's JSON is pretty-printed in a collapsed ``<details>`` and cut at ``max_json``.
    """
    legend = "→ client to server · ← server to client · t in ms from the first message"
    if not entries:
        return {
            "text/html": wrap('<div class="mcpnb-note">(no messages)</div>'),
            "text/plain": "(no messages)",
        }
    rows = _rows(entries, role)
    head = "".join(f"<th>{h}</th>" for h in ("t (ms)", "", "kind", "id", "method", "summary and JSON"))
    body = []
    for r in rows:
        kind_cls = ' class="mcpnb-bad"' if r.kind in ("error", "invalid", "unparseable") else ""
        summary = one_line(r.summary, max_summary)
        body.append(
            f'<tr><td>{esc(r.time)}</td><td title="{esc(r.dir_title)}">{r.arrow}</td>'
            f"<td{kind_cls}>{esc(r.kind)}</td><td>{esc(r.id)}</td><td><code>{esc(r.method)}</code></td>"
            f"<td>{esc(summary)}{_json_details(r.message, max_json)}</td></tr>"
        )
    # fixed column widths and the JSON under its summary: opening a message grows its row, and no
    # column moves (issue 11 item 7)
    cols = "".join(f'<col style="width:{w}">' for w in ("4.5em", "1.5em", "7em", "3.5em", "13em", "auto"))
    table = (
        f'<table class="mcpnb-table mcpnb-trace" style="table-layout:fixed;width:100%">'
        f"<colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
    html = f'<div class="mcpnb-note">{esc(legend)}</div>{table}'
    lines = [legend]
    for r in rows:
        line = (
            f"{r.time:>9} {r.arrow} {r.kind:<12} {r.id:<6} {r.method:<28} {one_line(r.summary, max_summary)}"
        )
        lines.append(line.rstrip())
    return {"text/html": wrap(html), "text/plain": "\n".join(lines)}
