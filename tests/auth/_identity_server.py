"""The server ``tests/auth/test_two_users.py`` serves with ``mcp-notebook serve --http --auth``: a task that
waits to be cancelled, and an MRTR tool whose second question comes after the caller gave a PIN (so the
state of that round carries the PIN)."""

from __future__ import annotations

import asyncio

from mcp_notebook import Context, Server

server = Server("identity-fixture")
server.tasks.poll_interval_ms = 50
PIN = {"type": "object", "properties": {"pin": {"type": "string"}}, "required": ["pin"]}
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@server.tool(task="optional")
async def slow(seconds: float, ctx: Context) -> str:
    """Wait cooperatively (a cancel ends it)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        ctx.check_cancelled()
        await asyncio.sleep(0.02)
    return "slept"


@server.tool
async def unlock(ctx: Context) -> str:
    """Ask for a PIN, then for a confirmation; say who asked."""
    pin = await ctx.elicit("PIN?", PIN, key="pin")
    await ctx.elicit("Sure?", OK, key="ok")
    return f"unlocked with {len((pin.get('content') or {}).get('pin', ''))} digits for {ctx.principal}"
