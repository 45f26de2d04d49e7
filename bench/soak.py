"""Soak: many calls through one client, memory and open file descriptors sampled on both sides.

    .venv/bin/python bench/soak.py               # 20,000 calls per case; writes its section of benchmarks.md
    .venv/bin/python bench/soak.py --calls 2000  # a shorter run; prints only (add --write to record it)

Cases: stdio (one client, one server process), Streamable HTTP (one client, one session) and Streamable HTTP
with a new client every 100 calls (sessions opened and ended with DELETE). The client is this process; the
server is ``bench/peers.py ours ...``. RSS and descriptor counts come from /proc (Linux). "Flat" means: over
the second half of the run RSS grew by less than 5% and less than 4 MiB (a leak keeps growing; caches and
allocator arenas fill early and stop), and the descriptor count came back to within 2 of where it started.
The verdict is reported, never asserted: timing and memory belong in bench/, not in tests.

``bench/run.py`` rewrites docs/benchmarks.md on a full run and keeps this section (between its markers).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from _common import PEERS, PYTHON, ROOT, free_port, started, wait_for_port

DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- soak:begin -->", "<!-- soak:end -->"
SAMPLES = 20
RSS_GROWTH, RSS_SLACK = 0.05, 4 << 20
Call = Callable[[], Awaitable[None]]


def rss(pid: int) -> int:
    """Resident set size in bytes, from /proc/PID/status."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Track:
    """Samples of one process: (calls done, RSS bytes, open descriptors)."""

    who: str
    pid: int
    samples: list[tuple[int, int, int]] = field(default_factory=list)

    def sample(self, calls: int) -> None:
        self.samples.append((calls, rss(self.pid), fds(self.pid)))

    def verdict(self) -> tuple[bool, str]:
        """Flat: over the second half of the run RSS grew < 5% and < 4 MiB (a leak keeps growing; caches and
        allocator arenas fill up early and stop), and the descriptors came back to within 2 of the start."""
        (_, rss0, fd0), (_, rss1, fd1) = self.samples[0], self.samples[-1]
        _, rss_mid, _ = self.samples[len(self.samples) // 2]
        late = rss1 - rss_mid
        flat_rss = late < RSS_SLACK and late < rss_mid * RSS_GROWTH
        flat_fds = abs(fd1 - fd0) <= 2
        peak_fds = max(s[2] for s in self.samples)
        text = (
            f"RSS {rss0 / 2**20:.1f} -> {rss1 / 2**20:.1f} MiB, {late / 2**10:+,.0f} KiB in the second half; "
            f"fds {fd0} -> {fd1} (peak {peak_fds})"
        )
        return flat_rss and flat_fds, text


@dataclass
class Result:
    case: str
    calls: int
    failures: int = 0
    seconds: float = 0.0
    tracks: list[Track] = field(default_factory=list)


async def soak(case: str, calls: int, connect: Callable[[], AsyncIterator[tuple[Call, int]]]) -> Result:
    """``connect`` yields (call, server pid) once per client; the next client is asked for when one has made
    its share of the calls (``PER_CLIENT``)."""
    result = Result(case, calls)
    start = time.perf_counter()
    clients = connect()
    try:
        await _drive(result, clients, share=PER_CLIENT.get(case, calls))
    finally:
        await clients.aclose()  # type: ignore[attr-defined]
    result.seconds = time.perf_counter() - start
    return result


async def _drive(result: Result, clients: AsyncIterator[tuple[Call, int]], share: int) -> None:
    every = max(1, result.calls // SAMPLES)
    done = 0
    async for call, server_pid in clients:
        if not result.tracks:
            result.tracks = [Track("client", os.getpid()), Track("server", server_pid)]
            for _ in range(50):  # warm-up: caches, pools, first allocations
                await call()
            for track in result.tracks:
                track.sample(0)
        for _ in range(share):
            try:
                await call()
            except Exception:
                result.failures += 1
            done += 1
            if done % every == 0:
                for track in result.tracks:
                    track.sample(done)
            if done >= result.calls:
                return


PER_CLIENT = {"http, new client every 100 calls": 100}


def _echo(client: object) -> Call:
    async def call() -> None:
        result = await client.call_tool("echo", {"text": "soak"})  # type: ignore[attr-defined]
        if result["content"][0]["text"] != "soak":
            raise RuntimeError(f"unexpected result {result!r}")

    return call


def stdio_case() -> Callable[[], AsyncIterator[tuple[Call, int]]]:
    async def connect() -> AsyncIterator[tuple[Call, int]]:
        from mcp_notebook import Client

        async with Client([PYTHON, PEERS, "ours", "stdio"], era="legacy") as client:
            yield _echo(client), client.connection.transport.pid  # type: ignore[attr-defined]

    return connect


def http_case(url: str, pid: int, *, reconnect: bool) -> Callable[[], AsyncIterator[tuple[Call, int]]]:
    async def connect() -> AsyncIterator[tuple[Call, int]]:
        from mcp_notebook import Client

        while True:
            async with Client(url, era="legacy") as client:
                yield _echo(client), pid
            if not reconnect:
                return

    return connect


@asynccontextmanager
async def http_server() -> AsyncIterator[tuple[str, int]]:
    port = free_port()
    with started([PYTHON, PEERS, "ours", "http", str(port)], stderr=subprocess.DEVNULL) as proc:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", proc.pid


async def run(calls: int) -> list[Result]:
    results = [await soak("stdio", calls, stdio_case())]
    async with http_server() as (url, pid):
        results.append(await soak("http, one session", calls, http_case(url, pid, reconnect=False)))
    async with http_server() as (url, pid):
        case = "http, new client every 100 calls"
        results.append(await soak(case, calls, http_case(url, pid, reconnect=True)))
    return results


def markdown(results: list[Result], command: str) -> str:
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        BEGIN,
        "## Soak: memory and file descriptors over many calls",
        "",
        f"`{command}`, {now:%Y-%m-%d %H:%M} UTC. Sequential `echo` calls; samples every "
        f"{results[0].calls // SAMPLES:,} calls after 50 warm-up calls. Flat: over the second half of the "
        "run RSS grew < 5% and < 4 MiB (a leak keeps growing; caches and allocator arenas fill early and "
        "stop), descriptors back within 2 of the start.",
        "",
        "| case | calls | failed | calls/s | client | server | flat? |",
        "|------|-------|--------|---------|--------|--------|-------|",
    ]
    for r in results:
        verdicts = [t.verdict() for t in r.tracks]
        flat = "yes" if all(ok for ok, _ in verdicts) else "**no**"
        lines.append(
            f"| {r.case} | {r.calls:,} | {r.failures} | {r.calls / r.seconds:,.0f} | "
            f"{verdicts[0][1]} | {verdicts[1][1]} | {flat} |"
        )
    lines += ["", END, ""]
    return "\n".join(lines)


def with_section(text: str, section: str) -> str:
    """``text`` with its soak section replaced by ``section``, or with ``section`` appended."""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + section.rstrip("\n") + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + section


def kept_section(text: str) -> str | None:
    """The soak section of an existing report (``bench/run.py`` carries it over when it rewrites)."""
    if BEGIN not in text or END not in text:
        return None
    return BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END + "\n"


def write_section(section: str, doc: Path = DOC) -> None:
    doc.write_text(with_section(doc.read_text() if doc.exists() else "", section))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=20_000, help="calls per case (default 20,000)")
    parser.add_argument("--write", action="store_true", help="record the result in docs/benchmarks.md")
    args = parser.parse_args(argv)
    if not os.path.isdir("/proc/self/fd"):
        print("soak needs /proc (Linux)", file=sys.stderr)
        return 2
    results = asyncio.run(run(args.calls))
    command = ".venv/bin/python bench/soak.py" + (f" --calls {args.calls}" if args.calls != 20_000 else "")
    section = markdown(results, command)
    print(section)
    if args.write or args.calls == 20_000:
        write_section(section)
        print(f"wrote {DOC}", file=sys.stderr)
    flat = all(t.verdict()[0] for r in results for t in r.tracks)
    return 0 if flat and not any(r.failures for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
