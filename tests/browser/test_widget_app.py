"""``@mcp.tool(app=CounterWidget)``: an anywidget served as an MCP App (apps/widget_app.py), in Chromium.

In JupyterLab, through our own host: the widget renders from its traits' defaults (``%mcp app``) and from
the tool's result (``%mcp call``: structuredContent keys naming its traits), its CSS applies, and a click
that calls ``model.save_changes()`` reaches the host as ``ui/update-model-context`` (the default) or as a
call of the ``save_tool`` the app declares. And under a host whose policy admits inline scripts only (no
``blob:``), the same page still runs the widget's module (the inline fallback).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, expect

from mcp_notebook.notebook.apps.widget_app import widget_document

from .conftest import KERNEL_TIMEOUT_MS, UI_TIMEOUT_MS, Notebook, app_view

OpenNotebook = Callable[..., Notebook]

ESM = """
function render({ model, el }) {
  const button = document.createElement("button");
  button.id = "count";
  const show = () => { button.textContent = `${model.get("label")}: ${model.get("count")}`; };
  button.onclick = () => { model.set("count", model.get("count") + 1); model.save_changes(); };
  model.on("change:count", show);
  model.on("change:label", show);
  show();
  el.append(button);
}
export default { render };
"""

WIDGET = f'''import anywidget, traitlets
from typing import TypedDict

class CounterWidget(anywidget.AnyWidget):
    _esm = {ESM!r}
    _css = "#count {{ color: rgb(0, 128, 0); }}"
    count = traitlets.Int(0).tag(sync=True)
    label = traitlets.Unicode("clicks").tag(sync=True)

class Counted(TypedDict):
    count: int
    label: str

@mcp.tool(app=CounterWidget)
def counter(start: int) -> Counted:
    """Show a counter starting at start."""
    return {{"count": start, "label": "from the tool"}}

saved = []

@mcp.tool
def record(count: int) -> Counted:
    """Keep the widget's count."""
    saved.append(count)
    return {{"count": count * 10, "label": "recorded"}}

@mcp.tool(app=CounterWidget(count=7, label="kept"), save_tool="record")
def recorder() -> str:
    """A counter whose saves call record."""
    return "ready"
'''


def add_cell(notebook: Notebook, source: str) -> int:
    notebook.page.evaluate(
        "source => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " nb.activeCellIndex = nb.widgets.length - 1;"
        " window.jupyterapp.commands.execute('notebook:insert-cell-below');"
        " nb.activeCell.model.sharedModel.setSource(source); }",
        source,
    )
    index = notebook.cell_count() - 1
    notebook.run_cell(index)
    return index


def test_a_widget_served_as_an_app_renders_and_saves(
    open_notebook: OpenNotebook, screenshot_dir: Path
) -> None:
    cells = [
        "%load_ext mcp_notebook",
        WIDGET,
        "%mcp app counter",
        "h = %mcp call counter start=41",
        "mcp.policy.set('local.record', 'allow')\nr = %mcp call recorder",
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()

    # opened without a call: the state is the traits' defaults
    opened = app_view(notebook.output(2))
    expect(opened.locator("#count")).to_have_text("clicks: 0", timeout=KERNEL_TIMEOUT_MS)

    # called: the result's structuredContent sets the traits it names; the widget's CSS is there
    called = app_view(notebook.output(3))
    button = called.locator("#count")
    expect(button).to_have_text("from the tool: 41", timeout=KERNEL_TIMEOUT_MS)
    expect(button).to_have_css("color", "rgb(0, 128, 0)")

    # a click sets count and calls save_changes: without a save_tool, the host gets ui/update-model-context
    button.click()
    expect(button).to_have_text("from the tool: 42")
    card = notebook.output(3)
    expect(card).to_contain_text(
        "the app's context for a model (ui/update-model-context)", timeout=UI_TIMEOUT_MS
    )
    expect(card).to_contain_text('counter state: {"count":42,"label":"from the tool"}')
    index = add_cell(
        notebook,
        "import json\nprint(json.dumps(h.app.model_context['structuredContent']))\nprint(h.app.logs)",
    )
    kept, logs = notebook.output_text(index).strip().splitlines()
    assert json.loads(kept) == {"count": 42, "label": "from the tool"}
    assert logs == "[]"  # our host admits the page's blob: module: no inline fallback, nothing went wrong

    # an instance: its current traits are the state; with save_tool, a save calls that tool (through the
    # notebook's policy) and its result sets the traits it names
    recorder = app_view(notebook.output(4))
    button = recorder.locator("#count")
    expect(button).to_have_text("kept: 7", timeout=KERNEL_TIMEOUT_MS)
    button.click()
    expect(button).to_have_text("recorded: 80", timeout=UI_TIMEOUT_MS)  # 8 saved, the tool answered 80
    expect(notebook.output(4)).to_contain_text("calls record")
    index = add_cell(notebook, "print(saved, r.app.model_context)")
    assert notebook.output_text(index).strip() == "[8] None"
    notebook.screenshot(screenshot_dir / "widget-app.png", whole=True)


HOST = """<!doctype html><html><body><iframe id="app" style="width:400px;height:200px"></iframe><script>
window.messages = [];
const frame = document.getElementById("app");
addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  window.messages.push(m);
  const reply = (result) => frame.contentWindow.postMessage({jsonrpc: "2.0", id: m.id, result}, "*");
  if (m.method === "ui/initialize") {
    reply({protocolVersion: "2026-01-26", hostInfo: {name: "strict", version: "1"}, hostCapabilities: {},
           hostContext: {theme: "dark"}});
  } else if (m.method === "ui/notifications/initialized") {
    frame.contentWindow.postMessage({jsonrpc: "2.0", method: "ui/notifications/tool-result",
      params: {content: [], structuredContent: {count: 5, other: 1}}}, "*");
  } else if (m.method === "ui/update-model-context") reply({});
});
frame.srcdoc = DOCUMENT;
</script></body></html>"""


def test_a_strict_host_runs_the_widget_inline(browser: Browser) -> None:
    """A host whose policy has ``script-src 'unsafe-inline'`` only (no blob:): the module runs inline."""
    import anywidget
    import traitlets

    class CounterWidget(anywidget.AnyWidget):
        _esm = ESM
        count = traitlets.Int(0).tag(sync=True)
        label = traitlets.Unicode("strict").tag(sync=True)

    policy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"
    document = widget_document(CounterWidget, name="counter").replace(
        "<head>", f'<head><meta http-equiv="Content-Security-Policy" content="{policy}">', 1
    )
    page = browser.new_page()
    try:
        page.set_content(HOST.replace("DOCUMENT", json.dumps(document).replace("</", "<\\/")))
        app = page.frame_locator("#app")
        button = app.locator("#count")
        expect(button).to_have_text("strict: 5", timeout=UI_TIMEOUT_MS)  # the result's count; "other" ignored
        expect(app.locator("html")).to_have_attribute("data-theme", "dark")
        button.click()
        page.wait_for_function(
            "() => window.messages.some((m) => m.method === 'ui/update-model-context')", timeout=UI_TIMEOUT_MS
        )
        sent = page.evaluate(
            "() => window.messages.find((m) => m.method === 'ui/update-model-context').params"
        )
        assert sent["structuredContent"] == {"count": 6, "label": "strict"}
        logs = page.evaluate(
            "() => window.messages.filter((m) => m.method === 'notifications/message')"
            ".map((m) => m.params.data)"
        )
        assert any("running the widget's module inline" in str(line) for line in logs), logs
    finally:
        page.close()


ROUND_TRIP_ESM = """
function render({ model, el }) {
  const ask = document.createElement("button");
  ask.id = "ask";
  ask.textContent = "ask";
  ask.onclick = () => model.send({ question: model.get("question") });
  const answer = document.createElement("div");
  answer.id = "answer";
  model.on("msg:custom", (content) => { answer.textContent = `answer ${JSON.stringify(content)}`; });
  const grow = document.createElement("button");
  grow.id = "grow";
  grow.textContent = "grow";
  grow.onclick = () => { el.style.height = "300px"; };
  el.append(ask, answer, grow);
  return () => { window.parent.postMessage({ jsonrpc: "2.0", method: "cleaned-up" }, "*"); };
}
export default { render };
"""

ROUND_TRIP_HOST = """<!doctype html><html><body>
<iframe id="app" style="width:400px;height:120px"></iframe><script>
window.messages = [];
const frame = document.getElementById("app");
const send = (m) => frame.contentWindow.postMessage(Object.assign({jsonrpc: "2.0"}, m), "*");
addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  window.messages.push(m);
  if (m.method === "ui/initialize") {
    send({id: m.id, result: {protocolVersion: "2026-01-26", hostInfo: {name: "fake", version: "1"},
          hostCapabilities: {serverTools: {}}, hostContext: {theme: "light"}}});
  } else if (m.method === "tools/call") {
    const structuredContent = {echo: m.params.arguments.content, by: m.params.name};
    send({id: m.id, result: {content: [], structuredContent}});
  }
});
window.hostSend = send;
frame.srcdoc = DOCUMENT;
</script></body></html>"""


def test_send_size_theme_and_teardown_under_a_host(browser: Browser) -> None:
    """Outside JupyterLab, a host of a few lines: ``model.send`` round-trips through the ``send_tool``
    (its structuredContent comes back as msg:custom), the page reports its size as it grows, follows
    host-context-changed, and ``ui/resource-teardown`` runs the widget's cleanup before the answer."""
    import anywidget
    import traitlets

    class Asker(anywidget.AnyWidget):
        _esm = ROUND_TRIP_ESM
        question = traitlets.Unicode("why?").tag(sync=True)

    document = widget_document(Asker, name="asker", send_tool="answer")
    page = browser.new_page()
    messages = "window.messages"
    try:
        page.set_content(ROUND_TRIP_HOST.replace("DOCUMENT", json.dumps(document).replace("</", "<\\/")))
        app = page.frame_locator("#app")
        app.locator("#ask").click()
        expect(app.locator("#answer")).to_have_text(
            'answer {"echo":{"question":"why?"},"by":"answer"}', timeout=UI_TIMEOUT_MS
        )
        app.locator("#grow").click()
        page.wait_for_function(
            f"() => {messages}.some((m) => m.method === 'ui/notifications/size-changed'"
            " && m.params.height > 300)",
            timeout=UI_TIMEOUT_MS,
        )
        page.evaluate(
            "() => window.hostSend({method: 'ui/notifications/host-context-changed', params: {theme: 'dark',"
            " styles: {variables: {'--color-text-primary': 'rgb(1, 2, 3)'}}}})"
        )
        expect(app.locator("html")).to_have_attribute("data-theme", "dark")
        expect(app.locator("html")).to_have_css("--jp-ui-font-color1", "rgb(1, 2, 3)")
        page.evaluate("() => window.hostSend({id: 99, method: 'ui/resource-teardown', params: {}})")
        page.wait_for_function(f"() => {messages}.some((m) => m.id === 99)", timeout=UI_TIMEOUT_MS)
        order = page.evaluate(
            f"() => {messages}.filter((m) => m.method === 'cleaned-up' || m.id === 99)"
            ".map((m) => m.method || 'answered')"
        )
        assert order == ["cleaned-up", "answered"]
    finally:
        page.close()


THROWS_ESM = """
document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
throw new Error("boom at import");
export default {};
"""
SAVE_ESM = """
function render({ model, el }) {
  const save = document.createElement("button");
  save.id = "save";
  save.textContent = "save";
  save.onclick = () => model.save_changes();
  el.append(save);
}
export default { render };
"""


def test_a_failing_module_says_why_at_once_and_a_result_sets_only_traits(browser: Browser) -> None:
    """Before: a module that threw at its top level (or did not parse) was run a second time inline, and
    after 10 s the page said "the widget's module did not run inline", not the error; a tool result's
    "constructor" / "toString" keys became state (inherited names of a plain object) and went to the host;
    a host request named "constructor" ran Object() and got no answer."""
    import anywidget
    import traitlets

    class Throws(anywidget.AnyWidget):
        _esm = THROWS_ESM

    class Unparsable(anywidget.AnyWidget):
        _esm = "export default { render( };"

    class Saver(anywidget.AnyWidget):
        _esm = SAVE_ESM
        question = traitlets.Unicode("why?").tag(sync=True)

    for widget, said in [(Throws, "boom at import"), (Unparsable, "Unexpected token")]:
        page = browser.new_page()
        try:
            document = widget_document(widget, name="failing")
            page.set_content(ROUND_TRIP_HOST.replace("DOCUMENT", json.dumps(document).replace("</", "<\\/")))
            app = page.frame_locator("#app")
            root = app.locator("#mcpnb-widget-root")
            expect(root).to_contain_text(f"The widget failed to render: {said}", timeout=UI_TIMEOUT_MS)
            expect(root).not_to_contain_text("did not run inline")
            if widget is Throws:  # its code ran once, not again inline
                expect(app.locator("body")).to_have_attribute("data-runs", "1")
        finally:
            page.close()

    page = browser.new_page()
    try:
        document = widget_document(Saver, name="saver")
        page.set_content(ROUND_TRIP_HOST.replace("DOCUMENT", json.dumps(document).replace("</", "<\\/")))
        app = page.frame_locator("#app")
        expect(app.locator("#save")).to_be_visible(timeout=UI_TIMEOUT_MS)
        page.evaluate(
            "() => window.hostSend({method: 'ui/notifications/tool-result', params: {content: [],"
            " structuredContent: JSON.parse("
            """'{"constructor": "x", "toString": "y", "__proto__": {"bad": 1}, "question": "how?"}')}})"""
        )
        app.locator("#save").click()
        page.wait_for_function(
            "() => window.messages.some((m) => m.method === 'ui/update-model-context')", timeout=UI_TIMEOUT_MS
        )
        sent = page.evaluate(
            "() => window.messages.find((m) => m.method === 'ui/update-model-context').params"
        )
        assert sent["structuredContent"] == {"question": "how?"}, sent
        # a request named like an inherited property is a method the page does not handle, and says so
        page.evaluate("() => window.hostSend({id: 7, method: 'constructor', params: {}})")
        page.wait_for_function("() => window.messages.some((m) => m.id === 7)", timeout=UI_TIMEOUT_MS)
        answer = page.evaluate("() => window.messages.find((m) => m.id === 7)")
        assert answer["error"]["code"] == -32601, answer
    finally:
        page.close()


def test_the_tools_input_sets_the_traits_it_names_until_a_result_comes(browser: Browser) -> None:
    """Before: ``ui/notifications/tool-input`` was ignored by a widget app, so ``counter(start=5)`` showed the
    trait defaults until the result came (and forever when the tool failed). The arguments now set the traits
    they name (others are ignored); the result then wins, and an input arriving after it changes nothing."""
    import anywidget
    import traitlets

    class Counter(anywidget.AnyWidget):
        _esm = ESM
        count = traitlets.Int(0).tag(sync=True)
        label = traitlets.Unicode("clicks").tag(sync=True)

    page = browser.new_page()
    try:
        document = widget_document(Counter, name="counter")
        page.set_content(ROUND_TRIP_HOST.replace("DOCUMENT", json.dumps(document).replace("</", "<\\/")))
        button = page.frame_locator("#app").locator("#count")
        expect(button).to_have_text("clicks: 0", timeout=UI_TIMEOUT_MS)
        page.evaluate(
            "() => window.hostSend({method: 'ui/notifications/tool-input',"
            " params: {arguments: {count: 5, label: 'from the input', start: 99, constructor: 1}}})"
        )
        expect(button).to_have_text("from the input: 5", timeout=UI_TIMEOUT_MS)
        page.evaluate(
            "() => window.hostSend({method: 'ui/notifications/tool-result',"
            " params: {content: [], structuredContent: {count: 9}}})"
        )
        expect(button).to_have_text("from the input: 9", timeout=UI_TIMEOUT_MS)
        page.evaluate(
            "() => window.hostSend({method: 'ui/notifications/tool-input', params: {arguments: {count: 1}}})"
        )
        page.evaluate("() => window.hostSend({id: 3, method: 'ping', params: {}})")  # after the input
        page.wait_for_function("() => window.messages.some((m) => m.id === 3)", timeout=UI_TIMEOUT_MS)
        expect(button).to_have_text("from the input: 9")
    finally:
        page.close()
