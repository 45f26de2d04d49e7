"""A missing resource is answered in the era's code (MCP-NOTES §3.3, §7.7; SEP-2164): ``-32002`` up to
2025-11-25, ``-32602`` (Invalid params) in 2026-07-28, where ``-32002`` MUST NOT be sent. Both for a URI
that matches nothing and for a resource function that raises the legacy code itself (as workshop 05's does):
the server answers each request in its own era's code, with ``data.uri`` kept."""

from __future__ import annotations

import pytest

from mcp_notebook import Client, JSONRPCError, Server
from mcp_notebook.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND

pytestmark = pytest.mark.timeout(60)
CODE = {"legacy": RESOURCE_NOT_FOUND, "modern": INVALID_PARAMS}


def make_server() -> Server:
    server = Server("shelf")

    @server.resource("shop://books/{book_id}", mime_type="text/plain")
    def book(book_id: str) -> str:
        """One book, by id."""
        if book_id != "hobbit":
            raise JSONRPCError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": f"shop://books/{book_id}"})
        return "The Hobbit"

    @server.resource("shop://broken/{part}")
    def broken(part: str) -> str:
        """Fails with another protocol error, which passes through unchanged."""
        raise JSONRPCError(INVALID_PARAMS, f"no part {part!r}")

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("uri", ["shop://authors/austen", "shop://books/moby-dick"])
async def test_a_missing_resource_gets_the_eras_code(era: str, uri: str) -> None:
    async with Client(make_server(), era=era, timeout=20) as client:  # type: ignore[arg-type]
        assert (await client.read_resource("shop://books/hobbit"))["contents"][0]["text"] == "The Hobbit"
        with pytest.raises(JSONRPCError) as info:
            await client.read_resource(uri)
    assert (info.value.code, info.value.message, info.value.data) == (
        CODE[era],
        "Resource not found",
        {"uri": uri},
    )


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_other_errors_of_a_resource_function_pass_through(era: str) -> None:
    async with Client(make_server(), era=era, timeout=20) as client:  # type: ignore[arg-type]
        with pytest.raises(JSONRPCError) as info:
            await client.read_resource("shop://broken/x")
    assert (info.value.code, info.value.message) == (INVALID_PARAMS, "no part 'x'")
