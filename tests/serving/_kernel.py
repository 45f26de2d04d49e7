"""A real ipykernel for the main-thread tests: start it, run cells, read their outputs, always shut it down.

Every wait is bounded. Outputs are gathered per cell (by the execute request's msg_id), so a test can check
that nothing arrived under a cell that did not ask for it.
"""

from __future__ import annotations

import json
import os
import queue
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[2]
CELL_TIMEOUT = 60.0


@dataclass
class CellRun:
    msg_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False

    @property
    def stdout(self) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
        )

    @property
    def error(self) -> str | None:
        for m in self.messages:
            if m["msg_type"] == "error":
                return "\n".join(m["content"]["traceback"])
        return None

    def outputs(self, *types: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in types]


class Kernel:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.km = KernelManager(kernel_name="python3")
        kernel_env = {**os.environ, "MCP_NOTEBOOK_HEADLESS": "1", **(env or {})}
        kernel_env.pop("PYTEST_CURRENT_TEST", None)
        self.km.start_kernel(cwd=str(ROOT), env=kernel_env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=CELL_TIMEOUT)
        self.runs: dict[str, CellRun] = {}
        self.by_parent: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def start(self, code: str) -> CellRun:
        run = CellRun(self.kc.execute(code))
        self.runs[run.msg_id] = run
        return run

    def _pump(self, timeout: float) -> None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return
        parent = msg["parent_header"].get("msg_id", "")
        self.by_parent[parent].append(msg)
        run = self.runs.get(parent)
        if run is None:
            return
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            run.done = True
        elif msg["msg_type"] != "status":
            run.messages.append(msg)

    def wait(self, run: CellRun, timeout: float = CELL_TIMEOUT) -> CellRun:
        deadline = time.monotonic() + timeout
        while not run.done:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"cell {run.msg_id} did not finish in {timeout} s")
            self._pump(min(left, 0.5))
        return run

    def run(self, code: str, timeout: float = CELL_TIMEOUT) -> CellRun:
        run = self.wait(self.start(code), timeout)
        if run.error:
            raise AssertionError(f"cell failed:\n{code}\n{run.error}")
        return run

    def value(self, expression: str) -> Any:
        """The JSON value of ``expression`` evaluated in the kernel."""
        out = self.run(f"import json as _json; print(_json.dumps({expression}))").stdout
        return json.loads(out.strip().splitlines()[-1])

    def drain(self, seconds: float = 0.2) -> None:
        """Read what iopub has (bounded), e.g. to look for stray outputs."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._pump(0.05)

    def shutdown(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


@contextmanager
def kernel(env: dict[str, str] | None = None) -> Iterator[Kernel]:
    k = Kernel(env)
    try:
        yield k
    finally:
        k.shutdown()
