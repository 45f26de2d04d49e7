"""Audit item 7: no downgrade of tool output for older sessions. A 2024-11-05 session received ``audio``
and ``resource_link`` blocks, ``title``, ``icons`` and ``outputSchema``; the gates in
``protocol/versions.py`` were not applied. Now each session gets what its version has."""

from __future__ import annotations

import pytest

from mcp_notebook import Audio, Client, ResourceLink, Server, ToolResult

pytestmark = pytest.mark.timeout(60)
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
ICON = [{"src": "https://example.com/i.png", "mimeType": "image/png"}]


def make_server() -> Server:
    server = Server("audit-7")

    @server.tool(title="Media", icons=ICON, annotations={"readOnlyHint": True})
    def media() -> ToolResult:
        """Audio and a link."""
        return ToolResult(
            content=[Audio(WAV, mime_type="audio/wav"), ResourceLink("file:///a.txt", name="a.txt"), "done"]
        )

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


async def test_audit_07_a_2024_11_05_session_gets_only_what_it_has() -> None:
    async with Client(make_server(), protocol_version="2024-11-05", timeout=20) as client:
        assert client.negotiated_version is not None and client.negotiated_version.name == "2024-11-05"
        tools = {t["name"]: t for t in await client.list_tools()}
        result = await client.call_tool("media")
        added = await client.call_tool("add", {"a": 1, "b": 2})
    for tool in tools.values():
        assert not {"title", "icons", "outputSchema", "annotations"} & set(tool), tool  # was all there
    assert [block["type"] for block in result["content"]] == ["text", "text", "text"]  # was audio, link
    assert "file:///a.txt" in result["content"][1]["text"]
    assert "structuredContent" not in added and added["content"][0]["text"] == '{"result": 3}'


async def test_audit_07_a_2025_03_26_session_keeps_audio_and_annotations() -> None:
    async with Client(make_server(), protocol_version="2025-03-26", timeout=20) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        result = await client.call_tool("media")
    assert tools["media"]["annotations"] == {"readOnlyHint": True}
    assert "title" not in tools["media"] and "outputSchema" not in tools["add"]
    assert [block["type"] for block in result["content"]] == ["audio", "text", "text"]


async def test_audit_07_a_2025_11_25_session_gets_everything() -> None:
    async with Client(make_server(), era="legacy", timeout=20) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        result = await client.call_tool("media")
    assert tools["media"]["title"] == "Media" and tools["media"]["icons"] == ICON
    assert "outputSchema" in tools["add"]
    assert [block["type"] for block in result["content"]] == ["audio", "resource_link", "text"]
