"""Benchmark 1: in-memory ``tools/call`` round trips, sequential, ours vs the SDK's ``Client(server)``.

Ours always carries serialized JSON-RPC in memory (DESIGN decision 2). The SDK's default in-process mode
("auto") skips JSON-RPC framing and serialization entirely (a direct dispatcher, protocol 2026-07-28), and its
``mode="legacy"`` passes message objects over memory streams after an initialize handshake. The headline
ratio is against the SDK's default, i.e. what ``Client(server)`` gives each library's user.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _common import Ratio, Section, Settings, calls_per_second, cell, fmt_ratio, median
from peers import build_ours, build_sdk

CASES = [
    ("echo, sync tool", "echo", {"text": "x"}),
    ("echo, async tool", "echo_async", {"text": "x"}),
    ("add, structured int result", "add", {"a": 1, "b": 2}),
]
IMPLS = ["ours", "sdk", "sdk-legacy"]
TARGET = 3.0


def _check(impl: str, tool: str, result: Any) -> None:
    """A benchmark of wrong answers is worthless: check the first result of each session."""
    if impl == "ours":
        ok = not result.get("isError") and (
            result.get("structuredContent") == {"result": 3} if tool == "add" else True
        )
    else:
        ok = not result.is_error
    if not ok:
        raise RuntimeError(f"{impl} {tool}: unexpected result {result!r}")


async def _measure(impl: str, tool: str, args: dict[str, Any], settings: Settings) -> float:
    if impl == "ours":
        from mcp_notebook import Client

        async with Client(build_ours()) as ours:
            _check(impl, tool, await ours.call_tool(tool, args))
            return await calls_per_second(lambda: ours.call_tool(tool, args), settings)
    from mcp import Client as SDKClient

    mode = "legacy" if impl == "sdk-legacy" else "auto"
    async with SDKClient(build_sdk(), mode=mode) as sdk:
        _check(impl, tool, await sdk.call_tool(tool, args))
        return await calls_per_second(lambda: sdk.call_tool(tool, args), settings)


async def _run(settings: Settings) -> dict[tuple[str, str], list[float]]:
    results: dict[tuple[str, str], list[float]] = {}
    for _ in range(settings.rounds):  # interleaved, so drift (thermal, other load) hits every variant alike
        for label, tool, args in CASES:
            for impl in IMPLS:
                results.setdefault((label, impl), []).append(await _measure(impl, tool, args, settings))
    return results


def run(settings: Settings) -> Section:
    section = Section("memory", "1. In-memory tools/call round trip, sequential (calls/s, higher is better)")
    section.headers = [
        "case",
        "ours",
        "SDK Client(server) default",
        "ours / SDK",
        "SDK mode=legacy",
        "ours / SDK legacy",
    ]
    results = asyncio.run(_run(settings))
    for label, _tool, _args in CASES:
        ours, sdk, legacy = (median(results[(label, impl)]) for impl in IMPLS)
        ours_cell, sdk_cell, legacy_cell = (cell(results[label, impl]) for impl in IMPLS)
        section.rows.append(
            [label, ours_cell, sdk_cell, fmt_ratio(ours / sdk), legacy_cell, fmt_ratio(ours / legacy)]
        )
        section.ratios.append(Ratio(f"memory {label}", ours / sdk, TARGET))
    section.notes = [
        "Median of the rounds; the range of the rounds in brackets. One client, one call at a time.",
        "Ours serializes JSON-RPC even in memory; the SDK default dispatches Python objects directly "
        "(no JSON); SDK mode=legacy passes message objects over anyio memory streams.",
        "Sync tools run in a worker thread in both libraries (ours: engine/workers.py; SDK: anyio.to_thread, "
        "in FuncMetadata.call_fn): the echo and add tools are plain def functions in both, echo_async async",
    ]
    return section
