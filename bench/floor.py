"""The stdlib floor: how close is ours over stdio to the least a JSON-RPC round trip can cost in Python?

    .venv/bin/python bench/floor.py [--rounds 3] [--budget 1.0]

The floor is a stdio "server" of a few lines (read a line, ``json.loads``, write the answer to a
``tools/call`` echo as one JSON line) driven by a client of a few lines (``json.dumps`` the request, write,
read a line, ``json.loads``), both plain blocking stdlib: no protocol checks, no asyncio, no schema. Ours
and the SDK run the same echo (``bench/peers.py``) with their own clients, legacy era. Rounds are interleaved;
the report is floor / ours and floor / SDK (the target for ours: within 5x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PEERS = str(BENCH / "peers.py")
FLOOR_SERVER = r"""
import json, sys
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "tools/call":
        text = m["params"]["arguments"]["text"]
        r = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        r = {}
    out.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    out.flush()
"""


def _floor(budget: float) -> float:
    proc = subprocess.Popen(
        [sys.executable, "-c", FLOOR_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:

        def call(i: int) -> Any:
            request = {"jsonrpc": "2.0", "id": i, "method": "tools/call"}
            request["params"] = {"name": "echo", "arguments": {"text": "x"}}
            proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            return json.loads(proc.stdout.readline())  # type: ignore[union-attr]

        for i in range(200):
            call(i)
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < budget:
            call(calls)
            calls += 1
        return calls / (time.perf_counter() - start)
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


async def _library(impl: str, budget: float) -> float:
    if impl == "ours":
        from mcp_notebook import Client

        async with Client([sys.executable, PEERS, "ours", "stdio"], era="legacy") as ours:
            call: Any = lambda: ours.call_tool("echo", {"text": "x"})  # noqa: E731
            return await _rate(call, budget)
    from mcp import Client as SDKClient
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[PEERS, "sdk", "stdio"])
    async with SDKClient(params, mode="legacy") as sdk:
        return await _rate(lambda: sdk.call_tool("echo", {"text": "x"}), budget)


async def _rate(call: Any, budget: float) -> float:
    for _ in range(200):
        await call()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget:
        await call()
        calls += 1
    return calls / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=1.0)
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"floor": [], "ours": [], "sdk": []}
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for _ in range(args.rounds):
        rates["floor"].append(_floor(args.budget))
        rates["ours"].append(asyncio.run(_library("ours", args.budget)))
        rates["sdk"].append(asyncio.run(_library("sdk", args.budget)))
    best = {name: max(values) for name, values in rates.items()}
    for name, values in rates.items():
        print(f"{name}: best {best[name]:,.0f} calls/s (rounds: {', '.join(f'{v:,.0f}' for v in values)})")
    print(f"floor / ours: {best['floor'] / best['ours']:.1f}x slower than the floor (target <= 5x)")
    print(f"floor / SDK: {best['floor'] / best['sdk']:.1f}x slower than the floor")
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
