"""Profile the per-call path: ``tools/call`` echo, client and server in this one process, under cProfile.

    .venv/bin/python bench/profile_call.py [--calls 2000] [--top 12] [--root OTHER_CHECKOUT]

For in memory and Streamable HTTP (ours serving with its default limits), each era: calls/s without the
profiler, then the top frames by own time with the profiler on (cProfile counts each resumption of a
coroutine as a call), and the JSON decodes per call (``protocol/jsonrpc``'s decoder plus ``json.loads``).
The output is the text docs/benchmarks.md summarises (section "Per-call profile").
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import build_ours


def use_root(root: str | None) -> None:
    """Import mcp_notebook from the checkout ``root`` (a before/after), not from this one."""
    if root:  # ahead of the venv's editable install, whose finder would otherwise win
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
        sys.path.insert(0, root)


@asynccontextmanager
async def echo_client(transport: str, era: str) -> AsyncIterator[Any]:
    """A Client of ``era`` on bench/peers.py's server in this process (``memory``, or ``http``: ours
    serving Streamable HTTP on 127.0.0.1 with its default limits), warmed up by 100 echo calls."""
    from mcp_notebook import Client
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    server = build_ours()
    http = None
    target: Any = server
    if transport == "http":
        http = StreamableHTTPServer(server)
        target = await http.start("127.0.0.1", 0)
    try:
        async with Client(target, era=era) as client:
            for _ in range(100):
                await client.call_tool("echo", {"text": "x"})
            yield client
    finally:
        if http is not None:
            await http.stop()


async def _run(transport: str, era: str, calls: int, top: int) -> None:
    from mcp_notebook.protocol import jsonrpc

    async with echo_client(transport, era) as client:
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("echo", {"text": "x"})
        rate = calls / (time.perf_counter() - start)
        decodes = [0]
        loads, json_loads = jsonrpc._loads, json.loads

        def counted(data: Any) -> Any:
            decodes[0] += 1
            return loads(data)

        def counted_json(*args: Any, **kwargs: Any) -> Any:
            decodes[0] += 1
            return json_loads(*args, **kwargs)

        jsonrpc._loads, json.loads = counted, counted_json  # type: ignore[assignment]
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(calls):
            await client.call_tool("echo", {"text": "x"})
        profile.disable()
        jsonrpc._loads, json.loads = loads, json_loads  # type: ignore[assignment]
    per_call = decodes[0] / calls
    print(f"\n### {transport}, {era}: {rate:,.0f} calls/s unprofiled; {per_call:g} JSON decodes per call")
    stats = pstats.Stats(profile)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    print("| own time per call (us) | share | calls per call | frame |\n|---:|---:|---:|---|")
    for (filename, line, name), (_, ncalls, tottime, _, _) in rows:
        where = filename.replace(str(Path.cwd()) + os.sep, "")
        where = where.split("site-packages/")[-1].split("lib/python3.11/")[-1]
        frame = f"{where}:{line}({name})" if line else name
        print(f"| {tottime / calls * 1e6:.1f} | {tottime / total:.0%} | {ncalls / calls:g} | `{frame}` |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--root", help="profile the mcp_notebook of this checkout instead (a before/after)")
    args = parser.parse_args()
    use_root(args.root)
    import mcp_notebook

    print(f"mcp_notebook from {Path(mcp_notebook.__file__).parent}; load average {os.getloadavg()[0]:.2f}")
    for transport in ("memory", "http"):
        for era in ("legacy", "modern"):
            asyncio.run(_run(transport, era, args.calls, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
