"""A ``%mcp tools`` row clicked in a real kernel opens the tool's form in that cell's output, and the
form's call lands there too (issue 19), whichever cell ran last. Checked on the wire: the parent of
every display the click and the Call cause is the ``%mcp tools`` cell.

Before: the listing had no buttons (``no 'add' button``).
"""

from __future__ import annotations

import queue
import time
from typing import Any

from tests.kernel.test_kernel import TIMEOUT, Kernel, kernel_factory  # noqa: F401  (the fixture)
from tests.kernel.test_kernel_routing import _text, displays, run_all_iopub

TOOL = "@mcp.tool\ndef add(a: int = 40, b: int = 2) -> int:\n    '''Add two numbers.'''\n    return a + b\n"


def button_ids(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {
        m["content"]["data"]["state"].get("description"): m["content"]["comm_id"]
        for m in messages
        if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == "ButtonModel"
    }


def click_and_collect(k: Kernel, comm_id: str, until: str) -> list[dict[str, Any]]:
    """Click a button as the browser does; every iopub message until one whose text has ``until``."""
    message = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
    k.kc.shell_channel.send(k.kc.session.msg("comm_msg", message))
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            seen.append(k.kc.get_iopub_msg(timeout=1))
        except queue.Empty:
            continue
        if any(until in _text(m) for m in displays(seen[-1:])):
            return seen
    raise AssertionError(f"nothing with {until!r} after the click: {[m['msg_type'] for m in seen]}")


def test_a_clicked_tool_row_opens_its_form_and_calls_in_the_listing_cell(kernel_factory: Any) -> None:  # noqa: F811
    k = kernel_factory(MCP_NOTEBOOK_HEADLESS="0")
    k.run("%load_ext mcp_notebook")
    k.run(TOOL)
    listing_id, listing = run_all_iopub(k, "%mcp tools")
    assert "add" in button_ids(listing), "no 'add' button"
    run_all_iopub(k, "x = 1")  # another cell ran since: the form must not go there
    opened = click_and_collect(k, button_ids(listing)["add"], "form add")
    forms = [m for m in displays(opened) if "form add" in _text(m)]
    assert forms and {m["parent_header"].get("msg_id") for m in forms} == {listing_id}
    call = button_ids(opened)["Call"]
    called = click_and_collect(k, call, "42")
    results = [m for m in displays(called) if "42" in _text(m)]
    assert results and {m["parent_header"].get("msg_id") for m in results} == {listing_id}


def test_a_forms_call_lands_in_the_forms_cell(kernel_factory: Any) -> None:  # noqa: F811
    """Before: Call's result was published with the click's parent (a comm_msg, no cell), so a front end
    that routes by parent put it nowhere; now with the cell that showed the form."""
    k = kernel_factory(MCP_NOTEBOOK_HEADLESS="0")
    k.run("%load_ext mcp_notebook")
    k.run(TOOL)
    form_id, shown = run_all_iopub(k, "%mcp form add")
    run_all_iopub(k, "x = 1")
    called = click_and_collect(k, button_ids(shown)["Call"], "42")
    results = [m for m in displays(called) if "42" in _text(m)]
    assert results and {m["parent_header"].get("msg_id") for m in results} == {form_id}


def test_a_listing_or_form_shown_again_in_a_later_cell_shows_in_that_cell(kernel_factory: Any) -> None:  # noqa: F811
    """``t = mcp.tools()`` in one cell, ``t`` in the next: the table shows under the cell that displays it."""
    k = kernel_factory(MCP_NOTEBOOK_HEADLESS="0")
    k.run("%load_ext mcp_notebook")
    k.run(TOOL)
    k.run("t = mcp.tools()\nf = mcp.form('add')")
    for name, text in [("t", "MCP tools"), ("f", "form add")]:
        shown_id, shown = run_all_iopub(k, name)
        mine = [m for m in displays(shown) if text in _text(m)]
        assert mine and {m["parent_header"].get("msg_id") for m in mine} == {shown_id}, name
