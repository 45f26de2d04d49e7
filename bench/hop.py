"""The thread hop a synchronous tool pays, alone: a no-op function run in a worker thread and awaited.

    .venv/bin/python bench/hop.py [--calls 4000] [--rounds 5] [--concurrency 1,8,32] [--root OTHER_CHECKOUT]

Side by side, interleaved round by round: ours (``engine/workers.run_in_worker``, what our server runs a
sync tool with), ``asyncio.to_thread`` and ``anyio.to_thread.run_sync`` (what the official SDK runs a sync
tool with). Prints wall time and CPU time (``time.process_time``: every thread of the process) per hop, the
median and the best of the rounds. On a loaded machine the wall time is noisy; the CPU time much less.

At concurrency c, c chains of hops run at once (``c`` calls in flight, as ``Client.map`` at c keeps a server
busy), each hop a ``functools.partial`` as a tool's call is (the pool knows a tool by the function it wraps).

This is the floor under a sync tool's round trip that no protocol work can remove: two thread wake-ups
(the loop wakes a worker, the worker wakes the loop) and the interpreter lock passing between the two. The
first row is the floor under that: two bare threads passing a byte back and forth through two pipes (no
event loop, no pool), the operating system's (and a virtual machine's) price of two wake-ups. ``switches``:
the context switches per hop of every thread (``/proc/self/task/*/status``, Linux), voluntary (a wait) +
involuntary (preempted); two per hop is one sleep per thread, more is threads waking to find the interpreter
lock held. On an idle machine of 2 virtual CPUs the woken thread runs on the other, idle, CPU: a wake-up is
then an inter-processor interrupt (and, in a guest that halts its idle CPUs, the host waking that CPU), far
dearer than a switch on one busy CPU; ``taskset -c 0`` shows the one-CPU price.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

Hop = Callable[[Callable[[], Any]], Awaitable[Any]]
FLOOR = "two threads, two pipes (floor)"


def _switches() -> int | None:
    """Context switches so far of every thread of this process (None where /proc does not tell)."""
    total = 0
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/status") as status:
                for line in status:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
    except OSError:
        return None
    return total


def _floor(calls: int) -> tuple[float, float, float | None]:
    """Two threads passing a byte through two pipes, ``calls`` round trips: wall, CPU us and switches."""
    there, back = os.pipe(), os.pipe()

    def echo() -> None:
        for _ in range(calls):
            os.write(back[1], os.read(there[0], 1))

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    before = _switches()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        os.write(there[1], b"\0")
        os.read(back[0], 1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = _switches()
    thread.join()
    for fd in (*there, *back):
        os.close(fd)
    switched = (after - before) / calls if before is not None and after is not None else None
    return wall / calls * 1e6, cpu / calls * 1e6, switched


def _noop(a: int = 0) -> int:
    return a


def _hops() -> dict[str, Hop]:
    import anyio.to_thread

    from mcp_notebook.engine.workers import run_in_worker

    return {
        "run_in_worker (ours)": run_in_worker,
        "asyncio.to_thread": asyncio.to_thread,
        "anyio.to_thread.run_sync (SDK)": anyio.to_thread.run_sync,
    }


async def _chain(hop: Hop, calls: int) -> None:
    for i in range(calls):
        await hop(functools.partial(_noop, i))


Run = tuple[float, float, float | None]  # wall us, CPU us, switches per hop


async def _measure(hop: Hop, calls: int, concurrency: int) -> Run:
    await asyncio.gather(*(_chain(hop, min(calls, 300) // concurrency) for _ in range(concurrency)))
    before = _switches()
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(_chain(hop, calls // concurrency) for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = _switches()
    switched = (after - before) / calls if before is not None and after is not None else None
    return wall / calls * 1e6, cpu / calls * 1e6, switched


async def _run(calls: int, rounds: int, levels: list[int]) -> dict[str, list[Run]]:
    hops = _hops()
    results: dict[str, list[Run]] = {}
    for _ in range(rounds):  # interleaved, so drift (other load) hits every variant alike
        results.setdefault(FLOOR, []).append(_floor(calls))
        for c in levels:
            for name, hop in hops.items():
                case = name if c == 1 else f"{name}, c={c}"
                results.setdefault(case, []).append(await _measure(hop, calls, c))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", default="1,8,32", help="hops in flight at once, comma-separated")
    parser.add_argument("--root", help="measure the mcp_notebook of this checkout instead (a before/after)")
    args = parser.parse_args()
    if args.root:  # ahead of the venv's editable install, whose finder would otherwise win
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
        sys.path.insert(0, args.root)
    import mcp_notebook

    where = Path(mcp_notebook.__file__).parent
    load = os.getloadavg()[0]
    print(f"mcp_notebook from {where}; load average {load:.2f}; {args.calls} hops x {args.rounds} rounds")
    results = asyncio.run(_run(args.calls, args.rounds, [int(c) for c in args.concurrency.split(",")]))
    print("| hop | wall us (median) | wall us (best) | CPU us (median) | CPU us (best) | switches |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, runs in results.items():
        walls, cpus = [w for w, _, _ in runs], [c for _, c, _ in runs]
        switches = [s for _, _, s in runs if s is not None]
        shown = f"{statistics.median(switches):.2f}" if switches else "?"
        print(
            f"| {name} | {statistics.median(walls):.1f} | {min(walls):.1f} | "
            f"{statistics.median(cpus):.1f} | {min(cpus):.1f} | {shown} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
