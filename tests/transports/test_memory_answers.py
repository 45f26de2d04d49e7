"""The memory transport hands an answer straight to the other end's engine (``take_answer``, as the HTTP
client does) when that end's reader is idle and nothing is queued before it: the text is still decoded by
the receiving end (DESIGN decision 2), and messages keep their order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.engine.connection import Connection
from mcp_notebook.protocol.jsonrpc import Notification, Request, serialize
from mcp_notebook.transports import memory_pair
from mcp_notebook.transports.base import TakesAnswers

WAIT = 10.0


def make_server() -> Server:
    server = Server("answers")

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool
    async def count(n: int, ctx: Context) -> int:
        """Count to n, reporting progress and logging each step."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
            await ctx.info(f"step {i + 1}")
        return n

    return server


def _count_taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    taken: list[str] = []
    real = Connection.take_answer

    def take_answer(self: Connection, text: str) -> bool:
        done = real(self, text)
        if done:
            taken.append(text)
        return done

    monkeypatch.setattr(Connection, "take_answer", take_answer)
    return taken


def test_both_ends_take_answers() -> None:
    client_side, server_side = memory_pair()
    assert isinstance(client_side, TakesAnswers) and isinstance(server_side, TakesAnswers)
    assert client_side.peer is server_side and server_side.peer is client_side


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_answer_skips_the_readers_queue(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    taken = _count_taken(monkeypatch)
    async with Client(make_server(), era=era) as client:
        before = len(taken)
        for i in range(5):
            result = await asyncio.wait_for(client.call_tool("echo", {"text": f"x{i}"}), WAIT)
            assert result["content"] == [{"type": "text", "text": f"x{i}"}]
        answers = [text for text in taken[before:] if '"result"' in text and '"text":"x' in text]
    assert len(answers) == 5  # before: none (every answer went through the queue and the reader task)
    assert all(type(text) is str for text in answers)  # the plain text: the client decodes it itself


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_what_a_tool_sends_before_its_answer_still_comes_first(
    monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    taken = _count_taken(monkeypatch)
    seen: list[Any] = []
    async with Client(make_server(), era=era) as client:
        for _ in range(20):
            seen.clear()
            result = await asyncio.wait_for(
                client.call_tool("count", {"n": 3}, progress_callback=lambda p, t, m: seen.append(p)), WAIT
            )
            assert result["structuredContent"] == {"result": 3}
            assert seen == [1, 2, 3]  # every progress notification handled before the call returned
    assert taken  # answers were taken directly meanwhile (when nothing was queued before them)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_request_skips_the_servers_queue(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    taken = _count_taken(monkeypatch)
    async with Client(make_server(), era=era) as client:
        before = len(taken)
        for i in range(5):
            result = await asyncio.wait_for(client.call_tool("echo", {"text": f"y{i}"}), WAIT)
            assert result["content"] == [{"type": "text", "text": f"y{i}"}]
        calls = [text for text in taken[before:] if '"method":"tools/call"' in text]
    assert len(calls) == 5  # before: none (every request went through the server's queue and reader)
    assert all(type(text) is str for text in calls)  # the plain text: the server decodes it itself


async def test_a_notification_sent_before_a_request_is_handled_before_it() -> None:
    from mcp_notebook.protocol.modern import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
    from mcp_notebook.protocol.session import Role, Session

    order: list[str] = []

    async def on_request(incoming: Any) -> dict[str, Any]:
        order.append(incoming.method)
        return {"tools": []}

    async def on_note(method: str, params: dict[str, Any]) -> None:
        order.append(method)

    client_side, server_side = memory_pair()
    server = Connection(
        Session(Role.SERVER, capabilities={"tools": {}}),
        server_side,
        request_handler=on_request,
        notification_handler=on_note,
    )
    server.start()
    meta = {"_meta": {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}}
    try:
        for i in range(3):
            await asyncio.wait_for(_until(lambda: server._reader_idle), WAIT)
            order.clear()
            await client_side.send(serialize(Notification("notifications/first")))
            await client_side.send(serialize(Request(i, "tools/list", meta)))  # not taken before the note
            await asyncio.wait_for(_until(lambda: len(order) == 2), WAIT)
            assert order == ["notifications/first", "tools/list"]
    finally:
        await server.aclose()
        await client_side.aclose()


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.001)


async def test_a_taken_request_runs_in_the_servers_context_not_the_callers() -> None:
    """A request taken at once starts its handler as the server's reader would, in the reader's context: a
    context variable the caller set after connecting is not seen by the server's tool."""
    import contextvars

    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")
    server = Server("context")

    @server.tool
    async def read_it() -> str:
        """The context variable as the tool sees it."""
        return seen.get()

    async with Client(server, era="modern") as client:
        seen.set("the caller's")
        result = await asyncio.wait_for(client.call_tool("read_it", {}), WAIT)
    assert result["content"] == [{"type": "text", "text": "unset"}]
