"""Flame graphs of the per-call path under py-spy: ``tools/call`` echo, client and server in one process.

    .venv/bin/python bench/flame.py --label after [--root OTHER_CHECKOUT] [--seconds 2] [--out docs/img/flame]

For in memory and Streamable HTTP, each era (bench/profile_call.py's workloads), a worker process imports
mcp_notebook (from ``--root`` if given), connects and warms up, then calls echo in a loop; only then is it
sampled, so the graph holds the calls alone (no imports, no start-up):

    py-spy record --pid WORKER --duration SECONDS --rate 2000 --gil --nolineno --format flamegraph
        -o OUT/LABEL-TRANSPORT-ERA.svg

``--gil``: only the thread holding the interpreter lock is sampled (the event loop's, or the worker thread
running the sync echo tool), so the widths are shares of the time Python code ran, and threads waiting (the
loop in select, idle workers) are left out; py-spy's own idle detection does not see them here (paused, every
thread looked busy: select took half the graph), and ``--nonblocking`` tore half the stacks. A thread that
holds the lock but waits for a CPU still counts: on a loaded machine the hop to the worker thread
(``_Workers.submit``) grows from a few percent to half the graph. ``--nolineno``: one box per function.
``python -m pip install py-spy`` (the ``test`` extra has it); it needs ptrace (root, or
kernel.yama.ptrace_scope 0).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_call import echo_client, use_root

WORKLOADS = [(t, e) for t in ("memory", "http") for e in ("legacy", "modern")]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "img" / "flame"


async def _call_until_told(transport: str, era: str) -> int:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    calls = 0
    async with echo_client(transport, era) as client:
        print("ready", flush=True)
        while not stop.is_set():
            await client.call_tool("echo", {"text": "x"})
            calls += 1
    return calls


def _worker(transport: str, era: str, root: str | None) -> int:
    """Connect, warm up, say "ready", then call echo until SIGTERM."""
    use_root(root)
    calls = asyncio.run(_call_until_told(transport, era))
    import mcp_notebook

    print(f"{calls} calls, mcp_notebook from {Path(mcp_notebook.__file__).parent}", file=sys.stderr)
    print(f"{calls} calls", flush=True)
    return 0


def _record(py_spy: str, transport: str, era: str, args: argparse.Namespace) -> Path:
    out = Path(args.out) / f"{args.label}-{transport}-{era}.svg"
    command = [sys.executable, __file__, "--worker", transport, era]
    if args.root:
        command += ["--root", args.root]
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert worker.stdout is not None
    try:
        if worker.stdout.readline().strip() != "ready":
            raise SystemExit(f"the {transport} {era} worker did not start")
        subprocess.run(
            [py_spy, "record", "--pid", str(worker.pid), "--duration", str(args.seconds), "--rate", "2000",
             "--gil", "--nolineno", "--format", "flamegraph", "-o", str(out)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        worker.terminate()
        calls = worker.stdout.read().strip()
        worker.wait(timeout=60)
    title = f"{args.label} ({_commit(args.root)}): tools/call echo, {transport}, {era} era; {calls} in the"
    title += f" ~{args.seconds} s sampled at 2000 Hz, load {os.getloadavg()[0]:.1f}"
    svg = re.sub(r'(<text id="title"[^>]*>)[^<]*', lambda m: m.group(1) + html.escape(title), out.read_text())
    out.write_text(svg)  # py-spy titles the graph with its own command line
    print(f"{out}: {out.stat().st_size // 1024} KB; {title}")
    return out


def _commit(root: str | None) -> str:
    where = root or str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        ["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="after", help="the files' prefix: before, after")
    parser.add_argument("--root", help="profile the mcp_notebook of this checkout instead (a before/after)")
    parser.add_argument("--seconds", type=int, default=2, help="how long each workload is sampled")
    parser.add_argument("--out", default=str(DOCS))
    parser.add_argument("--worker", nargs=2, metavar=("TRANSPORT", "ERA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(*args.worker, args.root)
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).is_file():
        raise SystemExit("no py-spy: python -m pip install py-spy")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for transport, era in WORKLOADS:
        _record(py_spy, transport, era, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
