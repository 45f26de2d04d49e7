"""The official ext-apps example servers (npm ``@modelcontextprotocol/server-*``, the ext-apps repository's
``examples/``), each run as a real stdio server and shown in JupyterLab by ``%mcp call``, driven in the three
display modes: inline, fullscreen and picture-in-picture. In each mode the test checks that the app drew its
own content inside the frame and that the bridge works both ways in that mode (a button in the app calls
its server's tool and the answer reaches the app; or the notebook calls a tool the app registered and the
app's page changes).

Installed by ``scripts/install-peers.sh`` into ``.peers/apps-examples`` (pinned). The examples the
ext-apps repository lists that are *not* here, and why (this machine reaches PyPI, npm and Debian only):

* ``map-server`` (CesiumJS globe): loads its tiles and library from cesium.com / OpenStreetMap.
* ``pdf-server``: fetches the PDFs it shows from arxiv.org and other web hosts.
* ``wiki-explorer-server``: reads Wikipedia's API.
* ``video-resource-server``, ``sheet-music-server``, ``transcript-server``, ``say-server``, ``qr-server``:
  need a web video, an audio font from a CDN, the microphone / a speech model, or a Python package from
  outside npm.
* ``threejs-server``, ``shadertoy-server``: WebGL; headless Chromium here has no GPU (``--disable-gpu``),
  so what they draw cannot be checked.
* ``system-monitor-server``, ``customer-segmentation-server``, ``scenario-modeler-server``,
  ``cohort-heatmap-server`` and the other ``basic-server-*`` (preact, solid, svelte, vue): would run
  offline, but show nothing the three below do not already cover (the same ``App`` class and bridge, a
  chart, app-registered tools); left out to keep the browser lane short.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import FrameLocator, Locator, expect

from tests.waiting import wait_until

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_frame, app_view

OpenNotebook = Callable[..., Notebook]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / ".peers" / "apps-examples" / "node_modules" / "@modelcontextprotocol"
MODES = ("inline", "fullscreen", "pip")
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$")


def _server(package: str) -> Path:
    script = EXAMPLES / package / "dist" / "index.js"
    if not script.is_file():
        pytest.fail(f"no {script}: install the npm peers with: bash scripts/install-peers.sh", pytrace=False)
    return script


def _open(open_notebook: OpenNotebook, package: str, tool: str) -> tuple[Notebook, Locator, FrameLocator]:
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect ex -- node {_server(package)} --stdio",
        "mcp.policy.set('ex.*', 'allow')",
        f"h = %mcp call ex.{tool}",
        "pass  # the test writes here: code that drives the app from the notebook",
    ]
    notebook = open_notebook(cells)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    card = notebook.output(3)
    app = app_view(card)
    expect(card.locator(".mcpnb-app-label")).to_have_text(f"sandboxed app · ex · {tool}")
    return notebook, card, app


def _show(notebook: Notebook, card: Locator, mode: str) -> None:
    """The person picks ``mode`` with the buttons beside the app's label; the frame's box follows."""
    if mode != "inline":
        card.locator(f"button.mcpnb-app-mode-{mode}").click()
        expect(card.locator(".mcpnb-app")).to_have_attribute("data-mode", mode)
    frame = app_frame(card)
    box = frame.bounding_box()
    area = notebook.panel.locator(".jp-WindowedPanel-outer").bounding_box()
    assert box is not None and area is not None
    if mode == "fullscreen":
        assert box["width"] > area["width"] - 40 and box["height"] > area["height"] - 60, (box, area)
    elif mode == "pip":
        assert box["width"] <= 480 and box["x"] > 640, box  # small, in the right-hand corner
    else:
        assert box["width"] > 400, box


def _back_inline(card: Locator) -> None:
    card.locator("button.mcpnb-app-mode-inline").click()
    expect(card.locator(".mcpnb-app-away")).to_be_hidden()


@pytest.mark.parametrize("package", ["server-basic-vanillajs", "server-basic-react"])
def test_basic_example_in_every_display_mode(open_notebook: OpenNotebook, package: str) -> None:
    """basic-server-vanillajs / -react: the app shows the tool's result (the server's time); its "Get
    Server Time" button calls the server's ``get-time`` through the bridge (the notebook's policy allows
    it), in each mode; each call lands in the cell, attributed to the app."""
    notebook, card, app = _open(open_notebook, package, "get-time")
    time = app.locator("p", has_text="Server Time:").locator("code")
    expect(time).to_have_text(ISO_TIME, timeout=KERNEL_TIMEOUT_MS)  # the tool result, drawn by the app
    calls = card.get_by_text("the app (sandboxed app · ex · get-time) calls get-time")
    for count, mode in enumerate(MODES, start=1):
        _show(notebook, card, mode)
        expect(app.get_by_role("button", name="Get Server Time")).to_be_visible()
        before = time.inner_text()
        app.get_by_role("button", name="Get Server Time").click()
        expect(calls).to_have_count(count)
        expect(time).not_to_have_text(before)
        expect(time).to_have_text(ISO_TIME)
        if mode != "inline":
            _back_inline(card)
    notebook.page.evaluate(
        "source => window.jupyterapp.shell.currentWidget.content.widgets[4].model.sharedModel"
        ".setSource(source)",
        "print([c.state for c in h.app.calls], h.app.display_mode)",
    )
    # the mode the person picked last reaches the kernel as a widget state update, which ipywidgets may
    # hold back until the kernel is idle: read again until it arrived (bounded in time: a number of cell
    # runs is no bound, how long they take depends on the machine's load)

    def mode_arrived() -> bool:
        notebook.run_cell(4)
        return "inline" in notebook.output_text(4)

    wait_until(mode_arrived, "the display mode to reach the kernel", timeout=KERNEL_TIMEOUT_MS / 1000)
    assert "['done', 'done', 'done'] inline" in notebook.output_text(4)


def test_budget_allocator_in_every_display_mode(open_notebook: OpenNotebook) -> None:
    """budget-allocator-server: the app draws its chart and sliders from the tool's structured result, and
    registers tools of its own; in each mode the notebook calls one (``set-total-budget``) through the
    bridge and the app's page changes."""
    notebook, card, app = _open(open_notebook, "server-budget-allocator", "get-budget-data")
    expect(app.locator("#sliders-container input[type=range]")).to_have_count(5, timeout=KERNEL_TIMEOUT_MS)
    expect(app.locator("#budget-chart")).to_be_visible()
    expect(app.locator("#budget-selector")).to_have_value("100000")
    for mode, amount in zip(MODES, ("250000", "500000", "50000"), strict=True):
        _show(notebook, card, mode)
        notebook.page.evaluate(
            "source => window.jupyterapp.shell.currentWidget.content.widgets[4].model.sharedModel"
            ".setSource(source)",
            f"h.app.call_app_tool('set-total-budget', {{'amount': {amount}}}, approved=True)",
        )
        notebook.run_cell(4)
        expect(app.locator("#budget-selector")).to_have_value(amount)
        expect(card).to_contain_text(f"Total budget set to ${int(amount):,}")
        expect(app.locator("#sliders-container input[type=range]")).to_have_count(5)
        if mode != "inline":
            _back_inline(card)
