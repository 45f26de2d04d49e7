"""``%mcp tools`` rows are clickable into the tool's form, in the same cell output (issue 19).

Before: the listing was a static table (no ``ToolList``, no buttons); these tests failed.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.notebook.calls.tool_list import ToolList
from mcp_notebook.notebook.calls.widgets import WIDGET_MIME, ToolForm
from tests.notebook.ipyshell import WAIT, api, published


def add_tool(mcp: Any) -> None:
    @mcp.tool
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b


def test_a_row_button_opens_the_tools_form_under_the_list(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    add_tool(mcp)
    shell.run_cell("%mcp tools")
    [listing_out] = [
        o for o in published(shell) if str(o["transient"]["display_id"]).startswith("mcp-tools-")
    ]
    assert WIDGET_MIME in listing_out["data"] and "<td>add</td>" in listing_out["data"]["text/html"]
    listing = mcp.tools()
    assert isinstance(listing, ToolList) and listing.rows[0]["call as"] == "add"
    listing._ipython_display_()
    listing.buttons["add"].click()  # as the person clicks it
    [form] = listing.forms
    assert isinstance(form, ToolForm)
    same = mcp.form("add")  # the form %mcp form add gives
    assert form.form.schema == same.form.schema and form.title == same.title
    shown = [o["transient"]["display_id"] for o in published(shell)]
    assert form.display_id in shown and form.result_display_id in shown
    assert shown.index(form.display_id) > shown.index(listing.display_id)  # under the list
    handle = form.submit({"a": 40})
    handle.wait(WAIT)
    assert handle.structured == {"result": 42}
    [*_, last] = [o for o in published(shell) if o["transient"]["display_id"] == form.result_display_id]
    assert "42" in last["data"]["text/plain"]


def test_open_from_code_and_unknown_names(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    add_tool(mcp)
    listing = mcp.tools()
    assert listing.open("add").label == "add"
    with pytest.raises(KeyError, match="no tool 'nope'"):
        listing.open("nope")


def test_without_a_frontend_the_list_is_the_static_table(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "1")
    mcp = api(shell)
    add_tool(mcp)
    bundle = mcp.tools()._repr_mimebundle_()
    assert WIDGET_MIME not in bundle and "add" in bundle["text/plain"]


def test_a_long_listing_makes_one_widget_per_cell(shell: Any, interactive: None) -> None:
    """Before: each cell and button had its own layout and style widgets (~3 per cell): 100 tools made
    ~1,200 widgets, and a server with 300 tools took seconds to list."""
    from ipywidgets.widgets import widget as widget_module

    from mcp_notebook.notebook.calls.surface import Surface

    tools = [
        (
            "big",
            {
                "name": f"tool_{i}",
                "description": "<b>not bold</b> does a thing",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        )
        for i in range(100)
    ]
    listing = ToolList(tools, open_form=lambda name: None, surface=Surface(shell))  # type: ignore[arg-type,return-value]
    before = len(widget_module._instances)
    grid = listing.widget.children[1]
    made = len(widget_module._instances) - before
    cells = 100 * (len(listing.columns) or 0) + len(listing.columns)  # a header row and 100 rows
    assert len(grid.children) == cells and made <= cells + 20, made  # + the box, head and output
    assert "<b>not bold</b>" not in str([c.value for c in grid.children if hasattr(c, "value")])


def test_more_tools_than_the_bound_is_the_static_table_with_a_note(shell: Any, interactive: None) -> None:
    """Before: any number of tools got a live grid (a few widgets per row: 5,000 tools, ~20,000 widgets)."""
    from mcp_notebook.notebook.calls.surface import Surface
    from mcp_notebook.notebook.calls.tool_list import MAX_LIVE_TOOLS

    tools = [("big", {"name": f"t{i}", "inputSchema": {"type": "object"}}) for i in range(MAX_LIVE_TOOLS + 1)]
    opened: list[str] = []

    class Shown:  # a stand-in for the form the opener makes
        def _ipython_display_(self) -> None:
            opened.append("shown")

    def open_form(name: str) -> Any:
        opened.append(name)
        return Shown()

    listing = ToolList(tools, open_form=open_form, surface=Surface(shell))
    bundle = listing._repr_mimebundle_()
    assert WIDGET_MIME not in bundle and f"more than {MAX_LIVE_TOOLS}, so no buttons" in bundle["text/html"]
    listing.open("big.t7")  # from code, still
    assert opened == ["big.t7", "shown"]


def test_a_schema_nested_hundreds_deep_is_listed_and_its_form_refused_clearly(
    shell: Any, interactive: None
) -> None:
    """Before: %mcp tools raised RecursionError for every server (indenting the schema's JSON recursed,
    and so did the repr fallback), and opening the form raised a bare RecursionError."""
    from mcp_notebook.notebook.calls.surface import Surface
    from mcp_notebook.notebook.forms.form import SchemaForm
    from mcp_notebook.tools.validation import SchemaProblem

    deep: dict[str, Any] = {"type": "string"}
    for _ in range(500):
        deep = {"type": "object", "properties": {"x": deep}}
    schema = {"type": "object", "properties": {"root": deep}}
    listing = ToolList(
        [("ev", {"name": "deep", "inputSchema": schema})], open_form=print, surface=Surface(shell)
    )
    bundle = listing._repr_mimebundle_()
    html = bundle["text/html"]
    assert "schemas of ev.deep" in html and "<td>ev.deep</td>" in html
    shown = html.split("<b>inputSchema</b>")[1]  # compact JSON, or the note when even that is too deep
    assert (
        shown.startswith('<pre class="mcpnb-pre">{&quot;type&quot;') or "(nested too deeply to show)" in shown
    )
    with pytest.raises(SchemaProblem, match="nested too deeply to make a form"):
        SchemaForm(schema)


def test_an_input_schema_that_is_not_an_object_is_listed_and_its_form_refused_clearly(shell: Any) -> None:
    """Before: "dictionary update sequence element #0 has length 1; 2 is required"."""
    from mcp_notebook.notebook.calls.surface import Surface
    from mcp_notebook.notebook.forms.form import SchemaForm
    from mcp_notebook.tools.validation import SchemaProblem

    listing = ToolList([("ev", {"name": "odd", "inputSchema": "x"})], open_form=print, surface=Surface(shell))
    assert "<td>ev.odd</td>" in listing._repr_mimebundle_()["text/html"]
    with pytest.raises(SchemaProblem, match="the schema is a str, not a JSON object"):
        SchemaForm("x")  # type: ignore[arg-type]


def test_names_and_descriptions_with_markup_are_text_in_the_table_and_its_live_face(shell: Any) -> None:
    """A hostile server's tool names, titles and descriptions (dots, unicode, HTML): escaped in the static
    table (what a saved notebook keeps) and in every live cell; a button's label is plain text."""
    from mcp_notebook.notebook.calls.surface import Surface

    names = ["a.b", "<img src=x onerror=alert(1)>", "naïve_ü", "x\"'><b>"]
    tools = [
        (
            "ev",
            {"name": n, "title": "<i>t</i>", "description": "<script>alert(1)</script>", "inputSchema": {}},
        )
        for n in names
    ]
    listing = ToolList(tools, open_form=print, surface=Surface(shell))
    static = listing.static_bundle()["text/html"]
    live = [c.value for c in listing.widget.children[1].children if hasattr(c, "value")]
    for markup in [static, *live]:
        for raw in ("<img", "<script>", "<i>t", "<b>'"):
            assert raw not in markup, (raw, markup[:200])
    assert "&lt;img src=x onerror=alert(1)&gt;" in static and "naïve_ü" in static
    assert set(listing.buttons) == {f"ev.{n}" for n in names}
