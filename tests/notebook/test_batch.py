"""``mcp.map`` and ``.to_pandas()`` in an IPython shell (issue 9): one approval for the whole batch, one
progress bar with Cancel, failures collected or raised, a DataFrame aligned with the input, the table view.

Clicks are made as a frontend would make them (``button.click()``); every wait is bounded (``WAIT``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pandas as pd
import pytest

from mcp_notebook import Server
from mcp_notebook.engine.batch import BatchError, RowOutcome
from mcp_notebook.notebook.api import NotebookMCP
from mcp_notebook.notebook.calls.handle import NotFinished
from mcp_notebook.notebook.calls.handle_live import WIDGET_MIME
from mcp_notebook.notebook.calls.widgets import ProgressView
from tests.notebook.ipyshell import WAIT, api, published


def scoring_server(gate: threading.Event | None = None) -> Server:
    server = Server("demo")

    @server.tool
    async def score(x: float, weight: float = 1.0) -> dict[str, float]:
        """Score one row."""
        if gate is not None:
            await asyncio.get_running_loop().run_in_executor(None, gate.wait, WAIT)
        if x < 0:
            raise ValueError("x must not be negative")
        return {"score": x * weight, "rank": float(int(x) % 3)}

    @server.tool
    def table(n: int) -> list[dict[str, Any]]:
        """A table of n rows."""
        return [{"i": i, "square": i * i, "label": f"row {i}"} for i in range(n)]

    return server


FRAME = pd.DataFrame({"x": [1.0, 2.0, -1.0, 4.0], "weight": [1.0, 0.5, 1.0, None]}, index=[10, 20, 30, 40])


def tool_calls(mcp: NotebookMCP, server: str) -> int:
    return sum(1 for e in mcp.trace(server, last=None).entries if e["message"].get("method") == "tools/call")


def test_one_approval_for_the_whole_batch_then_a_frame_aligned_with_the_input(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    handle = mcp.map("demo.score", FRAME)
    assert handle.state == "awaiting-approval" and handle.label == "4 calls to demo.score"
    # issue 19 item 4: before, this was an empty frame with only an "error" column, and no warning
    with pytest.raises(NotFinished, match="not finished: awaiting approval"):
        handle.to_pandas()
    shown = published(shell)[-1]["data"]
    assert WIDGET_MIME in shown and "awaiting approval: 4 calls to demo.score" in shown["text/plain"]
    card = handle._widgets["approval"]
    assert "4 calls to demo.score" in card.widget.children[0].value
    assert tool_calls(mcp, "demo") == 0  # nothing sent before the person says yes
    card.approve.click()
    handle._settle(WAIT)
    assert handle.wait(WAIT).state == "done"
    assert tool_calls(mcp, "demo") == 4  # approved once, called four times
    frame = handle.to_pandas()
    assert list(frame.index) == [10, 20, 30, 40]
    assert list(frame.columns) == ["score", "rank", "status", "error"]
    assert frame["status"].tolist() == ["ok", "ok", "failed", "ok"]
    assert frame.loc[20, "score"] == 1.0 and frame.loc[40, "score"] == 4.0  # empty cell: the default
    assert "must not be negative" in frame.loc[30, "error"] and pd.isna(frame.loc[10, "error"])
    text = published(shell)[-1]["data"]["text/plain"]
    assert "4 calls to demo.score: 3 succeeded, 1 failed" in text and "table: 4 rows x 4 columns" in text
    assert [e.target for e in mcp.history()] == ["demo.score"]  # one entry in the history


def test_the_batch_card_shows_the_rows_going_out_and_cancel_names_the_calls(
    shell: Any, interactive: None
) -> None:
    """Issue 19: the batch's card showed no sample of what goes out and its Cancel said "Cancel call"
    (both failed before)."""
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    frame = pd.DataFrame(
        {"x": [float(i) for i in range(50)], "weight": 2.0}, index=[f"r{i}" for i in range(50)]
    )
    handle = mcp.map("demo.score", frame)
    card = handle._widgets["approval"].widget.children[0].value
    assert "The first rows going out (arguments: weight, x)" in card
    assert "<td>r0</td>" in card and "<td>r4</td>" in card and "<td>r5</td>" not in card
    assert ProgressView(handle).cancel.description == "Cancel 50 calls"
    streamed = mcp.map("demo.score", ({"x": float(i)} for i in range(3)))  # an iterator: not consumed
    assert streamed.sample is None and ProgressView(streamed).cancel.description == "Cancel the batch"
    handle.deny()
    streamed.approve()
    assert streamed.wait(WAIT).run.done == 3


def test_deny_runs_nothing(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    handle = mcp.map("demo.score", [{"x": 1.0}] * 3)
    handle._widgets["approval"].deny.click()
    assert handle.state == "denied" and tool_calls(mcp, "demo") == 0
    # issue 19: a Deny is a choice, shown as one, not in a failure's red frame (failed before)
    shown = handle._repr_mimebundle_()
    assert (
        "mcpnb mcpnb-error" not in shown["text/html"]
        and "denied: <b>3 calls to demo.score</b>" in shown["text/html"]
    )
    assert shown["text/plain"].startswith(
        "denied: 3 calls to demo.score\nThe call to 3 calls to demo.score was"
    )


def test_headless_allowed_batch_blocks_until_done_and_on_error_raise_raises(shell: Any) -> None:
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    mcp.policy.set("demo.score", "allow")
    handle = mcp.map("demo.score", FRAME.iloc[:2], concurrency=2)
    assert handle.state == "done" and handle.to_pandas()["score"].tolist() == [1.0, 1.0]
    with pytest.raises(BatchError, match="must not be negative"):
        mcp.map("demo.score", FRAME, on_error="raise", concurrency=1)


def test_the_preview_names_the_failed_rows_past_the_first_rows_shown(shell: Any) -> None:
    """Issue 19: the batch's preview showed the first 10 rows, hiding which later rows failed (failed
    before: no row named)."""
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    mcp.policy.set("demo.score", "allow")
    frame = pd.DataFrame({"x": [-1.0 if i in (25, 31) else float(i) for i in range(40)]})
    handle = mcp.map("demo.score", frame, concurrency=4)
    shown = handle._repr_mimebundle_()
    assert "failed rows: 25: " in shown["text/plain"] and "; 31: " in shown["text/plain"]
    assert "must not be negative" in shown["text/plain"].split("failed rows:")[1]
    assert "failed rows: 25: " in shown["text/html"]


async def test_progress_bar_with_eta_and_cancel_keeps_the_finished_rows(
    shell: Any, interactive: None
) -> None:
    """In an async cell the kernel keeps serving clicks while the batch runs, so Cancel works (a sync
    ``mcp.map`` blocks the cell; a kernel interrupt cancels it, as for ``mcp.call``)."""
    mcp = api(shell)
    gate = threading.Event()

    @mcp.tool
    async def slow(x: int) -> dict[str, int]:
        if x > 0:
            await asyncio.get_running_loop().run_in_executor(None, gate.wait, WAIT)
        return {"y": x}

    task = asyncio.ensure_future(mcp.map_async("slow", [{"x": 0}] + [{"x": 1}] * 20, concurrency=2))
    while not (mcp.calls.active and mcp.calls.active[0].progress):  # bounded by the test timeout
        await asyncio.sleep(0.01)
    (handle,) = mcp.calls.active
    done, total, message = handle.progress
    assert (done, total) == (1, 21) and "ETA" in (message or "")
    handle._box()  # what a frontend shows: the progress view with its Cancel button
    progress = handle._widgets["progress"]
    assert "21 calls to slow" in progress.label.value and "ETA" in progress.label.value
    progress.cancel.click()
    gate.set()
    assert (await asyncio.wait_for(task, WAIT)) is handle and handle.state == "cancelled"
    frame = handle.to_pandas()
    # what finished before the cancel is kept, and every input row has its row (issue 19 item 4: before,
    # only the finished rows were there)
    assert frame.loc[0, "y"] == 0 and frame.loc[0, "status"] == "ok"
    assert list(frame.index) == list(range(21))
    not_run = frame[frame["status"] == "not run"]
    assert len(not_run) > 0 and not_run["error"].str.startswith("not run").all()
    assert (
        "Cancelled" in handle.static_bundle()["text/plain"]
        or "cancelled" in handle.static_bundle()["text/plain"]
    )


def test_map_magic_and_a_list_of_values_for_a_one_parameter_tool(shell: Any) -> None:
    mcp = api(shell)

    @mcp.tool
    def square(n: int) -> int:
        return n * n

    shell.user_ns["numbers"] = [1, 2, 3]
    handle = shell.run_line_magic("mcp", "map square numbers --concurrency 2")
    assert handle.to_pandas()["result"].tolist() == [1, 4, 9]


async def test_map_async_waits_through_approval(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    task = asyncio.ensure_future(mcp.map_async("demo.score", [{"x": 1.0}, {"x": 2.0}]))
    while not published(shell):  # bounded by the test timeout; the task shows its card when it starts
        await asyncio.sleep(0.01)
    (handle,) = mcp.calls.active
    assert handle.state == "awaiting-approval"
    handle.approve()
    done = await asyncio.wait_for(task, WAIT)
    assert done is handle and done.to_pandas()["score"].tolist() == [1.0, 2.0]


def test_a_call_handle_to_pandas_and_the_table_view(shell: Any) -> None:
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    mcp.policy.set("demo.table", "allow")
    handle = mcp.call("demo.table", n=12)
    frame = handle.to_pandas()  # {"result": [records]}: the wrapper key is looked through
    assert frame.shape == (12, 3) and frame["square"].tolist()[:3] == [0, 1, 4]
    bundle = handle.static_bundle()
    assert "table: 12 rows x 3 columns (first 10 shown" in bundle["text/plain"]
    assert "<table" in bundle["text/html"] and "integer" in bundle["text/html"]


def test_an_ended_batch_is_drawn_again_only_when_a_row_lands_after_it(shell: Any) -> None:
    """An ended batch's view is built once (a render walks every row); each render gets its own copy, and
    a row landing after the end (as rows can after a Cancel) is in the next one."""
    mcp = api(shell)
    mcp.connect("demo", scoring_server())
    mcp.policy.set("demo.score", "allow")
    handle = mcp.map("demo.score", FRAME.iloc[:2], concurrency=1)
    first = handle.static_bundle()
    first["text/plain"] = "changed by a caller"  # (live_bundle adds the widget view to its copy)
    again = handle.static_bundle()
    assert "2 succeeded, 0 failed" in again["text/plain"] and again == handle._repr_mimebundle_()
    handle.run.outcomes.append(RowOutcome(2, "late", {}, None, "came late"))
    shown = handle.static_bundle()["text/plain"]
    assert "2 succeeded, 1 failed" in shown and "failed rows: late: came late" in shown
