"""Benchmark: one tool over 10,000 rows against a local stdio server (issue 9).

Rows/s of ``Client.map`` at concurrency 1, 8 and 32 against a plain sequential loop of ``call_tool`` over the
same connection, and of the notebook's ``mcp.map`` (approval decided by policy, handle, progress) at
concurrency 8; the per-row overhead of ``map`` over the bare client is ``1/rate(map, c=1) - 1/rate(loop)``.
Two tools: ``add`` (no work: what the machinery costs, and what overlapping round trips gains) and
``wait`` (2 ms of awaited I/O per row: the analyst's usual remote tool, where concurrency pays most).
Ours only (the SDK has no batch call); the ratios are against our own sequential loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import PYTHON, Ratio, Section, Settings, fmt_num, median

SERVER = """
import asyncio
from mcp_notebook import Server

server = Server("batch")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

@server.tool
async def wait(ms: float) -> float:
    await asyncio.sleep(ms / 1000)
    return ms

server.run_stdio()
"""
COMMAND = [PYTHON, "-c", SERVER]
CONCURRENCY = (1, 8, 32)
TARGET = 3.0  # issue 9: at concurrency 8, at least 3x the sequential loop
PerCase = dict[str, list[float]]  # measurements by case ("loop", "c8"...; CPU: "c8 client"...)
TOOLS: dict[str, Callable[[int], dict[str, Any]]] = {
    "add": lambda i: {"a": i, "b": 1},
    "wait": lambda i: {"ms": 2.0},
}


def _rows(tool: str, n: int) -> list[dict[str, Any]]:
    return [TOOLS[tool](i) for i in range(n)]


async def _timed(work: Callable[[], Awaitable[Any]], n: int) -> float:
    start = time.perf_counter()
    await work()
    return n / (time.perf_counter() - start)


def _process_cpu(pid: int | None) -> float:
    """Seconds of CPU a process has used, all its threads (Linux: /proc); NaN where that cannot be read."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError):
        return math.nan
    return total / 1e9


async def _client_rates(tool: str, n: int, rounds: int, mcp: Any) -> tuple[PerCase, PerCase]:
    """Rows/s per case, and CPU per row in us per case and process (``"loop client"``, ``"c8 server"``...).

    Each round runs every case once, ``mcp.map`` (case ``"notebook"``, on the notebook's own connection
    and server process) among them, so load on the machine hits every case alike."""
    from mcp_notebook import Client

    rates: PerCase = {}
    cpu: PerCase = {}
    rows = _rows(tool, n)
    notebook_server = getattr(mcp.calls.client("bench").aio.connection.transport, "pid", None)
    async with Client(COMMAND) as client:  # the default era, as mcp.connect uses
        await client.call_tool(tool, rows[0])  # warm: tools/list, validators
        server = getattr(client.connection.transport, "pid", None)

        async def loop() -> None:
            for row in rows:
                await client.call_tool(tool, row)

        async def measured(case: str, work: Callable[[], Awaitable[float]], pid: int | None = server) -> None:
            ours, theirs = time.process_time(), _process_cpu(pid)  # our process: all its threads
            rates.setdefault(case, []).append(await work())
            cpu.setdefault(f"{case} client", []).append((time.process_time() - ours) / n * 1e6)
            cpu.setdefault(f"{case} server", []).append((_process_cpu(pid) - theirs) / n * 1e6)

        async def notebook() -> float:  # blocks this loop (idle meanwhile); the runtime thread runs it
            return _notebook_rate(mcp, tool, rows)

        async def mapped(c: int) -> float:
            run = await client.map(tool, rows, concurrency=c)
            if run.failed:
                raise RuntimeError(f"{run.failed} rows failed: {run.ordered()[0].error}")
            return n / ((run.finished or 0) - run.started)

        for _ in range(rounds):  # interleaved, so load on the machine hits every case alike
            await measured("loop", lambda: _timed(loop, n))
            for c in CONCURRENCY:
                await measured(f"c{c}", functools.partial(mapped, c))
            await measured("notebook", notebook, notebook_server)
    return rates, cpu


def _cpu_note(rates: PerCase, cpu: PerCase) -> str:
    """What two cores allow at c=8, from the CPU each process spends per row (see the note it makes)."""
    per_row = {k: median(v) for k, v in cpu.items()}
    if any(math.isnan(v) for v in per_row.values()):
        return "CPU per row: not measured (no /proc on this system)."
    cases = ", ".join(
        f"{name} {per_row[f'{case} client']:.0f} / {per_row[f'{case} server']:.0f}"
        for case, name in (
            ("loop", "loop"),
            ("c1", "c=1"),
            ("c8", "c=8"),
            ("c32", "c=32"),
            ("notebook", "mcp.map c=8"),
        )
    )
    client, server = per_row["c8 client"], per_row["c8 server"]
    floor = max(client, server, (client + server) / 2)  # one process per core at best, two cores at most
    bound = 1e6 / median(rates["loop"]) / floor
    cores = (client + server) / (1e6 / median(rates["c8"]))
    return (
        f"`add`, CPU per row in us, client / server process (all threads), median: {cases}. At c=8 a row "
        f"cannot take less than max(client, server, (client + server) / 2) = {floor:.0f} us on 2 cores, "
        f"{bound:.2f}x the loop's rate, if both processes ran at once all the time; they used "
        f"{cores:.2f} cores on average (CPU per row / wall per row)."
    )


def _notebook_rate(mcp: Any, tool: str, rows: list[dict[str, Any]]) -> float:
    """``mcp.map`` in an IPython shell (not a kernel: no frontend), headless, the policy allowing: rows/s
    from the call to its return (decision, audit entry, handle, progress, the batch)."""
    start = time.perf_counter()
    handle = mcp.map(f"bench.{tool}", rows, concurrency=8)
    rate = len(rows) / (time.perf_counter() - start)
    if handle.state != "done" or handle.run.failed:
        raise RuntimeError(f"mcp.map ended {handle.state} with {handle.run.failed} failed rows")
    return rate


def _notebook() -> tuple[Any, Any]:
    """A shell with the extension loaded, headless with the policy allowing, connected to the server."""
    os.environ["MCP_NOTEBOOK_HEADLESS"] = "1"
    os.environ["MCP_NOTEBOOK_HEADLESS_POLICY"] = "allow"
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    mcp = shell.user_ns["mcp"]
    mcp.connect("bench", COMMAND)
    return shell, mcp


def run(settings: Settings) -> Section:
    n = 1_000 if settings.quick else 10_000
    rounds = 1 if settings.quick else 3
    section = Section("batch", f"7. One tool over {n:,} rows, local stdio server (rows/s, higher is better)")
    section.headers = [
        "tool",
        "loop of call_tool",
        "map c=1",
        "map c=8",
        "map c=32",
        "mcp.map c=8 (notebook)",
    ]
    overheads = []
    cpu_note = ""
    shell, mcp = _notebook()
    try:
        measured = {}
        for tool in TOOLS:
            mcp.map(f"bench.{tool}", _rows(tool, 10), concurrency=8)  # warm
            measured[tool] = asyncio.run(_client_rates(tool, n, rounds, mcp))
    finally:
        from mcp_notebook.notebook.magics import unload

        mcp.disconnect("bench")
        unload(shell)
    for tool, (rates, cpu) in measured.items():
        if tool == "add":
            cpu_note = _cpu_note(rates, cpu)
        notebook = rates["notebook"]
        cells = [fmt_num(median(rates[k])) for k in ("loop", "c1", "c8", "c32")]
        section.rows.append([f"`{tool}`", *cells, fmt_num(median(notebook))])
        loop, c8 = median(rates["loop"]), median(rates["c8"])
        section.ratios.append(Ratio(f"batch {tool}: map c=8 / sequential loop", c8 / loop, TARGET, "loop"))
        section.ratios.append(
            Ratio(f"batch {tool}: mcp.map c=8 / sequential loop", median(notebook) / loop, TARGET, "loop")
        )
        overheads.append(f"`{tool}` {(1 / median(rates['c1']) - 1 / loop) * 1e6:+.0f} us")
    section.notes = [
        f"Median of {rounds} interleaved round(s); one client, one stdio server process (`python -c`, "
        "our Server), each side's default era (what `Client(...)` and `mcp.connect` negotiate).",
        "`add` does no work, so its row rate is the machinery's cost; `wait` awaits 2 ms per row, as a "
        "remote tool doing I/O would.",
        "Per-row overhead of `map` (c=1) over the bare loop: " + ", ".join(overheads) + ".",
        cpu_note,
        "`mcp.map` adds the notebook's handle, audit entry, policy decision and throttled progress updates; "
        "it runs in the same rounds as the other cases, on the notebook's own connection and server.",
        "With `add` every row is CPU in the client and in the server and nothing else, so concurrency can "
        "only overlap the two processes (at most about 2x on this 2-core machine, shared with other work); "
        "with `wait` it overlaps the waiting, which is what batches of remote calls spend their time on.",
        "Command: `.venv/bin/python bench/run.py --only batch --merge` (rewrites this section only).",
    ]
    return section
