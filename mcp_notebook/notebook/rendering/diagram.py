"""The JSON-RPC conversation as a sequence diagram (``%mcp trace --diagram``), for teaching the protocol.

Two lifelines, client and server; one arrow per message, top to bottom in the order they passed: a request
is a solid arrow, its result a dashed one back (red when it is an error), a notification a dotted arrow,
progress in its own colour, transport notes in the middle. The left margin has the time (ms from the
first message); a result's label says how long its request took.

The picture is plain inline SVG inside the HTML output, so it survives a saved notebook and an HTML
export (nbconvert) unchanged. Every message's JSON sits under the picture in a collapsed ``<details>``;
clicking an arrow opens (and scrolls to) its JSON with a one-line ``onclick``, and without script the
numbered list is still there to read. Messages come from the peer: every string is escaped.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mcp_notebook.notebook.rendering.base import esc, json_text, one_line, truncate_note, wrap
from mcp_notebook.notebook.rendering.trace import _rows

__all__ = ["STYLE", "diagram_bundle", "diagram_html", "diagram_text", "diagram_toggle"]

_ids = itertools.count(1)

WIDTH = 760
LEFT, RIGHT = 150, 690  # x of the client and server lifelines
TOP = 56  # first arrow's y
ROW = 38  # px per message
STYLE = """<style>
.mcpnb svg.mcpnb-seq{font-family:var(--jp-code-font-family,monospace);font-size:11px;max-width:100%}
.mcpnb svg.mcpnb-seq text{fill:currentColor}
.mcpnb svg.mcpnb-seq .mcpnb-seq-msg{cursor:pointer}
.mcpnb svg.mcpnb-seq .mcpnb-seq-msg:hover .mcpnb-seq-hit{fill:rgba(127,127,127,.15)}
.mcpnb .mcpnb-seq-list{max-height:320px;overflow:auto}
.mcpnb .mcpnb-seq-list details[open]>summary{font-weight:600}
</style>"""

# kind -> (stroke colour, dash pattern); None colour = currentColor (reads in light and dark themes)
_LOOK: dict[str, tuple[str | None, str]] = {
    "request": (None, ""),
    "result": (None, "6 4"),
    "error": ("#d03030", "6 4"),
    "notification": ("#3070c0", "2 3"),
    "progress": ("#2e9a48", "2 3"),
    "batch": ("#a060c0", ""),
    "invalid": ("#d03030", "2 2"),
    "unparseable": ("#d03030", "2 2"),
}
# what a click on arrow n opens: its item in the list under the picture, or (when the picture is the
# toggle above a trace table) the JSON <details> of the table's row n
_FIND = {
    "list": "querySelector('[data-seq-json=&quot;{key}&quot;]')",
    "table": "querySelectorAll('table.mcpnb-table details')[{index}]",
}
_OPEN_JSON = "var d=this.closest('.mcpnb').{find};if(d){{d.open=true;d.scrollIntoView({{block:'nearest'}});}}"


def _look(kind: str, method: str) -> tuple[str | None, str]:
    if kind == "notification" and method == "notifications/progress":
        return _LOOK["progress"]
    return _LOOK.get(kind, (None, ""))


def _arrow(n: int, key: str, row: Any, y: int, max_label: int, target: str) -> str:
    colour, dash = _look(row.kind, row.method)
    stroke = colour or "currentColor"
    label = " ".join(p for p in (f"#{row.id}" if row.id else "", row.method or row.kind) if p)
    summary = one_line(row.summary, max_label)
    tip = f"{n}. {row.dir_title}: {row.kind} {row.method} {row.summary}".strip()
    time = f"{row.time} ms" if row.time else ""
    weight = ' font-weight="600"' if row.kind == "request" else ""
    colour_attr = f' fill="{colour}"' if colour else ""
    parts = [
        f'<g class="mcpnb-seq-msg" data-seq-n="{n}" data-kind="{esc(row.kind)}" '
        f'onclick="{_OPEN_JSON.format(find=_FIND[target].format(key=esc(key), index=n - 1))}">',
        f"<title>{esc(tip)}</title>",
        f'<rect class="mcpnb-seq-hit" x="0" y="{y - ROW + 8}" width="{WIDTH}" height="{ROW}" '
        'fill="transparent"/>',
        f'<text x="4" y="{y + 4}" opacity=".6">{esc(time)}</text>',
    ]
    if row.arrow == "·":  # a transport note: a box on the middle, not an arrow
        mid = (LEFT + RIGHT) // 2
        parts.append(f'<text x="{mid}" y="{y + 4}" text-anchor="middle" font-style="italic" opacity=".7">')
        parts.append(f"note: {esc(one_line(row.summary, max_label))}</text></g>")
        return "".join(parts)
    x1, x2 = (LEFT, RIGHT) if row.arrow == "→" else (RIGHT, LEFT)
    tip_x = x2 - 9 if x2 > x1 else x2 + 9
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    mid = (LEFT + RIGHT) // 2
    parts += [
        f'<line x1="{x1}" y1="{y}" x2="{tip_x}" y2="{y}" stroke="{stroke}" stroke-width="1.5"{dash_attr}/>',
        f'<polygon points="{x2},{y} {tip_x},{y - 4} {tip_x},{y + 4}" fill="{stroke}"/>',
        f'<text x="{mid}" y="{y - 5}" text-anchor="middle"{weight}{colour_attr}>{esc(label)}</text>',
        f'<text x="{mid}" y="{y + 13}" text-anchor="middle" opacity=".75">{esc(summary)}</text>',
        "</g>",
    ]
    return "".join(parts)


def _json_item(n: int, key: str, row: Any, max_json: int) -> str:
    text = json_text(row.message)
    note = ""
    if len(text) > max_json:
        note = truncate_note(max_json, len(text))
        text = text[:max_json]
    head = f"{n}. {row.arrow} {row.kind} {('#' + row.id) if row.id else ''} {row.method}"
    return (
        f'<details data-seq-json="{esc(key)}"><summary>{esc(" ".join(head.split()))}</summary>'
        f'<pre class="mcpnb-pre">{esc(text)}</pre>{note}</details>'
    )


def diagram_html(
    entries: Sequence[Mapping[str, Any]],
    *,
    role: Literal["client", "server"] = "client",
    client: str = "client",
    server: str = "server",
    max_json: int = 20_000,
    max_label: int = 90,
    json_list: bool = True,
) -> str:
    """The SVG diagram and the list of each message's JSON, as one HTML fragment (not wrapped).

    ``json_list=False`` leaves the list out: the picture then sits above a trace table (the toggle of
    :class:`~mcp_notebook.notebook.rendering.views.TraceView`) and an arrow opens the JSON of the table's row.
    """
    if not entries:
        return '<div class="mcpnb-note">(no messages)</div>'
    uid = f"seq{next(_ids)}"
    rows = _rows(entries, role)
    height = TOP + ROW * len(rows) + 10
    body = [
        f'<svg class="mcpnb-seq" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="sequence diagram: {len(rows)} messages">'
    ]
    for x, name in ((LEFT, client), (RIGHT, server)):
        body.append(
            f'<rect x="{x - 70}" y="4" width="140" height="24" rx="4" fill="rgba(127,127,127,.12)" '
            f'stroke="currentColor" stroke-opacity=".5"/>'
            f'<text x="{x}" y="20" text-anchor="middle" font-weight="600">{esc(one_line(name, 20))}</text>'
            f'<line x1="{x}" y1="28" x2="{x}" y2="{height}" stroke="currentColor" stroke-opacity=".35" '
            f'stroke-dasharray="4 4"/>'
        )
    body.append(f'<text x="4" y="{TOP - 20}" opacity=".6">t (ms)</text>')
    for n, row in enumerate(rows, 1):
        target = "list" if json_list else "table"
        body.append(_arrow(n, f"{uid}-{n}", row, TOP + ROW * (n - 1), max_label, target))
    body.append("</svg>")
    if not json_list:
        return "".join(body)
    items = "".join(_json_item(n, f"{uid}-{n}", row, max_json) for n, row in enumerate(rows, 1))
    legend = (
        "→ request (solid) · ⇠ result (dashed; red: error) · ··· notification (blue; green: progress) · "
        "click an arrow for its JSON"
    )
    return (
        f'<div class="mcpnb-note">{esc(legend)}</div>{"".join(body)}<div class="mcpnb-seq-list">{items}</div>'
    )


def diagram_text(entries: Sequence[Mapping[str, Any]], role: Literal["client", "server"] = "client") -> str:
    """The same conversation as ASCII lanes, for a terminal."""
    lines = [f"{'t (ms)':>9}  client{' ' * 40}server"]
    for row in _rows(entries, role):
        label = one_line(
            " ".join(p for p in (f"#{row.id}" if row.id else "", row.method or row.kind) if p), 40
        )
        if row.arrow == "·":
            lines.append(f"{row.time:>9}  note: {one_line(row.summary, 60)}")
            continue
        line = "-" if row.kind == "request" else "·"
        if row.arrow == "→":
            lines.append(f"{row.time:>9}  |{(' ' + label + ' ').center(44, line)}>|")
        else:
            lines.append(f"{row.time:>9}  |<{(' ' + label + ' ').center(44, line)}|")
    return "\n".join(lines)


def diagram_bundle(
    entries: Sequence[Mapping[str, Any]],
    *,
    role: Literal["client", "server"] = "client",
    client: str = "client",
    server: str = "server",
    max_json: int = 20_000,
) -> dict[str, str]:
    """``text/html`` (inline SVG, scoped CSS) and ``text/plain`` (ASCII lanes) of one conversation."""
    html = diagram_html(entries, role=role, client=client, server=server, max_json=max_json)
    text = diagram_text(entries, role) if entries else "(no messages)"
    return {"text/html": wrap(STYLE + html), "text/plain": text}


def diagram_toggle(entries: Sequence[Mapping[str, Any]], server: str, table_html: str) -> str:
    """A trace table with its sequence diagram in a collapsed toggle above it (clicks open table rows)."""
    if not entries:
        return table_html
    svg = diagram_html(entries, server=server, json_list=False)
    toggle = f'<details class="mcpnb-seq-toggle"><summary>sequence diagram</summary>{svg}</details>'
    return f'<div class="mcpnb">{STYLE}{toggle}{table_html}</div>'
