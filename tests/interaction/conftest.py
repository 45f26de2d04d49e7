"""The interaction suite's transport matrix (STYLE rule 6; learned from the MCP Python SDK's
``tests/interaction/conftest.py``): every test that takes ``connect`` runs once per entry of
:data:`TRANSPORTS`, with the same body and the same assertions.

Adding a transport is one entry: a :class:`TransportArm` whose ``target(server)`` serves the given
:class:`Server` (in this process, so tests can observe it) and yields what ``Client()`` connects to, and
whose ``drop(server)`` makes the server side hang up. The arms themselves live in ``_arms.py``: memory
(the Server itself), stdio (a command list: a real child process, ``_relay.py``, piping to this process)
and http (the URL of a Streamable HTTP server on 127.0.0.1).

Tests that need one particular transport (a scripted peer, the initialize timeout) build it themselves and
do not take ``connect``.
"""

from __future__ import annotations

import pytest

from tests.interaction._arms import (
    close_server_connections,
    drop_http,
    drop_stdio,
    serve_in_memory,
    serve_over_http,
    serve_over_stdio_relay,
)
from tests.interaction._harness import Connect, TransportArm

TRANSPORTS: dict[str, TransportArm] = {
    "memory": TransportArm(target=serve_in_memory, drop=close_server_connections),
    "stdio": TransportArm(target=serve_over_stdio_relay, drop=drop_stdio),  # yields a command list
    "http": TransportArm(target=serve_over_http, drop=drop_http),  # yields a URL
}


@pytest.fixture(params=list(TRANSPORTS))
def connect(request: pytest.FixtureRequest) -> Connect:
    """``async with connect(server, **client_kwargs) as client``, once per transport."""
    name: str = request.param
    return Connect(name, TRANSPORTS[name])
