"""List caching in 2026-07-28 (server/utilities/caching) without a ``tools/list`` per call.

A modern call used to be preceded by a ``tools/list`` every time: our server said ``ttlMs: 0`` and the client
re-listed whenever its list was past its TTL. Now the server's lists are fresh for a minute, a client with a
listen stream carrying tools/list_changed trusts its list until that notification, and a list past its TTL is
still used for the call; it is listed again only when a result then fails the cached outputSchema. These tests
count the messages a modern call sends. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol import era
from mcp_notebook.tools.validation import schema_check
from tests.modern._fixture import server
from tests.modern.test_modern_client import FIXTURE, KINDS, WAIT, http_url, sent

pytestmark = pytest.mark.timeout(60)


def count(client: Client, method: str, name: str | None = None) -> int:
    return sum(
        1
        for m in sent(client)
        if m.get("method") == method and (name is None or m["params"].get("name") == name)
    )


async def _calls(client: Client, n: int) -> None:
    for i in range(n):
        result = await client.call_tool("add", {"a": i, "b": 1})
        assert result["structuredContent"] == {"result": i + 1}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_modern_call_sends_no_tools_list_per_call(kind: str) -> None:
    if kind == "http":
        async with http_url() as url, Client(url, timeout=WAIT) as client:
            await _calls(client, 5)
            modern = client.is_modern
            lists, calls = count(client, "tools/list"), count(client, "tools/call")
    else:
        target: Any = [sys.executable, str(FIXTURE)] if kind == "stdio" else server
        async with Client(target, timeout=WAIT) as client:
            await _calls(client, 5)
            modern = client.is_modern
            lists, calls = count(client, "tools/list"), count(client, "tools/call")
    assert modern
    assert (lists, calls) == (1, 5)  # was (5, 5): a tools/list before every call


async def test_the_server_says_how_long_lists_stay_fresh() -> None:
    async with Client(server, timeout=WAIT) as client:
        hints = era.era_meta(await client.request("tools/list"))
        assert hints["ttlMs"] == 60_000 and hints["cacheScope"] == "public"  # was ttlMs 0
        discovered = await client.request("server/discover")
        assert discovered["ttlMs"] == 60_000


async def test_a_list_past_its_ttl_is_used_without_listing_per_call() -> None:
    """A server saying ``ttlMs: 0`` and a client without a listen stream: still one list, not one per call."""
    stale_at_once = Server("stale", cache_ttl_ms=0)

    @stale_at_once.tool
    def add(a: int, b: int) -> int:
        return a + b

    async with Client(stale_at_once, timeout=WAIT, listen=False) as client:
        assert client.is_modern and client.subscriptions.current is None
        await _calls(client, 4)
        assert (count(client, "tools/list"), count(client, "tools/call")) == (1, 4)


async def test_a_stale_output_schema_is_checked_again_against_a_fresh_list() -> None:
    shifting = Server("shifting", cache_ttl_ms=0)

    def old() -> dict[str, int]:
        return {"a": 1}

    def new() -> dict[str, str]:
        return {"b": "two"}

    object_of = {"type": "object", "additionalProperties": False}
    old_schema = {**object_of, "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    new_schema = {**object_of, "properties": {"b": {"type": "string"}}, "required": ["b"]}
    shifting.add_tool(old, name="shape", output_schema=old_schema)
    async with Client(shifting, timeout=WAIT, listen=False) as client:
        assert (await client.call_tool("shape"))["structuredContent"] == {"a": 1}
        shifting.remove_tool("shape")
        shifting.add_tool(new, name="shape", output_schema=new_schema)  # no listen stream: nobody tells us
        assert (await client.call_tool("shape"))["structuredContent"] == {"b": "two"}
        assert count(client, "tools/list") == 2  # the mismatch with the stale schema made it list again
        assert client.cached_tool("shape") == shifting.tools.get("shape").definition  # type: ignore[union-attr]


async def test_list_changed_on_the_listen_stream_makes_the_next_call_list_once() -> None:
    changed = asyncio.Event()
    async with Client(server, timeout=WAIT, notification_handler=lambda m, p: changed.set()) as client:
        await _calls(client, 2)
        tool = client.cached_tool("add")
        assert tool is not None
        compiled = schema_check(tool["outputSchema"])
        await client.call_tool("toggle_tool")
        await asyncio.wait_for(changed.wait(), WAIT)
        await _calls(client, 3)
        await client.call_tool("toggle_tool")  # as it was
        assert count(client, "tools/list") == 2  # one at the start, one after list_changed
        relisted = client.cached_tool("add")
        assert relisted is not None and relisted is not tool
        assert schema_check(relisted["outputSchema"]) is compiled  # the tool did not change: same validator
