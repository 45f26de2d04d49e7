"""``ui/resource-teardown`` reaches an app when JupyterLab (or Notebook 7) removes its output by itself:
Edit > Clear Outputs, and a re-run of the app's cell. The app proves it received the request by writing to
the kernel through the bridge (a ``notifications/message`` log) before it answers; the kernel then reads
both the app's log and the host's record that the app answered.
"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_view, both_frontends

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


@both_frontends
def test_teardown_reaches_the_app_when_the_output_is_cleared_or_the_cell_re_run(
    open_notebook: OpenNotebook,
) -> None:
    cells = [
        "%load_ext mcp_notebook\nviews = []",
        f"@mcp.tool(app={VIEW!r})\ndef keep() -> str:\n    '''Keep.'''\n    return 'kept'",
        "h = %mcp call keep\nviews.append(h.app)",
        REPORT,
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()

    def ready() -> None:
        # the newest frame: after a re-run the old one stays (hidden) until it answered teardown
        app = notebook.output(2).frame_locator("iframe.mcpnb-app-frame").last.frame_locator("iframe")
        expect(app.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)

    def report() -> str:
        notebook.run_cell(3)
        return notebook.output_text(3)

    ready()
    assert "[0] [None]" in report()

    # the cell re-run: JupyterLab clears its outputs first; the old app hears teardown and answers
    notebook.run_cell(2)
    ready()  # the new app
    expect(notebook.output(2).locator("iframe.mcpnb-app-frame")).to_have_count(1)  # the old frame is gone
    expect_report(notebook, report, "[1, 0] [True, None]")

    # Edit > Clear Outputs of the app's cell
    notebook.page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 2; }")
    notebook.command("notebook:clear-cell-output")
    expect(notebook.output(2).locator("iframe.mcpnb-app-frame")).to_have_count(0)
    expect_report(notebook, report, "[1, 1] [True, True]")


def expect_report(notebook: Notebook, report: Callable[[], str], wanted: str) -> None:
    """Re-run the report cell until the kernel shows ``wanted`` (the app's answer crosses the comm while the
    kernel is idle); bounded by the UI timeout."""
    seen = ""
    for _ in range(20):  # each round is a full cell run: at most 20, each a kernel round trip
        seen = report()
        if wanted in seen:
            return
    raise AssertionError(f"the kernel saw {seen!r}, wanted {wanted!r}")


def test_the_frame_follows_its_output_hidden_and_shown_without_reloading(open_notebook: OpenNotebook) -> None:
    """The frame lives in the output area's layer, laid over its slot: collapsing the cell's outputs hides
    it; showing them again shows the app again. JupyterLab detaches hidden outputs, which starts the
    frame's page over: the host sends the app again (before, the frame stayed blank: the proxy's new
    page waited for a resource that never came). The kernel's ``view.teardown()`` removes the frame and
    leaves no empty box."""
    tool = f"@mcp.tool(app={VIEW!r})\ndef keep() -> str:\n    'Keep.'\n    return 'kept'"
    notebook = open_notebook(["%load_ext mcp_notebook", tool, "h = %mcp call keep", "pass"])
    notebook.run_all()
    frame = notebook.output(2).locator("iframe.mcpnb-app-frame")
    app = app_view(notebook.output(2))
    expect(app.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    notebook.page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 2; }")
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
