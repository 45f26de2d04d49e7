"""User-space instructions a Streamable HTTP server runs per ``tools/call``: deterministic, unlike CPU time.

    .venv/bin/python bench/instructions.py [--era modern] [--tool echo] [--calls 400]
        [--root OTHER_CHECKOUT]... [--floor] [--client]

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

``--client``: count the client process instead. The server (``ours http``, this checkout) runs as usual; ours'
``Client`` (from each ``--root``) runs in a process of its own under callgrind, warms up, and is counted over
``--calls`` calls. ``--floor`` then adds a bare aiohttp ``ClientSession`` posting the bytes and headers ours
posts for the call (2026-07-28) and reading the answer: what aiohttp and asyncio cost a client by themselves.
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


# Ours' client (from ROOT, argv[1]) or a bare aiohttp one: argv ROOT URL ERA TOOL MODE (ours | floor). It
# warms up, says "ready", makes its calls when a line comes in, says "done" and ends at the next line.
CLIENT = r"""
import asyncio, json, sys
root, url, era, tool, mode = sys.argv[1:6]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
sys.path[:0] = [root]
import aiohttp
from mcp_notebook import Client

async def counted(call):
    for _ in range(200):
        await call()
    print("ready", flush=True)
    calls = int(sys.stdin.readline())
    for _ in range(calls):
        await call()
    print("done", flush=True)
    sys.stdin.readline()

async def ours():
    async with Client(url, era=era, timeout=120) as client:
        await counted(lambda: client.call_tool(tool, {"text": "x"}))

async def floor():
    key = "io.modelcontextprotocol/"
    capabilities = {"extensions": {key + "tasks": {}}}
    meta = {key + "protocolVersion": "2026-07-28", key + "clientCapabilities": capabilities,
            key + "clientInfo": {"name": "mcp-notebook", "version": "0.1.0"}}
    params = {"name": tool, "arguments": {"text": "x"}, "_meta": meta}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    body = json.dumps(message, separators=(",", ":"))
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
    async with aiohttp.ClientSession() as http:
        async def call():
            async with http.post(url, data=body, headers=headers) as resp:
                await resp.read()
        await counted(call)

asyncio.run(ours() if mode == "ours" else floor())
"""


async def count_client(root: str, era: str, tool: str, calls: int, mode: str) -> float:
    """Instructions per call of a client process (``CLIENT``) against ours' server."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with tempfile.TemporaryDirectory(prefix="mcp-instructions-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        client = [*valgrind, PYTHON, "-c", CLIENT, root, url, era, tool, mode]
        with started([PYTHON, str(ROOT / "bench/peers.py"), "ours", "http", str(port)], cwd=ROOT) as server:
            await asyncio.to_thread(wait_for_port, port, server, 60.0)
            pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
            with started(client, cwd=ROOT, **pipes) as proc:
                assert proc.stdin is not None and proc.stdout is not None
                await _expect(proc, "ready")
                _control("on", proc.pid)
                proc.stdin.write(f"{calls}\n")
                proc.stdin.flush()
                await _expect(proc, "done")
                _control("off", proc.pid)
                proc.stdin.write("\n")
                proc.stdin.flush()
                await asyncio.to_thread(proc.wait, 60)
        return _total(tmp) / calls


async def _expect(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 300)
    if line.strip() != word:
        raise RuntimeError(f"the client said {line!r}, not {word!r}")


def _total(directory: str) -> int:
    total = 0
    for path in Path(directory).glob("callgrind.out*"):
        for line in path.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
    if not total:
        raise RuntimeError("callgrind wrote no counts")
    return total


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
        return _total(tmp) / calls


def _control(state: str, pid: int) -> None:
    subprocess.run(["callgrind_control", "-i", state, str(pid)], check=True, capture_output=True)


async def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--era", choices=["modern", "legacy"], action="append")
    parser.add_argument("--tool", default="echo", choices=["echo", "echo_async"])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--root", action="append", help="serve from this checkout (repeatable)")
    parser.add_argument("--floor", action="store_true", help="also count a bare aiohttp server (or client)")
    parser.add_argument("--client", action="store_true", help="count the client process, not the server")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.client:
        for era in args.era or ["modern", "legacy"]:
            clients = [(str(Path(root).resolve()), "ours") for root in args.root or [str(ROOT)]]
            if args.floor and era == "modern":
                clients.append((str(ROOT), "floor"))
            for root, mode in clients:
                per_call = await count_client(root, era, args.tool, args.calls, mode)
                name = "aiohttp floor (client)" if mode == "floor" else f"{root} (client)"
                line = f"{era:7s} {args.tool:10s} {per_call / 1000:8.1f}k instructions per call  {name}"
                print(line, flush=True)
        return 0
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
