"""The keyboard and an app shown fullscreen or picture-in-picture (apps/layer.js, apps/focus.js), and the
page's Tab order around an app in its place.

Fullscreen is a dialog over the notebook: opening it puts the focus in its box (on the way back inline),
Tab and Shift+Tab go round the box's own controls and the app and never reach the notebook it covers,
Escape closes it (on the host's controls, and on the app's frame, whose own document has the keys), the
app may ask to go back inline (its Escape here does), and closing it puts the focus back where it was. In
picture-in-picture Escape inside its box brings it back inline. Out of the app in its place, the Tab key
goes where the browser's own order goes: into an open shadow root, past a positive tabindex."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_view, both_frontends
from .test_app_keyboard import LINES, TOOL, Keys, open_app

OpenNotebook = Callable[..., Notebook]

FULL, BACK, PIP = (f"mcpnb-app-mode mcpnb-app-mode-{m}" for m in ("fullscreen", "inline", "pip"))


def ready(notebook: Notebook) -> Keys:
    keys = Keys(notebook, app_view(notebook.output(3)))
    expect(keys.view.locator("#state")).to_have_text("ready", timeout=KERNEL_TIMEOUT_MS)
    return keys


@both_frontends
def test_fullscreen_keeps_the_keyboard_in_the_app(open_notebook: OpenNotebook) -> None:
    notebook = open_app(open_notebook, TOOL)
    keys = ready(notebook)
    output = notebook.output(3)
    box = output.locator(".mcpnb-app")
    output.locator(".mcpnb-app-mode-fullscreen").focus()

    # opened from its button: the focus goes into the box, on the way back inline
    keys.press("Enter", BACK)
    expect(box).to_have_attribute("data-mode", "fullscreen")
    expect(box).to_have_attribute("role", "dialog")
    keys.press("Tab", PIP)
    keys.press("Tab", "frame")
    keys.press("Shift+Tab", PIP)  # turned back at the frame
    keys.press("Tab", "frame")
    keys.press("Tab", "app:first")
    keys.press("Tab", "app:last")
    keys.press("Tab", BACK)  # round to the box's start, not to the notebook behind it
    keys.press("Shift+Tab", "frame")  # and back round to the app, from its end
    keys.press("Tab", BACK)  # turned back at the frame: round again
    keys.press("Shift+Tab", "frame")
    keys.press("Shift+Tab", "app:last")
    keys.press("Shift+Tab", "app:first")
    keys.press("Shift+Tab", PIP)

    # Escape on the frame (its document has the keys): back inline, the focus where it was
    keys.press("Tab", "frame")
    keys.press("Escape", FULL)
    expect(box).to_have_attribute("data-mode", "inline")
    expect(box).not_to_have_attribute("role", "dialog")

    # Escape on the host's controls; then inside the app, which asks to go back inline itself
    keys.press("Enter", BACK)
    keys.press("Tab", PIP)
    keys.press("Escape", FULL)
    expect(box).to_have_attribute("data-mode", "inline")
    keys.press("Enter", BACK)
    keys.press("Shift+Tab", "frame")
    keys.press("Shift+Tab", "app:last")
    keys.press("Escape", FULL)
    expect(box).to_have_attribute("data-mode", "inline")

    # picture-in-picture: Escape inside its box (its controls, the frame) brings it back inline
    output.locator(".mcpnb-app-mode-pip").focus()
    keys.press("Enter", BACK)  # the button pressed is hidden: the box's first control
    expect(box).to_have_attribute("data-mode", "pip")
    keys.press("Escape", PIP)
    expect(box).to_have_attribute("data-mode", "inline")
    keys.press("Enter", BACK)
    keys.press("Tab", FULL)
    keys.press("Tab", "frame")
    notebook.page.keyboard.press("Escape")
    expect(box).to_have_attribute("data-mode", "inline")


# after the app, in its cell's outputs: a host whose open shadow root holds a button, a button with a
# positive tabindex (the browser reaches it before every tabindex 0 element, not here), a button
SHADOWED = (
    "from IPython.display import HTML, display\n"
    "h = %mcp call keyed\n"
    'display(HTML(\'<span id="shadow-host"></span><button id="positive" tabindex="2">p</button>'
    '<button id="after-app">after</button>\'))'
)
ATTACH = """(host) => {
    host.attachShadow({mode: "open"}).innerHTML = '<button id="in-shadow">in the shadow</button>';
}"""


@both_frontends
def test_out_of_the_app_in_the_browsers_order(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook(["%load_ext mcp_notebook", TOOL, LINES, SHADOWED])
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    keys = ready(notebook)
    output = notebook.output(3)
    output.locator("#shadow-host").evaluate(ATTACH)

    output.locator(".mcpnb-app-mode-fullscreen").focus()
    keys.press("Tab", "frame")
    keys.press("Tab", "app:first")
    keys.press("Tab", "app:last")
    keys.press("Tab", "in-shadow")  # out of the app: into the shadow root, as the browser goes
    keys.press("Tab", "after-app")  # the browser's own step: past the positive tabindex
    keys.press("Shift+Tab", "in-shadow")
    keys.press("Shift+Tab", "frame")  # the browser's own step back into the app's place
    keys.press("Shift+Tab", "app:last")
