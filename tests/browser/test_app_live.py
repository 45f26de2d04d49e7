"""An MCP App on the live page (issue 19 for apps): after a kernel restart and a reload, and after the saved
notebook is reopened in a fresh server, a person sees the app's snapshot (whose app it was, the tool's
text, the calls it made), never "Error displaying widget: model not found"; and what a click inside the
app starts (its call, a question the tool asks mid-call) shows in the app's cell, not in the cell that ran
last. Both front ends.
"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import FrameLocator, expect

from .conftest import KERNEL_TIMEOUT_MS, Frontend, Lab, Notebook, app_view, both_frontends

OpenNotebook = Callable[..., Notebook]

VIEW = (
    "<!doctype html><html><body><div id='state'>starting</div><button id='book'>book</button>"
    "<div id='booked'></div><script>\n"
    "const post = (m) => parent.postMessage(Object.assign({jsonrpc: '2.0'}, m), '*');\n"
    "addEventListener('message', (e) => {\n"
    "  const m = e.data;\n"
    "  if (m.id === 1) { post({method: 'ui/notifications/initialized'});"
    " document.getElementById('state').textContent = 'ready'; }\n"
    "  if (m.id === 2) document.getElementById('booked').textContent ="
    " 'answer: ' + (m.result ? m.result.content[0].text : JSON.stringify(m.error));\n"
    "});\n"
    "document.getElementById('book').onclick = () =>"
    " post({id: 2, method: 'tools/call', params: {name: 'book', arguments: {}}});\n"
    "post({id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26',"
    " appInfo: {name: 'booker', version: '1'}, appCapabilities: {}}});\n"
    "</script></body></html>"
)
TOOLS = (
    "from mcp_notebook import Context\n"
    "@mcp.tool\n"
    "async def book(ctx: Context) -> str:\n"
    "    '''Book a table: asks how many guests.'''\n"
    "    schema = {'type': 'object', 'properties': {'guests': {'type': 'integer', 'title': 'Guests'}},"
    " 'required': ['guests']}\n"
    "    answer = await ctx.elicit('How many guests?', schema)\n"
    "    return f\"booked for {(answer.get('content') or {}).get('guests')}\"\n"
    f"@mcp.tool(app={VIEW!r})\n"
    "def panel() -> str:\n"
    "    '''The booking panel.'''\n"
    "    return 'panel shown'"
)
CELLS = ["%load_ext mcp_notebook", TOOLS, "%mcp call panel", "1 + 1"]


def _app(notebook: Notebook) -> FrameLocator:
    return app_view(notebook.output(2))


@both_frontends
def test_a_click_in_the_app_lands_in_the_apps_cell(open_notebook: OpenNotebook) -> None:
    """The app's call, and the question its tool asks mid-call, show under the app; the cell that ran
    last (``1 + 1``) gets nothing. The same after a page reload (the app's model is alive: the app is
    drawn again and its clicks still reach the kernel)."""
    notebook = open_notebook(CELLS)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    for guests, reloaded in (("4", False), ("6", True)):
        if reloaded:
            notebook.save()
            notebook.reload()
        app = _app(notebook)
        expect(app.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
        app.locator("#book").click()
        card = notebook.output(2)
        question = card.get_by_placeholder("whole number")
        expect(question).to_be_visible(timeout=KERNEL_TIMEOUT_MS)
        expect(card).to_contain_text("How many guests?")
        question.fill(guests)
        card.get_by_role("button", name="Accept").click()
        expect(app.locator("#booked")).to_have_text(f"answer: booked for {guests}", timeout=KERNEL_TIMEOUT_MS)
        expect(card.get_by_text("the app (sandboxed app · local · panel) calls book")).to_have_count(
            2 if reloaded else 1
        )
        last = notebook.output(3).locator(".jp-OutputArea-output")  # the cell that ran last
        expect(last).to_have_count(1)
        expect(last).to_have_text("2")  # only its own value
        for other in (0, 1):
            expect(notebook.output(other)).not_to_contain_text("guests")
        assert not notebook.widget_errors(), notebook.widget_errors()


@both_frontends
def test_restart_and_reload_show_the_apps_snapshot(open_notebook: OpenNotebook, frontend: Frontend) -> None:
    notebook = open_notebook(CELLS)
    notebook.run_all()
    expect(_app(notebook).locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    notebook.save()
    notebook.restart_kernel()
    notebook.reload()
    assert not notebook.widget_errors(), notebook.widget_errors()
    expect(notebook.output(2)).to_contain_text("sandboxed app · local · panel")
    expect(notebook.output(2)).to_contain_text("panel shown")


@both_frontends
def test_reopened_in_a_fresh_server_shows_the_apps_snapshot(
    open_notebook: OpenNotebook, fresh_lab: Callable[[], Lab]
) -> None:
    notebook = open_notebook(CELLS)
    notebook.run_all()
    expect(_app(notebook).locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    notebook.save()
    reopened = open_notebook(None, notebook.name, server=fresh_lab())
    reopened.wait_widgets_restored()
    assert not reopened.widget_errors(), reopened.widget_errors()
    expect(reopened.output(2)).to_contain_text("sandboxed app · local · panel")
    expect(reopened.output(2)).to_contain_text("panel shown")
