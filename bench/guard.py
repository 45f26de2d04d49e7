"""A quick regression guard: same-run ratios ours / SDK, default settings, against recorded values.

    .venv/bin/python bench/guard.py            # prints every ratio; exit 1 only on a regression
    .venv/bin/python bench/guard.py --print-json   # the ratios of this run as JSON (to choose new records)

Each case measures ours and the official SDK (``mcp``) in the same run, interleaved: sequential ``tools/call``
echo in memory, over stdio and over Streamable HTTP, in both eras, and 16 concurrent HTTP clients (both eras).
Ours serves HTTP with the default ``HTTPLimits`` a user gets, so a regression as large as the old default
throttle (0.25x at 16 clients) cannot land unseen.

A case fails only when its ratio is below half of its recorded value in ``bench/guard.json`` (2 shared cores
are noisy). Noise only ever slows a window down, so each rate is the best of a few short windows, and a case
under its floor is measured again (up to 3 attempts, the best kept): a real regression is low every time.
The recorded values are deliberately conservative (see guard.json's note). Runs in well under a minute on an
idle machine; ``tests/bench/test_guard.py`` runs it in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _eras  # siblings: `python bench/guard.py` puts bench/ first on sys.path
from _common import LOADGEN, PYTHON, ROOT
from _http import http_servers

RECORDED = Path(__file__).with_name("guard.json")
WINDOW = 0.15  # seconds per measuring window
WINDOWS = 3  # per implementation, alternating ours / SDK
ATTEMPTS = 3  # a case under its floor is measured again, up to this many times in all
Call = Callable[[], Awaitable[Any]]


async def _rate(call: Call) -> float:
    calls, start = 0, time.perf_counter()
    now = start
    while now - start < WINDOW:
        await call()
        calls += 1
        now = time.perf_counter()
    return calls / (now - start)


async def _sequential(transport: str, era: str, urls: dict[str, str]) -> float:
    async with (
        _eras.client("ours", transport, era, urls) as ours,
        _eras.client("sdk", transport, era, urls) as sdk,
    ):
        for _ in range(10):  # warm both
            await ours()
            await sdk()
        best = {"ours": 0.0, "sdk": 0.0}
        for _ in range(WINDOWS):
            best["ours"] = max(best["ours"], await _rate(ours))
            best["sdk"] = max(best["sdk"], await _rate(sdk))
    return best["ours"] / best["sdk"]


def _concurrent(era: str, urls: dict[str, str]) -> float:
    rates = {}
    for impl in ("ours", "sdk"):
        cmd = [PYTHON, LOADGEN, urls[impl], "--client", impl, "--era", era, "--clients", "16"]
        cmd += ["--budget", "0.4", "--warmup", "5"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"load ({impl}, {era}) failed:\n{done.stderr[-3000:]}")
        [result] = json.loads(done.stdout.strip().splitlines()[-1])
        if result["errors"]:
            raise RuntimeError(f"load ({impl}, {era}): {result['errors']} failed calls")
        rates[impl] = result["calls"] / result["seconds"]
    return rates["ours"] / rates["sdk"]


def _measure(case: str, urls: dict[str, str]) -> float:
    transport, era = case.split(" ")
    if transport == "http16":
        return _concurrent(era, urls)
    return asyncio.run(_sequential(transport, era, urls))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--print-json", action="store_true", help="print this run's ratios as JSON")
    args = parser.parse_args()
    recorded: dict[str, float] = json.loads(RECORDED.read_text(encoding="utf-8"))["ratios"]
    began = time.perf_counter()
    print(f"guard: load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15 min)", flush=True)
    measured: dict[str, float] = {}
    failed: list[str] = []
    with http_servers() as urls:  # ours with the default HTTPLimits
        for case, value in recorded.items():
            floor = value / 2
            ratio = _measure(case, urls)
            attempts = 1
            while ratio < floor and attempts < ATTEMPTS:
                ratio = max(ratio, _measure(case, urls))
                attempts += 1
            measured[case] = ratio
            verdict = "ok" if ratio >= floor else "REGRESSED"
            if ratio < floor:
                failed.append(case)
            again = f", {attempts} attempts" if attempts > 1 else ""
            print(
                f"guard {case}: {ratio:.2f}x ours / SDK (recorded {value:.2f}x, floor {floor:.2f}x{again}) "
                f"{verdict}",
                flush=True,
            )
    print(f"guard: {time.perf_counter() - began:.1f} s", flush=True)
    if args.print_json:
        print(json.dumps({case: round(r, 2) for case, r in measured.items()}))
    if failed:
        print(f"guard: below half of the recorded ratio: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
