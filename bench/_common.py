"""Shared pieces of the benchmarks: settings, timing loops, tables, and processes we start and always stop.

Everything here is bounded in time: a measuring loop stops at ``max_calls`` or at its time budget, whichever
comes first; a process we start is terminated (then killed) by its PID when its block ends; a port is
waited for with a deadline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
PEERS = str(BENCH_DIR / "peers.py")
LOADGEN = str(BENCH_DIR / "loadgen.py")
PYTHON = sys.executable

# A bare aiohttp MCP server (bench/floor.py --http, bench/instructions.py --floor): POST, orjson, the echo's
# answer; it also answers server/discover, tools/list and initialize, so that our own Client of either era
# talks to it. argv: PORT [hop] (hop: the echo runs through our worker hop, as our sync tools do).
FLOOR_HTTP_SERVER = r"""
import sys, orjson
from aiohttp import web
hop = sys.argv[2:] == ["hop"]
if hop:
    from mcp_notebook.engine.workers import run_in_worker
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
def echo(text):
    return text
async def handle(request):
    m = orjson.loads(await request.read())
    if "id" not in m:
        return web.Response(status=202)
    method = m["method"]
    if method == "tools/call":
        text = m["params"]["arguments"]["text"]
        if hop:
            text = await run_in_worker(lambda: echo(text))
        r = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "server/discover":
        r = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
    elif method == "tools/list":
        r = {"tools": [{"name": n, "inputSchema": SCHEMA} for n in ("echo", "echo_async")]}
    elif method == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "floor", "version": "0"}}
    else:
        r = {}
    body = orjson.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r})
    return web.Response(body=body, content_type="application/json")
app = web.Application()
app.router.add_post("/mcp", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None, handle_signals=True)
"""


@dataclasses.dataclass(frozen=True)
class Settings:
    """How long to measure. ``--quick`` is a smoke run: numbers are indicative only."""

    quick: bool
    rounds: int  # measurements per case, interleaved between implementations; the median is reported
    budget: float  # seconds of measuring per round (the loop also stops at max_calls)
    max_calls: int
    warmup_calls: int
    warmup_budget: float
    import_runs: int  # fresh interpreters per import case
    cold_runs: int  # spawn -> first result repetitions

    @classmethod
    def make(cls, quick: bool) -> Settings:
        if quick:
            return cls(True, 1, 0.3, 5_000, 20, 0.2, 5, 2)
        return cls(False, 3, 1.0, 200_000, 200, 0.5, 15, 10)


# ---- measuring ---------------------------------------------------------------------------------------------
async def calls_per_second(call: Callable[[], Awaitable[Any]], settings: Settings) -> float:
    """Warm up, then call sequentially until ``max_calls`` or the time budget; calls per second."""
    deadline = time.perf_counter() + settings.warmup_budget
    for _ in range(settings.warmup_calls):
        await call()
        if time.perf_counter() >= deadline:
            break
    calls = 0
    start = time.perf_counter()
    deadline = start + settings.budget
    now = start
    while calls < settings.max_calls and now < deadline:
        await call()
        calls += 1
        now = time.perf_counter()
    return calls / (now - start)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: Sequence[float]) -> str:
    """``min-max`` of the rounds, so a reader sees how noisy a median is."""
    if len(values) < 2:
        return ""
    return f"{fmt_num(min(values))}-{fmt_num(max(values))}"


def cell(values: Sequence[float]) -> str:
    """The median, and the range of the rounds in brackets when there were several."""
    extra = spread(values)
    return f"{fmt_num(median(values))} [{extra}]" if extra else fmt_num(median(values))


def fmt_num(value: float) -> str:
    if value != value:  # NaN
        return "n/a"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.1f} ms"


def fmt_ratio(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}x"


# ---- results -----------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Ratio:
    """One ours-vs-SDK ratio (> 1 means ours is better) and its target."""

    name: str
    value: float
    target: float
    versus: str = "SDK"  # what "ours" is compared with

    @property
    def verdict(self) -> str:
        if self.value != self.value:
            return "n/a"
        return "meets target" if self.value >= self.target else "BELOW target"

    def line(self) -> str:
        return (
            f"ratio {self.name}: {fmt_ratio(self.value)} ours vs {self.versus} "
            f"(target >= {self.target:g}x) {self.verdict}"
        )


@dataclasses.dataclass
class Section:
    """What one benchmark produced: a titled table, notes, and the ratios it checks against targets."""

    key: str
    title: str
    headers: list[str] = dataclasses.field(default_factory=list)
    rows: list[list[str]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    ratios: list[Ratio] = dataclasses.field(default_factory=list)
    unavailable: str | None = None

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if self.unavailable is not None:
            lines += [f"not available yet: {self.unavailable}", ""]
            return "\n".join(lines)
        widths = [max(len(str(c)) for c in col) for col in zip(self.headers, *self.rows, strict=True)]
        lines.append(_row(self.headers, widths))
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        lines += [_row(r, widths) for r in self.rows]
        lines.append("")
        lines += [f"- {note}" for note in self.notes]
        if self.notes:
            lines.append("")
        return "\n".join(lines)


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"


# ---- processes and ports -----------------------------------------------------------------------------------
def stop_process(proc: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """Terminate by PID, wait, kill if it lingers. Idempotent."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


@contextlib.contextmanager
def started(cmd: Sequence[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """A process that lives exactly as long as the ``with`` block."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    proc = subprocess.Popen(list(cmd), **popen)
    try:
        yield proc
    finally:
        stop_process(proc)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_for_port(port: int, proc: subprocess.Popen[Any], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server process exited with {proc.returncode} before listening on {port}")
        if port_open(port):
            return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {timeout:g} s")


def leftover_children() -> list[int]:
    """PIDs whose parent is this process (Linux /proc): what a transport forgot to reap or stop."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == me and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def stop_pids(pids: Sequence[int], timeout: float = 5.0) -> None:
    """SIGTERM each PID (ours to stop: children of this process), then SIGKILL what is left."""
    import signal

    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG) != (0, 0):
                    break
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
