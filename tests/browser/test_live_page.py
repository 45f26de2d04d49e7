"""Issue 19: the live page, in JupyterLab 4 and Notebook 7 as a person uses them.

Each output in the cell that asked for it (whichever thread publishes it), reload-proof cards, no "Error
displaying widget: model not found" after a restart, a reload or a reopen, and no silently wrong data from
an unfinished batch. Every test runs in both front ends (``@both_frontends``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import expect

from .conftest import KERNEL_TIMEOUT_MS, Frontend, Lab, Notebook, both_frontends

OpenNotebook = Callable[..., Notebook]
CONNECT_DEMO = f"%mcp connect demo -- {sys.executable} -m mcp_notebook.demo_server"
SLOW_CALL = "%mcp call demo.count_slowly steps=5 seconds_per_step=0.3"


@both_frontends
def test_the_harness_runs_a_cell(open_notebook: OpenNotebook, frontend: Frontend) -> None:
    """Infrastructure: the front end starts a kernel, runs cells and shows their results."""
    notebook = open_notebook(["1+1", "print('hello from the kernel')"])
    assert notebook.frontend == frontend
    notebook.run_all()
    expect(notebook.output(0)).to_contain_text("2")
    expect(notebook.output(1)).to_contain_text("hello from the kernel")


@both_frontends
def test_an_allowed_call_shows_its_progress_and_result_in_its_own_cell(
    open_notebook: OpenNotebook, screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: progress, Cancel and "Counted to 5." appeared under the `%mcp connect` cell (the runtime
    thread published with that cell's parent) and the calling cell stayed empty."""
    notebook = open_notebook(
        ["%load_ext mcp_notebook", CONNECT_DEMO, "%mcp policy set demo.* allow", SLOW_CALL]
    )
    notebook.run_all()
    expect(notebook.output(3)).to_contain_text("Counted to 5.", timeout=KERNEL_TIMEOUT_MS)
    expect(notebook.output(1)).not_to_contain_text("Counted")
    expect(notebook.output(1)).not_to_contain_text("count_slowly")
    notebook.screenshot(screenshot_dir / f"allowed-call-in-its-cell-{frontend}.png")
    saved = notebook.save()
    assert "Counted to 5." in str(saved["cells"][3]["outputs"])
    assert "Counted to 5." not in str(saved["cells"][1]["outputs"])
    assert not notebook.errors(), notebook.errors()


@both_frontends
def test_an_approved_card_shows_its_result_in_its_own_cell(open_notebook: OpenNotebook) -> None:
    """The same call behind an approval card, approved by a click: progress and result under the card."""
    notebook = open_notebook(["%load_ext mcp_notebook", CONNECT_DEMO, SLOW_CALL, "1 + 1"])
    notebook.run_all()
    card = notebook.output(2)
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("Counted to 5.", timeout=KERNEL_TIMEOUT_MS)
    for other in (1, 3):
        expect(notebook.output(other)).not_to_contain_text("count_slowly")


@both_frontends
def test_to_pandas_on_a_batch_awaiting_approval_says_so(open_notebook: OpenNotebook) -> None:
    """Before: an empty frame with only an "error" column, no warning (workshop 07 §5 then failed with
    KeyError: 'result'). Now the cell says the batch is not finished; approved, every input row is there,
    the one dividing by zero marked "failed"."""
    rows = "[{'a': 1, 'b': 1}, {'a': 1, 'b': 0}, {'a': 6, 'b': 3}]"
    notebook = open_notebook(
        [
            "%load_ext mcp_notebook",
            CONNECT_DEMO,
            f"batch = mcp.map('demo.divide', {rows})\nbatch",
            "print(batch.to_pandas().to_string())",
        ]
    )
    notebook.run_all()
    expect(notebook.output(3)).to_contain_text("not finished: awaiting approval")
    notebook.output(2).get_by_role("button", name="Approve").click()
    expect(notebook.output(2)).to_contain_text("2 succeeded, 1 failed", timeout=KERNEL_TIMEOUT_MS)
    notebook.run_cell(3)
    table = notebook.output(3)
    expect(table).not_to_contain_text("not finished")
    expect(table).to_contain_text("failed")
    expect(table).to_contain_text("cannot divide by zero")
    assert notebook.output_text(3).count(" ok ") == 2, notebook.output_text(3)


ADD_TOOL = '''\
@mcp.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b'''
LIVE_CELLS = ["%load_ext mcp_notebook", ADD_TOOL, "%mcp form add", CONNECT_DEMO, "%mcp call demo.sunrise"]


@both_frontends
def test_a_card_approved_after_a_reload_shows_its_result(
    open_notebook: OpenNotebook, screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: after a reload the card still offered Approve and the call ran, but the output went empty
    (the call closed its widget, and the display update cannot reach a reloaded page), and the saved file
    still said "awaiting approval"."""
    notebook = open_notebook(["%load_ext mcp_notebook", CONNECT_DEMO, "%mcp call demo.count_slowly steps=2"])
    notebook.run_all()
    expect(notebook.output(2).get_by_role("button", name="Approve")).to_be_visible()
    notebook.save()
    notebook.reload()
    card = notebook.output(2)
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("Counted to 2.", timeout=KERNEL_TIMEOUT_MS)
    notebook.screenshot(screenshot_dir / f"approved-after-reload-{frontend}.png")
    assert not notebook.widget_errors(), notebook.widget_errors()
    # the saved file records the final state (before: still "awaiting approval", the update never came)
    saved = str(notebook.save()["cells"][2]["outputs"])
    assert "Counted to 2." in saved and "awaiting approval" not in saved, saved
    assert "widget-view" not in saved  # a finished call is saved as plain HTML


@both_frontends
def test_restart_and_reload_show_snapshots_not_model_not_found(
    open_notebook: OpenNotebook, screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: the form and the waiting card became "Error displaying widget: model not found"."""
    notebook = open_notebook(LIVE_CELLS)
    notebook.run_all()
    expect(notebook.output(4).get_by_role("button", name="Approve")).to_be_visible()
    notebook.save()
    notebook.restart_kernel()
    notebook.reload()
    notebook.screenshot(screenshot_dir / f"restart-reload-{frontend}.png")
    assert not notebook.widget_errors(), notebook.widget_errors()
    expect(notebook.output(2)).to_contain_text("Add two numbers.")
    expect(notebook.output(4)).to_contain_text("sunrise")


@both_frontends
def test_reopened_in_a_fresh_server_shows_snapshots_not_model_not_found(
    open_notebook: OpenNotebook, fresh_lab: Callable[[], Lab], screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: a saved notebook reopened in a new server showed "model not found" for every live output."""
    notebook = open_notebook(LIVE_CELLS)
    notebook.run_all()
    expect(notebook.output(4).get_by_role("button", name="Approve")).to_be_visible()
    notebook.save()
    reopened = open_notebook(None, notebook.name, server=fresh_lab())
    reopened.wait_widgets_restored()
    reopened.screenshot(screenshot_dir / f"reopened-{frontend}.png")
    assert not reopened.widget_errors(), reopened.widget_errors()
    expect(reopened.output(2)).to_contain_text("Add two numbers.")
    expect(reopened.output(4)).to_contain_text("sunrise")
