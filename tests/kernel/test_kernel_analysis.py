"""``mcp.map`` and ``.to_pandas()`` in a real ipykernel (issue 9), driven over ZMQ as a frontend would.

A person approves a batch once (a click on the card's Approve, sent as the browser's ``comm_msg`` while the
cell awaits) and cancels another from its progress bar; headless, the policy decides and the DataFrame
comes back aligned with the input. Each kernel is shut down however the test ends.
"""

from __future__ import annotations

import queue
import time
from typing import Any

from tests.kernel.test_kernel import TIMEOUT, Kernel, kernel_factory, outputs, texts

__all__ = ["kernel_factory"]  # the fixture, shared with test_kernel.py

SETUP = """
import sys
import pandas as pd
pairs = pd.DataFrame({"a": [1.0, 9.0, 2.0], "b": [4.0, 3.0, 0.0]}, index=["p", "q", "r"])
demo = mcp.connect("demo", [sys.executable, "-m", "mcp_notebook.demo_server"])
"""


def buttons(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Button description -> comm id, for the widgets a cell opened."""
    return {
        m["content"]["data"]["state"].get("description"): m["content"]["comm_id"]
        for m in messages
        if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == "ButtonModel"
    }


def click(k: Kernel, comm_id: str) -> None:
    message = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
    k.kc.shell_channel.send(k.kc.session.msg("comm_msg", message))


def run_clicking(k: Kernel, code: str, when: str) -> list[dict[str, Any]]:
    """Run ``code``; as soon as a button described ``when`` appears in its output, click it."""
    msg_id = k.kc.execute(code)
    seen: list[dict[str, Any]] = []
    clicked = False
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            m = k.kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(m)
        if not clicked and when in buttons(seen):
            click(k, buttons(seen)[when])
            clicked = True
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
    assert clicked, f"no {when!r} button appeared"
    return seen


def test_a_person_approves_a_batch_once_and_gets_a_frame_aligned_with_the_input(kernel_factory: Any) -> None:
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    k.run(SETUP)
    pending = k.run("h = mcp.map('demo.divide', pairs)\nprint(h.state)")
    assert "awaiting-approval" in texts(pending)
    [card] = outputs(pending, "display_data")
    assert "awaiting approval: 3 calls to demo.divide" in card["data"]["text/plain"]
    approve = buttons(pending)["Approve"]
    msg_id = k.kc.execute("r = await h\nprint(r.to_pandas().to_string())")
    click(k, approve)
    seen = k.collect(msg_id)
    out = texts(seen)
    assert "p    0.25" in out and "q    3.00" in out
    assert "cannot divide by zero" in out  # row r's error, in the error column
    calls = texts(k.run("%mcp trace demo --last 40"))
    assert calls.count("tools/call") >= 3
    history = texts(k.run("%mcp history"))
    assert "you: approved" in history


def test_cancel_from_the_progress_bar_while_an_async_cell_awaits_the_batch(kernel_factory: Any) -> None:
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    k.run(
        "import asyncio\n"
        "@mcp.tool\n"
        "async def slow(x: int) -> dict[str, int]:\n"
        "    await asyncio.sleep(0.3)\n"
        "    return {'y': x}\n"
    )
    code = (
        "b = await mcp.map_async('slow', [{'x': i} for i in range(40)], concurrency=2)\n"
        "f = b.to_pandas()\n"
        "print('state:', b.state, 'rows:', len(f), 'not run:', int((f['status'] == 'not run').sum()))"
    )
    seen = run_clicking(k, code, "Cancel 40 calls")
    out = texts(seen)
    assert "state: cancelled" in out
    # one row per input row, those the cancel stopped marked "not run" (issue 19 item 4)
    rows = int(out.split("rows: ")[1].split()[0])
    not_run = int(out.split("not run: ")[1].split()[0])
    assert rows == 40 and not_run > 0


def test_headless_batch_and_a_dataframe_tool_round_trip(kernel_factory: Any) -> None:
    k = kernel_factory(MCP_NOTEBOOK_HEADLESS="1", MCP_NOTEBOOK_HEADLESS_POLICY="allow")
    k.run("%load_ext mcp_notebook")
    k.run(SETUP)
    done = texts(
        k.run("m = mcp.map('demo.divide', pairs)\nprint(m.state)\nprint(m.to_pandas()['result'].tolist())")
    )
    assert "done" in done and "[0.25, 3.0, nan]" in done
    k.run("@mcp.tool\ndef describe(df: pd.DataFrame) -> pd.DataFrame:\n    return df.describe()\n")
    shown = k.run("d = mcp.call('describe', df=pairs)\nd")
    [result] = outputs(shown, "display_data", "execute_result")
    assert (
        "table: 8 rows x 3 columns" in result["data"]["text/plain"]
        and "<table" in result["data"]["text/html"]
    )
    back = texts(k.run("print(d.to_pandas().loc['mean'].tolist())"))
    assert "[4.0, 2.3333333333333335]" in back
