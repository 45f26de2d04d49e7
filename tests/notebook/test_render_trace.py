"""The teaching views: the JSON-RPC trace table and the generic table (rendering.trace, rendering.base).

Messages in a trace come from the peer, so the HTML is parsed to check what a browser would really see.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from mcp_notebook.notebook.rendering.results import table_bundle, trace_bundle
from tests.notebook._html import Elements

# ------------------------------------------------------------------------------------------- trace


def _msg(direction: str, time: float, message: dict[str, Any]) -> dict[str, Any]:
    return {"direction": direction, "time": time, "message": {"jsonrpc": "2.0", **message}}


TRACE = [
    _msg(
        "out",
        1000.0,
        {"id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
    ),
    _msg(
        "in",
        1000.005,
        {"method": "notifications/progress", "params": {"progressToken": "p", "progress": 1, "total": 2}},
    ),
    # The server's own request reuses id 1: ids are per sender, so this must not steal the match.
    _msg("in", 1000.006, {"id": 1, "method": "roots/list"}),
    _msg("out", 1000.007, {"id": 1, "result": {"roots": []}}),
    _msg(
        "in",
        1000.010,
        {"id": 1, "result": {"content": [{"type": "text", "text": "3"}], "structuredContent": {"s": 3}}},
    ),
    _msg("out", 1000.020, {"id": "b", "method": "tools/list"}),
    _msg("in", 1000.0255, {"id": "b", "error": {"code": -32601, "message": "<no> tools"}}),
]


def _rows(bundle: dict[str, str]) -> list[list[str]]:
    """The table's rows as the text of each cell (without the collapsed JSON column)."""

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.rows: list[list[str]] = []
            self.depth = 0  # inside <details>

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "tr":
                self.rows.append([])
            elif tag == "td" and self.rows:
                self.rows[-1].append("")
            elif tag in ("details", "button"):
                self.depth += 1

        def handle_endtag(self, tag: str) -> None:
            if tag in ("details", "button"):
                self.depth -= 1

        def handle_data(self, data: str) -> None:
            if self.rows and self.rows[-1] and not self.depth:
                self.rows[-1][-1] += data

    cells = Cells()
    cells.feed(bundle["text/html"])
    return [row[:6] for row in cells.rows if row]


def test_trace_table_kinds_arrows_ids_and_methods() -> None:
    bundle = trace_bundle(TRACE)
    rows = _rows(bundle)
    assert rows[0] == ["0.0", "→", "request", "1", "tools/call", "add(a=1, b=2)"]
    assert rows[1] == ["5.0", "←", "notification", "", "notifications/progress", "1/2"]
    assert rows[2][:5] == ["6.0", "←", "request", "1", "roots/list"]
    assert rows[3][:5] == ["7.0", "→", "result", "1", "roots/list"]  # answers the server's id 1
    assert rows[4][:5] == ["10.0", "←", "result", "1", "tools/call"]  # answers our id 1
    assert rows[4][5] == "1 content block(s) (text), structuredContent · 10.0 ms after the request"
    assert rows[5][:5] == ["20.0", "→", "request", '"b"', "tools/list"]
    assert rows[6][:5] == ["25.5", "←", "error", '"b"', "tools/list"]
    assert rows[6][5].startswith("-32601 (Method not found): <no> tools")
    assert "→ client to server · ← server to client" in bundle["text/plain"]
    parsed = Elements(bundle["text/html"])
    assert parsed.named("script") == [] and parsed.named("a") == []


def test_trace_full_json_is_pretty_escaped_and_collapsed() -> None:
    bundle = trace_bundle(TRACE)
    parsed = Elements(bundle["text/html"])
    details = parsed.named("details")
    assert len(details) == len(TRACE) and all("open" not in d for d in details)
    assert json.dumps(TRACE[6]["message"], indent=2) in parsed.all_text
    assert "&lt;no&gt; tools" in bundle["text/html"]


def test_trace_truncates_big_messages() -> None:
    entry = _msg("in", 0.0, {"id": 1, "result": {"content": [{"type": "text", "text": "x" * 100_000}]}})
    bundle = trace_bundle([entry], max_json=1_000)
    assert len(bundle["text/html"]) < 10_000
    assert "… (100,000 characters)" in bundle["text/html"]  # a long string is shortened in place
    many = _msg("in", 0.0, {"id": 1, "result": {"items": [f"item {i}" for i in range(1_000)]}})
    assert "left out" in trace_bundle([many], max_json=1_000)["text/html"]  # a long message is cut


def test_trace_rows_keep_their_columns_when_a_message_opens() -> None:
    """Issue 11 item 7: the JSON sits under its summary in a fixed-layout table."""
    image = {"type": "image", "mimeType": "image/png", "data": "iVBOR" + "A" * 50_000}
    entry = _msg("in", 0.0, {"id": 1, "result": {"content": [image]}})
    html = trace_bundle([entry])["text/html"]
    assert "table-layout:fixed" in html and "<colgroup>" in html
    assert "A" * 1_000 not in html and "50,005 characters" in html


def test_every_trace_row_has_a_copy_button_for_its_json() -> None:
    """Issue 19: trace rows had no Copy (failed before). Each message's Copy copies the <pre> of its own
    row (the button and the JSON share one .mcpnb-copyable)."""
    html = trace_bundle(TRACE)["text/html"]
    rows = html.split("<tbody>")[1].split("<tr>")[1:]
    assert len(rows) == len(TRACE)
    for row in rows:
        assert row.count('class="mcpnb-copy"') == 1 and row.count('class="mcpnb-copyable"') == 1
        assert row.index('class="mcpnb-copyable"') < row.index('mcpnb-copy"') < row.index("<pre")


def test_trace_plain_text_lines() -> None:
    lines = trace_bundle(TRACE)["text/plain"].splitlines()
    assert len(lines) == len(TRACE) + 1
    assert lines[1].split() == ["0.0", "→", "request", "1", "tools/call", "add(a=1,", "b=2)"]
    assert lines[7].split()[:5] == ["25.5", "←", "error", '"b"', "tools/list"]


def test_trace_from_the_server_side_flips_arrows() -> None:
    rows = _rows(
        trace_bundle(
            [_msg("in", 0.0, {"id": 7, "method": "ping"}), _msg("out", 0.001, {"id": 7, "result": {}})],
            role="server",
        )
    )
    assert rows[0][:5] == ["0.0", "→", "request", "7", "ping"]
    assert rows[1][:5] == ["1.0", "←", "result", "7", "ping"]


def test_trace_odd_entries() -> None:
    assert trace_bundle([])["text/plain"] == "(no messages)"
    rows = _rows(
        trace_bundle([{"direction": "in", "message": "garbage"}, {"direction": "in", "message": [1, 2]}])
    )
    assert [r[2] for r in rows] == ["invalid", "batch"]
    assert rows[1][5] == "2 messages"
    recorded = [
        {"direction": "note", "time": 0.0, "message": {"note": "server stderr: <warn>"}},
        {"direction": "in", "time": 0.001, "message": {"unparseable": "{not json"}},
        {"direction": "in", "time": 0.002, "message": {"batch": [{"jsonrpc": "2.0", "method": "x"}]}},
    ]
    rows = _rows(trace_bundle(recorded))  # the shapes mcp_notebook.engine.trace.Trace.entries() produces
    assert [r[1:3] + r[5:] for r in rows] == [
        ["·", "note", "server stderr: <warn>"],
        ["←", "unparseable", "{not json"],
        ["←", "batch", "1 message"],
    ]
    orphan = _rows(trace_bundle([_msg("in", 0.0, {"id": 99, "result": {"x": 1}})]))
    assert orphan[0][2:5] == ["result", "99", ""]


# ------------------------------------------------------------------------------------------- table


def test_table_bundle_columns_escaping_and_text() -> None:
    rows: list[dict[str, Any]] = [
        {"name": "add", "description": "<b>adds</b>"},
        {"name": "mul", "tags": ["x", "y"]},
    ]
    bundle = table_bundle(rows, title="Tools <list>")
    parsed = Elements(bundle["text/html"])
    assert [t for t, _ in parsed.tags if t == "th"] == ["th", "th", "th"]
    assert parsed.named("b") == []
    assert "<b>adds</b>" in parsed.all_text and "Tools <list>" in parsed.all_text
    assert bundle["text/plain"].splitlines() == [
        "Tools <list>",
        "name  description  tags",
        "----  -----------  ---------",
        "add   <b>adds</b>",
        'mul                ["x","y"]',
    ]


def test_table_bundle_explicit_columns_and_empty() -> None:
    bundle = table_bundle([{"a": 1, "b": 2}], columns=["b"])
    assert bundle["text/plain"].splitlines() == ["b", "-", "2"]
    assert "(no rows)" in table_bundle([])["text/plain"]
    assert "(no rows)" in Elements(table_bundle([], title="x")["text/html"]).all_text
