"""The official Python SDK's client calling our DataFrame tools (issue 9): it validates structuredContent
against the outputSchema itself (``ClientSession._validate_tool_result``), so a NaN, a typed table or a
``describe()`` result that did not match would be a ``RuntimeError`` on its side."""

from __future__ import annotations

import sys

import pytest
from mcp import Client as SDKClient
from mcp import StdioServerParameters

from tests.interop._peers import HERE, ROOT

pytestmark = pytest.mark.timeout(60)

ANALYSIS = HERE / "analysis_server.py"


def sdk_client() -> SDKClient:
    command = ["-m", "mcp_notebook", "serve", str(ANALYSIS)]
    server = StdioServerParameters(command=sys.executable, args=command, cwd=str(ROOT))
    return SDKClient(server, mode="legacy", read_timeout_seconds=20.0)


async def test_sdk_client_calls_dataframe_tools_and_validates_their_structured_content() -> None:
    readings = [
        {"city": "Oslo", "temp": 1.5},
        {"city": "Oslo", "temp": 2.5},
        {"city": "Rome", "temp": None},
    ]
    async with sdk_client() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["by_city"].output_schema is not None

        by_city = await client.call_tool("by_city", {"readings": readings})
        assert not by_city.is_error
        assert by_city.structured_content == {
            "result": [{"city": "Oslo", "mean": 2.0, "days": 2}, {"city": "Rome", "mean": None, "days": 1}]
        }

        described = await client.call_tool("describe", {"readings": readings})
        assert not described.is_error
        rows = described.structured_content["result"]  # type: ignore[index]
        assert [row["index"] for row in rows][:3] == ["count", "mean", "std"]

        spread = await client.call_tool("spread", {"values": [0.0, 2.0]})
        assert not spread.is_error
        assert spread.structured_content == {"std": pytest.approx(2**0.5), "ratio": None}
        assert "Infinity" in spread.content[0].text  # type: ignore[union-attr]
