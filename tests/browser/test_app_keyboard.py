"""An app's frame lives in the host's layer at the end of the page's body (apps/layer.js), yet a keyboard
user meets it where its output is: Tab from the control before the app (its display-mode buttons) stops
on the app's frame and then goes through the app's own controls; Tab out of the app's last control lands
on the next control after the app's place in the output, and Shift+Tab mirrors both ways. The slot in
the output is named after the app (the frame carries the same title), and the frame belongs to it for
assistive technology (aria-owns)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import FrameLocator, Page, expect

from tests.waiting import wait_until

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_frame, app_view, both_frontends

OpenNotebook = Callable[..., Notebook]

VIEW = (
    "<!doctype html><html><body style='margin:0'>"
    "<input id='first'> <input id='last'><div id='state'>starting</div><script>\n"
    "const post = (m) => parent.postMessage(Object.assign({jsonrpc: '2.0'}, m), '*');\n"
    "addEventListener('keydown', (e) => { if (e.key === 'Escape')"
    " post({id: 2, method: 'ui/request-display-mode', params: {mode: 'inline'}}); });\n"
    "addEventListener('message', (e) => {\n"
    "  if (e.data.id === 1) { post({method: 'ui/notifications/initialized'});\n"
    "    post({method: 'ui/notifications/size-changed', params: {height: 120}});\n"
    "    document.getElementById('state').textContent = 'ready'; }\n"
    "});\n"
    "post({id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26',"
    " appInfo: {name: 'keyed', version: '1'}, appCapabilities: {}}});\n"
    "</script></body></html>"
)
TOOL = "@mcp.tool(app=" + repr(VIEW) + ")\ndef keyed() -> str:\n    'Keyed.'\n    return 'keyed'"
# the app, then a control of the page right after it in the same cell's outputs
CALL = (
    "from IPython.display import HTML, display\n"
    "h = %mcp call keyed\n"
    "display(HTML('<button id=\"after-app\">after</button>'))"
)
LINES = "print('\\n'.join(f'line {i}' for i in range(60)))"  # the app starts below the notebook's view
# where the page's focus is: an element of the notebook (its id, or its class; inside open shadow roots
# too), the app's frame itself ("frame"), or an element inside the app ("app:<id>")
FOCUS = """() => {
    let at = document.activeElement;
    while (at && at.shadowRoot && at.shadowRoot.activeElement) at = at.shadowRoot.activeElement;
    if (!at || at === document.body) return "body";
    if (at.matches("iframe.mcpnb-app-frame")) return "frame";
    return at.id || at.className;
}"""

# posted from the proxy's realm by a view on the proxy's origin: a turn back (the guard's to say), a size
FORGED = """() => {
    const script = parent.document.createElement("script");
    script.textContent = `
        const post = (method, params) => parent.postMessage({jsonrpc: "2.0", method, params}, "*");
        post("ui/notifications/sandbox-tab-back", {forward: true});
        post("ui/notifications/size-changed", {height: 200});`;
    parent.document.body.append(script);
}"""
# what the Tab key can reach in the host's layer (its frames, its guards)
LAYER_TABBABLE = """() => [...document.querySelectorAll(".mcpnb-app-layer *")]
    .filter((node) => node.tabIndex >= 0).map((node) => node.tagName)"""
# inside the app: the id of its element that has the focus, if it has it
INSIDE = "() => document.hasFocus() && document.activeElement !== document.body && document.activeElement.id"


class Keys:
    """The keyboard on a notebook whose app (``view``: its document) is in output 3."""

    def __init__(self, notebook: Notebook, view: FrameLocator) -> None:
        self.notebook = notebook
        self.view = view

    def focus(self) -> str:
        where = str(self.notebook.page.evaluate(FOCUS))
        if where != "frame":
            return where
        inside = self.view.locator("body").evaluate(INSIDE)
        return f"app:{inside}" if inside else "frame"

    def press(self, key: str, expected: str) -> None:
        self.notebook.page.keyboard.press(key)
        try:
            wait_until(lambda: self.focus() == expected, f"{key} to reach {expected}", timeout=30)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the focus is at {self.focus()}") from None


def accessible_group(page: Page, name: str) -> list[str]:
    """The roles of what Chromium's accessibility tree holds in the group named ``name``, in the output
    area (not at the end of the page)."""
    session = page.context.new_cdp_session(page)
    try:
        nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        session.detach()
    by_id = {node["nodeId"]: node for node in nodes}

    def value(node: dict[str, Any], key: str) -> Any:
        return node.get(key, {}).get("value")

    def shown(node: dict[str, Any]) -> list[dict[str, Any]]:  # its children, through ignored nodes
        found: list[dict[str, Any]] = []
        for child in (by_id[c] for c in node.get("childIds", []) if c in by_id):
            found.extend(shown(child) if child.get("ignored") else [child])
        return found

    groups = [n for n in nodes if value(n, "role") == "group" and value(n, "name") == name]
    assert len(groups) == 1, f"{len(groups)} groups named {name!r}"
    return [str(value(child, "role")) for child in shown(groups[0])]


def open_app(open_notebook: OpenNotebook, tool: str) -> Notebook:
    notebook = open_notebook(["%load_ext mcp_notebook", tool, LINES, CALL])
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    return notebook


@both_frontends
def test_tab_goes_through_the_app_in_its_place(open_notebook: OpenNotebook) -> None:
    notebook = open_app(open_notebook, TOOL)
    output = notebook.output(3)
    keys = Keys(notebook, app_view(output))
    expect(keys.view.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    frame = app_frame(output)
    expect(frame).to_be_visible()

    # the control before the app at the bottom of the notebook's view, the app below it, out of view (its
    # frame hidden): Tab brings the app into view and stops on its frame, then goes through the app's own
    # controls, then on to the next control after the app
    before = output.locator(".mcpnb-app-mode-fullscreen")
    before.focus()
    before.evaluate("node => node.scrollIntoView({block: 'end'})")
    expect(frame).to_be_hidden()
    button = before.evaluate("n => n.className")
    assert keys.focus() == button
    keys.press("Tab", "frame")
    keys.press("Shift+Tab", button)  # turned back at the app's frame
    keys.press("Tab", "frame")
    keys.press("Tab", "app:first")
    notebook.page.keyboard.type("typed")
    expect(keys.view.locator("#first")).to_have_value("typed")
    keys.press("Tab", "app:last")
    keys.press("Tab", "after-app")

    # and back
    keys.press("Shift+Tab", "frame")
    keys.press("Tab", "after-app")  # turned back
    keys.press("Shift+Tab", "frame")
    keys.press("Shift+Tab", "app:last")
    keys.press("Shift+Tab", "app:first")
    keys.press("Shift+Tab", button)

    # a click into the app, then Tab out of its end: the next control too
    keys.view.locator("#last").click()
    keys.press("Tab", "after-app")
    # out of the app, nothing in the layer is in the page's Tab order: the end of the page stays its end
    assert notebook.page.evaluate(LAYER_TABBABLE) == [], notebook.page.evaluate(LAYER_TABBABLE)

    # for assistive technology (Chromium's accessibility tree): the app's frame is in its output, inside a
    # group named after the app, though the frame itself lives in the layer at the end of the page
    title = frame.get_attribute("title")
    assert title and "keyed" in title, title
    inside = accessible_group(notebook.page, title)  # the frame, and the slot's two entries (generic)
    assert inside.count("Iframe") == 1, inside


def test_an_app_on_its_own_origin_too(open_notebook: OpenNotebook) -> None:
    """An app with a domain of its own: the frame the host focuses is its guard document (apps/guard.js),
    the proxy one frame deeper, on the app's origin."""
    tool = TOOL.replace("@mcp.tool(app=", "@mcp.tool(domain='keys.example', app=")
    notebook = open_app(open_notebook, tool)
    output = notebook.output(3)
    keys = Keys(notebook, app_frame(output).content_frame.frame_locator("iframe").frame_locator("iframe"))
    expect(keys.view.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    before = output.locator(".mcpnb-app-mode-fullscreen")
    before.focus()
    button = before.evaluate("n => n.className")
    keys.press("Tab", "frame")
    keys.press("Shift+Tab", button)
    keys.press("Tab", "frame")
    keys.press("Tab", "app:first")
    # the view shares its proxy's origin, so it can post as its proxy: a turn back it says is not taken (the
    # guard says it, not the proxy); the size it says after it, which the host takes, shows it went through
    keys.view.locator("body").evaluate(FORGED)
    expect(output.locator(".mcpnb-app-slot")).to_have_css("height", "200px")
    assert keys.focus() == "app:first"
    keys.press("Tab", "app:last")
    keys.press("Tab", "after-app")
    keys.press("Shift+Tab", "frame")
    keys.press("Tab", "after-app")
    keys.press("Shift+Tab", "frame")
    keys.press("Shift+Tab", "app:last")

    # fullscreen, then Escape on the frame (the guard document has the keys there): back inline, and the
    # focus where it was
    before.focus()
    keys.press("Enter", "mcpnb-app-mode mcpnb-app-mode-inline")
    keys.press("Shift+Tab", "frame")
    keys.press("Escape", button)
    expect(output.locator(".mcpnb-app")).to_have_attribute("data-mode", "inline")
