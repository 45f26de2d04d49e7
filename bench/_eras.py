"""Benchmark: the two protocol eras side by side. Sequential ``tools/call`` echo in memory, over stdio and
over Streamable HTTP, plus 16 concurrent HTTP clients, each library's own client against its own server,
once in the legacy era (``initialize`` handshake, 2025-11-25) and once in the stateless 2026-07-28 era.

Ours: ``Client(target, era="legacy")`` / ``Client(target, era="modern")``. The SDK:
``Client(..., mode="legacy")`` / its default ``mode="auto"``, which speaks 2026-07-28 to its own server.
The ratio in each row compares the two libraries in the same era, measured in the same interleaved rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from _common import (
    LOADGEN,
    PEERS,
    PYTHON,
    ROOT,
    Ratio,
    Section,
    Settings,
    calls_per_second,
    cell,
    fmt_ratio,
    median,
)
from _http import http_servers
from peers import build_ours, build_sdk

ERAS = ["legacy", "modern"]
TRANSPORTS = ["memory", "stdio", "http"]
TARGETS = {"memory": 3.0, "stdio": 4.0, "http": 4.0, "http16": 5.0}
Call = Callable[[], Awaitable[Any]]


@contextlib.asynccontextmanager
async def client(impl: str, transport: str, era: str, urls: dict[str, str]) -> AsyncIterator[Call]:
    if transport == "memory":
        target: Any = build_ours() if impl == "ours" else build_sdk()
    elif transport == "stdio":
        target = [PYTHON, PEERS, impl, "stdio"]
    else:
        target = urls[impl]
    if impl in ("ours", "ours-off"):
        from mcp_notebook import Client

        async with Client(target, era=era) as ours:  # type: ignore[arg-type]
            if (era == "modern") != ours._modern:
                raise RuntimeError(f"ours over {transport}: asked for the {era} era, got the other")

            async def call_ours() -> Any:
                result = await ours.call_tool("echo", {"text": "x"})
                if result.get("isError"):
                    raise RuntimeError(f"ours echo failed: {result}")
                return result

            yield call_ours
        return
    from mcp import Client as SDKClient
    from mcp import StdioServerParameters

    if transport == "stdio":
        target = StdioServerParameters(command=target[0], args=target[1:])
    async with SDKClient(target, mode="legacy" if era == "legacy" else "auto") as sdk:

        async def call_sdk() -> Any:
            result = await sdk.call_tool("echo", {"text": "x"})
            if result.is_error:
                raise RuntimeError(f"SDK echo failed: {result}")
            return result

        yield call_sdk


async def _sequential(settings: Settings, urls: dict[str, str]) -> dict[tuple[str, str, str], list[float]]:
    rates: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(settings.rounds):  # interleaved: drift hits every variant alike
        for transport in TRANSPORTS:
            for era in ERAS:
                for impl in ("ours", "ours-off", "sdk") if transport == "http" else ("ours", "sdk"):
                    async with client(impl, transport, era, urls) as call:
                        await call()
                        rate = await calls_per_second(call, settings)
                    rates.setdefault((transport, era, impl), []).append(rate)
    return rates


def load16(url: str, impl: str, era: str, settings: Settings) -> float:
    """16 of ``impl``'s own clients (``bench/loadgen.py``, its own process) against ``url``: calls/s."""
    client = "sdk" if impl == "sdk" else "ours"
    cmd = [PYTHON, LOADGEN, url, "--client", client, "--era", era, "--clients", "16"]
    cmd += ["--budget", str(settings.budget), "--warmup", str(min(settings.warmup_calls, 20))]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"load ({impl}, {era}) failed:\n{done.stderr[-3000:]}")
    [result] = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["calls"] / result["seconds"])


def _concurrent(settings: Settings, urls: dict[str, str]) -> dict[tuple[str, str], list[float]]:
    rates: dict[tuple[str, str], list[float]] = {}
    for _ in range(settings.rounds):
        for era in ERAS:
            for impl in ("ours", "ours-off", "sdk"):
                rates.setdefault((era, impl), []).append(load16(urls[impl], impl, era, settings))
    return rates


def run(settings: Settings) -> Section:
    section = Section("eras", "8. Both eras: tools/call echo, each library's own client and server (calls/s)")
    section.headers = ["transport, load", "era", "ours", "SDK", "ours / SDK", "target", "limits off / SDK"]
    with http_servers(limits_off=True) as urls:
        sequential = asyncio.run(_sequential(settings, urls))
        concurrent = _concurrent(settings, urls)
    labels = {"memory": "in memory, sequential", "stdio": "stdio, sequential", "http": "HTTP, sequential"}
    for transport in TRANSPORTS:
        for era in ERAS:
            ours, sdk = (sequential[(transport, era, impl)] for impl in ("ours", "sdk"))
            ratio = median(ours) / median(sdk)
            target = TARGETS[transport]
            off = sequential.get((transport, era, "ours-off"))
            off_cell = f"{fmt_ratio(median(off) / median(sdk))} ({cell(off)})" if off else ""
            section.rows.append(
                [labels[transport], era, cell(ours), cell(sdk), fmt_ratio(ratio), f">= {target:g}x", off_cell]
            )
            section.ratios.append(Ratio(f"{labels[transport]} ({era} era)", ratio, target))
    for era in ERAS:
        ours, off, sdk = (concurrent[(era, impl)] for impl in ("ours", "ours-off", "sdk"))
        ratio = median(ours) / median(sdk)
        off_cell = f"{fmt_ratio(median(off) / median(sdk))} ({cell(off)})"
        section.rows.append(
            ["HTTP, 16 concurrent clients", era, cell(ours), cell(sdk), fmt_ratio(ratio), ">= 5x", off_cell]
        )
        section.ratios.append(Ratio(f"HTTP 16 concurrent clients ({era} era)", ratio, TARGETS["http16"]))
    section.notes = [
        "Ours over HTTP with the default HTTPLimits a user gets; the last column: ours with the rate limit "
        "off (its calls/s in brackets), same run.",
        "legacy: ours era='legacy', SDK mode='legacy' (initialize, 2025-11-25). modern: ours era='modern', "
        "SDK default mode='auto' (server/discover, then stateless 2026-07-28 requests).",
        "In the modern era the tools list is cached for the server's ttlMs (our server's default TTL); a "
        "call does not re-list (tests/spec counts the messages).",
        "The 16-client rows run the load in its own process (bench/loadgen.py --era), one MCP client per "
        "simulated user; in memory there is no SDK 'legacy over JSON' equivalent of ours, see section 1.",
    ]
    return section
