"""What a one-request session (a 2026-07-28 POST) is built from, made once per server, not per request:
``Server.request_capabilities`` is ``capabilities()`` while nothing it depends on changes, and made again
when something does; a connection's closed Event is made only for whoever waits for the end."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_notebook import Server
from mcp_notebook.engine.connection import Connection
from mcp_notebook.protocol.session import Role, Session

WAIT = 20.0


def test_request_capabilities_are_made_once_and_again_after_a_change() -> None:
    server = Server("caps")
    first = server.request_capabilities()
    assert first == server.capabilities()
    assert server.request_capabilities() is first  # unchanged: the same dict

    server.extensions["example/ext"] = {"v": 1}
    second = server.request_capabilities()
    assert second == server.capabilities() and second["extensions"] == {"example/ext": {"v": 1}}
    assert server.request_capabilities() is second

    server.extensions["example/ext"]["v"] = 2  # an edit inside extensions counts too
    assert server.request_capabilities()["extensions"] == {"example/ext": {"v": 2}}

    server.tasks_enabled = False
    assert "tasks" not in server.request_capabilities()
    server.tasks_enabled = True
    assert "tasks" in server.request_capabilities()
    assert server.request_capabilities() == server.capabilities()


def test_a_subclass_capabilities_are_asked_each_time() -> None:
    asked = 0

    class Custom(Server):
        def capabilities(self) -> dict[str, Any]:
            nonlocal asked
            asked += 1
            return {"tools": {}, "experimental": {"n": asked}}

    server = Custom("custom")
    assert server.request_capabilities() == {"tools": {}, "experimental": {"n": 1}}
    assert server.request_capabilities() == {"tools": {}, "experimental": {"n": 2}}


async def _handler(request: Any) -> dict[str, Any]:
    return {}


async def test_wait_closed_wakes_when_the_connection_ends_and_returns_at_once_after() -> None:
    connection = Connection(Session(Role.SERVER), None, request_handler=_handler)  # type: ignore[arg-type]
    waiting = asyncio.ensure_future(connection.wait_closed())
    await asyncio.sleep(0)
    assert not waiting.done() and not connection.closed
    connection.end("the request ended")
    await asyncio.wait_for(waiting, WAIT)
    assert connection.closed and str(connection.close_reason).endswith("the request ended")
    await asyncio.wait_for(connection.wait_closed(), WAIT)  # already closed: no wait


async def test_a_connection_ended_before_anyone_waits_needs_no_event() -> None:
    connection = Connection(Session(Role.SERVER), None, request_handler=_handler)  # type: ignore[arg-type]
    connection.end("done")
    await asyncio.wait_for(connection.wait_closed(), WAIT)
    assert connection._closed_event is None


async def test_capabilities_set_on_one_server_instance_reach_a_modern_post() -> None:
    """``server.capabilities = ...`` on one instance (as test_meta_block does on a client): a 2026-07-28 POST
    is checked against it, as a lasting session is and as server/discover declares it. Before (the review
    of e9b5b7b), only the class was looked at: a POST was answered from the cached default capabilities, a
    method the instance no longer declared (here completion/complete) among them."""
    import aiohttp

    from mcp_notebook.protocol import era
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    server = Server("instance")
    plain = server.capabilities
    server.request_capabilities()  # cached from the class's capabilities()
    server.capabilities = lambda: {k: v for k, v in plain().items() if k != "completions"}  # type: ignore[method-assign]
    assert "completions" not in server.request_capabilities()
    params: dict[str, Any] = {
        "ref": {"type": "ref/prompt", "name": "none"},
        "argument": {"name": "a", "value": "b"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        **era.http_headers("completion/complete", params),
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": params}
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with (
            aiohttp.ClientSession() as client,
            client.post(url, json=body, headers=headers) as response,
        ):
            answer = await asyncio.wait_for(response.json(content_type=None), WAIT)
    finally:
        await http.stop()
    assert answer.get("error", {}).get("code") == -32601, answer  # Method not found, as discover implies
