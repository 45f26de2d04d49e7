"""MCP Apps in a real JupyterLab (issue 14): a third-party app (the official Python SDK's Apps extension
serving a view built on the official ``@modelcontextprotocol/ext-apps`` ``App`` class) renders inline in a
sandboxed iframe and works: it loads, gets the tool input and result and the host context, calls an
app-only server tool through the bridge (the approval shows in the notebook), resizes, follows a theme
switch, asks before a link opens, sends ui/message and ui/update-model-context (kept in the history) and
answers ui/resource-teardown. And an app served by a notebook tool renders in our own host.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, Lab, Notebook, app_frame, app_frames, app_view

OpenNotebook = Callable[..., Notebook]
ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "apps" / "sdk_apps_server.py"
BUNDLE = ROOT / ".peers" / "apps" / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist" / "src"
BUNDLE = BUNDLE / "app-with-deps.js"


@pytest.fixture
def bundle() -> Path:
    if not BUNDLE.is_file():
        pytest.fail(f"no {BUNDLE}: install the npm peers with: bash scripts/install-peers.sh", pytrace=False)
    return BUNDLE


# ~40 steps after three kernel round trips, each wait bounded by Playwright (KERNEL_TIMEOUT_MS for the kernel,
# UI_TIMEOUT_MS for the page): on a slow machine their sum can pass the browser lane's 120 s while each is in
# time, and pytest's timeout then cuts the test wherever it is, with no word of what it waited for
@pytest.mark.timeout(300)
def test_third_party_app_works_inline(open_notebook: OpenNotebook, bundle: Path, lab: Lab) -> None:
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect counter -- {sys.executable} {SERVER} {bundle}",
        "mcp.policy.set('counter.show_counter', 'allow')\n%mcp tools counter",
        "h = %mcp call counter.show_counter label=clicks",
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    tools = notebook.output_text(2)
    assert "counter.show_counter" in tools and "increment" not in tools  # app-only: hidden from the list

    frame_element = app_frame(notebook.output(3))
    expect(frame_element).to_have_attribute("sandbox", "allow-scripts allow-forms")  # no allow-same-origin
    app = app_view(notebook.output(3))
    try:
        expect(app.locator("#status")).to_have_text("connected to mcp-notebook", timeout=KERNEL_TIMEOUT_MS)
    except AssertionError as exc:
        exc.add_note(app_frames(notebook.output(3)))
        raise
    expect(app.locator("#input")).to_have_text('input: {"label":"clicks"}')
    expect(app.locator("#result")).to_contain_text('structured {"label":"clicks","count":3}')
    expect(app.locator("#theme")).to_have_text("theme: light")
    expect(app.locator("#context")).to_contain_text("mode: inline tool: show_counter")
    expect(app.locator("#context")).to_contain_text("locale: en")

    # an app-only tool, called from the app: the approval shows under the app, then the answer reaches it
    app.locator("#increment").click()
    card = notebook.output(3)
    card.get_by_role("button", name="Approve").click()
    expect(app.locator("#called")).to_have_text("called: count is 5")
    # whose app it is, above the frame; the call it made attributed to it in the cell
    expect(card.locator(".mcpnb-app-label")).to_have_text("sandboxed app · counter · show_counter")
    expect(card).to_contain_text("the app (sandboxed app · counter · show_counter) calls increment")

    # size-changed: the page grows, the frame follows
    before = frame_element.bounding_box()
    assert before is not None
    app.locator("#grow").click()
    notebook.page.wait_for_function(
        "el => el.getBoundingClientRect().height > 600", arg=frame_element.element_handle()
    )

    # JupyterLab's theme switch reaches the app as host-context-changed
    notebook.command("apputils:change-theme", {"theme": "JupyterLab Dark"})
    expect(app.locator("#theme")).to_have_text("theme: dark")
    notebook.command("apputils:change-theme", {"theme": "JupyterLab Light"})
    expect(app.locator("#theme")).to_have_text("theme: light")

    # display modes: the app asks for fullscreen (an overlay over the notebook's whole area: JupyterLab's
    # panels contain fixed positioning), the person brings it back inline, then picks picture-in-picture;
    # the app hears each as host-context-changed, and keeps its state
    expect(app.locator("#context")).to_contain_text("modes: inline,fullscreen,pip")
    app.locator("#fullscreen").click()
    expect(app.locator("#mode")).to_have_text("mode: fullscreen")
    expect(app.locator("#ctxmode")).to_contain_text("ctx: fullscreen")
    expect(card).to_contain_text("The app is shown fullscreen.")
    box, area = frame_element.bounding_box(), notebook.panel.locator(".jp-WindowedPanel-outer").bounding_box()
    assert box is not None and area is not None
    assert box["width"] > area["width"] - 40 and box["height"] > area["height"] - 60, (box, area)
    card.locator("button.mcpnb-app-mode-inline").click()
    expect(app.locator("#ctxmode")).to_contain_text("ctx: inline")
    card.locator("button.mcpnb-app-mode-pip").click()
    expect(app.locator("#ctxmode")).to_contain_text("ctx: pip")
    box = frame_element.bounding_box()
    assert box is not None and box["width"] <= 480 and box["x"] > 640, box  # small, in the right corner
    expect(app.locator("#called")).to_have_text("called: count is 5")  # same page: nothing reloaded

    # ui/download-file: a card names the file; only Save writes it (the browser's download)
    app.locator("#download").click()
    expect(card).to_contain_text("The app asks to save a file: counter.txt (text/plain, 7 bytes)")
    with notebook.page.expect_download() as download:
        card.get_by_role("button", name="Save", exact=True).click()
    assert download.value.suggested_filename == "counter.txt"
    assert Path(download.value.path()).read_text() == "count 3"
    expect(app.locator("#downloaded")).to_have_text("downloaded: {}")

    # sampling from the app: answered like a server's, here by the person on a card under the app
    app.locator("#sample").click()
    expect(card).to_contain_text("asks for a model reply")
    card.get_by_placeholder("Write the assistant's reply").fill("teal")
    card.get_by_role("button", name="Send").click()
    expect(app.locator("#sampled")).to_have_text("sampled: teal")

    # ui/open-link asks first; declining answers isError
    app.locator("#open").click()
    expect(card).to_contain_text("The app asks to open https://modelcontextprotocol.io/")
    card.get_by_role("button", name="Don't open").click()
    expect(app.locator("#link")).to_have_text('link: {"isError":true}')

    # ui/update-model-context and ui/message: kept, shown under the app
    app.locator("#say").click()
    expect(app.locator("#said")).to_have_text("said: {}")
    expect(card).to_contain_text("please double it")

    # what the kernel saw, and the teardown handshake
    new_cells = [
        "v = h.app\n"
        "print(v.app_messages[0]['content'][0]['text'], '|', v.model_context['content'][0]['text'])\n"
        "print(sorted({e.kind for e in mcp.audit.entries()}))\n"
        "print(v.calls[0].entry.decided_by, v.torn_down)\n"
        "print('mode', v.display_mode)\nv.display_mode = 'inline'\n"
        "print('app tools', [t['name'] for t in v.app_tools])\nv.call_app_tool('reset')",
        "h.app.teardown()",
    ]
    for source in new_cells:
        notebook.page.evaluate(
            "source => { const nb = window.jupyterapp.shell.currentWidget.content;"
            " nb.activeCellIndex = nb.widgets.length - 1;"
            " window.jupyterapp.commands.execute('notebook:insert-cell-below');"
            " nb.activeCell.model.sharedModel.setSource(source); }",
            source,
        )
    count = notebook.cell_count()
    notebook.run_cell(count - 2)
    kernel_view = notebook.output_text(count - 2)
    assert "please double it | count shown: 3" in kernel_view
    assert "app-message" in kernel_view and "app-context" in kernel_view and "open-link" in kernel_view
    assert "you: approved (from the app of counter.show_counter) None" in kernel_view  # no teardown yet
    assert "mode pip" in kernel_view and "app-download" in kernel_view
    expect(app.locator("#ctxmode")).to_contain_text("ctx: inline")  # set from code
    # the tool the app registered: listed, and called from the notebook once the person approves
    assert "app tools ['reset']" in kernel_view
    expect(card).to_contain_text("Call the app's tool? reset of sandboxed app · counter · show_counter")
    card.get_by_role("button", name="Approve").click()
    expect(app.locator("#reset")).to_have_text("reset by the notebook")
    expect(card).to_contain_text("the app's tool reset answered")
    notebook.run_cell(count - 1)
    expect(frame_element).to_have_count(0)  # the frame goes once the app answered ui/resource-teardown
    notebook.run_cell(count - 2)  # v.torn_down, read by a later cell (the comm answer arrived meanwhile)
    expect(notebook.output(count - 2)).to_contain_text(
        "you: approved (from the app of counter.show_counter) True"
    )

    # saved and exported (nbconvert, no widget state): the app's label and the call it made are there
    notebook.command("docmanager:save")
    notebook.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    exported = HTMLExporter().from_filename(str(lab.root / notebook.name))[0]
    assert "sandboxed app · counter · show_counter" in exported
    assert "the app called increment" in exported and "count is 5" in exported


def test_notebook_served_app_renders_in_our_host(open_notebook: OpenNotebook, lab: Lab) -> None:
    """``@mcp.tool(app=...)``: the notebook serves the tool and its ui:// resource; calling it renders the
    app with this notebook's own host, and a hand-written view (no library) speaks the bridge. The view
    cannot reach JupyterLab: not its DOM, not its cookies, not its server."""
    lab_url = lab.url
    view = (
        "<!doctype html><html><body><div id='out'>waiting</div><div id='partial'></div><script>\n"
        "const post = (m) => parent.postMessage(Object.assign({jsonrpc: '2.0'}, m), '*');\n"
        "addEventListener('message', (e) => {\n"
        "  const m = e.data;\n"
        "  if (m.id === 1) { post({method: 'ui/notifications/initialized'});"
        " document.body.dataset.theme = m.result.hostContext.theme; }\n"
        "  if (m.method === 'ui/notifications/tool-result')"
        " document.getElementById('out').textContent = 'sum is ' + m.params.structuredContent.result;\n"
        "  if (m.method === 'ui/notifications/tool-input-partial')"
        " document.getElementById('partial').textContent = 'partial ' + JSON.stringify(m.params.arguments);\n"
        "});\n"
        "post({id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26',"
        " appInfo: {name: 'adder-view', version: '1'}, appCapabilities: {}}});\n"
        "</script></body></html>"
    )
    # what the sandbox must refuse: JupyterLab's DOM, its cookies, and its server's API
    probe = (
        "<div id='probe'></div><script>\nconst tried = [];\n"
        "try { tried.push('parent ' + parent.document.title); } catch (e) { tried.push('parent blocked'); }\n"
        "try { tried.push('cookie ' + document.cookie); } catch (e) { tried.push('cookie blocked'); }\n"
        # no-cors: without the CSP this would resolve (an opaque response); connect-src 'none' refuses it
        f"fetch('{lab_url}/api/status', {{mode: 'no-cors'}}).then(() => tried.push('fetch allowed'),"
        " () => tried.push('fetch blocked'))"
        ".finally(() => { document.getElementById('probe').textContent = tried.join(', '); });\n"
        "</script>"
    )
    view = view.replace("</body>", probe + "</body>")
    cells = [
        "%load_ext mcp_notebook",
        f"VIEW = {view!r}\n@mcp.tool(app=VIEW)\ndef add(a: int, b: int) -> int:\n"
        "    '''Add two numbers.'''\n    return a + b",
        "%mcp call add a=2 b=40",
        "%mcp read ui://notebook/add.html",
        "v = %mcp app add\nv",
        "v.send_partial_input({'a': 7})",
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    app = app_view(notebook.output(2))
    expect(app.locator("#out")).to_have_text("sum is 42", timeout=KERNEL_TIMEOUT_MS)
    expect(app.locator("body")).to_have_attribute("data-theme", "light")
    expect(app.locator("#probe")).to_have_text("parent blocked, cookie blocked, fetch blocked")
    expect(notebook.output(3)).to_contain_text("text/html;profile=mcp-app")
    # %mcp app: the same app, opened without a call; arguments still being written stream to it
    opened = app_view(notebook.output(4))
    expect(opened.locator("#partial")).to_have_text('partial {"a":7}', timeout=KERNEL_TIMEOUT_MS)
    expect(opened.locator("#out")).to_have_text("waiting")  # no call, no result

    # saved: beside the widget, the output keeps a static fallback with the tool's text content
    notebook.command("docmanager:save")
    saved = lab.root / notebook.name

    def fallback() -> str:
        cells = nbformat.read(saved, as_version=4).cells
        outputs = [
            o
            for o in cells[2].get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        ]
        return "".join(str(o["data"].get("text/html", "")) for o in outputs)

    notebook.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    assert "MCP App ui://notebook/add.html" in fallback() and "42" in fallback()


def test_an_app_that_leaves_its_page_loses_the_bridge(open_notebook: OpenNotebook) -> None:
    """Messages go to the frame with targetOrigin "*" (its origin is opaque): once the frame navigates
    elsewhere, nothing more may be sent there. The host closes the bridge and says so."""
    view = (
        "<!doctype html><html><body><p>leaving</p><script>"
        "setTimeout(() => { location.href = 'about:blank'; }, 50);"
        "</script></body></html>"
    )
    cells = [
        "%load_ext mcp_notebook",
        f"@mcp.tool(app={view!r})\ndef leave() -> str:\n    '''Leave.'''\n    return 'secret result'",
        "%mcp call leave",
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    expect(notebook.output(2)).to_contain_text("The app left its page; the bridge to it is closed.")


def test_preview_an_app_file(open_notebook: OpenNotebook) -> None:
    """``%mcp app --preview FILE``: the app under a fake host context the person changes (theme, width),
    what a host would send (partial input) sent by a button, and every bridge message in a panel."""
    view = (
        "<!doctype html><html><body><div id='theme'></div><div id='width'></div><div id='partial'></div>"
        "<script>\nconst post = (m) => parent.postMessage(Object.assign({jsonrpc: '2.0'}, m), '*');\n"
        "const show = (c) => { if (c.theme)"
        " document.getElementById('theme').textContent = 'theme ' + c.theme;"
        " if (c.containerDimensions) document.getElementById('width').textContent ="
        " 'width ' + c.containerDimensions.width; };\n"
        "addEventListener('message', (e) => { const m = e.data;\n"
        "  if (m.id === 1) { show(m.result.hostContext); post({method: 'ui/notifications/initialized'}); }\n"
        "  if (m.method === 'ui/notifications/host-context-changed') show(m.params);\n"
        "  if (m.method === 'ui/notifications/tool-input-partial')"
        " document.getElementById('partial').textContent = 'partial ' + JSON.stringify(m.params.arguments);\n"
        "});\npost({id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26',"
        " appInfo: {name: 'dash', version: '1'}, appCapabilities: {}}});\n</script></body></html>"
    )
    cells = [
        "%load_ext mcp_notebook",
        f"from pathlib import Path\nPath('dash.html').write_text({view!r})",
        "%mcp app --preview dash.html",
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    out = notebook.output(2)
    app = app_view(out)
    expect(app.locator("#theme")).to_have_text("theme light", timeout=KERNEL_TIMEOUT_MS)
    out.get_by_role("button", name="dark", exact=True).click()
    expect(app.locator("#theme")).to_have_text("theme dark")  # the fake context, not JupyterLab's
    out.locator(".mcpnb-preview-send-partial-input").click()
    expect(app.locator("#partial")).to_have_text('partial {"a":1}')
    slider = out.locator(".widget-slider input, .widget-readout").last
    slider.fill("400")
    slider.press("Enter")
    expect(app.locator("#width")).to_have_text("width 400")
    panel = out.locator(".mcpnb-preview-bridge")
    expect(panel).to_contain_text("ui/initialize")
    expect(panel).to_contain_text("ui/notifications/tool-input-partial")
    expect(panel).to_contain_text("ui/notifications/host-context-changed")
