"""Past one machine: throughput through HAProxy with 1 worker vs 2 (README "Past one machine").

    .venv/bin/python bench/scale.py [--budget 3] [--clients 16]

Starts a private redis-server and haproxy (Debian's, scripts/install-services.sh) and 1, then 2
``mcp-notebook serve bench/_scale_app.py --http`` workers sharing them (the README's recipe and
examples/scale/haproxy.cfg), all on 127.0.0.1; a load process (bench/loadgen.py's approach: N stateless
2026-07-28 clients calling in a loop for the budget) measures calls/s for ``echo`` (protocol cost only) and
``spin(ms=5)`` (5 ms of CPU in the tool). Prints a markdown table. Everything is stopped by PID.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import free_port, started, wait_for_port  # noqa: E402
from mcp_notebook.protocol import era  # noqa: E402

APP = ROOT / "bench" / "_scale_app.py"
HAPROXY_CFG = ROOT / "examples" / "scale" / "haproxy.cfg"
KEY = "bench-scale state key, 32 characters or more"


def _program(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found is None:
        raise SystemExit(f"{name} is not installed: bash scripts/install-services.sh")
    return found


@contextlib.contextmanager
def cluster(workers: int, directory: Path) -> Iterator[str]:
    redis_port, balancer = free_port(), free_port()
    ports = [free_port() for _ in range(workers)]
    with contextlib.ExitStack() as stack:
        redis = [_program("redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""]
        proc = stack.enter_context(started([*redis, "--dir", str(directory), "--appendonly", "no"]))
        wait_for_port(redis_port, proc)
        store = f"redis://127.0.0.1:{redis_port}/0"
        for port in ports:
            command = [sys.executable, "-m", "mcp_notebook", "serve", str(APP), "--http", f"127.0.0.1:{port}"]
            command += ["--task-store", store, "--state-key", KEY, "--allowed-host", f"127.0.0.1:{balancer}"]
            proc = stack.enter_context(started(command, cwd=ROOT))
            wait_for_port(port, proc)
        config = directory / f"haproxy-{workers}.cfg"
        lines = []
        for line in HAPROXY_CFG.read_text().splitlines():
            if line.strip().startswith("bind "):
                line = f"    bind 127.0.0.1:{balancer}"
            elif line.strip().startswith("server "):
                if len(lines) and sum(x.strip().startswith("server ") for x in lines) >= workers:
                    continue
                n = sum(x.strip().startswith("server ") for x in lines)
                line = f"    server w{n + 1} 127.0.0.1:{ports[n]}"
            lines.append(line)
        config.write_text("\n".join(lines) + "\n")
        proc = stack.enter_context(started([_program("haproxy"), "-f", str(config), "-db"]))
        wait_for_port(balancer, proc)
        yield f"http://127.0.0.1:{balancer}/mcp"


async def _load(url: str, clients: int, budget: float, tool: str, arguments: dict[str, Any]) -> float:
    capabilities: dict[str, Any] = {}
    params = era.modern_params(
        {"name": tool, "arguments": arguments}, "2026-07-28", capabilities, {"name": "b"}
    )
    headers = {
        **era.http_headers("tools/call", params),
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    counts = [0] * clients

    async def client(i: int, http: aiohttp.ClientSession, until: float) -> None:
        while time.perf_counter() < until:
            async with http.post(url, json=message, headers=headers) as got:
                await got.read()
                if got.status == 200:
                    counts[i] += 1

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as http:
        warm = time.perf_counter() + min(1.0, budget / 3)
        await asyncio.gather(*(client(i, http, warm) for i in range(clients)))
        counts[:] = [0] * clients
        start = time.perf_counter()
        await asyncio.gather(*(client(i, http, start + budget) for i in range(clients)))
        return sum(counts) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {"echo": [], "spin 5 ms": []}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            with cluster(workers, Path(tmp)) as url:
                rows["echo"].append(asyncio.run(_load(url, args.clients, args.budget, "echo", {"text": "x"})))
                rows["spin 5 ms"].append(
                    asyncio.run(_load(url, args.clients, args.budget, "spin", {"ms": 5}))
                )
    cpus = os.cpu_count()
    print(f"{args.clients} clients, {args.budget:g} s per cell, {cpus} CPUs, load {os.getloadavg()[0]:.1f}")
    print("| tool | 1 worker (calls/s) | 2 workers (calls/s) | 2 vs 1 |")
    print("|---|---|---|---|")
    for name, (one, two) in rows.items():
        print(f"| {name} | {one:,.0f} | {two:,.0f} | {two / one:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
