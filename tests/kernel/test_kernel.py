"""The extension in a real ipykernel, driven over ZMQ by jupyter_client as a frontend would.

Each test starts its own kernel (bounded waits; always shut down) and checks what a notebook would
receive: ``display_data`` / ``update_display_data`` / ``execute_result`` mimebundles, and widget comms.
One test clicks a widget by sending the ``comm_msg`` a browser would send while the cell awaits
(the method of ``shared/evidence/click_while_kernel_busy.py``).
"""

from __future__ import annotations

import base64
import io
import os
import queue
import sys
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from tests.stdio_demo import stdio_demo

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


class Kernel:
    def __init__(self, km: KernelManager, kc: BlockingKernelClient) -> None:
        self.km, self.kc = km, kc

    def run(self, code: str, *, allow_error: bool = False) -> list[dict[str, Any]]:
        """Run a cell; its iopub messages (stream, display_data, execute_result, error, comm_*...)."""
        messages: list[dict[str, Any]] = []
        reply = self.kc.execute_interactive(code, timeout=TIMEOUT, output_hook=messages.append)
        if not allow_error and reply["content"]["status"] != "ok":
            errors = [m["content"] for m in messages if m["msg_type"] == "error"]
            raise AssertionError(f"cell failed: {reply['content']}\n{errors}")
        return messages

    def collect(self, msg_id: str) -> list[dict[str, Any]]:
        """The iopub messages of a cell sent with ``kc.execute`` (while the test does other things, such as
        clicking), until the kernel is idle again or ``TIMEOUT`` passes."""
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                m = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if m["parent_header"].get("msg_id") == msg_id:
                seen.append(m)
                if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                    break
        return seen


def outputs(messages: list[dict[str, Any]], *types: str) -> list[dict[str, Any]]:
    return [m["content"] for m in messages if m["msg_type"] in types]


def texts(messages: list[dict[str, Any]]) -> str:
    parts = [m["content"].get("text", "") for m in messages if m["msg_type"] == "stream"]
    for m in messages:
        data = m["content"].get("data") if isinstance(m["content"], dict) else None
        if isinstance(data, dict):
            parts.append(str(data.get("text/plain", "")))
            parts.append(str(data.get("text/html", "")))
    return "\n".join(parts)


def start_kernel(env: dict[str, str]) -> Kernel:
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=str(ROOT))
    kc = km.blocking_client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=TIMEOUT)
    except RuntimeError:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        raise
    return Kernel(km, kc)


@pytest.fixture
def kernel_factory() -> Iterator[Any]:
    kernels: list[Kernel] = []

    def factory(**env: str) -> Kernel:
        kernels.append(start_kernel(env))
        return kernels[-1]

    yield factory
    for k in kernels:
        k.kc.stop_channels()
        k.km.shutdown_kernel(now=True)


def test_load_define_call_sync_and_async(kernel_factory: Any) -> None:
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    k.run("@mcp.tool\ndef add(a: int, b: int) -> int:\n    '''Add two numbers.'''\n    return a + b\n")
    sync = k.run("%mcp call add a=2 b=3")
    [result] = outputs(sync, "display_data", "execute_result")
    assert (
        "structuredContent" in result["data"]["text/plain"] and '"result": 5' in result["data"]["text/plain"]
    )
    assert "mcpnb" in result["data"]["text/html"]

    assigned = k.run("r = %mcp call add a=1 b=1\nprint(r.structured)")
    assert "{'result': 2}" in texts(assigned)

    async_cell = k.run("h = await mcp.call_async('add', a=40, b=2)\nprint(h.state, h.structured)\nh")
    assert "done {'result': 42}" in texts(async_cell)
    # the async call showed itself live (display_id) and the final update carries the result
    shown = outputs(async_cell, "display_data", "update_display_data")
    assert shown and shown[0]["transient"]["display_id"].startswith("mcp-call-")
    assert '"result": 42' in shown[-1]["data"]["text/plain"]
    # `h` as the cell's value: already showing (and updated) in this cell, so not shown twice
    assert len(outputs(async_cell, "display_data", "execute_result")) == 1


def test_sync_client_inside_the_running_kernel(kernel_factory: Any) -> None:
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    out = k.run(
        "from mcp_notebook import Server, connect\n"
        "s = Server('inner')\n"
        "@s.tool\n"
        "def twice(x: int) -> int:\n"
        "    return 2 * x\n"
        "with connect(s) as c:\n"
        "    print('twice:', c.call_tool('twice', {'x': 21})['structuredContent'])\n"
    )
    assert "twice: {'result': 42}" in texts(out)


def tiny_png() -> bytes:
    import struct
    import zlib

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def tiny_wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 80)
    return buffer.getvalue()


def test_every_content_type_renders(kernel_factory: Any) -> None:
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    png, wav = base64.b64encode(tiny_png()).decode(), base64.b64encode(tiny_wav()).decode()
    k.run(
        "import base64\n"
        "from mcp_notebook import Image, Audio, ResourceLink, EmbeddedResource, ToolResult\n"
        f"PNG = base64.b64decode('{png}')\n"
        f"WAV = base64.b64decode('{wav}')\n"
        "@mcp.tool\n"
        "def everything() -> ToolResult:\n"
        "    return ToolResult(content=['plain <b>text</b>', Image(PNG), Audio(WAV),\n"
        "        ResourceLink('https://example.org/doc', 'doc', title='The doc'),\n"
        "        EmbeddedResource('memo://x', text='embedded words', mime_type='text/plain')],\n"
        "        structured={'answer': 42})\n"
    )
    [result] = outputs(k.run("%mcp call everything"), "display_data", "execute_result")
    html, plain = result["data"]["text/html"], result["data"]["text/plain"]
    assert "plain &lt;b&gt;text&lt;/b&gt;" in html  # text, escaped
    assert "<img" in html and "data:image/png;base64," in html
    assert "<audio" in html and "data:audio/wav;base64," in html
    assert "The doc" in html and 'href="https://example.org/doc"' in html
    assert "embedded words" in html and "memo://x" in html
    assert "structuredContent" in html and "42" in plain


def test_stdio_server_with_approval_clicked_while_the_cell_awaits(
    kernel_factory: Any, tmp_path: Path
) -> None:
    script = stdio_demo(tmp_path)
    k = kernel_factory()
    k.run("%load_ext mcp_notebook")
    connected = k.run(f"%mcp connect demo -- {sys.executable} {script}")
    assert "connected 'demo': stdio-demo" in texts(connected)
    assert "demo.hello" in texts(k.run("%mcp tools"))

    # a ZMQ kernel counts as interactive: a remote call asks, returning the pending handle at once
    pending = k.run("h = %mcp call demo.hello name=kernel\nprint(h.state)")
    assert "awaiting-approval" in texts(pending)
    buttons = {
        m["content"]["data"]["state"].get("description"): m["content"]["comm_id"]
        for m in pending
        if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == "ButtonModel"
    }
    assert {"Approve", "Deny", "Always allow this tool"} <= set(buttons)
    [card] = outputs(pending, "display_data")
    assert "application/vnd.jupyter.widget-view+json" in card["data"]
    assert "awaiting approval: demo.hello" in card["data"]["text/plain"]

    # now await it in an async cell and click Approve as the browser would, while the cell runs
    msg_id = k.kc.execute("r = await h\nprint('after await:', r.state, r.text)")
    click = {"comm_id": buttons["Approve"], "data": {"method": "custom", "content": {"event": "click"}}}
    k.kc.shell_channel.send(k.kc.session.msg("comm_msg", click))
    seen = k.collect(msg_id)
    assert "after await: done hello kernel" in texts(seen)
    history = texts(k.run("%mcp history"))
    assert "you: approved" in history and "%mcp call demo.hello name=kernel" in history
    assert "disconnected 'demo'" in texts(k.run("%mcp disconnect demo"))


def test_headless_kernel_decides_by_policy(kernel_factory: Any, tmp_path: Path) -> None:
    script = stdio_demo(tmp_path)
    k = kernel_factory(MCP_NOTEBOOK_HEADLESS="1", MCP_NOTEBOOK_HEADLESS_POLICY="allow")
    k.run("%load_ext mcp_notebook")
    k.run(f"%mcp connect demo -- {sys.executable} {script}")
    [result] = outputs(k.run("%mcp call demo.hello name=ci"), "display_data", "execute_result")
    assert "hello ci" in result["data"]["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" not in result["data"]
    trace = texts(k.run("%mcp trace demo --last 6"))
    assert "tools/call" in trace
