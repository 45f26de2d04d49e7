"""The gallery (docs/gallery.md): what a person sees in JupyterLab, in the light and the dark theme.

Screenshots of the quickstart after Run All, a form, an approval card, a batch, the ``%mcp serve`` block
and an app, each cropped to its cell and written as a small optimized PNG to ``build/gallery/`` (or
``$MCP_NOTEBOOK_GALLERY_DIR``). With ``MCP_NOTEBOOK_WRITE_GALLERY=1`` they refresh ``docs/gallery/``, the
committed copies the docs page shows:

    MCP_NOTEBOOK_WRITE_GALLERY=1 .venv/bin/python -m pytest tests/browser/test_gallery.py

Each shot is also checked: the cell shows what it should and no error, in both themes.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Locator, expect

from .conftest import KERNEL_TIMEOUT_MS, Notebook, app_view
from .test_workshops_run_all import run_all_as_a_person

OpenNotebook = Callable[..., Notebook]
ROOT = Path(__file__).resolve().parents[2]
DOCS_GALLERY = ROOT / "docs" / "gallery"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
COLORS = 64  # a palette PNG: screenshots of text and flat widgets need few colours
#: every picture the docs page shows, without its ``-light.png`` / ``-dark.png`` ending
SHOTS = ("quickstart", "form", "card", "batch", "serve", "app")


@pytest.fixture(scope="module")
def gallery() -> Path:
    """Where the shots go: docs/gallery/ when asked to refresh it, else a build directory."""
    if os.environ.get("MCP_NOTEBOOK_WRITE_GALLERY") == "1":
        target = DOCS_GALLERY
    else:
        target = Path(os.environ.get("MCP_NOTEBOOK_GALLERY_DIR", ROOT / "build" / "gallery"))
    target.mkdir(parents=True, exist_ok=True)
    return target


def save_png(png: bytes, path: Path) -> Path:
    """A screenshot as a small PNG: an adaptive palette of :data:`COLORS` colours, no dithering (flat
    colours and anti-aliased text stay crisp), zlib at its best."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.quantize(colors=COLORS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, format="PNG", optimize=True)
    return path


def shoot(where: Locator, path: Path) -> Path:
    where.scroll_into_view_if_needed()
    return save_png(where.screenshot(animations="disabled", caret="hide"), path)


def at_rest(notebook: Notebook) -> None:
    """Nothing in focus, the first cell active, the mouse away: no focus ring, no cell toolbar, no
    selection bar on the cells being shot."""
    notebook.page.evaluate(
        """() => {
            document.activeElement?.blur();
            window.jupyterapp.shell.currentWidget.content.activeCellIndex = 0;
        }"""
    )
    notebook.page.mouse.move(1, 1)


def set_theme(notebook: Notebook, name: str) -> None:
    """Settings > Theme, as a person picks it; waits until the theme's stylesheet is applied."""
    notebook.command("apputils:change-theme", {"theme": name})
    notebook.page.wait_for_function(
        "name => document.body.dataset.jpThemeName === name", arg=name, timeout=KERNEL_TIMEOUT_MS
    )
    notebook.page.wait_for_function(
        "() => getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim() !== ''"
    )


@pytest.fixture
def themed() -> Iterator[list[Notebook]]:
    """Notebooks whose theme a test changed go back to the light theme (the lab's settings outlive it)."""
    changed: list[Notebook] = []
    yield changed
    for notebook in changed:
        set_theme(notebook, THEMES["light"])


def test_gallery_quickstart(open_notebook: OpenNotebook, gallery: Path, themed: list[Notebook]) -> None:
    """The quickstart after Run All (its card approved): the window a person sees at "3. Call it"."""
    notebook = open_notebook(ROOT / "notebooks" / "quickstart.ipynb", "quickstart.ipynb")
    run_all_as_a_person(notebook)
    assert not notebook.errors(), notebook.errors()
    themed.append(notebook)
    notebook.command("application:toggle-left-area")  # the notebook, not the file browser
    call = notebook.cell_index("%mcp call forecast city=Paris days=2")
    expect(notebook.output(call)).to_contain_text("valid against outputSchema")
    at_rest(notebook)
    for theme, name in THEMES.items():
        set_theme(notebook, name)
        notebook.cell(call - 1).evaluate("cell => cell.scrollIntoView({block: 'start'})")  # "3. Call it"
        path = gallery / f"quickstart-{theme}.png"
        save_png(notebook.page.screenshot(animations="disabled", caret="hide"), path)
        print(f"\nquickstart ({theme}): {path}", file=sys.stderr)


FORECAST_TOOL = '''\
from typing import Annotated

from mcp_notebook import Field


@mcp.tool
def forecast(city: str, days: Annotated[int, Field(ge=1, le=14)] = 3) -> dict[str, list[float]]:
    """Forecast the weather (made up, for the demo).

    Args:
        city: City name.
        days: How many days ahead (1 to 14).
    """
    return {"temperatures": [round(12.0 + 1.5 * day, 1) for day in range(days)]}'''
CONNECT_DEMO = f"%mcp connect demo -- {sys.executable} -m mcp_notebook.demo_server"
BATCH = """\
import pandas as pd

mcp.policy.set("demo.divide", "allow")
pairs = pd.DataFrame({"a": [1.0, 9.0, 2.0, 5.0], "b": [4.0, 3.0, 0.0, 2.0]}, index=list("wxyz"))
ratios = mcp.map("demo.divide", pairs, concurrency=2)
ratios"""
SERVE_CALL = """\
served = mcp.serving
reader = mcp.connect("reader", served.url, headers=served.headers)
mcp.policy.set("reader.*", "allow")
print(mcp.call("reader.forecast", city="Oslo", days=2).wait(30).text)"""
#: a hand-written MCP App view (no library): a bar per day, in the host's colours, following its theme
APP_VIEW = """<!doctype html><html><head><style>
body { margin: 0; font: 13px var(--font-sans, sans-serif); color: var(--color-text-primary, #222);
       background: var(--color-background-primary, #fff); }
.card { padding: 10px 14px; }
h3 { margin: 0 0 8px; font-size: 14px; }
.row { display: flex; align-items: center; gap: 8px; margin: 3px 0; }
.day { width: 56px; color: var(--color-text-secondary, #555); }
.bar { height: 14px; border-radius: 3px; background: #3b82c4; }
</style></head><body><div class="card"><h3 id="title">waiting for the forecast</h3><div id="bars"></div></div>
<script>
const post = (m) => parent.postMessage(Object.assign({jsonrpc: "2.0"}, m), "*");
const apply = (context) => {
  for (const [name, value] of Object.entries(context?.styles?.variables || {}))
    if (value) document.documentElement.style.setProperty(name, value);
};
const draw = (result) => {
  document.getElementById("title").textContent = `${result.city}: ${result.temperatures.length} days`;
  document.getElementById("bars").innerHTML = result.temperatures.map((t, i) =>
    `<div class="row"><span class="day">day ${i + 1}</span><span class="bar" style="width:${t * 8}px"></span>`
    + `<span>${t} °C</span></div>`).join("");
  post({method: "ui/notifications/size-changed", params: {height: document.documentElement.scrollHeight}});
};
addEventListener("message", (event) => {
  const m = event.data;
  if (m.id === 1) { apply(m.result.hostContext); post({method: "ui/notifications/initialized"}); }
  if (m.method === "ui/notifications/host-context-changed") apply(m.params);
  if (m.method === "ui/notifications/tool-result") draw(m.params.structuredContent);
});
post({id: 1, method: "ui/initialize", params: {protocolVersion: "2026-01-26",
      appInfo: {name: "forecast-chart", version: "1"}, appCapabilities: {}}});
</script></body></html>"""
APP_TOOL = f'''\
VIEW = {APP_VIEW!r}


@mcp.tool(app=VIEW)
def forecast_chart(city: str, days: int = 5) -> dict[str, object]:
    """The forecast as a chart (an MCP App)."""
    return {{"city": city, "temperatures": [round(12.0 + 1.5 * day, 1) for day in range(days)]}}'''
CELLS = [
    "%load_ext mcp_notebook",
    FORECAST_TOOL,
    "%mcp form forecast",
    CONNECT_DEMO,
    "%mcp call demo.sunrise width=240 height=144",
    BATCH,
    "%mcp serve",
    SERVE_CALL,
    APP_TOOL,
    "%mcp call forecast_chart city=Lima days=5",
]


def test_gallery_outputs(open_notebook: OpenNotebook, gallery: Path, themed: list[Notebook]) -> None:
    """A form (partly filled, one message showing), a card waiting for approval, a finished batch, the
    serve block with a request served, and an app: each its cell, in both themes."""
    notebook = open_notebook(CELLS)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    themed.append(notebook)
    notebook.command("application:toggle-left-area")
    form = notebook.output(2)
    notebook.form_input(form, "days").fill("20")
    expect(form).to_contain_text("20 is greater than the maximum of 14")
    notebook.form_input(form, "city").fill("Paris")
    expect(notebook.output(4).get_by_role("button", name="Approve")).to_be_visible()
    expect(notebook.output(5)).to_contain_text("3 succeeded, 1 failed", timeout=KERNEL_TIMEOUT_MS)
    expect(notebook.output(7)).to_contain_text("temperatures", timeout=KERNEL_TIMEOUT_MS)
    expect(notebook.output(6)).not_to_contain_text("No requests yet.")  # the console shows the call
    app = app_view(notebook.output(9))
    expect(app.locator("#title")).to_have_text("Lima: 5 days", timeout=KERNEL_TIMEOUT_MS)
    cells = {"form": 2, "card": 4, "batch": 5, "serve": 6, "app": 9}
    at_rest(notebook)
    for theme, name in THEMES.items():
        set_theme(notebook, name)
        dark = theme == "dark"
        expect(app.locator("body")).to_have_css(
            "background-color", "rgb(17, 17, 17)" if dark else "rgb(255, 255, 255)"
        )
        for shot, index in cells.items():
            path = shoot(notebook.cell(index), gallery / f"{shot}-{theme}.png")
            print(f"\n{shot} ({theme}): {path}", file=sys.stderr)
    assert not notebook.widget_errors(), notebook.widget_errors()


def test_the_docs_show_every_committed_shot() -> None:
    """docs/gallery.md shows each shot in both themes, each committed and small."""
    page = (ROOT / "docs" / "gallery.md").read_text(encoding="utf-8")
    total = 0
    for shot in SHOTS:
        for theme in THEMES:
            name = f"{shot}-{theme}.png"
            assert f"gallery/{name}" in page, name
            path = DOCS_GALLERY / name
            assert path.is_file(), path
            assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), path
            total += path.stat().st_size
    assert total < 800_000, f"the gallery's PNGs weigh {total} bytes; crop or quantize them"
