"""Every output lands in the cell that asked for it (issue 19 item 1), checked on the wire.

A front end routes an iopub message to the cell whose ``execute_request`` is the message's parent. Output
published from another thread (the runtime thread reading the server's progress, a widget click, a tool
run on the kernel thread) takes whatever parent that thread last saw unless the library says otherwise:
these tests read *every* iopub message a cell causes and check the parent of each one of ours.
"""

from __future__ import annotations

import queue
import sys
import time
from typing import Any

from tests.kernel.test_kernel import TIMEOUT, Kernel, kernel_factory  # noqa: F401  (the fixture)

CONNECT = f'demo = mcp.connect("demo", [{sys.executable!r}, "-m", "mcp_notebook.demo_server"])'


def run_all_iopub(kernel: Kernel, code: str, settle: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """Run ``code``; every iopub message (whatever its parent) until the cell is idle again, and, if
    ``settle`` is given, until a message whose text contains it arrives. Returns (msg_id, messages)."""
    msg_id = kernel.kc.execute(code)
    seen: list[dict[str, Any]] = []
    idle = False
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            message = kernel.kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        seen.append(message)
        if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "status":
            idle = idle or message["content"]["execution_state"] == "idle"
        if idle and (settle is None or any(settle in _text(m) for m in seen)):
            return msg_id, seen
    raise AssertionError(f"cell did not finish in {TIMEOUT} s: {[m['msg_type'] for m in seen]}")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or {}
    data = content.get("data") if isinstance(content, dict) else None
    if isinstance(data, dict):
        return str(data.get("text/plain", "")) + str(data.get("text/html", ""))
    return str(content.get("text", "")) if isinstance(content, dict) else ""


def displays(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our display messages (a call's live output), with any parent."""
    return [
        m
        for m in messages
        if m["msg_type"] in ("display_data", "update_display_data")
        and str(m["content"].get("transient", {}).get("display_id", "")).startswith("mcp-")
    ]


def test_progress_of_an_allowed_call_lands_in_its_cell(kernel_factory: Any) -> None:  # noqa: F811
    """Before: `%mcp call demo.count_slowly` under an allow policy showed its progress and result under the
    cell that ran `mcp.connect` (the runtime thread's reader task kept that cell's parent)."""
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    k.run(CONNECT)
    k.run("%mcp policy set demo.* allow")
    msg_id, messages = run_all_iopub(k, "%mcp call demo.count_slowly steps=3 seconds_per_step=0.2")
    ours = displays(messages)
    assert ours, [m["msg_type"] for m in messages]
    assert any("Counted to 3." in _text(m) for m in ours)
    parents = {m["parent_header"].get("msg_id") for m in ours}
    assert parents == {msg_id}, [(m["msg_type"], m["parent_header"].get("msg_type")) for m in ours]


def test_an_approved_card_updates_in_its_own_cell(kernel_factory: Any) -> None:  # noqa: F811
    """The card path: shown by the cell, approved later from code in another cell; every update of the
    card keeps the first cell as its parent."""
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    k.run(CONNECT)
    msg_id, first = run_all_iopub(k, "h = mcp.call('demo.count_slowly', steps=2, seconds_per_step=0.2)\nh")
    assert any(m["parent_header"].get("msg_id") == msg_id for m in displays(first))
    _, later = run_all_iopub(k, "h.approve()", settle="Counted to 2.")
    ours = displays(later)
    assert any("Counted to 2." in _text(m) for m in ours)
    assert {m["parent_header"].get("msg_id") for m in ours} == {msg_id}


def test_a_call_not_on_the_last_line_says_where_it_went(kernel_factory: Any) -> None:  # noqa: F811
    """Before: a call mid-cell left nothing in the notebook. Now the cell ends with one line naming it;
    a call that shows itself (the cell's last line) gets no such line."""
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    k.run("@mcp.tool\ndef add(a: int, b: int) -> int:\n    '''Add two numbers.'''\n    return a + b\n")
    hidden = k.run("r = mcp.call('add', a=1, b=2)\nmcp.call('add', a=3, b=4)\nx = 1")
    notes = [_text(m) for m in hidden if m["msg_type"] == "display_data"]
    assert any("2 calls in this cell not shown" in n and "add (done)" in n for n in notes), notes
    shown = k.run("%mcp call add a=2 b=3")
    assert not any("not shown" in _text(m) for m in shown)
