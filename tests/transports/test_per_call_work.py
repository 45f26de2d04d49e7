"""What one tools/call costs in objects made, counted (issue 21, per-call work): a plain Server (no approval
hook, no listener) builds no IncomingCall nor event dicts, and no request makes a threading.Event unless
something asks for its cancel_event."""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.engine import connection, incoming, outgoing, server_methods

CALLS = 20
ENGINE = (connection.__name__, incoming.__name__, outgoing.__name__)  # the modules of a Connection


def make_server() -> Server:
    server = Server("per-call")

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


async def calls_patched(
    client: Client, monkeypatch: pytest.MonkeyPatch, *patches: tuple[Any, str, Any]
) -> None:
    """A warm-up call, then CALLS echo calls with ``patches`` (target, name, value) in place."""
    await client.call_tool("echo", {"text": "warm"})
    for target, name, value in patches:
        monkeypatch.setattr(target, name, value)
    try:
        for _ in range(CALLS):
            assert (await client.call_tool("echo", {"text": "x"}))["content"][0]["text"] == "x"
    finally:
        monkeypatch.undo()


@contextlib.asynccontextmanager
async def modern_http_client(server: Server | None = None, era: str = "modern") -> AsyncIterator[Client]:
    """A 2026-07-28 client (or ``era``'s) of ``server`` (make_server()) over Streamable HTTP on 127.0.0.1."""
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    http = StreamableHTTPServer(server or make_server())
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era=era) as client:
            yield client
    finally:
        await http.stop()


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_plain_servers_call_makes_no_event_nor_incoming_call(
    era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = {"Event": 0, "IncomingCall": 0}
    real_event, real_call = threading.Event, server_methods.IncomingCall

    def event(*args: Any, **kwargs: Any) -> Any:
        # the engine's (not a new worker's Thread): IncomingRequest.cancel_event or the connection
        if sys._getframe(1).f_globals.get("__name__") in ENGINE:
            made["Event"] += 1
        return real_event(*args, **kwargs)

    def call(*args: Any, **kwargs: Any) -> Any:
        made["IncomingCall"] += 1
        return real_call(*args, **kwargs)

    async with Client(make_server(), era=era) as client:
        await calls_patched(
            client, monkeypatch, (threading, "Event", event), (server_methods, "IncomingCall", call)
        )
    assert made == {"Event": 0, "IncomingCall": 0}


async def test_a_listened_server_still_builds_the_call_for_its_listeners() -> None:
    server = make_server()
    heard: list[tuple[str, Any]] = []
    server.add_listener(lambda name, data: heard.append((name, data.get("call"))))
    async with Client(server) as client:
        await client.call_tool("echo", {"text": "x"})
    started = [call for name, call in heard if name == "call_started"]
    assert len(started) == 1 and started[0].tool == "echo" and started[0].arguments == {"text": "x"}
    assert [name for name, _ in heard if name.startswith("call_")] == ["call_started", "call_finished"]


async def test_a_structured_result_is_checked_without_keying_its_schema_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client checks structuredContent against the listed outputSchema; the schema's shared check is
    found by its JSON text (a json.dumps), once per listing, not once per call."""
    from mcp_notebook.engine import client_tools as client_module

    server = Server("structured")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    looked_up = []
    real = client_module.schema_check

    def counted(schema: Any, **options: Any) -> Any:
        looked_up.append(schema)
        return real(schema, **options)

    monkeypatch.setattr(client_module, "schema_check", counted)
    async with Client(server) as client:
        for n in range(CALLS):
            assert (await client.call_tool("add", {"a": n, "b": 1}))["structuredContent"] == {"result": n + 1}
        assert len(looked_up) == 1
        await client.list_tools()  # a new listing: its schema is looked up again, once
        await client.call_tool("add", {"a": 1, "b": 1})
        await client.call_tool("add", {"a": 1, "b": 1})
        assert len(looked_up) == 2


async def test_a_modern_http_post_reads_its_meta_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Streamable HTTP server checks a modern request's _meta (for the HTTP status of an error) and hands
    what it found to the engine on the Wire: read_meta runs once per POST, not twice; and the header checks
    and read_meta share one read of params._meta (is_modern reads it inline, to route the POST)."""
    from mcp_notebook.protocol import modern

    runs = {"read_meta": 0, "_meta": 0}

    def counted(name: str) -> Any:
        real = getattr(modern, name)

        def count(*args: Any, **kwargs: Any) -> Any:
            runs[name] += 1
            return real(*args, **kwargs)

        return count

    async with modern_http_client() as client:
        patches = [(modern, name, counted(name)) for name in runs]
        await calls_patched(client, monkeypatch, *patches)
    assert runs == {"read_meta": CALLS, "_meta": CALLS}


async def test_a_modern_http_post_builds_no_capabilities_nor_closed_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 2026-07-28 POST's one-request session reads the server's capabilities made once (not 8 dicts per
    POST), and its connection makes no asyncio.Event (only wait_closed() needs one: nobody waits here)."""
    import asyncio

    made = {"capabilities": 0, "Event": 0}
    real_capabilities, real_event = Server.capabilities, asyncio.Event

    def capabilities(self: Server) -> dict[str, Any]:
        made["capabilities"] += 1
        return real_capabilities(self)

    def event(*args: Any, **kwargs: Any) -> Any:
        if sys._getframe(1).f_globals.get("__name__") in ENGINE:
            made["Event"] += 1
        return real_event(*args, **kwargs)

    async with modern_http_client() as client:
        await calls_patched(
            client, monkeypatch, (Server, "capabilities", capabilities), (asyncio, "Event", event)
        )
    assert made == {"capabilities": 0, "Event": 0}


# What a tool's answer resumes, one level at a time, on its way back to aiohttp's handler (each ~1.5k
# instructions): round 8 folded Connection._handle_inline and _answer into _handle, server_methods._tools_call
# (now a plain function returning _run's coroutine) and the HTTP server's _post (the same).
RESUMED = {
    "modern": ["Tool._run", "Tool.call", "_run", "ServerSession.handle", "Connection._handle",
               "ModernPosts._post_inline", "within_limit"],
    "legacy": ["Tool._run", "Tool.call", "_run", "ServerSession.handle", "Connection._handle"],
}  # fmt: skip


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_tools_answer_resumes_few_coroutines_over_http(era: str) -> None:
    server = Server("levels")
    seen: list[str] = []

    @server.tool
    async def levels(text: str) -> str:
        """The coroutines awaiting this one, innermost first."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_flags & inspect.CO_COROUTINE:
            if frame.f_globals.get("__name__", "").startswith("mcp_notebook."):
                seen.append(frame.f_code.co_qualname)
            frame = frame.f_back
        return text

    async with modern_http_client(server, era) as client:
        assert (await client.call_tool("levels", {"text": "x"}))["content"][0]["text"] == "x"
    assert seen == RESUMED[era]


async def test_a_modern_post_asks_for_its_running_loop_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking for the running loop is a getpid system call on Python 3.11 (asyncio.current_task without its
    loop asks too): per 2026-07-28 sync tool call the server's engine asks twice (ServerSession.answer_inline,
    which hands the loop on; the worker's to_worker), not four times."""
    import asyncio

    from mcp_notebook.engine import server_session, workers

    asked = 0
    real = asyncio.get_running_loop
    server_side = (connection.__name__, server_session.__name__, workers.__name__)

    def counted() -> asyncio.AbstractEventLoop:
        nonlocal asked
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__") == "asyncio.tasks":  # current_task(), asking for the caller
            caller = caller.f_back or caller
        if caller.f_globals.get("__name__") in server_side:
            asked += 1
        return real()

    async with modern_http_client() as client:
        await calls_patched(
            client,
            monkeypatch,
            (asyncio, "get_running_loop", counted),
            (asyncio.events, "get_running_loop", counted),
        )
    assert asked == 2 * CALLS
