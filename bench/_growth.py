"""Growth curves, ours vs the SDK in the same run: how each library scales with payload size (stdio echo,
1 KB .. 10 MB), with the number of tools (10 .. 10,000: registration, first list, a call), with the number of
concurrent HTTP clients (1 .. 256: calls/s, p50/p99 latency, server RSS), and what an idle HTTP session
costs.

Every curve is bounded: each point is one timed window (or one timed operation for the tool counts), each
server a process of its own stopped by PID when its block ends, 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
from _common import (
    LOADGEN,
    PEERS,
    PYTHON,
    ROOT,
    Ratio,
    Section,
    Settings,
    fmt_num,
    fmt_ratio,
    free_port,
    median,
    started,
    wait_for_port,
)
from _stdio import _throughput

PAYLOADS = [
    ("1 KB", 1 << 10),
    ("10 KB", 10 << 10),
    ("100 KB", 100 << 10),
    ("1 MB", 1 << 20),
    ("10 MB", 10 << 20),
]
TOOL_COUNTS = [10, 100, 1_000, 10_000]
CLIENTS = [1, 4, 16, 64, 256]
IDLE_SESSIONS = 100


# ---- payload size ---------------------------------------------------------------------------------------
def _payload_rows(settings: Settings) -> tuple[list[list[str]], str]:
    rows, ratios = [], []
    for label, size in PAYLOADS:
        rates = {impl: asyncio.run(_throughput(impl, impl, size, settings)) for impl in ("ours", "sdk")}
        mb = size / (1 << 20)
        ratios.append((label, rates["ours"] / rates["sdk"], 2 * mb * rates["ours"]))
        rows.append(
            [
                label,
                fmt_num(rates["ours"]),
                fmt_num(rates["sdk"]),
                fmt_ratio(rates["ours"] / rates["sdk"]),
                f"{fmt_num(2 * mb * rates['ours'])} / {fmt_num(2 * mb * rates['sdk'])}",
            ]
        )
    best = max(ratios, key=lambda r: r[2])
    worst = min(ratios, key=lambda r: r[1])
    note = (
        f"Payload curve: our throughput in MB/s peaks at {best[0]} ({fmt_num(best[2])} MB/s); the ratio is "
        f"lowest at {worst[0]} ({fmt_ratio(worst[1])}). Small payloads are bound by per-call overhead "
        "(where ours is lean); from ~100 KB the JSON encode/decode of the payload dominates both libraries."
    )
    return rows, note


# ---- number of tools --------------------------------------------------------------------------------------
def _tool_fn(i: int) -> Any:
    def fn(a: int, b: str = "x") -> str:
        return b * a

    fn.__name__ = f"tool_{i}"
    fn.__doc__ = f"Tool number {i}.\n\nArgs:\n    a: How many times.\n    b: What to repeat.\n"
    return fn


async def _ours_tools(count: int) -> tuple[float, float, float]:
    from mcp_notebook import Client, Server

    fns = [_tool_fn(i) for i in range(count)]
    began = time.perf_counter()
    server = Server("growth")
    for fn in fns:
        server.tool(fn)
    registered = time.perf_counter()
    async with Client(server) as client:
        tools = await client.list_tools()
        listed = time.perf_counter()
        result = await client.call_tool(f"tool_{count - 1}", {"a": 2})
        called = time.perf_counter()
    if len(tools) != count or result.get("isError"):
        raise RuntimeError(f"ours: listed {len(tools)} of {count} tools; call said {result}")
    return registered - began, listed - registered, called - listed


async def _sdk_tools(count: int) -> tuple[float, float, float]:
    from mcp import Client as SDKClient
    from mcp.server.mcpserver import MCPServer

    fns = [_tool_fn(i) for i in range(count)]
    began = time.perf_counter()
    server = MCPServer("growth", log_level="WARNING")
    for fn in fns:
        server.tool()(fn)
    registered = time.perf_counter()
    async with SDKClient(server) as client:
        listed_tools = await client.list_tools()
        tools = list(listed_tools.tools)
        cursor = listed_tools.next_cursor
        while cursor:
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
        listed = time.perf_counter()
        result = await client.call_tool(f"tool_{count - 1}", {"a": 2})
        called = time.perf_counter()
    if len(tools) != count or result.is_error:
        raise RuntimeError(f"SDK: listed {len(tools)} of {count} tools")
    return registered - began, listed - registered, called - listed


async def _start_and_list(impl: str, tools: int) -> float:
    """Spawn a stdio server with ``tools`` extra tools, handshake, list them all: seconds."""
    env = {**os.environ, "BENCH_EXTRA_TOOLS": str(tools)}
    began = time.perf_counter()
    if impl == "ours":
        from mcp_notebook import Client

        async with Client([PYTHON, PEERS, "ours", "stdio"], env=env) as ours:
            listed = len(await ours.list_tools())
            took = time.perf_counter() - began
    else:
        from mcp import Client as SDKClient
        from mcp import StdioServerParameters

        params = StdioServerParameters(command=PYTHON, args=[PEERS, "sdk", "stdio"], env=env)
        async with SDKClient(params) as sdk:
            page = await sdk.list_tools()
            listed = len(page.tools)
            while page.next_cursor:
                page = await sdk.list_tools(cursor=page.next_cursor)
                listed += len(page.tools)
            took = time.perf_counter() - began
    if listed < tools:
        raise RuntimeError(f"{impl}: listed {listed} tools, expected at least {tools}")
    return took


def start_list_ratio(settings: Settings, tools: int = 1_000) -> tuple[list[str], Ratio]:
    runs = 1 if settings.quick else 3
    times = {
        impl: [asyncio.run(_start_and_list(impl, tools)) for _ in range(runs)] for impl in ("ours", "sdk")
    }
    ours, sdk = median(times["ours"]), median(times["sdk"])
    row = [
        f"{tools:,} over stdio: spawn + handshake + full list",
        f"{ours * 1000:.0f} / {sdk * 1000:.0f}",
        "",
        "",
    ]
    row.append(f"{ours / sdk:.2f}")
    return row, Ratio(f"start + handshake + list, {tools:,} tools (SDK time / ours)", sdk / ours, 5.0)


def _tool_rows() -> tuple[list[list[str]], str]:
    rows, per_tool = [], []
    for count in TOOL_COUNTS:
        ours = asyncio.run(_ours_tools(count))
        sdk = asyncio.run(_sdk_tools(count))
        per_tool.append((count, ours[0] / count * 1e6, ours[1]))
        rows.append(
            [
                f"{count:,}",
                f"{ours[0] * 1000:.1f} / {sdk[0] * 1000:.1f}",
                f"{ours[1] * 1000:.1f} / {sdk[1] * 1000:.1f}",
                f"{ours[2] * 1000:.2f} / {sdk[2] * 1000:.2f}",
                f"{sum(ours) / sum(sdk):.2f}",
            ]
        )
    note = "Tools curve: registration costs " + ", ".join(
        f"{us:.0f} µs per tool at {count:,}" for count, us, _ in per_tool
    )
    note += (
        " (linear: building each schema from type hints and docstring; the meta-schema check is paid once "
        "per distinct parameter shape). Listing grows linearly with the bytes listed "
        f"({per_tool[-1][2] * 1000:.0f} ms for {TOOL_COUNTS[-1]:,} tools, all pages)."
    )
    return rows, note


# ---- concurrent HTTP clients -----------------------------------------------------------------------------
def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def _server(impl: str) -> Iterator[tuple[str, int]]:
    port = free_port()
    # limits off: 256 sessions from one address (the SDK server has no cap nor rate limit either)
    server = "ours-off" if impl == "ours" else impl
    with started([PYTHON, PEERS, server, "http", str(port)], cwd=ROOT) as proc:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", proc.pid


def _client_rows(settings: Settings) -> tuple[list[list[str]], str]:
    rows: dict[int, list[str]] = {k: [str(k)] for k in CLIENTS}
    peak: dict[str, tuple[float, int]] = {}
    for impl in ("ours", "sdk"):
        with _server(impl) as (url, pid):
            for clients in CLIENTS:
                cmd = [PYTHON, LOADGEN, url, "--client", "raw", "--clients", str(clients)]
                cmd += ["--budget", str(max(settings.budget, 1.0)), "--warmup", "5"]
                done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
                if done.returncode != 0:
                    raise RuntimeError(f"load ({impl}, {clients} clients) failed:\n{done.stderr[-2000:]}")
                [r] = json.loads(done.stdout.strip().splitlines()[-1])
                rate = r["calls"] / r["seconds"]
                if rate > peak.get(impl, (0.0, 0))[0]:
                    peak[impl] = (rate, clients)
                errors = f", {r['errors']} errors" if r["errors"] else ""
                rows[clients] += [
                    f"{fmt_num(rate)}",
                    f"{r['p50_ms']:.1f} / {r['p99_ms']:.1f}{errors}",
                    f"{_rss_mb(pid):.0f}",
                ]
    note = (
        f"Clients curve: our server's throughput peaks at {peak['ours'][1]} clients "
        f"({fmt_num(peak['ours'][0])} calls/s), the SDK's at {peak['sdk'][1]} "
        f"({fmt_num(peak['sdk'][0])}); past the peak one event-loop thread is saturated, so more clients "
        "only queue: latency grows with the client count while throughput stays flat."
    )
    return list(rows.values()), note


async def _open_idle(url: str, count: int) -> list[aiohttp.ClientSession]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    info = {"name": "idle", "version": "0"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    body["params"] = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
    http = aiohttp.ClientSession()
    for _ in range(count):
        async with http.post(url, data=json.dumps(body), headers=headers) as response:
            response.raise_for_status()
            await response.read()
    return [http]


def _idle_rows() -> list[list[str]]:
    row = [f"{IDLE_SESSIONS}"]
    for impl in ("ours", "sdk"):
        with _server(impl) as (url, pid):
            before = _rss_mb(pid)

            async def measure() -> float:
                [http] = await _open_idle(url, IDLE_SESSIONS)
                after = _rss_mb(pid)
                await http.close()
                return after

            after = asyncio.run(measure())
        row.append(f"{(after - before) * 1024 / IDLE_SESSIONS:.1f} KB ({before:.0f} -> {after:.0f} MB)")
    return [row]


class Curves(Section):
    """Several small tables under one heading."""

    tables: list[tuple[str, list[str], list[list[str]]]]

    def markdown(self) -> str:
        if self.unavailable is not None:
            return super().markdown()
        lines = [f"### {self.title}", ""]
        for caption, headers, rows in self.tables:
            lines += [f"**{caption}**", ""]
            part = Section(self.key, caption, headers=headers, rows=rows).markdown().splitlines()[2:]
            lines += [line for line in part if line.strip()] + [""]
        lines += [f"- {note}" for note in self.notes]
        lines.append("")
        return "\n".join(lines)


def run(settings: Settings) -> Section:
    section = Curves("growth", "9. Growth curves, ours vs the SDK in the same run")
    payload, payload_note = _payload_rows(settings)
    tools, tools_note = _tool_rows()
    start_row, start_ratio = start_list_ratio(settings)
    tools.append(start_row)
    section.ratios.append(start_ratio)
    clients, clients_note = _client_rows(settings)
    section.tables = [
        (
            "Payload size: stdio echo, sequential (calls/s; higher is better)",
            ["payload", "ours", "SDK", "ours / SDK", "MB/s moved, ours / SDK"],
            payload,
        ),
        (
            "Number of tools: in memory (ms; lower is better)",
            ["tools", "register, ours / SDK", "first full list", "one call", "total time, ours / SDK"],
            tools,
        ),
        (
            "Concurrent HTTP clients (raw JSON-RPC load; RSS of the server after the point)",
            [
                "clients",
                "ours calls/s",
                "ours p50 / p99 ms",
                "ours RSS MB",
                "SDK calls/s",
                "SDK p50 / p99 ms",
                "SDK RSS MB",
            ],
            clients,
        ),
        ("Idle HTTP sessions: server memory per session", ["sessions", "ours", "SDK"], _idle_rows()),
    ]
    section.notes = [
        payload_note,
        tools_note,
        clients_note,
        "Idle sessions: each holds its session state and nothing else (no stream open); measured as the "
        "growth of the server's RSS over the sessions, so allocator slack makes it approximate.",
        "Each point is one window of the quick/full budget (payload, clients) or one timed operation "
        "(tools); the tool and payload curves use the legacy era.",
    ]
    return section
