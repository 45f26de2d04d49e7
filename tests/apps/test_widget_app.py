"""``@mcp.tool(app=MyWidget)``: an anywidget served as an MCP App (apps/widget_app.py). The resource is one
self-contained page (the widget's module and style, its traits as state, the bridge adapter), listed on the
tool as ``_meta.ui.resourceUri``; nothing in it points outside the page. (In Chromium:
tests/browser/test_widget_app.py; the official SDK's client: tests/apps/test_served_app_interop.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anywidget
import pytest
import traitlets

from mcp_notebook.notebook.apps import APP_MIME, EXTENSION
from mcp_notebook.notebook.apps.widget_app import _IMPORTS, MAX_STATE_CHARS, widget_document, widget_state
from tests.notebook import ipyshell

shell = ipyshell.shell
shell_factory = ipyshell.shell_factory

ESM = """function render({ model, el }) {
  el.textContent = `${model.get("label")}: ${model.get("count")}`;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");  // a URL that is only a name
}
export default { render };
"""


class Counter(anywidget.AnyWidget):
    _esm = ESM
    _css = ".count { color: green }"
    count = traitlets.Int(3).tag(sync=True)
    label = traitlets.Unicode().tag(sync=True)
    blob = traitlets.Bytes(b"\x00\xff").tag(sync=True)
    hidden = traitlets.Int(1)  # not synced: not the widget's state

    @traitlets.default("label")
    def _label(self) -> str:
        return "clicks"


DATA = re.compile(r'<script type="application/json" id="mcpnb-widget">(.*?)</script>', re.DOTALL)


def config_of(document: str) -> dict[str, Any]:
    found = DATA.search(document)
    assert found is not None, document[:300]
    loaded: dict[str, Any] = json.loads(found.group(1))
    return loaded


def test_a_widget_class_is_served_as_a_self_contained_app(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]

    @mcp.tool(app=Counter)
    def counter(start: int) -> dict[str, int]:
        """Count from start."""
        return {"count": start}

    definition = mcp.tool_def("counter")
    assert definition["_meta"] == {"ui": {"resourceUri": "ui://notebook/counter.html"}}
    assert EXTENSION in mcp.server.extensions
    client = mcp.calls.client("local")
    listed = {r["uri"]: r for r in client.list_resources()}
    assert listed["ui://notebook/counter.html"]["mimeType"] == APP_MIME
    [item] = client.read_resource("ui://notebook/counter.html")["contents"]
    assert item["mimeType"] == APP_MIME
    document = item["text"]
    config = config_of(document)
    assert config["esm"] == ESM  # the module, unmodified
    assert config["css"] == ".count { color: green }"
    assert config["state"] == {"count": 3, "label": "clicks", "blob": "AP8="}  # defaults, dynamic ones too
    assert config["binary"] == ["blob"]
    assert config["name"] == "counter" and config["saveTool"] is None and config["sendTool"] is None
    # CSP-safe: nothing in the page is fetched. The only URL is the one the widget's code holds as a name.
    assert re.findall(r"https?://[^\s\"'\\]+", document) == ["http://www.w3.org/2000/svg"]
    assert not re.search(r"""\b(src|href)\s*=""", document, re.IGNORECASE)
    assert "<script src" not in document and "<link" not in document and "import(" not in ESM
    # the adapter speaks the bridge itself
    for method in ("ui/initialize", "ui/notifications/initialized", "ui/notifications/tool-result",
                   "ui/update-model-context", "ui/notifications/size-changed", "tools/call"):  # fmt: skip
        assert f'"{method}"' in document, method


def test_an_instance_serves_its_current_traits_at_each_read(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]
    widget = Counter(count=7, label="kept")

    @mcp.tool(app=widget, save_tool="record", send_tool="answer", uri="ui://notebook/kept.html")
    def kept() -> str:
        """A kept counter."""
        return "ok"

    client = mcp.calls.client("local")
    config = config_of(client.read_resource("ui://notebook/kept.html")["contents"][0]["text"])
    assert config["state"]["count"] == 7 and config["state"]["label"] == "kept"
    assert config["saveTool"] == "record" and config["sendTool"] == "answer"
    widget.count = 8
    config = config_of(client.read_resource("ui://notebook/kept.html")["contents"][0]["text"])
    assert config["state"]["count"] == 8


def test_nothing_in_the_widget_can_end_the_data_block() -> None:
    class Sneaky(anywidget.AnyWidget):
        _esm = 'export default { render({ el }) { el.innerHTML = "</script><script>alert(1)</script>"; } };'
        text = traitlets.Unicode("</script><!--").tag(sync=True)

    document = widget_document(Sneaky, name="sneaky")
    assert document.lower().count("</script>") == 2  # the data block's and the adapter's own
    config = config_of(document)
    assert config["esm"] == Sneaky._esm and config["state"] == {"text": "</script><!--"}


def test_what_an_app_page_cannot_serve_is_refused_at_registration(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]

    class Imports(anywidget.AnyWidget):
        _esm = 'import confetti from "https://esm.sh/canvas-confetti@1";\nexport default { render() {} };'

    class Reexports(anywidget.AnyWidget):
        _esm = 'export * from "./other.js";'

    class Remote(anywidget.AnyWidget):
        _esm = "http://localhost:5173/src/index.js"

    class Unjsonable(anywidget.AnyWidget):
        _esm = "export default { render() {} };"
        ratio = traitlets.Float(float("nan")).tag(sync=True)

    for widget, message in [
        (Imports, "imports 'https://esm.sh/canvas-confetti@1'"),
        (Reexports, "imports './other.js'"),
        (Remote, "is a URL"),
        (Unjsonable, "trait 'ratio'"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            mcp.tool(app=widget)(lambda: 1)
    with pytest.raises(ValueError, match="save_tool= and send_tool= are for an anywidget"):
        mcp.tool(app="<p>html</p>", save_tool="x")(lambda: 1)


def test_only_the_widgets_own_synced_traits_are_its_state() -> None:
    state, binary = widget_state(Counter)
    assert set(state) == {"count", "label", "blob"} and binary == ["blob"]
    assert widget_state(Counter(count=1))[0]["count"] == 1


def test_the_readme_example_serves_its_widget(shell: Any) -> None:
    """README "Serve a widget as an app": the example runs as written in a notebook."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    [block] = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "anywidget.AnyWidget" in b]
    shell.run_cell(block).raise_error()
    mcp = shell.user_ns["mcp"]
    assert mcp.tool_def("counter")["_meta"]["ui"]["resourceUri"] == "ui://notebook/counter.html"
    page = mcp.calls.client("local").read_resource("ui://notebook/counter.html")["contents"][0]["text"]
    assert config_of(page)["state"] == {"count": 0, "label": "clicks"}
    assert mcp.call("counter", {"start": 41}).structured == {"count": 41, "label": "from the tool"}


def test_a_huge_state_is_refused_with_the_bound_at_registration_and_at_read(shell: Any) -> None:
    """Before: any size went into the page (a 100 MB bytes trait: a 133 MB resource, read at each open)."""
    mcp = shell.user_ns["mcp"]
    huge = b"\x00" * (MAX_STATE_CHARS * 3 // 4 + 10)  # its base64 is past the bound

    class Heavy(anywidget.AnyWidget):
        _esm = "export default { render() {} };"
        data = traitlets.Bytes(huge).tag(sync=True)

    def heavy() -> int:
        """Show the heavy widget."""
        return 1

    with pytest.raises(ValueError, match=rf"trait 'data'.*at most {MAX_STATE_CHARS:,}"):
        mcp.tool(app=Heavy)(heavy)
    widget = Counter()

    @mcp.tool(app=widget, uri="ui://notebook/grows.html")
    def grows() -> str:
        """A counter whose bytes grow after it is served."""
        return "ok"

    widget.blob = huge
    client = mcp.calls.client("local")
    with pytest.raises(Exception, match=f"at most {MAX_STATE_CHARS:,}"):
        client.read_resource("ui://notebook/grows.html")


@pytest.mark.parametrize(
    ("esm", "imports"),
    [
        ('import confetti from "https://esm.sh/canvas-confetti@1";', "https://esm.sh/canvas-confetti@1"),
        ('import {\n  a,\n  b\n} from "./x.js";', "./x.js"),
        ("  import{a}from'q'", "q"),
        ('import "./side.js";', "./side.js"),
        ('import * as ns from "x"', "x"),
        ('export { a, b } from "./y.js"', "./y.js"),
        ('export * as ns from "z"', "z"),
        ("const x = 1;\nimport d from 'e'", "e"),
        ('const m = await import("y"); export default {};', None),  # dynamic: fetched at run time, if ever
        ("// import x from 'y'\nexport default {};", None),
        ('important = 1; import.meta.url; export const from = "x"; export default {};', None),
        ("import " + " " * 20_000 + "x", None),  # each of these took minutes before (backtracking)
        ("\n" * 40_000 + "export default {};", None),
        (("import " + " " * 200 + "\n") * 5_000, None),
        ("export *" + " " * 200_000, None),
    ],
)
def test_imports_are_found_and_the_search_is_linear(esm: str, imports: str | None) -> None:
    """Before: the import search backtracked on long whitespace runs (20,000 blank lines: 5 s; 'import'
    then 20,000 spaces: minutes), so registering such a module hung the cell (the lane's timeout fails it)."""
    found = _IMPORTS.search(esm)
    assert (found.group(2) if found else None) == imports
