"""An app's frame lives in the host's layer under the page's body (apps/layer.js), laid over a slot in its
output: it must still look and behave as if it were in the notebook. Clipped to the notebook's view when
scrolled, under JupyterLab's menus, hidden while another tab is shown, and a wheel over it that the app does
not use scrolls the notebook (its proxy forwards it: apps/proxy.html), a click into it makes its cell the
active one."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_frame, app_view

OpenNotebook = Callable[..., Notebook]

VIEW = (
    "<!doctype html><html><body style='margin:0'>"
    "<input id='box'><div id='state' style='height:340px'>starting</div><script>\n"
    "const post = (m) => parent.postMessage(Object.assign({jsonrpc: '2.0'}, m), '*');\n"
    "addEventListener('message', (e) => {\n"
    "  if (e.data.id === 1) { post({method: 'ui/notifications/initialized'});\n"
    "    post({method: 'ui/notifications/size-changed', params: {height: 380}});\n"
    "    document.getElementById('state').textContent = 'ready'; }\n"
    "});\n"
    "post({id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26',"
    " appInfo: {name: 'tall', version: '1'}, appCapabilities: {}}});\n"
    "</script></body></html>"
)
TOOL = "@mcp.tool(app=" + repr(VIEW) + ")\ndef tall() -> str:\n    'Tall.'\n    return 'tall'"
LINES = "print('\\n'.join(f'line {i}' for i in range(40)))"
# whether the topmost element at a point is the app's frame, or inside one of JupyterLab's menus
HIT = """([x, y]) => {
    const hit = document.elementFromPoint(x, y);
    if (!hit) return null;
    return hit.matches('iframe.mcpnb-app-frame') ? 'frame' : hit.closest('.lm-Menu') ? 'menu' : 'other';
}"""


def test_the_frame_is_laid_over_its_output(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook(["%load_ext mcp_notebook", TOOL, LINES, "%mcp call tall", LINES])
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    page = notebook.page
    frame = app_frame(notebook.output(3))
    expect(app_view(notebook.output(3)).locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    scroller = notebook.panel.locator(".jp-WindowedPanel-outer")

    # a click into the app makes its cell the notebook's active one, as a click in any output does (the
    # frame is outside the notebook's DOM: the host tells the notebook)
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex") != 3
    app_view(notebook.output(3)).locator("#box").click()
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex === 3")
    page.keyboard.type("typed")
    expect(app_view(notebook.output(3)).locator("#box")).to_have_value("typed")

    # a wheel over the app (which does not scroll) scrolls the notebook, as over any output
    before = scroller.evaluate("node => node.scrollTop")
    box = frame.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    page.mouse.wheel(0, 200)
    page.wait_for_function(
        "([node, before]) => node.scrollTop > before", arg=[scroller.element_handle(), before]
    )

    # scrolled so that the app's top is above the notebook's top edge: the frame is cut there
    scroller.evaluate(
        """(node) => {
            const slot = node.querySelector('.mcpnb-app-slot');
            node.scrollBy(0, slot.getBoundingClientRect().top - node.getBoundingClientRect().top + 100);
        }"""
    )
    edge = scroller.evaluate("node => node.getBoundingClientRect().top")
    x = box["x"] + box["width"] / 2
    page.wait_for_function(f"() => ({HIT})([{x}, {edge} + 20]) === 'frame'")
    assert page.evaluate(HIT, [x, edge - 5]) == "other"  # the toolbar above the notebook, not the app

    # JupyterLab's menus open over it
    page.locator(".lm-MenuBar-item", has_text="View").first.click()
    menu = page.locator(".lm-Menu").first.bounding_box()
    box = frame.bounding_box()
    assert menu is not None and box is not None
    point = [max(menu["x"], box["x"]) + 5, menu["y"] + menu["height"] - 15]
    assert point[0] < menu["x"] + menu["width"] and point[1] > edge, (menu, box)  # the two overlap there
    assert page.evaluate(HIT, point) == "menu"
    page.keyboard.press("Escape")

    # another tab in front: the frame is hidden; the notebook's tab again: shown
    notebook.command("launcher:create")
    expect(frame).to_be_hidden()
    notebook.command("application:close")
    expect(frame).to_be_visible()
