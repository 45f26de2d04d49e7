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


PING_TOOL = '''\
@mcp.tool
def ping() -> str:
    """Answer pong."""
    return "pong"'''
SERVE_CELLS = [
    "%load_ext mcp_notebook",
    PING_TOOL,
    "%mcp serve",
    # another client calls the served tool, so the console has a request to show
    "served = mcp.serving\n"
    "other = mcp.connect('other', served.url, headers=served.headers)\n"
    "mcp.policy.set('other.*', 'allow')\n"
    "print(mcp.call('other.ping').wait(30).text)",
]


def _expect_serve_block(notebook: Notebook, index: int) -> None:
    """The %mcp serve block shows its URL, the client configuration and the console with the request."""
    block = notebook.output(index)
    expect(block).to_contain_text("serving at http://127.0.0.1:")
    expect(block).to_contain_text("Client configuration")
    expect(block).to_contain_text("MCP server console")
    expect(block).to_contain_text("ping")
    expect(block).not_to_contain_text("No requests yet.")


def _serve_and_call(notebook: Notebook) -> None:
    notebook.run_all()
    expect(notebook.output(3)).to_contain_text("pong", timeout=KERNEL_TIMEOUT_MS)
    _expect_serve_block(notebook, 2)
    assert not notebook.errors(), notebook.errors()
    saved = str(notebook.save()["cells"][2]["outputs"])
    # the console's saved snapshot is current (issue 19: it said "No requests yet." after requests)
    assert "No requests yet." not in saved and "ping" in saved, saved


@both_frontends
def test_the_serve_block_survives_restart_and_reload(
    open_notebook: OpenNotebook, screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: after Kernel > Restart and a reload, the whole %mcp serve block (URL, configuration,
    console) was "Error displaying widget: model not found"."""
    notebook = open_notebook(SERVE_CELLS)
    _serve_and_call(notebook)
    notebook.restart_kernel()
    notebook.reload()
    notebook.screenshot(screenshot_dir / f"serve-restart-reload-{frontend}.png", whole=True)
    assert not notebook.widget_errors(), notebook.widget_errors()
    _expect_serve_block(notebook, 2)


@both_frontends
def test_the_serve_block_reopened_in_a_fresh_server(
    open_notebook: OpenNotebook, fresh_lab: Callable[[], Lab], screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: a saved notebook reopened in a new server showed "model not found" for the serve block."""
    notebook = open_notebook(SERVE_CELLS)
    _serve_and_call(notebook)
    reopened = open_notebook(None, notebook.name, server=fresh_lab())
    reopened.wait_widgets_restored()
    reopened.screenshot(screenshot_dir / f"serve-reopened-{frontend}.png", whole=True)
    assert not reopened.widget_errors(), reopened.widget_errors()
    _expect_serve_block(reopened, 2)


def _progress_tool(go: str) -> str:
    """A notebook tool that reports progress and, after its first step, waits (at most 60 s) until the
    file ``go`` exists: the test sees the first step while the call runs, then lets it finish."""
    return f'''\
import asyncio
from pathlib import Path

from mcp_notebook import Context


@mcp.tool
async def count_up(ctx: Context, steps: int = 3) -> str:
    """Count up, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {{step}} of {{steps}}")
        for _ in range(600 if step == 1 else 0):
            if Path({go!r}).exists():
                break
            await asyncio.sleep(0.1)
    return f"counted up to {{steps}}"'''


@both_frontends
def test_a_notebook_tool_reporting_progress_shows_it_in_the_calling_cell(
    open_notebook: OpenNotebook, lab: Lab, screenshot_dir: Path, frontend: Frontend
) -> None:
    """Before: a tool defined in the notebook that reports progress (ctx.report_progress), called with
    %mcp call, showed its progress and result under an earlier cell."""
    go = f"go-progress-{frontend}"
    (lab.root / go).unlink(missing_ok=True)
    cells = ["%load_ext mcp_notebook", _progress_tool(go), "%mcp call count_up steps=3", "1 + 1"]
    notebook = open_notebook(cells)
    notebook.wait_kernel_idle()
    notebook.command("notebook:run-all-cells")
    call = notebook.output(2)
    expect(call).to_contain_text("step 1 of 3", timeout=KERNEL_TIMEOUT_MS)  # the call is running
    notebook.screenshot(screenshot_dir / f"notebook-tool-progress-running-{frontend}.png")
    for other in (0, 1):
        expect(notebook.output(other)).not_to_contain_text("step 1 of 3")
    (lab.root / go).touch()
    expect(call).to_contain_text("counted up to 3", timeout=KERNEL_TIMEOUT_MS)
    notebook.wait_kernel_idle()
    for other in (0, 1, 3):
        expect(notebook.output(other)).not_to_contain_text("counted up")
        expect(notebook.output(other)).not_to_contain_text("step 1 of 3")
    notebook.screenshot(screenshot_dir / f"notebook-tool-progress-{frontend}.png")
    saved = notebook.save()
    assert "counted up to 3" in str(saved["cells"][2]["outputs"])
    assert not any("counted up" in str(saved["cells"][i].get("outputs", [])) for i in (0, 1, 3))
    assert not notebook.errors(), notebook.errors()
