"""Audit item 6: ``ToolResult(structured=[1, 2, 3])`` went to a 2025-11-25 session as an array
``structuredContent`` (legacy versions require an object) and with no text copy. Now legacy sessions get
``{"result": [...]}``, and so do 2026-07-28 ones (issue 20: one shape in both eras; it was the bare
array there), both with a text copy of the JSON."""

from __future__ import annotations

import json

import pytest

from mcp_notebook import Client, Server, ToolResult

pytestmark = pytest.mark.timeout(60)


def make_server() -> Server:
    server = Server("audit-6")

    @server.tool(output_schema=False)
    def numbers() -> ToolResult:
        return ToolResult(structured=[1, 2, 3])

    return server


async def test_audit_06_a_legacy_session_gets_an_object_and_a_text_copy() -> None:
    async with Client(make_server(), era="legacy", timeout=20) as client:
        result = await client.call_tool("numbers")
    assert result["structuredContent"] == {"result": [1, 2, 3]}  # was [1, 2, 3]
    assert [json.loads(block["text"]) for block in result["content"]] == [{"result": [1, 2, 3]}]  # was []


async def test_audit_06_a_modern_session_gets_the_same_object_and_a_text_copy() -> None:
    async with Client(make_server(), era="modern", timeout=20) as client:
        result = await client.call_tool("numbers")
    assert result["structuredContent"] == {"result": [1, 2, 3]}  # issue 20: was [1, 2, 3] (legacy: wrapped)
    assert [json.loads(block["text"]) for block in result["content"]] == [{"result": [1, 2, 3]}]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_06_a_wrapped_value_has_the_serialized_object_as_its_text_copy(era: str) -> None:
    # server/tools#structured-content: the text copy is the serialized structuredContent; for a wrapped
    # value that is {"result": ...}, not the bare value (was "5")
    server = Server("audit-6b")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    async with Client(server, era=era, timeout=20) as client:  # type: ignore[arg-type]
        result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"result": 5}
    assert [json.loads(block["text"]) for block in result["content"]] == [{"result": 5}]
