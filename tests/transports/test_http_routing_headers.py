"""A 2026-07-28 POST's routing headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) are made once
per method, version and name and looked up by the values they are made of (http_client._modern_headers), not
by making them again per request: whatever the request, the headers sent are exactly those made afresh."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import aiohttp

from mcp_notebook.protocol import era
from mcp_notebook.protocol.jsonrpc import Request
from mcp_notebook.protocol.modern import META_PROTOCOL_VERSION
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport


class _Params(Mapping[str, Any]):
    """Params that are a Mapping but not a dict."""

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def _meta(version: object) -> dict[str, Any]:
    return {META_PROTOCOL_VERSION: version}


REQUESTS: list[tuple[str, Any]] = [
    ("tools/call", {"name": "echo", "arguments": {}, "_meta": _meta("2026-07-28")}),
    ("tools/call", {"name": "add", "arguments": {}, "_meta": _meta("2026-07-28")}),
    ("tools/call", {"name": "echo", "arguments": {}, "_meta": _meta("2027-01-01")}),
    ("tools/call", {"name": "héllo", "_meta": _meta("2026-07-28")}),  # base64-encoded
    ("tools/call", {"name": " echo", "_meta": _meta("2026-07-28")}),  # not header-safe as it is
    ("tools/call", {"name": "=?base64?ZWNobw==?=", "_meta": _meta("2026-07-28")}),  # looks encoded
    ("tools/call", {"name": 7, "_meta": _meta("2026-07-28")}),  # not a string: no Mcp-Name
    ("tools/call", {"name": "echo", "_meta": _meta(1)}),  # not a string: no version header
    ("tools/call", {"name": "echo", "_meta": "x"}),
    ("tools/call", {"name": "echo"}),
    ("prompts/get", {"name": "echo", "_meta": _meta("2026-07-28")}),
    ("resources/read", {"uri": "note://one", "name": "x", "_meta": _meta("2026-07-28")}),
    ("resources/read", {"uri": "note://two", "_meta": _meta("2026-07-28")}),
    ("tools/list", {"name": "echo", "_meta": _meta("2026-07-28")}),  # tools/list has no name header
    ("tools/list", None),
    ("tools/call", _Params({"name": "mapped", "_meta": _meta("2026-07-28")})),
    ("tools/call", _Params({"name": "mapped", "_meta": _meta("2027-01-01")})),
]


async def test_the_cached_routing_headers_are_those_made_afresh() -> None:
    async with aiohttp.ClientSession() as http:
        transport = StreamableHTTPClientTransport(
            "http://127.0.0.1:1/mcp", http, owns_http=False, headers={"X-Extra": "1"}, timeout=5
        )
        base = {
            "X-Extra": "1",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        for _ in range(2):  # the second time round, every header set comes from the cache
            for request_id, (method, params) in enumerate(REQUESTS):
                sent = transport._modern_headers(Request(request_id, method, params))
                assert dict(sent) == {**base, **era.http_headers(method, params)}, (method, params)
