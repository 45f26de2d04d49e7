"""Audit item 1: ``@server.tool(output_schema={"type": "array", ...})`` was advertised as it was, then every
call failed (``{'result': [1, 2]} is not of type 'array'``). Up to 2025-11-25 an outputSchema's root must be
an object: a non-object schema now describes the value under ``result``, and calls succeed in both eras."""

from __future__ import annotations

import pytest

from mcp_notebook import Client, Server

pytestmark = pytest.mark.timeout(60)
ARRAY = {"type": "array", "items": {"type": "integer"}}


def make_server() -> Server:
    server = Server("audit-1")

    @server.tool(output_schema=ARRAY)
    def pair() -> list[int]:
        """Two numbers."""
        return [1, 2]

    @server.tool(output_schema={"type": "integer"})
    def one() -> int:
        """One number."""
        return 1

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_01_a_non_object_output_schema_is_wrapped_and_calls_succeed(era: str) -> None:
    async with Client(make_server(), era=era, timeout=20) as client:  # type: ignore[arg-type]
        tools = {t["name"]: t for t in await client.list_tools()}
        assert tools["pair"]["outputSchema"] == {
            "type": "object",
            "properties": {"result": ARRAY},
            "required": ["result"],
        }
        result = await client.call_tool("pair")  # the client validates against the advertised schema too
        assert not result.get("isError"), result
        assert result["structuredContent"] == {"result": [1, 2]}
        assert (await client.call_tool("one"))["structuredContent"] == {"result": 1}
