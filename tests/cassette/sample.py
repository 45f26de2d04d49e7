"""Servers for the cassette tests: ``server`` and ``changed`` (one tool answers differently, one schema
gained a parameter). Loaded in memory, or by ``mcp-notebook serve/verify tests/cassette/sample.py:NAME``."""

from __future__ import annotations

import asyncio

from mcp_notebook import Context, Server

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def make(changed: bool = False) -> Server:
    server = Server("cassette-sample")
    server.tasks.poll_interval_ms = 20

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b + (1 if changed else 0)

    if changed:

        @server.tool
        def echo(text: str, loud: bool = False) -> str:
            """Say it back."""
            return text.upper() if loud else text

    else:

        @server.tool
        def echo(text: str) -> str:
            """Say it back."""
            return text

    @server.tool
    async def count(n: int, ctx: Context) -> int:
        """Count to n, reporting progress."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return n

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        """Wait, then say so (runs as a task when asked)."""
        deadline = asyncio.get_running_loop().time() + seconds
        while asyncio.get_running_loop().time() < deadline:
            ctx.check_cancelled()
            await asyncio.sleep(0.01)
        return f"slept {seconds}"

    @server.tool
    async def greet(ctx: Context) -> str:
        """Ask for a name (elicitation; an MRTR round in 2026-07-28), then greet."""
        answer = await ctx.elicit("Name?", NAME_SCHEMA, key="name")
        return f"Hello, {(answer.get('content') or {}).get('name')}"

    @server.tool
    def login(user: str, password: str) -> str:
        """A tool whose arguments carry a secret."""
        return f"{user} signed in"

    @server.resource("sample://readme")
    def readme() -> str:
        """The readme."""
        return "read me"

    return server


server = make()
changed = make(changed=True)
