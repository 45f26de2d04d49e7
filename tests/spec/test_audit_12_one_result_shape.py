"""Audit item 12: results differ by era.

In 2026-07-28 our client handed callers raw protocol fields (``resultType``, ``ttlMs``, ``cacheScope``,
``_meta["io.modelcontextprotocol/serverInfo"]``) that legacy results lack; now both eras give one shape and
the era's fields are in ``era.era_meta(result)``. Our server marked ``resources/read`` results
``cacheScope: "public"`` by default; resources may be per user, so reads are ``"private"`` unless declared.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol import era
from mcp_notebook.protocol.modern import META_SERVER_INFO

pytestmark = pytest.mark.timeout(60)
WAIT = 20.0


def make_server(**options: Any) -> Server:
    server = Server("same-shape", **options)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.prompt
    def hello(name: str) -> str:
        """Greet."""
        return f"Hello {name}"

    server.add_resource("note://one", "the first note", mime_type="text/plain")
    return server


async def _everything(client: Client) -> dict[str, Any]:
    return {
        "call": await client.call_tool("add", {"a": 1, "b": 2}),
        "tools": await client.list_tools(),
        "read": await client.read_resource("note://one"),
        "prompt": await client.get_prompt("hello", {"name": "Ada"}),
        "resources": await client.list_resources(),
        "prompts": await client.list_prompts(),
    }


async def test_audit_12_results_have_one_shape_in_both_eras() -> None:
    server = make_server()
    async with Client(server, era="legacy", timeout=WAIT) as legacy:
        old = await _everything(legacy)
    async with Client(server, era="modern", timeout=WAIT) as modern:
        new = await _everything(modern)
        call = await modern.call_tool("add", {"a": 1, "b": 2})
        read = await modern.read_resource("note://one")
    assert new == old  # was: resultType / ttlMs / cacheScope / _meta.serverInfo only in 2026-07-28
    for result in (call, read):
        assert "resultType" not in result and "_meta" not in result and "ttlMs" not in result
    assert era.era_meta(call) == {"resultType": "complete", "serverInfo": server.info}
    assert era.era_meta(read)["serverInfo"] == server.info
    assert era.era_meta(read)["resultType"] == "complete"


async def test_audit_12_reads_are_private_unless_declared_public() -> None:
    async with Client(make_server(), era="modern", timeout=WAIT) as client:
        read = era.era_meta(await client.read_resource("note://one"))
        listed = era.era_meta(await client.request("resources/list"))
    assert read["cacheScope"] == "private"  # was "public"
    assert listed["cacheScope"] == "public"  # the lists do not vary by caller
    async with Client(make_server(read_cache_scope="public"), era="modern", timeout=WAIT) as client:
        assert era.era_meta(await client.read_resource("note://one"))["cacheScope"] == "public"


def test_audit_12_other_meta_stays_where_it_was() -> None:
    raw = {"resultType": "complete", "content": [], "_meta": {META_SERVER_INFO: {}, "k": 1}}
    assert era.plain_result("tools/call", raw) == {"content": [], "_meta": {"k": 1}}
    task = {"resultType": "task", "taskId": "t", "status": "working", "ttlMs": 5}
    assert era.plain_result("tools/call", task) is task  # a task is not a complete result: untouched
    assert era.plain_result("tasks/get", {"resultType": "complete", "ttlMs": 5})["ttlMs"] == 5
