"""Benchmark 4: Streamable HTTP server throughput, ours vs the SDK's (uvicorn + Starlette), 127.0.0.1 only.

Each server runs in its own process (``bench/peers.py ... http PORT``), both for the whole section, and the
load comes from another process (``bench/loadgen.py``): one client calling sequentially, and 16 clients
(16 MCP sessions) calling concurrently. Two kinds of load: a minimal raw JSON-RPC client, identical for both
servers (the headline: it isolates the server), and each library's own client against its own server.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import subprocess
from collections.abc import Iterator

from _common import (
    LOADGEN,
    PEERS,
    PYTHON,
    ROOT,
    Ratio,
    Section,
    Settings,
    cell,
    fmt_ratio,
    free_port,
    median,
    port_open,
    started,
    wait_for_port,
)

CONCURRENCY = [1, 16]
TARGET = 3.0


def available() -> str | None:
    if importlib.util.find_spec("mcp_notebook.transports.http_server") is None:
        return "mcp_notebook/transports/http_server.py does not exist yet"
    return None


@contextlib.contextmanager
def http_servers(*, limits_off: bool = False) -> Iterator[dict[str, str]]:
    """Both servers listening (ours with the default limits); stopped by PID, and their ports checked closed,
    when the block ends. ``limits_off``: a third, "ours-off", ours with the rate limit off."""
    ports = {"ours": free_port(), "sdk": free_port()}
    if limits_off:
        ports["ours-off"] = free_port()
    with contextlib.ExitStack() as stack:
        for impl, port in ports.items():
            proc = stack.enter_context(started([PYTHON, PEERS, impl, "http", str(port)], cwd=ROOT))
            wait_for_port(port, proc)
        yield {impl: f"http://127.0.0.1:{port}/mcp" for impl, port in ports.items()}
    still = [port for port in ports.values() if port_open(port)]
    if still:
        raise RuntimeError(f"ports still open after stopping the servers: {still}")


def load(
    url: str, client: str, settings: Settings, headers: dict[str, str] | None = None
) -> list[dict[str, float]]:
    """Run one load process; its results, one per concurrency level. ``headers``: sent with every request."""
    cmd = [PYTHON, LOADGEN, url, "--client", client, "--clients", *map(str, CONCURRENCY)]
    for name, value in (headers or {}).items():
        cmd += ["--header", f"{name}: {value}"]
    cmd += ["--budget", str(settings.budget), "--warmup", str(min(settings.warmup_calls, 50))]
    timeout = 60 + settings.budget * len(CONCURRENCY) * 4
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"load ({client} -> {url}) failed:\n{done.stderr[-3000:]}")
    results: list[dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def run(settings: Settings) -> Section:
    section = Section("http", "4. Streamable HTTP: tools/call echo throughput (calls/s, higher is better)")
    missing = available()
    if missing is not None:
        section.unavailable = missing
        return section
    # (load kind, concurrency, server) -> rates; load kind "raw" or "native" (the server's own library)
    rates: dict[tuple[str, int, str], list[float]] = {}
    errors = 0
    with http_servers(limits_off=True) as urls:
        for _ in range(settings.rounds):
            for kind in ("raw", "native"):
                for impl, url in urls.items():
                    client = "raw" if kind == "raw" else ("sdk" if impl == "sdk" else "ours")
                    for result in load(url, client, settings):
                        rate = result["calls"] / result["seconds"]
                        rates.setdefault((kind, int(result["clients"]), impl), []).append(rate)
                        errors += int(result["errors"])
    section.headers = [
        "load",
        "ours server (defaults)",
        "ours, limits off",
        "SDK server",
        "ours / SDK (defaults)",
        "limits off / SDK",
    ]
    labels = {"raw": "raw JSON-RPC client", "native": "each library's own client"}
    for kind in ("raw", "native"):
        for clients in CONCURRENCY:
            ours, off, sdk = (median(rates[(kind, clients, impl)]) for impl in ("ours", "ours-off", "sdk"))
            what = "1 client, sequential" if clients == 1 else f"{clients} concurrent clients"
            cells = [cell(rates[(kind, clients, impl)]) for impl in ("ours", "ours-off", "sdk")]
            ratios = [fmt_ratio(ours / sdk), fmt_ratio(off / sdk)]
            section.rows.append([f"{labels[kind]}, {what}", *cells, *ratios])
            if kind == "raw":
                section.ratios.append(Ratio(f"http {what}", ours / sdk, TARGET))
    section.notes = [
        f"Median of {settings.rounds} round(s) of ~{settings.budget:g} s each, after warm-up; the load runs "
        "in its own process (one asyncio loop for all its clients), each server in another.",
        "Both servers with their default Streamable HTTP settings (stateful sessions, SSE answers); the SDK "
        "server with log_level WARNING, so uvicorn does not log every request (ours logs none).",
        "Ours twice: with the default HTTPLimits a user gets (`mcp-notebook serve --http`), and with the "
        "rate limit off. The ratio targets apply to the defaults and the raw-client rows, which measure the "
        "servers under identical load.",
        f"Failed calls during measurement: {errors}.",
    ]
    return section
