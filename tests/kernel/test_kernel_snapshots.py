"""The save hook asks the notebook's kernel for its views' snapshots (mcp_notebook/jupyter_hooks.py,
``_ask_snapshots``) over a real ipykernel: a kernel where nothing of ours registered the snapshot target
(an app's finished call, a notebook whose calls all ended, a kernel that never imported us) closes the comm
it cannot open, and the save goes on at once. It used to wait for an answer that never came, so every
save of such a notebook took LIVE_TIMEOUT (3 s) and logged "the kernel did not send snapshots"."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from jupyter_client.manager import AsyncKernelManager

from mcp_notebook.jupyter_hooks import _ask_snapshots

ROOT = Path(__file__).resolve().parents[2]
BOUND = 30.0  # seconds: far above LIVE_TIMEOUT, so only an answer that never comes reaches it


@pytest.fixture
async def kernel() -> AsyncIterator[AsyncKernelManager]:
    manager = AsyncKernelManager(kernel_name="python3")
    await manager.start_kernel(env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    try:
        yield manager
    finally:
        await manager.shutdown_kernel(now=True)


async def _run(manager: AsyncKernelManager, code: str) -> None:
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=BOUND)
        reply = await client.execute_interactive(code, timeout=BOUND)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()


async def test_a_kernel_without_the_snapshot_target_answers_with_nothing(kernel: AsyncKernelManager) -> None:
    assert await asyncio.wait_for(_ask_snapshots(kernel, ["some-model"]), BOUND) == {}


async def test_a_registered_view_sends_its_snapshot(kernel: AsyncKernelManager) -> None:
    await _run(
        kernel,
        "from mcp_notebook.notebook.rendering.snapshots import register_view\n"
        "class Owner:\n"
        "    def static_bundle(self): return {'text/html': '<b>awaiting approval</b>'}\n"
        "    def done(self): return False\n"
        "owner = Owner()\n"
        "register_view('m1', owner)\n",
    )
    found = await asyncio.wait_for(_ask_snapshots(kernel, ["m1", "gone"]), BOUND)
    assert found == {"m1": {"bundle": {"text/html": "<b>awaiting approval</b>"}, "final": False}}
