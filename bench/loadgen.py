"""HTTP load for the benchmarks, run as its own process so the load and the server do not share a GIL.

    python bench/loadgen.py URL --client raw|ours|sdk --clients 1 16 --budget 1.5 --warmup 100
    python bench/loadgen.py URL --header "Authorization: Bearer TOKEN" ...   # extra request headers
    python bench/loadgen.py URL --client ours --era modern ...   # library clients in one era: legacy
                                                                   # (initialize) or modern (2026-07-28)

For each number of clients: open that many MCP sessions, warm each up, then every session calls
``echo`` sequentially until the time budget ends; all sessions start together. Prints one JSON line:
``[{"clients": K, "calls": N, "seconds": S, "errors": E}, ...]``.

``raw`` is a minimal JSON-RPC-over-HTTP client on aiohttp (initialize, then POST tools/call and read the
answer from the JSON body or the SSE stream): the same light load for both servers, so server throughput
is what differs. ``ours`` and ``sdk`` use each library's own ``Client(url)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import aiohttp

_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
Call = Callable[[], Awaitable[Any]]


class RawClient:
    """Just enough of Streamable HTTP (2025-11-25) to call a tool; no validation, no retries."""

    def __init__(self, url: str, http: aiohttp.ClientSession, extra: dict[str, str] | None = None) -> None:
        self.url, self.http = url, http
        self.headers = {**_ACCEPT, **(extra or {})}
        self.next_id = 0

    async def _post(self, message: dict[str, Any]) -> Any:
        async with self.http.post(self.url, data=json.dumps(message), headers=self.headers) as response:
            response.raise_for_status()
            if "id" not in message:
                return response
            body = await response.text()
            if response.content_type == "application/json":
                return response, json.loads(body)
            for line in body.splitlines():  # SSE: the answer is the data line carrying our id
                payload = line[5:].strip() if line.startswith("data:") else ""
                if not payload:  # other fields, or a priming event's empty data (2025-11-25)
                    continue
                data = json.loads(payload)
                if isinstance(data, dict) and data.get("id") == message["id"]:
                    return response, data
            raise RuntimeError(f"no answer to request {message['id']} in the SSE stream")

    async def request(self, method: str, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        self.next_id += 1
        result: tuple[Any, dict[str, Any]] = await self._post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        if "error" in result[1]:
            raise RuntimeError(f"{method}: {result[1]['error']}")
        return result

    async def open(self) -> None:
        info = {"name": "bench-raw", "version": "0"}
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
        response, answer = await self.request("initialize", params)
        session_id = response.headers.get("mcp-session-id")
        if session_id:
            self.headers["mcp-session-id"] = session_id
        self.headers["mcp-protocol-version"] = answer["result"]["protocolVersion"]
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self) -> Any:
        return await self.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})

    async def aclose(self) -> None:
        if "mcp-session-id" in self.headers:  # end the session, so the server does not keep it
            async with self.http.delete(self.url, headers=self.headers):
                pass


async def _open(kind: str, url: str, stack: AsyncExitStack, headers: dict[str, str], era: str) -> Call:
    if kind == "raw":
        http = await stack.enter_async_context(aiohttp.ClientSession())
        raw = RawClient(url, http, headers)
        await raw.open()
        stack.push_async_callback(raw.aclose)
        return raw.call
    if kind == "ours":
        from mcp_notebook import Client

        ours = await stack.enter_async_context(Client(url, headers=headers or None, era=era))
        return lambda: ours.call_tool("echo", {"text": "x"})
    from mcp import Client as SDKClient

    sdk = await stack.enter_async_context(SDKClient(url, mode="legacy" if era == "legacy" else "auto"))
    return lambda: sdk.call_tool("echo", {"text": "x"})


async def _load(
    kind: str, url: str, clients: int, budget: float, warmup: int, headers: dict[str, str], era: str
) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        calls = [await _open(kind, url, stack, headers, era) for _ in range(clients)]
        for call in calls:
            for _ in range(warmup):
                await call()
        counts = [0] * clients
        errors = [0] * clients
        latencies: list[float] = []
        start = time.perf_counter()
        deadline = start + budget

        async def worker(i: int) -> None:
            while time.perf_counter() < deadline:
                try:
                    began = time.perf_counter()
                    await calls[i]()
                    latencies.append(time.perf_counter() - began)
                    counts[i] += 1
                except Exception:
                    errors[i] += 1
                    if errors[i] > 100:
                        raise

        await asyncio.gather(*(worker(i) for i in range(clients)))
        seconds = time.perf_counter() - start
    return {
        "clients": clients,
        "calls": sum(counts),
        "seconds": seconds,
        "errors": sum(errors),
        "p50_ms": 1000 * statistics.median(latencies) if latencies else 0.0,
        "p99_ms": 1000 * _percentile(latencies, 0.99) if latencies else 0.0,
    }


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _main(args: argparse.Namespace) -> list[dict[str, Any]]:
    headers = dict(_header(h) for h in args.header)
    if headers and args.client == "sdk":
        raise SystemExit("--header is supported with --client raw and ours only")
    return [
        await _load(args.client, args.url, k, args.budget, args.warmup, headers, args.era)
        for k in args.clients
    ]


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise SystemExit(f"--header {text!r}: expected 'Name: value'")
    return name.strip(), value.strip()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url")
    parser.add_argument("--client", choices=["raw", "ours", "sdk"], default="raw")
    parser.add_argument("--clients", type=int, nargs="+", default=[1])
    parser.add_argument("--era", choices=["legacy", "modern"], default="legacy")
    parser.add_argument("--budget", type=float, default=1.5)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument(
        "--header", action="append", default=[], help="'Name: value', sent with every request"
    )
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_main(args))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
