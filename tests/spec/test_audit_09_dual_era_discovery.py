"""Audit item 9: ``server/discover`` and ``-32022`` listed only ``2026-07-28`` although the server is
dual-era; and every ``-32602`` (even "Unknown tool") went out as HTTP 400, which a dual-era client may read
as "legacy server". Now both name the legacy versions too, and only request-level errors (missing ``_meta``,
header mismatch, unsupported version) are HTTP 400; a handler's invalid-params answer is HTTP 200."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol import modern
from mcp_notebook.transports.http_server import StreamableHTTPServer

pytestmark = pytest.mark.timeout(60)
V = "2026-07-28"
LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def make_server() -> Server:
    server = Server("audit-9")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


@pytest.fixture
async def url() -> AsyncIterator[str]:
    http = StreamableHTTPServer(make_server())
    address = await http.start("127.0.0.1", 0)
    try:
        yield address
    finally:
        await http.stop()


def body(method: str, params: dict[str, Any], version: str = V) -> dict[str, Any]:
    meta = {
        modern.META_PROTOCOL_VERSION: version,
        modern.META_CLIENT_CAPABILITIES: {},
        modern.META_CLIENT_INFO: {"name": "raw", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}


async def post(url: str, message: dict[str, Any], name: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": message["params"]["_meta"][modern.META_PROTOCOL_VERSION],
        "Mcp-Method": message["method"],
    }
    if name is not None:
        headers["Mcp-Name"] = name
    async with aiohttp.ClientSession() as http, http.post(url, json=message, headers=headers) as resp:
        return resp.status, await resp.json()


async def test_audit_09_discover_names_the_legacy_versions_too() -> None:
    async with Client(make_server(), era="modern", timeout=20) as client:
        found = await client.request("server/discover")
    assert found["supportedVersions"] == [V, *LEGACY]  # was [V]


async def test_audit_09_unsupported_version_names_the_legacy_versions_too(url: str) -> None:
    status, answer = await post(url, body("tools/list", {}, version="2099-01-01"))
    assert status == 400
    assert answer["error"]["data"] == {"supported": [V, *LEGACY], "requested": "2099-01-01"}


async def test_audit_09_an_unknown_tool_is_http_200_with_the_error(url: str) -> None:
    status, answer = await post(url, body("tools/call", {"name": "nope", "arguments": {}}), name="nope")
    assert answer["error"]["code"] == -32602 and "Unknown tool" in answer["error"]["message"]
    assert status == 200  # was 400


async def test_audit_09_missing_meta_is_still_http_400(url: str) -> None:
    message = body("tools/list", {})
    del message["params"]["_meta"][modern.META_CLIENT_CAPABILITIES]
    status, answer = await post(url, message)
    assert (status, answer["error"]["code"]) == (400, -32602)
