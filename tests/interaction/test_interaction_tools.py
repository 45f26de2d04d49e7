"""Tools over the wire: listing with pagination, calls, the two error planes, list_changed, concurrency.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/server/tools (MCP-NOTES §5) and
https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination (§3.8).
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from typing import Any, TypedDict

import pytest

from mcp_notebook.engine.server import Server
from mcp_notebook.protocol.errors import INVALID_PARAMS, JSONRPCError
from mcp_notebook.tools import Context
from tests.interaction._harness import WAIT, Connect, Inbox


class Weather(TypedDict):
    city: str
    celsius: float


def text_of(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    assert block["type"] == "text"
    return str(block["text"])


def five_tools() -> Server:
    server = Server("five", page_size=2)
    for name in ["echo", "alpha", "delta", "charlie", "bravo"]:

        def tool(x: str = "") -> str:
            raise NotImplementedError

        server.add_tool(tool, name=name)
    return server


# -- tools/list ----------------------------------------------------------------------------------------------
async def test_tools_list_pages_through_every_tool(connect: Connect) -> None:
    """server/utilities/pagination: the server picks the page size; nextCursor is absent on the last page."""
    async with connect(five_tools()) as client:
        pages: list[list[str]] = []
        params: dict[str, Any] | None = None
        while True:
            result = await client.request("tools/list", params)
            pages.append([tool["name"] for tool in result["tools"]])
            if "nextCursor" not in result:
                break
            assert isinstance(result["nextCursor"], str)
            params = {"cursor": result["nextCursor"]}
        every = await client.list_tools()

    assert pages == [["alpha", "bravo"], ["charlie", "delta"], ["echo"]]
    assert [tool["name"] for tool in every] == ["alpha", "bravo", "charlie", "delta", "echo"]


@pytest.mark.parametrize("cursor", ["not-a-cursor", "", "e30=", 42])
async def test_invalid_cursor_is_32602(connect: Connect, cursor: Any) -> None:
    """server/utilities/pagination#error-handling: invalid cursors SHOULD result in -32602."""
    async with connect(five_tools()) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.request("tools/list", {"cursor": cursor})
    assert info.value.code == INVALID_PARAMS


async def test_tool_definitions_carry_schemas(connect: Connect) -> None:
    """server/tools#tool: name, description, inputSchema (type object), outputSchema for structured output."""
    server = Server("s")

    @server.tool
    def forecast(city: str, days: int = 3) -> Weather:
        """Forecast the weather."""
        raise NotImplementedError

    async with connect(server) as client:
        (tool,) = await client.list_tools()

    assert tool["name"] == "forecast" and tool["description"] == "Forecast the weather."
    assert tool["inputSchema"]["type"] == "object"
    assert tool["inputSchema"]["required"] == ["city"]
    assert set(tool["inputSchema"]["properties"]) == {"city", "days"}
    assert tool["outputSchema"]["type"] == "object"
    assert tool["outputSchema"]["required"] == ["city", "celsius"]


# -- tools/call ----------------------------------------------------------------------------------------------
async def test_call_returns_structured_content_and_its_text_twin(connect: Connect) -> None:
    """server/tools#structured-content: a tool returning structured content SHOULD also return the serialized
    JSON in a TextContent block; with an outputSchema it MUST conform."""
    server = Server("s")

    @server.tool
    def forecast(city: str) -> Weather:
        assert city == "Paris"
        return {"city": city, "celsius": 21.5}

    async with connect(server) as client:
        result = await client.call_tool("forecast", {"city": "Paris"})

    assert result["structuredContent"] == {"city": "Paris", "celsius": 21.5}
    assert json.loads(text_of(result)) == result["structuredContent"]
    assert not result.get("isError")


async def test_scalar_result_is_wrapped_and_twinned(connect: Connect) -> None:
    """server/tools#output-schema: structuredContent is an object in 2025-11-25, so scalars are wrapped."""
    server = Server("s")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    async with connect(server) as client:
        result = await client.call_tool("add", {"a": 2, "b": 3})

    assert result["structuredContent"] == {"result": 5}
    # the text copy is the serialized structuredContent, wrapper included (issue 10 audit 6)
    assert json.loads(text_of(result)) == {"result": 5}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({"a": "two", "b": 3}, "a"), ({"a": 2}, "b"), ({"a": 2, "b": 3, "c": 4}, "c")],
)
async def test_invalid_arguments_are_a_tool_error_naming_the_field(
    connect: Connect, arguments: dict[str, Any], field: str
) -> None:
    """server/tools#error-handling (2025-11-25, SEP-1303): input validation errors are tool execution errors
    (isError: true) with an actionable message, not protocol errors."""
    server = Server("s")

    @server.tool
    def add(a: int, b: int) -> int:
        raise NotImplementedError

    async with connect(server) as client:
        result = await client.call_tool("add", arguments)

    assert result["isError"] is True
    assert f"'{field}'" in text_of(result)


async def test_exception_in_a_tool_is_a_tool_error_without_traceback(connect: Connect) -> None:
    """server/tools#error-handling: execution errors are reported in the result with isError: true;
    security: servers MUST sanitize outputs, so no traceback or file paths reach the client."""
    server = Server("s")

    @server.tool
    def explode() -> str:
        raise ValueError("the reactor is offline")

    async with connect(server) as client:
        result = await client.call_tool("explode")

    text = text_of(result)
    assert result["isError"] is True
    assert "the reactor is offline" in text
    assert "Traceback" not in text and "File " not in text and __file__ not in text


async def test_unknown_tool_is_a_protocol_error_32602(connect: Connect) -> None:
    """server/tools#error-handling: unknown tools are protocol errors (-32602)."""
    async with connect(Server("s")) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.call_tool("nope")
    assert info.value.code == INVALID_PARAMS
    assert "nope" in info.value.message


@pytest.mark.parametrize(
    "params", [{}, {"name": 3}, {"name": "add", "arguments": [1, 2]}, {"name": "add", "arguments": "a=1"}]
)
async def test_malformed_tools_call_is_32602(connect: Connect, params: dict[str, Any]) -> None:
    """server/tools#error-handling: a request that fails the CallToolRequest schema is a protocol error."""
    server = Server("s")

    @server.tool
    def add(a: int, b: int) -> int:
        raise NotImplementedError

    async with connect(server) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.request("tools/call", params)
    assert info.value.code == INVALID_PARAMS


async def test_tool_returning_nan_is_still_answered(connect: Connect) -> None:
    """basic#responses: every request gets a response. NaN is not JSON; it used to make serialize raise and
    the caller get -32603. Now it is a result (README "NaN and Infinity"): null in structuredContent, which
    the generated outputSchema allows, and spelled out in the text copy."""
    server = Server("s")

    @server.tool
    def nan() -> dict[str, float]:
        return {"x": math.nan}

    async with connect(server) as client:
        result = await client.call_tool("nan", timeout=2)
    assert not result.get("isError")
    assert result["structuredContent"] == {"x": None}
    assert result["content"] == [{"type": "text", "text": '{"x": NaN}'}]


# -- list_changed --------------------------------------------------------------------------------------------
async def test_replacing_a_tool_sends_tools_list_changed(connect: Connect) -> None:
    """server/tools#list-changed-notification: with listChanged declared, the server SHOULD notify when the
    list of tools changes; the client re-fetches tools/list."""
    server = Server("s")

    @server.tool(name="greet")
    def greet_v1(name: str) -> str:
        """Say hello."""
        raise NotImplementedError

    inbox = Inbox()
    async with connect(server, notification_handler=inbox) as client:
        assert (await client.list_tools())[0]["description"] == "Say hello."

        @server.tool(name="greet")
        def greet_v2(name: str) -> str:
            """Say hello, politely."""
            return f"Good day, {name}."

        assert await inbox.wait("notifications/tools/list_changed") == [{}]
        assert (await client.list_tools())[0]["description"] == "Say hello, politely."
        assert text_of(await client.call_tool("greet", {"name": "Ada"})) == "Good day, Ada."


async def test_removing_a_tool_right_after_connecting_sends_tools_list_changed(connect: Connect) -> None:
    """server/tools#list-changed-notification: a change made as soon as connect() returns is still announced.

    The server may not yet have read notifications/initialized at that moment; the notification must be
    delivered (or queued until then), not dropped."""
    server = Server("s")

    @server.tool
    def gone() -> None:
        raise NotImplementedError

    inbox = Inbox()
    async with connect(server, notification_handler=inbox) as client:
        assert server.remove_tool("gone")
        await inbox.wait("notifications/tools/list_changed")
        assert await client.list_tools() == []


# -- concurrency ---------------------------------------------------------------------------------------------
async def test_fifty_concurrent_calls_are_all_answered_correctly(connect: Connect) -> None:
    """basic#requests: requests are independent; each answer carries its request's id. All 50 calls are in
    the tool at once (the tool waits for the 50th), so the server must run them concurrently."""
    server = Server("s")
    inside = 0
    all_inside = asyncio.Event()

    @server.tool
    async def double(n: int) -> int:
        nonlocal inside
        inside += 1
        if inside == 50:
            all_inside.set()
        await asyncio.wait_for(all_inside.wait(), WAIT)
        return 2 * n

    async with connect(server) as client:
        results = await asyncio.gather(*(client.call_tool("double", {"n": n}) for n in range(50)))

    assert [r["structuredContent"] for r in results] == [{"result": 2 * n} for n in range(50)]


async def test_sync_tool_runs_in_a_thread_and_can_use_the_context(connect: Connect) -> None:
    """A plain ``def`` tool runs off the event loop; ctx.report_progress / ctx.info still reach the client
    (basic/utilities/progress, server/utilities/logging)."""
    server = Server("s")
    loop_thread = threading.get_ident()

    @server.tool
    def crunch(steps: int, ctx: Context) -> bool:
        for i in range(1, steps + 1):
            ctx.report_progress(i, steps, f"step {i}")
        ctx.info({"done": steps})
        return threading.get_ident() != loop_thread

    progress: list[tuple[float, float | None, str | None]] = []
    inbox = Inbox()
    async with connect(server, notification_handler=inbox) as client:
        result = await client.call_tool(
            "crunch", {"steps": 3}, progress_callback=lambda p, t, m: progress.append((p, t, m))
        )
        (log,) = await inbox.wait("notifications/message")

    assert result["structuredContent"] == {"result": True}
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert log == {"level": "info", "data": {"done": 3}}
