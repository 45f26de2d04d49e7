"""Issue 11 item 1 in a real ipykernel: on a shutdown (or restart) request the kernel republishes every live
widget display as its static snapshot before it goes, so a frontend that applies the update shows HTML,
not a widget model that no longer exists. (JupyterLab 4.6 was seen not to apply it during a restart; the
form's calls survive there anyway, as their own outputs: tests/browser/test_person.py.)"""

from __future__ import annotations

import queue
import textwrap
from typing import Any

from tests.kernel.test_kernel import kernel_factory  # noqa: F401  (the fixture)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_a_shutdown_request_leaves_the_forms_snapshot(kernel_factory: Any) -> None:  # noqa: F811
    kernel = kernel_factory(MCP_NOTEBOOK_HEADLESS="0")
    kernel.run(
        textwrap.dedent(
            '''
            %load_ext mcp_notebook
            @mcp.tool
            def add(a: int, b: int) -> int:
                """Add two numbers."""
                return a + b
            '''
        )
    )
    shown = kernel.run("%mcp form add")
    [form] = [
        m["content"] for m in shown if m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"]
    ]
    form_id = form["transient"]["display_id"]
    kernel.km.request_shutdown(restart=True)
    updates = []
    while True:
        try:
            message = kernel.kc.get_iopub_msg(timeout=10)
        except queue.Empty:
            break
        if message["msg_type"] == "update_display_data":
            updates.append(message["content"])
        if message["msg_type"] == "shutdown_reply":
            break
    [update] = [u for u in updates if u["transient"]["display_id"] == form_id]
    assert WIDGET_MIME not in update["data"] and "Add two numbers." in update["data"]["text/html"]
