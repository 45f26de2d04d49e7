"""The interaction suite's transport matrix (STYLE rule 6; learned from the MCP Python SDK's
``tests/interaction/conftest.py``): every test that takes ``connect`` runs once per entry of
:data:`TRANSPORTS`, with the same body and the same assertions.

Adding a transport is one entry: a :class:`TransportArm` whose ``target(server)`` serves the given
:class:`Server` (in this process, so tests can observe it) and yields what ``Client()`` connects to, e.g.

    "stdio": TransportArm(target=serve_over_stdio_relay, drop=kill_relay),     # yields a command list
    "http": TransportArm(target=serve_over_http, drop=close_http_sessions),    # yields a URL

Tests that need one particular transport (a scripted peer, the initialize timeout) build it themselves and
do not take ``connect``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from mcp_notebook.server import Server
from tests.interaction._harness import Connect, TransportArm


@asynccontextmanager
async def _memory_target(server: Server) -> AsyncIterator[Server]:
    yield server  # Client(server) joins it over a memory pair, still carrying serialized JSON


async def _close_server_connections(server: Server) -> None:
    for session in list(server.sessions):
        await session.connection.aclose()


TRANSPORTS: dict[str, TransportArm] = {
    "memory": TransportArm(target=_memory_target, drop=_close_server_connections),
}


@pytest.fixture(params=list(TRANSPORTS))
def connect(request: pytest.FixtureRequest) -> Connect:
    """``async with connect(server, **client_kwargs) as client``, once per transport."""
    name: str = request.param
    return Connect(name, TRANSPORTS[name])
