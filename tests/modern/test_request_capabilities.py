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
