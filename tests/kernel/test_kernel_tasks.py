"""``%mcp task get SERVER.ID`` in a real kernel, after a real kernel restart: the task a call ran as
(shown on the call's output) is listed from the task book and fetched by id from a served process that
outlived the kernel."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.kernel.test_kernel import TIMEOUT, kernel_factory, outputs, texts
from tests.tasks.test_workers import serve

__all__ = ["kernel_factory"]


def test_task_get_after_a_kernel_restart(kernel_factory: Any, tmp_path: Path) -> None:
    with serve(tmp_path / "server.log", "--task-store", str(tmp_path / "tasks.db")) as url:
        k = kernel_factory(MCP_NOTEBOOK_HEADLESS="1", MCP_NOTEBOOK_HEADLESS_POLICY="allow")
        k.run("%load_ext mcp_notebook")
        k.run(f"%mcp connect jobs {url}")
        [shown] = outputs(k.run("%mcp call jobs.slow seconds=0.5"), "display_data", "execute_result")
        text = shown["data"]["text/plain"]
        found = re.search(r"task (\S+): completed", text)
        assert found and "slept 0.5" in text, text
        task_id = found.group(1)
        k.km.restart_kernel(now=True)
        k.kc.wait_for_ready(timeout=TIMEOUT)
        k.run("%load_ext mcp_notebook")
        k.run(f"%mcp connect jobs {url}")
        # the new kernel remembers nothing in memory; the task book on disk (issue 22) lists the task
        assert task_id in texts(k.run("%mcp tasks"))
        fetched = texts(k.run(f"%mcp task get jobs.{task_id}"))
        assert "slept 0.5" in fetched and task_id in fetched
