"""User-space instructions a Streamable HTTP server runs per ``tools/call``: deterministic, unlike CPU time.

    .venv/bin/python bench/instructions.py [--era modern] [--tool echo] [--calls 400]
        [--root OTHER_CHECKOUT]... [--floor]

On 2 shared cores CPU time per call moves by +-20% between alternated runs, so a change of a few percent
cannot be seen in it. This counts instructions instead: the server (``bench/peers.py ours http``, default
limits) runs under ``valgrind --tool=callgrind`` with instrumentation off; ours' own ``Client`` (this
checkout, in this process) warms it up, then instrumentation is switched on for ``--calls`` calls
(``callgrind_control -i on``) and off again. Kernel work (the sockets) is not counted; the event loop,
aiohttp and the interpreter are. Repeated runs agree to about 1%.

``--root`` (repeatable): serve from another checkout (a before/after; default: this one). ``--floor``: also
count a bare aiohttp server answering the same client (POST, ``orjson``, the echo's answer; it also answers
``server/discover`` and ``tools/list`` so that a 2026-07-28 client talks to it): what aiohttp and asyncio
cost by themselves. Needs valgrind (``apt-get install valgrind``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (  # siblings: bench/ is first on sys.path
    FLOOR_HTTP_SERVER,
    PYTHON,
    ROOT,
    free_port,
    started,
    wait_for_port,
)

# The server, from ROOT (argv[1]) rather than from the installed package: a before/after of two checkouts.
SERVE = r"""
import runpy, sys
root, port = sys.argv[1], sys.argv[2]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
sys.path[:0] = [root, root + "/bench"]
sys.argv = ["peers.py", "ours", "http", port]
runpy.run_path(root + "/bench/peers.py", run_name="__main__")
"""


async def count(server: list[str], era: str, tool: str, calls: int) -> float:
    """Instructions per call of the server started by ``server + [PORT]``."""
    from mcp_notebook import Client

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="mcp-instructions-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        with started([*valgrind, *server, str(port)], cwd=ROOT) as proc:
            await asyncio.to_thread(wait_for_port, port, proc, 120.0)
            async with Client(f"http://127.0.0.1:{port}/mcp", era=era, timeout=120) as client:
                for _ in range(100):
                    await client.call_tool(tool, {"text": "x"})
                _control("on", proc.pid)
                for _ in range(calls):
                    await client.call_tool(tool, {"text": "x"})
                _control("off", proc.pid)
            proc.send_signal(signal.SIGTERM)  # the server ends cleanly: callgrind writes its counts
            await asyncio.to_thread(proc.wait, 60)
        total = 0
        for path in Path(tmp).glob("callgrind.out*"):
            for line in path.read_text().splitlines():
                if line.startswith(("summary:", "totals:")):
                    total = max(total, int(line.split()[1]))
    if not total:
        raise RuntimeError("callgrind wrote no counts")
    return total / calls


def _control(state: str, pid: int) -> None:
    subprocess.run(["callgrind_control", "-i", state, str(pid)], check=True, capture_output=True)


async def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--era", choices=["modern", "legacy"], action="append")
    parser.add_argument("--tool", default="echo", choices=["echo", "echo_async"])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--root", action="append", help="serve from this checkout (repeatable)")
    parser.add_argument("--floor", action="store_true", help="also count a bare aiohttp server")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    servers = {root: [PYTHON, "-c", SERVE, str(Path(root).resolve())] for root in args.root or [str(ROOT)]}
    if args.floor:
        servers["aiohttp floor"] = [PYTHON, "-c", FLOOR_HTTP_SERVER]  # port appended: no hop
    for era in args.era or ["modern", "legacy"]:
        for name, server in servers.items():
            per_call = await count(server, era, args.tool, args.calls)
            line = f"{era:7s} {args.tool:10s} {per_call / 1000:8.1f}k instructions per call  {name}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
