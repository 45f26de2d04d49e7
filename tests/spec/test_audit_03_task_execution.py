"""Audit item 3 (issue 10): ``execution.taskSupport: "required"`` was advertised without a ``tasks``
capability and ran without a task; ``execution`` appeared in 2026-07-28 ``tools/list``.

Spec 2025-11-25 server/tools#tool-execution and basic/utilities/tasks; 2026-07-28 removed ``execution``
(SEP-2663: tasks are the io.modelcontextprotocol/tasks extension)."""

from __future__ import annotations

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol.errors import JSONRPCError


def make_server() -> Server:
    server = Server("audit-3")

    @server.tool(execution={"taskSupport": "required"})
    def needs_a_task() -> str:
        return "ran"

    @server.tool
    def plain() -> str:
        return "plain"

    return server


async def test_required_tool_comes_with_the_tasks_capability() -> None:
    async with Client(make_server(), era="legacy") as client:
        [tool] = [t for t in await client.list_tools() if t["name"] == "needs_a_task"]
        assert tool["execution"] == {"taskSupport": "required"}
        assert client.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}


async def test_required_tool_without_a_task_is_32601() -> None:
    async with Client(make_server(), era="legacy") as client:
        with pytest.raises(JSONRPCError) as refused:
            await client.request("tools/call", {"name": "needs_a_task", "arguments": {}})
        assert refused.value.code == -32601
        result = await client.call_tool("needs_a_task")  # our client makes it a task by itself
        assert result["content"][0]["text"] == "ran"


async def test_server_without_tasks_never_runs_a_required_tool_plainly() -> None:
    server = make_server()
    server.tasks_enabled = False
    async with Client(server, era="legacy") as client:
        assert "tasks" not in client.server_capabilities
        assert all("execution" not in tool for tool in await client.list_tools())  # never advertised
        with pytest.raises(JSONRPCError) as refused:
            await client.request("tools/call", {"name": "needs_a_task", "arguments": {}})
        assert refused.value.code == -32601


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
async def test_no_execution_where_the_version_has_none(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        assert client.negotiated_version is not None and client.negotiated_version.name == version
        assert all("execution" not in tool for tool in await client.list_tools())
