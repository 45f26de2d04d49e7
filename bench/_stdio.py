"""Benchmark 3: stdio. Sequential ``tools/call`` echo round trips with 1 KB, 100 KB and 1 MB payloads (the
text goes both ways), for the four client -> server pairs; and cold start to first result (spawn ->
initialize -> first ``tools/call`` result, the client already imported), ours vs the SDK.

The client runs in this process, the server in a child it spawns (``bench/peers.py``), as a user would.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from _common import (
    PEERS,
    PYTHON,
    Ratio,
    Section,
    Settings,
    calls_per_second,
    cell,
    fmt_ms,
    fmt_ratio,
    median,
)

PAYLOADS = [("1 KB", 1024), ("100 KB", 100 * 1024), ("1 MB", 1024 * 1024)]
PAIRS = [("ours", "ours"), ("sdk", "sdk"), ("ours", "sdk"), ("sdk", "ours")]  # (client, server)
TARGET = 4.0
PAYLOAD_TARGETS = {"1 KB": 4.0, "100 KB": 2.0, "1 MB": 3.0}  # issue 12's targets per payload
Call = Callable[[str], Awaitable[str]]


def available() -> str | None:
    """Why this section cannot run yet, or None."""
    if importlib.util.find_spec("mcp_notebook.transports.stdio") is None:
        return "mcp_notebook/transports/stdio.py does not exist yet"
    return None


@asynccontextmanager
async def connected(client: str, server: str) -> AsyncIterator[Call]:
    """A stdio session from ``client``'s library to a ``server`` child; yields ``echo(text) -> text``."""
    command = [PYTHON, PEERS, server, "stdio"]
    if client == "ours":
        from mcp_notebook import Client

        async with Client(command) as ours:

            async def echo_ours(text: str) -> str:
                result = await ours.call_tool("echo", {"text": text})
                return str(result["content"][0]["text"])

            yield echo_ours
    else:
        from mcp import Client as SDKClient
        from mcp import StdioServerParameters

        async with SDKClient(StdioServerParameters(command=command[0], args=command[1:])) as sdk:

            async def echo_sdk(text: str) -> str:
                result = await sdk.call_tool("echo", {"text": text})
                block: Any = result.content[0]
                return str(block.text)

            yield echo_sdk


async def _throughput(client: str, server: str, size: int, settings: Settings) -> float:
    payload = "x" * size
    async with connected(client, server) as echo:
        answer = await echo(payload)
        if answer != payload:
            raise RuntimeError(f"{client}->{server}: echo returned {len(answer)} chars, sent {size}")
        return await calls_per_second(lambda: echo(payload), settings)


async def _cold_start(client: str, server: str) -> float:
    start = time.perf_counter()
    async with connected(client, server) as echo:
        await echo("x")
        return time.perf_counter() - start


async def _run(settings: Settings) -> tuple[dict[tuple[str, str, str], list[float]], dict[str, list[float]]]:
    rates: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(settings.rounds):
        for label, size in PAYLOADS:
            for client, server in PAIRS:
                rate = await _throughput(client, server, size, settings)
                rates.setdefault((label, client, server), []).append(rate)
    for client in ("ours", "sdk"):  # pays the client library's first-connection costs outside the timing
        await _cold_start(client, client)
    cold: dict[str, list[float]] = {"ours": [], "sdk": []}
    for _ in range(settings.cold_runs):
        for impl in ("ours", "sdk"):
            cold[impl].append(await _cold_start(impl, impl))
    return rates, cold


def run(settings: Settings) -> Section:
    section = Section("stdio", "3. stdio: sequential tools/call echo (calls/s, higher is better)")
    missing = available()
    if missing is not None:
        section.unavailable = missing
        return section
    rates, cold = asyncio.run(_run(settings))
    section.headers = [
        "payload (each way)",
        "ours -> ours",
        "SDK -> SDK",
        "ours / SDK",
        "ours client -> SDK server",
        "SDK client -> ours server",
    ]
    for label, _size in PAYLOADS:
        ours, sdk = (median(rates[(label, impl, impl)]) for impl in ("ours", "sdk"))
        cells = [cell(rates[(label, client, server)]) for client, server in PAIRS]
        section.rows.append([label, cells[0], cells[1], fmt_ratio(ours / sdk), cells[2], cells[3]])
        section.ratios.append(Ratio(f"stdio {label}", ours / sdk, PAYLOAD_TARGETS.get(label, TARGET)))
    ours_cold, sdk_cold = median(cold["ours"]), median(cold["sdk"])
    section.rows.append(
        [
            "cold start: spawn -> first result",
            _cold_cell(cold["ours"]),
            _cold_cell(cold["sdk"]),
            fmt_ratio(sdk_cold / ours_cold),
            "",
            "",
        ]
    )
    section.ratios.append(Ratio("stdio cold start", sdk_cold / ours_cold, TARGET))
    section.notes = [
        f"Throughput: median of {settings.rounds} round(s), each one fresh session, warmed up, then "
        f"sequential calls for ~{settings.budget:g} s. Cold start: median of {settings.cold_runs} runs, "
        "from before spawning the server to the first tools/call result (the ratio there is SDK / ours).",
        "The SDK client's default mode probes server/discover first: with the SDK server it then speaks "
        "2026-07-28 (no initialize); with ours it falls back to initialize (2025-11-25).",
        "Client and server are separate processes. Equal bytes: the SDK server's echo is declared "
        "structured_output=False, so both servers return the same bytes (a text block, no "
        "structuredContent); with the SDK's default (structured output on) it would also send a copy of "
        "the text as structuredContent, about twice the bytes per answer.",
    ]
    return section


def _cold_cell(seconds: list[float]) -> str:
    if len(seconds) < 2:
        return fmt_ms(median(seconds))
    return f"{fmt_ms(median(seconds))} [{min(seconds) * 1000:.0f}-{max(seconds) * 1000:.0f}]"
