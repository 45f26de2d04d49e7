"""Issue 20 item 4: the residues of the spec read, each with a test that failed before."""

from __future__ import annotations

import aiohttp
import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol.errors import INTERNAL_ERROR, JSONRPCError, LocalProtocolError

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    "src", ["javascript:alert(1)", "file:///etc/passwd", "JAVASCRIPT:x", "ftp://a/b.png"]
)
def test_an_icon_that_is_not_http_https_or_data_is_refused(src: str) -> None:
    server = Server("icons")
    with pytest.raises(ValueError, match="https:, http: or data:"):  # was: accepted and listed

        @server.tool(icons=[{"src": src}])
        def f() -> str:
            return "x"


def test_http_https_and_data_icons_are_kept() -> None:
    server = Server("icons")
    icons = [
        {"src": "https://a.example/i.png"},
        {"src": "http://127.0.0.1/i.png"},
        {"src": "data:image/png;base64,AA=="},
    ]

    @server.tool(icons=icons)
    def f() -> str:
        return "x"

    tool = server.tools.get("f")
    assert tool is not None and tool.definition["icons"] == icons


def leaky_server() -> Server:
    server = Server("leaky")

    @server.resource("res://boom")
    def boom() -> str:
        raise KeyError("customer-ssn")

    @server.prompt
    def broken() -> str:
        raise ValueError("internal detail")

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_raising_resource_or_prompt_does_not_leak_its_exception(era: str) -> None:
    async with Client(leaky_server(), era=era, timeout=20) as client:
        for call in (lambda: client.read_resource("res://boom"), lambda: client.get_prompt("broken")):
            with pytest.raises(JSONRPCError) as failed:
                await call()
            assert failed.value.code == INTERNAL_ERROR
            text = str(failed.value)
            assert "Error" not in text.replace("Internal error", "").replace(
                "JSON-RPC error", ""
            )  # was KeyError
            assert "customer-ssn" not in text and "internal detail" not in text


async def test_the_refusal_to_run_a_task_says_the_whole_sentence() -> None:
    server = Server("no-tasks")
    server.tasks_enabled = False

    @server.tool
    def f() -> str:
        return "x"

    async with Client(server, era="legacy", timeout=20) as client:
        await client.list_tools()
        with pytest.raises(LocalProtocolError, match=r"'f' cannot be called as a task: the server does not"):
            await client.call_tool("f", task=True)  # was: "... tool 'f' cannot be"


def test_an_explicit_object_schema_shaped_like_the_wrapper_is_not_wrapped_twice() -> None:
    schema = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    server = Server("wrapper")

    @server.tool(output_schema=schema)
    def f() -> dict[str, int]:
        return {"result": 5}

    tool = server.tools.get("f")
    assert tool is not None and tool.definition["outputSchema"] == schema


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_explicit_wrapper_shaped_schema_calls_succeed(era: str) -> None:
    schema = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    server = Server("wrapper")

    @server.tool(output_schema=schema)
    def f() -> dict[str, int]:
        return {"result": 5}

    async with Client(server, era=era, timeout=20) as client:
        result = await client.call_tool("f")
    assert not result.get("isError"), result  # was: {"result": {"result": 5}}, refused by the schema
    assert result["structuredContent"] == {"result": 5}


async def test_2026_sse_responses_carry_no_event_ids() -> None:
    from mcp_notebook import Context
    from mcp_notebook.protocol.era import modern_params
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    server = Server("sse")

    @server.tool
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        return "done"

    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    params = modern_params({"name": "slow", "arguments": {}}, "2026-07-28", {}, {"name": "t", "version": "1"})
    params["_meta"]["progressToken"] = "p1"
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "slow",
    }
    try:
        async with aiohttp.ClientSession() as http_client:
            resp = await http_client.post(url, json=message, headers=headers)
            assert resp.content_type == "text/event-stream"  # a notification before the answer
            body = await resp.text()
    finally:
        await http.stop()
    assert "notifications/progress" in body and '"done"' in body
    assert not [line for line in body.splitlines() if line.startswith("id:")]  # was: "id: s1_0", ...


async def test_on_stop_a_listen_stream_ends_with_a_result_not_an_error() -> None:
    import asyncio
    import json

    from mcp_notebook.protocol.era import modern_params
    from mcp_notebook.transports.http_server import StreamableHTTPServer
    from mcp_notebook.transports.sse import SSEDecoder

    server = Server("listen")
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    params = modern_params(
        {"notifications": {"toolsListChanged": True}}, "2026-07-28", {}, {"name": "t", "version": "1"}
    )
    message = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
    }
    received: list[dict[str, object]] = []
    decoder = SSEDecoder()
    stopping: asyncio.Future[None] | None = None
    try:
        async with aiohttp.ClientSession() as http_client:
            resp = await http_client.post(url, json=message, headers=headers)
            async for chunk in resp.content.iter_any():
                received += [json.loads(e.data) for e in decoder.feed(chunk) if e.data]
                if received and stopping is None:  # acknowledged: now the server stops
                    stopping = asyncio.ensure_future(http.stop())
    finally:
        if stopping is not None:
            await stopping
        await http.stop()
    assert received[0]["method"] == "notifications/subscriptions/acknowledged"
    final = received[-1]
    assert "error" not in final, final  # was: {"error": {"code": -32603, "message": "the server stopped..."}}
    assert final["id"] == 7 and final["result"] == {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
    }


def test_a_server_supplied_schema_is_bounded_in_depth_and_size() -> None:
    from mcp_notebook.tools.validation import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, SchemaCheck

    deep: dict[str, object] = {"type": "integer"}
    for _ in range(MAX_SCHEMA_DEPTH):
        deep = {"type": "array", "items": deep}
    big = {
        "type": "object",
        "properties": {
            f"p{i}": {"type": "string", "description": "x" * 1000} for i in range(MAX_SCHEMA_BYTES // 1000)
        },
    }
    for schema, why in ((deep, "nested too deeply"), (big, "too large")):
        remote = SchemaCheck(schema, strict=False)  # was: compiled and used, whatever its size
        assert remote.problem is not None and why in remote.problem
        assert why in remote.problems([1])[0]  # nothing is validated against it: the problem is the answer
        with pytest.raises(ValueError, match=why):
            SchemaCheck(schema)
    fine: dict[str, object] = {"type": "integer"}
    for _ in range(20):
        fine = {"type": "array", "items": fine}
    assert SchemaCheck(fine, strict=False).problem is None
