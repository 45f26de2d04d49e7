"""A real ipykernel for the notebook benchmarks (jupyter_client): run cells, time them, always shut it down.

A cell's time is measured from sending its execute_request to receiving its execute_reply (the shell
channel), so it includes the kernel's own per-cell overhead; callers subtract an empty-cell baseline.
Its iopub messages (outputs) are gathered until the kernel goes idle, so a caller can count the bytes a
frontend would receive. Every wait is bounded; the kernel process is shut down (killed if need be) when
the ``with`` block ends, and its PID is checked gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from _common import ROOT

CELL_TIMEOUT = 120.0
QUIET = 10.0  # after the reply: seconds without a message for the cell before giving up on its idle status
OUTPUT_TYPES = ("stream", "display_data", "update_display_data", "execute_result", "error")


@dataclass
class Cell:
    code: str
    seconds: float  # execute_request sent -> execute_reply received
    status: str
    outputs: list[dict[str, Any]] = field(default_factory=list)  # iopub output messages, in order

    @property
    def stdout(self) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.outputs
            if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
        )

    @property
    def error(self) -> str | None:
        for m in self.outputs:
            if m["msg_type"] == "error":
                return "\n".join(m["content"]["traceback"])
        return None

    @property
    def output_bytes(self) -> int:
        """What a frontend receives for this cell: the JSON of its output messages' content."""
        return sum(len(json.dumps(m["content"]).encode()) for m in self.outputs)

    def json(self) -> Any:
        """The last stdout line, parsed: how a cell hands a measurement back."""
        lines = self.stdout.strip().splitlines()
        if not lines:
            raise RuntimeError(f"cell printed nothing:\n{self.code}\n{self.error or ''}")
        return json.loads(lines[-1])


class Kernel:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        from jupyter_client.manager import KernelManager

        self.km = KernelManager(kernel_name="python3")
        kernel_env = {**os.environ, **(env or {})}
        self.km.start_kernel(cwd=str(ROOT), env=kernel_env)
        try:
            self.kc = self.km.client()
            self.kc.start_channels()
            self.kc.wait_for_ready(timeout=60)
        except BaseException:
            self.km.shutdown_kernel(now=True)
            raise

    @property
    def pid(self) -> int | None:
        provisioner = self.km.provisioner
        process = getattr(provisioner, "process", None)
        return getattr(process, "pid", None)

    def run(self, code: str, timeout: float = CELL_TIMEOUT, *, check: bool = True) -> Cell:
        """Run a cell; read shell and iopub together, so a cell with many outputs (widgets open a comm
        each) cannot fill the iopub queue and have its messages dropped while we wait for the reply."""
        import zmq

        deadline = time.monotonic() + timeout
        poller = zmq.Poller()
        shell, iopub = self.kc.shell_channel.socket, self.kc.iopub_channel.socket
        poller.register(shell, zmq.POLLIN)
        poller.register(iopub, zmq.POLLIN)
        start = time.perf_counter()
        msg_id = self.kc.execute(code, store_history=False)
        cell: Cell | None = None
        outputs: list[dict[str, Any]] = []
        idle = False
        quiet_until = deadline
        while cell is None or not idle:
            now = time.monotonic()
            if now >= min(deadline, quiet_until):
                if cell is not None:  # answered, but the idle status never came (dropped): done anyway
                    break
                raise TimeoutError(f"no execute_reply for {msg_id} within {timeout:g} s")
            ready = dict(poller.poll(timeout=int((min(deadline, quiet_until) - now) * 1000) + 1))
            if shell in ready:
                reply = self.kc.get_shell_msg(timeout=0)
                if reply["parent_header"].get("msg_id") == msg_id and cell is None:
                    cell = Cell(code, time.perf_counter() - start, reply["content"]["status"], outputs)
                    quiet_until = time.monotonic() + QUIET
            if iopub in ready:
                with contextlib.suppress(queue.Empty):
                    while True:
                        msg = self.kc.get_iopub_msg(timeout=0)
                        if msg["parent_header"].get("msg_id") != msg_id:
                            continue
                        if cell is not None:
                            quiet_until = time.monotonic() + QUIET
                        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                            idle = True
                        elif msg["msg_type"] in OUTPUT_TYPES:
                            outputs.append(msg)
        assert cell is not None
        if check and (cell.status != "ok" or cell.error):
            raise RuntimeError(f"cell failed:\n{code}\n{cell.error or cell.status}")
        return cell

    def shutdown(self) -> None:
        pid = self.pid
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)
        if pid is not None:  # jupyter_client waited for it; make sure, by PID
            from _common import stop_pids

            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 0)
                stop_pids([pid])


@contextlib.contextmanager
def kernel(env: dict[str, str] | None = None) -> Iterator[Kernel]:
    k = Kernel(env)
    try:
        yield k
    finally:
        k.shutdown()
