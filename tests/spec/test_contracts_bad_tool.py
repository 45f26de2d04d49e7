"""Issue 20 item 3: one malformed tool in ``tools/list`` is left out with a warning naming it (and shown by
``%mcp lint``), never failing the whole list; and our own server does not let such a definition through.
Before, ``execution.taskSupport: "sometimes"`` (which ``Server.tool(execution=...)`` accepted) made our
client's ``list_tools`` raise ``MalformedResult``: one bad tool hid every tool."""

from __future__ import annotations

import logging

import pytest

from mcp_notebook import Client, Server

pytestmark = pytest.mark.timeout(60)


def server_with_a_bad_tool(era: str = "any") -> Server:
    server = Server("bad-tool")

    @server.tool
    def first(x: int) -> int:
        return x

    @server.tool
    def broken(x: int) -> int:
        return x

    @server.tool
    def last(x: int) -> int:
        return x

    tool = server.tools.get("broken")
    assert tool is not None
    # what a foreign server may send: 2025-11-25 has execution; 2026-07-28 lists no execution, so _meta
    if era != "modern":
        tool.definition["execution"] = {"taskSupport": "sometimes"}
    if era != "legacy":
        tool.definition["_meta"] = ["not", "an", "object"]
    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_one_malformed_tool_is_left_out_with_a_named_warning(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        async with Client(server_with_a_bad_tool(era), era=era, timeout=20) as client:
            tools = await client.list_tools()  # was: MalformedResult for the whole list
            assert [t["name"] for t in tools] == ["first", "last"]
            assert set(client.dropped_tools) == {"broken"}
            assert ("taskSupport" if era == "legacy" else "_meta") in client.dropped_tools["broken"]
            assert (await client.call_tool("last", {"x": 3}))["structuredContent"] == {"result": 3}
    assert any("'broken' left out" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "options",
    [{"execution": {"taskSupport": "sometimes"}}, {"execution": ["optional"]}, {"meta": ["x"]}],
)
def test_our_server_refuses_a_malformed_definition(options: dict[str, object]) -> None:
    server = Server("strict")
    with pytest.raises(ValueError, match=r"execution|_meta"):  # was: registered and listed

        @server.tool(**options)
        def f(x: int) -> int:
            return x
