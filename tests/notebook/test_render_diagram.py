"""The trace as a sequence diagram (``%mcp trace --diagram``): lifelines, one arrow per message in order,
styles per kind, timing, escaping, and a click target for every arrow that names its JSON.

The HTML is parsed as a browser would read it; the click itself runs in Chromium in
``tests/browser/test_diagram.py``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_notebook.notebook.rendering.diagram import diagram_bundle, diagram_html, diagram_toggle
from mcp_notebook.notebook.rendering.views import TraceView
from tests.notebook._html import Elements
from tests.notebook.test_render_trace import TRACE, _msg


def _arrows(html: str) -> list[dict[str, str | None]]:
    return Elements(html).named("g")


def test_one_arrow_per_message_in_order_with_direction_and_kind() -> None:
    html = diagram_bundle(TRACE, server="demo")["text/html"]
    page = Elements(html)
    groups = page.named("g")
    assert [g["data-kind"] for g in groups] == [
        "request", "notification", "request", "result", "result", "request", "error"
    ]  # fmt: skip
    assert [g["data-seq-n"] for g in groups] == [str(n) for n in range(1, 8)]
    # the lifelines' heads: the client and the server named by the caller
    assert "client" in page.all_text and "demo" in page.all_text
    lines = page.named("line")
    arrows = [(ln["x1"], ln["x2"]) for ln in lines if ln.get("y1") == ln.get("y2")]
    # the first arrow goes client (x=150) -> server, the roots/list request server -> client
    assert float(arrows[0][0] or 0) < float(arrows[0][1] or 0)
    assert float(arrows[2][0] or 0) > float(arrows[2][1] or 0)


def test_styles_say_what_a_message_is() -> None:
    html = diagram_html(TRACE)
    page = Elements(html)
    dashes = [ln.get("stroke-dasharray") for ln in page.named("line") if ln.get("y1") == ln.get("y2")]
    # request solid, progress dotted, roots/list solid, two results dashed, request solid, error dashed
    assert dashes == [None, "2 3", None, "6 4", "6 4", None, "6 4"]
    strokes = [ln.get("stroke") for ln in page.named("line") if ln.get("y1") == ln.get("y2")]
    assert strokes[1] == "#2e9a48" and strokes[-1] == "#d03030"  # progress green, error red


def test_labels_carry_method_id_summary_and_timing() -> None:
    text = Elements(diagram_html(TRACE)).all_text
    assert "#1 tools/call" in text and "add(a=1, b=2)" in text
    assert "10.0 ms after the request" in text  # the result's label: how long the call took
    assert "25.5 ms" in text  # the time margin
    assert "-32601 (Method not found)" in text


def test_every_arrow_opens_its_own_json() -> None:
    html = diagram_html(TRACE)
    page = Elements(html)
    keys = [d["data-seq-json"] for d in page.named("details")]
    assert len(keys) == len(TRACE) == len(set(keys))
    for group, key in zip(page.named("g"), keys, strict=True):
        assert f'[data-seq-json="{key}"]' in (group["onclick"] or "")
    # the JSON of message 5 is in item 5, whole
    assert '"structuredContent": {' in page.all_text


def test_peer_text_is_escaped_everywhere() -> None:
    evil = '<script>alert(1)</script>" onload="x'
    entries = [
        _msg("out", 1.0, {"id": 1, "method": "tools/call", "params": {"name": evil, "arguments": {}}}),
        _msg("in", 1.1, {"id": 1, "error": {"code": 1, "message": evil}}),
        {"direction": "note", "time": 1.2, "message": {"note": evil}},
    ]
    html = diagram_bundle(entries, server=evil)["text/html"]
    page = Elements(html)
    assert not page.named("script")
    assert all("onload" not in attrs for _tag, attrs in page.tags)
    assert evil in page.all_text  # shown, as text


def test_notes_and_empty_traces() -> None:
    entries = [{"direction": "note", "time": 1.0, "message": {"note": "stderr: started"}}]
    assert "note: stderr: started" in Elements(diagram_html(entries)).all_text
    assert diagram_bundle([])["text/plain"] == "(no messages)"


def test_plain_text_lanes() -> None:
    text = diagram_bundle(TRACE)["text/plain"]
    lines = text.splitlines()
    assert "client" in lines[0] and "server" in lines[0]
    assert "#1 tools/call" in lines[1] and lines[1].rstrip().endswith(">|")
    assert "#1 roots/list" in lines[3] and "|<" in lines[3]


def test_trace_view_toggle_opens_the_table_rows() -> None:
    view = TraceView([("demo", TRACE)])
    html = view._repr_mimebundle_()["text/html"]
    page = Elements(html)
    summaries = [d for d in page.named("details") if d.get("class") == "mcpnb-seq-toggle"]
    assert len(summaries) == 1 and "open" not in summaries[0]  # collapsed by default
    groups = page.named("g")
    assert "table.mcpnb-table details')[0]" in (groups[0]["onclick"] or "")
    assert len(page.named("tr")) == len(TRACE) + 1  # the table is still there
    diagram = TraceView([("demo", TRACE)], diagram=True)._repr_mimebundle_()
    assert not Elements(diagram["text/html"]).named("table") and "(ms)" in diagram["text/plain"]
    assert diagram_toggle([], "x", "<p>t</p>") == "<p>t</p>"


def test_round_trips_through_json() -> None:
    # a saved notebook keeps the bundle as JSON strings: nothing in it needs the kernel
    bundle: dict[str, Any] = diagram_bundle(TRACE)
    assert json.loads(json.dumps(bundle)) == bundle
