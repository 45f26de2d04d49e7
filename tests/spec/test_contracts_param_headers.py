"""Issue 20 item 3: ``x-mcp-header`` over the whole schema, in both roles (SEP-2243, 2026-07-28
basic/transports/streamable-http "Custom Headers from Tool Parameters"). Before, only top-level
``properties`` were looked at: an annotation under ``items``/``anyOf`` was accepted (the tool MUST be left
out), a nested ``properties`` chain was neither mirrored by the client nor checked by the server, and an
integer outside JavaScript's safe range was mirrored."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol.era import invalid_param_headers, param_headers
from mcp_notebook.protocol.modern import HEADER_MISMATCH, check_param_headers
from mcp_notebook.transports.http_server import StreamableHTTPServer

pytestmark = [pytest.mark.timeout(60), pytest.mark.requirement("header-annotation-valid")]
REGION = {"type": "string", "x-mcp-header": "Region"}
NESTED = {
    "type": "object",
    "properties": {
        "where": {"type": "object", "properties": {"region": REGION, "shard": {"type": "integer"}}}
    },
}


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (
            {"type": "object", "properties": {"tags": {"type": "array", "items": REGION}}},
            "/properties/tags/items",
        ),
        (
            {"type": "object", "properties": {"r": {"anyOf": [REGION, {"type": "null"}]}}},
            "/properties/r/anyOf/0",
        ),
        (
            {"type": "object", "properties": {"r": {"$ref": "#/$defs/R"}}, "$defs": {"R": REGION}},
            "/$defs/R",
        ),
        ({"type": "object", "if": {"properties": {"r": REGION}}}, "/if/properties/r"),
        ({"type": "object", "x-mcp-header": "Root"}, "/"),
    ],
)
def test_an_annotation_off_the_properties_chain_makes_the_tool_invalid(
    schema: dict[str, Any], why: str
) -> None:
    reason = invalid_param_headers(schema)
    assert reason is not None and why in reason  # was: None (only top-level properties were looked at)


def test_a_nested_properties_chain_is_valid_and_checked_like_the_top_level() -> None:
    assert invalid_param_headers(NESTED) is None
    bad = {
        "type": "object",
        "properties": {
            "where": {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}
        },
    }
    assert "'where.x'" in (invalid_param_headers(bad) or "")
    twice = {
        "type": "object",
        "properties": {
            "a": REGION,
            "b": {"type": "object", "properties": {"c": {"type": "string", "x-mcp-header": "region"}}},
        },
    }
    assert "used twice" in (invalid_param_headers(twice) or "")


def test_the_client_mirrors_nested_values_and_not_unsafe_integers() -> None:
    assert param_headers(NESTED, {"where": {"region": "eu-1", "shard": 3}}) == {"Mcp-Param-Region": "eu-1"}
    assert param_headers(NESTED, {"where": {}}) == {}
    count = {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    assert param_headers(count, {"n": 2**53 - 1}) == {"Mcp-Param-N": str(2**53 - 1)}
    assert param_headers(count, {"n": -(2**53 - 1)}) == {"Mcp-Param-N": str(-(2**53 - 1))}
    assert param_headers(count, {"n": 2**53}) == {}  # was: mirrored
    assert param_headers(count, {"n": -(2**53)}) == {}


def test_the_server_checks_nested_headers_and_not_unsafe_integers() -> None:
    arguments = {"where": {"region": "eu-1"}}
    missing = check_param_headers(NESTED, arguments, {})
    assert missing is not None and missing.code == HEADER_MISMATCH  # was: None
    wrong = check_param_headers(NESTED, arguments, {"Mcp-Param-Region": "us-2"})
    assert wrong is not None and wrong.code == HEADER_MISMATCH
    assert check_param_headers(NESTED, arguments, {"Mcp-Param-Region": "eu-1"}) is None
    count = {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    assert check_param_headers(count, {"n": 2**60}, {}) is None  # a client does not mirror it


def nested_server() -> Server:
    server = Server("headers")

    @server.tool
    def query(where: dict[str, Any]) -> str:
        """Where the query runs."""
        return str(where.get("region"))

    tool = server.tools.get("query")
    assert tool is not None
    tool.definition["inputSchema"] = NESTED  # a nested chain (our own schemas put classes under $defs)
    return server


async def test_over_http_the_nested_header_is_sent_and_required() -> None:
    http = StreamableHTTPServer(nested_server())
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="modern", timeout=20) as client:
            result = await client.call_tool("query", {"where": {"region": "eu-1"}})
            assert result["content"][0]["text"] == "eu-1"  # the client sent Mcp-Param-Region
            sent = [
                e for e in client.trace if e.direction == "out" and e.message.get("method") == "tools/call"
            ]
            assert sent
            # the same call without the header: 400 + HeaderMismatch
            message = dict(sent[-1].message, id=99)
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "query",
            }
            async with (
                aiohttp.ClientSession() as session,
                session.post(url, json=message, headers=headers) as response,
            ):
                body = await response.json()
        assert response.status == 400 and body["error"]["code"] == HEADER_MISMATCH
    finally:
        await http.stop()
