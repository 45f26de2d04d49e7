"""The floor: how close is ours to the least a JSON-RPC round trip can cost in Python, over stdio or HTTP?

    .venv/bin/python bench/floor.py [--rounds 3] [--budget 1.0]
    .venv/bin/python bench/floor.py --http [--rounds 3] [--budget 1.0]

The floor is a stdio "server" of a few lines (read a line, ``json.loads``, write the answer to a
``tools/call`` echo as one JSON line) driven by a client of a few lines (``json.dumps`` the request, write,
read a line, ``json.loads``), both plain blocking stdlib: no protocol checks, no asyncio, no schema. Ours
and the SDK run the same echo (``bench/peers.py``) with their own clients, legacy era. Rounds are interleaved;
the report is floor / ours and floor / SDK (the target for ours: within 5x).

``--http``: the floor is an aiohttp server of a few lines (POST, ``orjson.loads``, the echo's answer as one
JSON body) in its own process, driven by an aiohttp client of a few lines (one ``ClientSession``, POSTs in
sequence, or 16 tasks at once); "floor+hop" is the same server calling the sync echo through our worker
thread hop (``engine/workers.run_in_worker``, what ours pays for a sync tool). Ours and the SDK run the
eras benchmark's HTTP rows (``bench/_eras.py``: each library's own client and server, ours on its default
limits, 16 clients from ``bench/loadgen.py``) in both eras. The floor has no era: no headers checked, no
session, no ``_meta``. It is what aiohttp itself allows, so floor / SDK bounds the ratio ours can reach.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _eras  # siblings: `python bench/floor.py` puts bench/ first on sys.path
from _common import FLOOR_HTTP_SERVER, Settings, free_port, started, wait_for_port
from _http import http_servers

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


async def _floor_http(url: str, budget: float, clients: int) -> float:
    import aiohttp
    import orjson

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    async with aiohttp.ClientSession() as http:
        ids = iter(range(1 << 62))

        async def call() -> Any:
            request = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call"}
            request["params"] = {"name": "echo", "arguments": {"text": "x"}}
            async with http.post(url, data=orjson.dumps(request), headers=headers) as response:
                return orjson.loads(await response.read())

        if clients == 1:
            return await _rate(call, budget)
        for _ in range(20):
            await asyncio.gather(*(call() for _ in range(clients)))
        deadline = time.perf_counter() + budget
        counts = [0] * clients

        async def worker(i: int) -> None:
            while time.perf_counter() < deadline:
                await call()
                counts[i] += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(clients)))
        return sum(counts) / (time.perf_counter() - start)


async def _library_http(impl: str, era: str, url: str, budget: float) -> float:
    async with _eras.client(impl, "http", era, {impl: url}) as call:
        return await _rate(call, budget)


def _http_round(urls: dict[str, str], settings: Settings, rates: dict[str, list[float]]) -> None:
    for clients, suffix in ((1, ""), (16, " x16")):
        for name in ("floor", "floor+hop"):
            rates.setdefault(name + suffix, []).append(
                asyncio.run(_floor_http(urls[name], settings.budget, clients))
            )
        for era in _eras.ERAS:
            for impl in ("ours", "sdk"):
                if clients == 1:
                    rate = asyncio.run(_library_http(impl, era, urls[impl], settings.budget))
                else:
                    rate = _eras.load16(urls[impl], impl, era, settings)
                rates.setdefault(f"{impl} {era}{suffix}", []).append(rate)


def _http(rounds: int, budget: float) -> dict[str, list[float]]:
    settings = Settings(False, rounds, budget, 10**9, 200, 0.5, 0, 0)
    rates: dict[str, list[float]] = {}
    ports = {"floor": free_port(), "floor+hop": free_port()}
    with http_servers() as urls, contextlib.ExitStack() as stack:
        for name, port in ports.items():
            cmd = [sys.executable, "-c", FLOOR_HTTP_SERVER, str(port), "hop" if "hop" in name else "plain"]
            wait_for_port(port, stack.enter_context(started(cmd, cwd=BENCH.parent)))
            urls[name] = f"http://127.0.0.1:{port}/mcp"
        for _ in range(rounds):  # interleaved: drift hits every variant alike
            _http_round(urls, settings, rates)
    return rates


def _http_report(rates: dict[str, list[float]]) -> None:
    best = {name: max(values) for name, values in rates.items()}
    for name, values in rates.items():
        print(f"{name}: best {best[name]:,.0f} calls/s (rounds: {', '.join(f'{v:,.0f}' for v in values)})")
    for suffix, target in (("", 4.0), (" x16", 5.0)):
        floor, hop = best["floor" + suffix], best["floor+hop" + suffix]
        for era in _eras.ERAS:
            ours, sdk = best[f"ours {era}{suffix}"], best[f"sdk {era}{suffix}"]
            print(
                f"{era}{suffix or ' sequential'}: floor / ours {floor / ours:.2f}x, "
                f"floor / SDK {floor / sdk:.2f}x; floor+hop / ours {hop / ours:.2f}x, "
                f"floor+hop / SDK {hop / sdk:.2f}x; ours / SDK "
                f"{ours / sdk:.2f}x (target {target:g}x)"
            )


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
    parser.add_argument("--http", action="store_true", help="the aiohttp floor against both eras over HTTP")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"floor": [], "ours": [], "sdk": []}
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.http:
        _http_report(_http(args.rounds, args.budget))
        print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
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
