"""A person's moves in a real JupyterLab: run cells, fill a form, approve a call, watch progress, cancel.

Each test writes its notebook (or copies ``notebooks/quickstart.ipynb``) into the lab root, opens it in
Chromium and checks what the page shows. The remote server is the bundled demo server, over stdio.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, UI_TIMEOUT_MS, Notebook

OpenNotebook = Callable[..., Notebook]
QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"
CONNECT_DEMO = f"%mcp connect demo -- {sys.executable} -m mcp_notebook.demo_server"
SUBMIT = re.compile(r"^(Submit|Call)$")  # the form's submit button
ADD_TOOL = '''\
@mcp.tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b'''


def test_plain_cell_runs(open_notebook: OpenNotebook) -> None:
    """Infrastructure: the lab starts a kernel, runs a cell and shows its result."""
    notebook = open_notebook(["1+1", "print('hello from the kernel')"])
    notebook.run_all()
    expect(notebook.output(0)).to_contain_text("2")
    expect(notebook.output(1)).to_contain_text("hello from the kernel")


def test_notebook_tool_call_renders(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook(["%load_ext mcp_notebook", ADD_TOOL, "%mcp call add a=2 b=3"])
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    expect(notebook.output(2)).to_contain_text("5", timeout=UI_TIMEOUT_MS)


def test_form_submit_shows_result(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook(["%load_ext mcp_notebook", ADD_TOOL, "%mcp form add"])
    notebook.run_all()
    form = notebook.output(2)
    notebook.form_input(form, "a").fill("20")
    notebook.form_input(form, "b").fill("22")
    form.get_by_role("button", name=SUBMIT).click()
    expect(form).to_contain_text("42")
    assert not notebook.errors(), notebook.errors()


def test_approval_then_image(open_notebook: OpenNotebook) -> None:
    """A remote call waits for Approve; the demo server's image then renders inline as a data: URI."""
    notebook = open_notebook(["%load_ext mcp_notebook", CONNECT_DEMO, "%mcp call demo.sunrise"])
    notebook.run_all()
    card = notebook.output(2)
    expect(card).to_contain_text("sunrise")
    expect(card.locator("img")).to_have_count(0)  # nothing ran before the click
    card.get_by_role("button", name="Approve").click()
    image = card.locator('img[src^="data:image/png;base64,"]')
    expect(image).to_be_visible()
    assert not notebook.errors(), notebook.errors()


def test_progress_bar_finishes(open_notebook: OpenNotebook) -> None:
    call = "%mcp call demo.count_slowly steps=5 seconds_per_step=0.5"
    notebook = open_notebook(["%load_ext mcp_notebook", CONNECT_DEMO, call])
    notebook.run_all()
    card = notebook.output(2)
    card.get_by_role("button", name="Approve").click()
    bar = card.locator(".widget-hprogress .progress-bar")  # ipywidgets' FloatProgress
    expect(bar).to_be_visible()
    expect(card).to_contain_text(re.compile(r"step [1-5] of 5"))  # notifications/progress arrived
    expect(card).to_contain_text("Counted to 5.", timeout=KERNEL_TIMEOUT_MS)
    assert not notebook.errors(), notebook.errors()


def test_cancel_a_slow_call(open_notebook: OpenNotebook) -> None:
    """Cancel stops a running call and sends notifications/cancelled (basic/utilities/cancellation)."""
    call = "%mcp call demo.count_slowly steps=100 seconds_per_step=0.5"
    notebook = open_notebook(["%load_ext mcp_notebook", CONNECT_DEMO, call, "%mcp trace demo"])
    notebook.run_all()
    card = notebook.output(2)
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text(re.compile(r"step \d+ of 100"))  # it is running: progress arrived
    card.get_by_role("button", name="Cancel call").click()
    expect(card).to_contain_text("Cancelled demo.count_slowly while it ran. Progress reached:")
    expect(card.get_by_role("button", name="Cancel call")).to_have_count(0)
    expect(card).not_to_contain_text("Counted to 100.")
    notebook.run_cell(3)
    expect(notebook.output(3)).to_contain_text("notifications/cancelled")


def test_quickstart_runs_and_reads_well(open_notebook: OpenNotebook, screenshot_dir: Path) -> None:
    """The quickstart as a newcomer runs it: every cell, then Approve on the remote call, then the trace
    again. Its screenshot is kept for a person to look at (the path is printed)."""
    notebook = open_notebook(QUICKSTART, name="quickstart.ipynb")
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    card = notebook.output(notebook.cell_index("%mcp call demo.sunrise"))
    card.get_by_role("button", name="Approve").click()
    expect(card.locator('img[src^="data:image/png;base64,"]')).to_be_visible()
    trace = notebook.cell_index("%mcp trace")
    notebook.run_cell(trace)
    expect(notebook.output(trace)).to_contain_text("tools/call")
    assert not notebook.errors(), notebook.errors()
    shot = notebook.screenshot(screenshot_dir / "quickstart.png", whole=True)
    print(f"\nquickstart screenshot: {shot}", file=sys.stderr)
