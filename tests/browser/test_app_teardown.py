"""``ui/resource-teardown`` reaches an app when JupyterLab (or Notebook 7) removes its output by itself:
Edit > Clear Outputs, a re-run of the app's cell, the cell deleted, the notebook's tab closed (JupyterLab;
in Notebook 7 the tab is the page), and, best effort, the page itself going (``pagehide``). The app proves
it received the request by writing to the kernel through the bridge (a ``notifications/message`` log)
before it answers; the kernel then reads both the app's log and the host's record that the app answered.
"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_frame, app_view, both_frontends

OpenNotebook = Callable[..., Notebook]

VIEW = (
    "<!doctype html><html><body><div id='state'>starting</div><script>\n"
    "const post = (m) => parent.postMessage(Object.assign({jsonrpc: '2.0'}, m), '*');\n"
    "addEventListener('message', (e) => {\n"
    "  const m = e.data;\n"
    "  if (m.id === 1) { post({method: 'ui/notifications/initialized'});"
    " document.getElementById('state').textContent = 'ready'; }\n"
    "  if (m.method === 'ui/resource-teardown') {\n"
    "    post({method: 'notifications/message', params: {level: 'info', data: 'teardown received'}});\n"
    "    setTimeout(() => post({id: m.id, result: {}}), 100);  // an app may take a moment to save\n"
    "  }\n"
    "});\n"
    "post({id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26',"
    " appInfo: {name: 'keeper', version: '1'}, appCapabilities: {}}});\n"
    "</script></body></html>"
)

REPORT = (
    "print([len([x for x in v.logs if x.get('data') == 'teardown received']) for v in views],"
    " [v.torn_down for v in views])"
)


TOOL = "@mcp.tool(app=" + repr(VIEW) + ")\ndef keep() -> str:\n    'Keep.'\n    return 'kept'"
CELLS = ["%load_ext mcp_notebook\nviews = []", TOOL, "h = %mcp call keep\nviews.append(h.app)", REPORT]
FRAMES = "iframe.mcpnb-app-frame"  # every app frame on the page (they live in the host's layer under body)


def open_app(open_notebook: OpenNotebook) -> Notebook:
    """The notebook of CELLS run, its app initialized, the kernel told nothing yet."""
    notebook = open_notebook(CELLS)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    ready(notebook)
    expect_report(notebook, 3, "[0] [None]")
    return notebook


def ready(notebook: Notebook) -> None:
    """The app of the app cell's output (after a re-run: the new one) is initialized. Found by its
    output's slot, not as the page's last frame: after a re-run the old frame stays, hidden, until it
    answered teardown, and the new one may come after the kernel is idle. The last frame was then the old
    one, whose "ready" passed for the new app's, or which went while Playwright looked into it: "Target
    page, context or browser has been closed", which expect does not retry (a flake under load)."""
    expect(app_view(notebook.output(2)).locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)


def select(notebook: Notebook, index: int) -> None:
    notebook.page.evaluate(
        "index => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = index; }", index
    )


def expect_report(notebook: Notebook, index: int, wanted: str) -> None:
    """Run the report cell ``index`` until the kernel shows ``wanted`` (the app's answer crosses the comm
    while the kernel is idle); bounded by the UI timeout."""
    seen = ""
    for _ in range(20):  # each round is a full cell run: at most 20, each a kernel round trip
        notebook.run_cell(index)
        seen = notebook.output_text(index)
        if wanted in seen:
            return
    raise AssertionError(f"the kernel saw {seen!r}, wanted {wanted!r}")


@both_frontends
def test_teardown_reaches_the_app_when_the_output_is_cleared_or_the_cell_re_run(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_app(open_notebook)
    frames = notebook.page.locator(FRAMES)

    # the cell re-run: JupyterLab clears its outputs first; the old app hears teardown and answers
    notebook.run_cell(2)
    ready(notebook)  # the new app
    expect(frames).to_have_count(1)  # the old frame is gone
    expect_report(notebook, 3, "[1, 0] [True, None]")

    # Edit > Clear Outputs of the app's cell
    select(notebook, 2)
    notebook.command("notebook:clear-cell-output")
    expect(frames).to_have_count(0)
    expect_report(notebook, 3, "[1, 1] [True, True]")


@both_frontends
def test_teardown_reaches_the_app_when_its_cell_is_deleted(open_notebook: OpenNotebook) -> None:
    """Deleting the cell disposes its output area: the frame, in the layer under body, outlives it until
    the app answered. Before, it went with the cell, untold ('[0] [None]')."""
    notebook = open_app(open_notebook)
    select(notebook, 2)
    notebook.command("notebook:delete-cell")
    expect(notebook.page.locator(FRAMES)).to_have_count(0)
    expect_report(notebook, 2, "[1] [True]")  # the report cell moved up


def test_teardown_reaches_the_app_when_the_notebook_tab_is_closed(open_notebook: OpenNotebook) -> None:
    """Closing the notebook's tab in JupyterLab disposes the whole panel; the kernel keeps running, so the
    notebook opened again reads what it saw. Before, the frame went with the panel, untold."""
    notebook = open_app(open_notebook)
    notebook.save()  # no "save your changes?" dialog on close
    notebook.page.evaluate("() => window.jupyterapp.shell.currentWidget.close()")
    expect(notebook.page.locator(".jp-NotebookPanel")).to_have_count(0)
    expect(notebook.page.locator(FRAMES)).to_have_count(0)  # gone once the app answered
    notebook.page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', {path})", notebook.name
    )
    notebook.panel.wait_for(state="visible", timeout=KERNEL_TIMEOUT_MS)
    notebook.wait_kernel_idle()
    expect_report(notebook, 3, "[1] [True]")


@both_frontends
def test_teardown_is_sent_when_the_page_goes(open_notebook: OpenNotebook) -> None:
    """The page itself going (the browser's tab closed, a reload; in Notebook 7 the notebook's tab is the
    page): ``pagehide`` sends teardown at once, best effort, since nothing can be awaited then. Here the
    event is dispatched on a page that stays, so the app's answer is seen."""
    notebook = open_app(open_notebook)
    notebook.page.evaluate("() => window.dispatchEvent(new PageTransitionEvent('pagehide'))")
    expect_report(notebook, 3, "[1] [True]")


def test_the_frame_follows_its_output_hidden_and_shown_without_reloading(open_notebook: OpenNotebook) -> None:
    """The frame lives in the output area's layer, laid over its slot: collapsing the cell's outputs hides
    it; showing them again shows the app again. JupyterLab detaches hidden outputs, which starts the
    frame's page over: the host sends the app again (before, the frame stayed blank: the proxy's new
    page waited for a resource that never came). The kernel's ``view.teardown()`` removes the frame and
    leaves no empty box."""
    notebook = open_notebook(["%load_ext mcp_notebook", TOOL, "h = %mcp call keep", "pass"])
    notebook.run_all()
    frame = app_frame(notebook.output(2))
    app = app_view(notebook.output(2))
    expect(app.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    select(notebook, 2)
    notebook.command("notebook:hide-cell-outputs")
    expect(frame).to_be_hidden()
    notebook.command("notebook:show-cell-outputs")
    expect(frame).to_be_visible()
    expect(app.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)  # drawn again
    notebook.page.evaluate(
        "source => window.jupyterapp.shell.currentWidget.content.widgets[3].model.sharedModel"
        ".setSource(source)",
        "h.app.teardown()",
    )
    notebook.run_cell(3)
    expect(frame).to_have_count(0)
    expect(notebook.output(2).locator(".mcpnb-app-slot")).to_be_hidden()
