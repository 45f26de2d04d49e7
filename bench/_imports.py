"""Benchmark 2: cold import time, each sample a fresh interpreter, minus a bare interpreter's start.

``time.perf_counter`` around ``subprocess.run([python, "-c", CODE])``; the cases run interleaved, and the
median of ``python -c pass`` is subtracted from the median of each case. Bytecode caches are warmed first
(one untimed run of each), as they are on any machine after the first import.
"""

from __future__ import annotations

import subprocess
import time

from _common import PYTHON, ROOT, Ratio, Section, Settings, fmt_ms, fmt_ratio, median

_OURS_FIRST_CALL = """
import asyncio
from mcp_notebook import Server, Client
server = Server("bench")
@server.tool
def echo(text: str) -> str:
    return text
async def main():
    async with Client(server) as client:
        await client.call_tool("echo", {"text": "x"})
asyncio.run(main())
"""

_SDK_FIRST_CALL = """
import asyncio
from mcp import Client
from mcp.server.mcpserver import MCPServer
server = MCPServer("bench")
@server.tool(structured_output=False)
def echo(text: str) -> str:
    return text
async def main():
    async with Client(server) as client:
        await client.call_tool("echo", {"text": "x"})
asyncio.run(main())
"""

# (label, our code, the SDK's code)
CASES = [
    ("bare import (`import mcp_notebook` / `import mcp`)", "import mcp_notebook", "import mcp"),
    (
        "API import (`from mcp_notebook import Server, Client` / `from mcp import Client` + `MCPServer`)",
        "from mcp_notebook import Server, Client",
        "from mcp import Client\nfrom mcp.server.mcpserver import MCPServer",
    ),
    ("import + first in-memory tools/call", _OURS_FIRST_CALL, _SDK_FIRST_CALL),
]
TARGET = 4.0  # issue 12: cold import <= 1/4 of the SDK's
NOISE_FLOOR = 0.001  # seconds


def _time(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([PYTHON, "-c", code], check=True, cwd=ROOT, timeout=60)
    return time.perf_counter() - start


def run(settings: Settings) -> Section:
    section = Section(
        "import", "2. Cold import, fresh interpreter (ms above `python -c pass`, lower is better)"
    )
    codes = ["pass"] + [code for _label, ours, sdk in CASES for code in (ours, sdk)]
    for code in codes:  # warm the bytecode caches; also fails fast if an import is broken
        _time(code)
    samples: dict[str, list[float]] = {code: [] for code in codes}
    for _ in range(settings.import_runs):
        for code in codes:
            samples[code].append(_time(code))
    base = median(samples["pass"])
    section.headers = ["case", "ours", "SDK", "SDK / ours (x faster)"]
    for label, ours_code, sdk_code in CASES:
        ours = median(samples[ours_code]) - base
        sdk = median(samples[sdk_code]) - base
        # A lazy package imports almost nothing: below ~1 ms the difference is noise, so divide by 1 ms
        # and say so, rather than print a ratio in the thousands.
        ratio = sdk / max(ours, NOISE_FLOOR)
        shown = (
            f">= {fmt_ratio(ratio)} (ours below {NOISE_FLOOR * 1000:g} ms)" if ours < NOISE_FLOOR else None
        )
        ours_text = f"< {NOISE_FLOOR * 1000:g} ms" if ours < NOISE_FLOOR else fmt_ms(ours)
        section.rows.append([label, ours_text, fmt_ms(sdk), shown or fmt_ratio(ratio)])
        section.ratios.append(Ratio(f"import {label.split(' (')[0]}", ratio, TARGET))
    section.notes = [
        f"Median of {settings.import_runs} runs per case; bare interpreter start `python -c pass` = "
        f"{fmt_ms(base)} (subtracted).",
        "Target: ours <= 1/4 of the SDK, i.e. a ratio >= 4x.",
    ]
    return section
