"""The server the modern-era tests talk to, over HTTP (in this process) and stdio (a child process).

Run as a script it serves stdio: ``python tests/modern/_fixture.py``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``mcp_notebook`` importable from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_notebook import Context, Server

server = Server("modern-fixture", "1.0", instructions="Fixtures for the 2026-07-28 tests.")
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
runs: dict[str, int] = {"two_steps": 0, "slow_cancelled": 0}


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool
async def greet(ctx: Context) -> str:
    """Ask for a name (elicitation), then greet."""
    answer = await ctx.elicit("Your name?", NAME, key="who")
    return f"Hello, {answer['content']['name']}!"


@server.tool
def two_steps(ctx: Context) -> str:
    """A plain (threaded) function asking twice; the retry re-runs it and replays the first answer."""
    runs["two_steps"] += 1
    first = ctx.elicit("First?", NAME)
    second = ctx.sample("Second?", max_tokens=5)
    return f"{first['content']['name']} / {second['content']['text']}"


@server.tool
async def chatty(ctx: Context) -> str:
    """Logs at info and debug, reports progress."""
    await ctx.debug("a debug line")
    await ctx.info("an info line")
    await ctx.report_progress(1, 2, "half way")
    return "said things"


@server.tool
async def slow(ctx: Context) -> str:
    """Reports that it started, then waits until cancelled (counted in ``runs``)."""
    await ctx.report_progress(0, message="started")
    try:
        await asyncio.Event().wait()
    finally:
        runs["slow_cancelled"] += 1
    return "never"


@server.tool
def counters() -> dict[str, Any]:
    """How often ``two_steps`` ran and ``slow`` was cancelled."""
    return dict(runs)


@server.tool
def toggle_tool() -> str:
    """Add or remove the tool ``extra``: listeners hear tools/list_changed."""
    if not server.remove_tool("extra"):
        server.add_tool(lambda: "extra", name="extra", description="Comes and goes.")
    return "toggled"


@server.tool
def touch(uri: str) -> str:
    """Announce that a resource changed."""
    server.notify_resource_updated(uri)
    return "touched"


server.add_resource("note://one", "the first note", mime_type="text/plain")


@server.prompt
def hello(name: str) -> str:
    """Say hello."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run_stdio()
