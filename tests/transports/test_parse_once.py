"""Each message is decoded once per hop (issue 21 "parse once"; STYLE: h11 parses once).

Client and server run in this process (stdio through the interaction suite's relay process, which copies
bytes and decodes nothing), so every JSON decode of a ``tools/call`` round trip happens here and is counted:
``protocol/jsonrpc``'s one decoder and ``json.loads`` are instrumented. Each message that crosses (the
client's trace records them) must be decoded exactly once, by its receiver: a transport that looks inside
a message to route it hands the engine what it decoded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.protocol import jsonrpc
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.interaction._arms import serve_in_memory, serve_over_stdio_relay

CALLS = 20


def make_server() -> Server:
    server = Server("parse-once")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Reports progress before answering, so the answer comes on an SSE stream."""
        await ctx.report_progress(1, 2, "half way")
        return "done"

    return server


def over_http(**options: Any) -> Callable[[Server], AbstractAsyncContextManager[str]]:
    @asynccontextmanager
    async def serve(server: Server) -> AsyncIterator[str]:
        http = StreamableHTTPServer(server, **options)
        url = await http.start("127.0.0.1", 0)
        try:
            yield url
        finally:
            await http.stop()

    return serve


ARMS: dict[str, Callable[[Server], AbstractAsyncContextManager[Any]]] = {
    "memory": serve_in_memory,
    "stdio": serve_over_stdio_relay,
    "http-json": over_http(json_response=True),
    "http-sse": over_http(),
}


class Decodes:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        loads, json_loads = jsonrpc._loads, json.loads

        def counted_loads(data: str | bytes) -> Any:
            self.count += 1
            return loads(data)

        def counted_json_loads(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return json_loads(*args, **kwargs)

        monkeypatch.setattr(jsonrpc, "_loads", counted_loads)
        monkeypatch.setattr(json, "loads", counted_json_loads)


def crossed(client: Client) -> int:
    return sum(1 for entry in client.trace if entry.direction in ("in", "out"))


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("arm", list(ARMS))
async def test_each_message_of_a_tools_call_is_decoded_once(
    arm: str, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_server()
    sse = arm == "http-sse"
    tool, arguments = ("chatty", {}) if sse else ("add", {"a": 2, "b": 3})
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async with ARMS[arm](server) as target, Client(target, era=era) as client:
        for _ in range(3):  # warm: the era probe, tools/list, ... are not per call
            await client.call_tool(tool, arguments, progress_callback=on_progress if sse else None)
        decodes = Decodes(monkeypatch)
        before = crossed(client)
        for _ in range(CALLS):
            result = await asyncio.wait_for(
                client.call_tool(tool, arguments, progress_callback=on_progress if sse else None), 10
            )
            assert not result.get("isError")
        messages = crossed(client) - before
        monkeypatch.undo()
    per_call = 3 if sse else 2  # request, (progress,) answer
    assert messages == per_call * CALLS
    if sse:
        assert len(progress) == 3 + CALLS  # the progress notification really crossed, once per call
    assert decodes.count == messages, f"{decodes.count / CALLS:g} decodes per call for {per_call} messages"
