"""The transport arms of the interaction suite: how a test's in-process :class:`Server` is reached over
memory, stdio and Streamable HTTP (registered in ``conftest.TRANSPORTS``).

* memory: ``Client(server)`` joins it over a memory pair (still serialized JSON).
* stdio: the client really spawns a process, ``python _relay.py 127.0.0.1 PORT``, and speaks
  newline-delimited JSON over its pipes; the relay copies bytes to and from a TCP connection to this
  process, where each accepted socket is a :class:`StdioServerTransport` served by ``server.serve``.
* http: a :class:`StreamableHTTPServer` on 127.0.0.1, any free port; the client gets its URL.

``drop(server)`` makes the server side hang up on every client of that server, mid-conversation. The
stdio and HTTP arms find what serves a given Server through ``_LIVE`` (filled while ``target`` runs).
Every wait here is bounded by ``WAIT``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

from mcp_notebook.engine.server import Server
from mcp_notebook.transports.http_server import StreamableHTTPServer
from mcp_notebook.transports.stdio import StdioServerTransport
from tests.interaction._harness import WAIT

__all__ = [
    "RELAY",
    "close_server_connections",
    "drop_http",
    "drop_stdio",
    "serve_in_memory",
    "serve_over_http",
    "serve_over_stdio_relay",
]

RELAY = Path(__file__).with_name("_relay.py")
HOST = "127.0.0.1"


class _Live(Protocol):
    async def drop(self) -> None: ...


_LIVE: dict[int, list[_Live]] = {}  # id(server) -> what serves it right now, over the stdio/HTTP arms


@asynccontextmanager
async def _registered(server: Server, live: _Live) -> AsyncIterator[None]:
    _LIVE.setdefault(id(server), []).append(live)
    try:
        yield
    finally:
        lives = _LIVE[id(server)]
        lives.remove(live)
        if not lives:
            del _LIVE[id(server)]


async def _drop_live(server: Server) -> None:
    lives = _LIVE.get(id(server), [])
    assert lives, "drop_server() outside 'async with connect(server)'"
    for live in list(lives):
        await live.drop()


async def _settle(tasks: set[asyncio.Task[None]]) -> None:
    """Wait for ``tasks`` (bounded); cancel, then wait again for, those still running."""
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=WAIT)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=WAIT)


# ---- memory -----------------------------------------------------------------------------------------------
@asynccontextmanager
async def serve_in_memory(server: Server) -> AsyncIterator[Server]:
    yield server  # Client(server) joins it over a memory pair, still carrying serialized JSON


async def close_server_connections(server: Server) -> None:
    for session in list(server.sessions):
        await session.connection.aclose()


# ---- stdio, through a relay process ------------------------------------------------------------------------
class _RelayEnd:
    """The test-process end of the relay: a TCP listener; each connection served as stdio."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.writers: set[asyncio.StreamWriter] = set()
        self.tasks: set[asyncio.Task[None]] = set()

    async def on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.writers.add(writer)
        transport = StdioServerTransport(reader, writer, name=f"{self.server.name} via relay")
        try:
            await self.server.serve(transport, name=f"{self.server.name} stdio")
        finally:
            await transport.aclose()  # idempotent; closes the socket if serve() never opened it
            self.writers.discard(writer)

    async def drop(self) -> None:
        """Abort every socket (no flush, no goodbye): the relay sees it end and exits with code 1."""
        for writer in list(self.writers):
            writer.transport.abort()
        await _settle(set(self.tasks))


@asynccontextmanager
async def serve_over_stdio_relay(server: Server) -> AsyncIterator[list[str]]:
    end = _RelayEnd(server)
    listener = await asyncio.start_server(end.on_connection, HOST, 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with _registered(server, end):
            yield [sys.executable, str(RELAY), HOST, str(port)]
    finally:
        listener.close()
        # The client has closed by now: its relay half-closed the socket, so serve() is ending on its own.
        await _settle(set(end.tasks))
        for writer in list(end.writers):
            writer.transport.abort()
        await asyncio.wait_for(listener.wait_closed(), WAIT)


async def drop_stdio(server: Server) -> None:
    await _drop_live(server)


# ---- Streamable HTTP ---------------------------------------------------------------------------------------
class _HTTPEnd:
    def __init__(self, server: Server, http: StreamableHTTPServer) -> None:
        self.server, self.http = server, http

    async def drop(self) -> None:
        """The server ends every MCP session (HTTPSessionTransport.aclose), as a server may at any time
        (basic/transports#session-management); later requests with that session id get 404."""
        await close_server_connections(self.server)


@asynccontextmanager
async def serve_over_http(server: Server) -> AsyncIterator[str]:
    http = StreamableHTTPServer(server)
    url = await http.start(HOST, 0)
    try:
        async with _registered(server, _HTTPEnd(server, http)):
            yield url
    finally:
        await http.stop()


async def drop_http(server: Server) -> None:
    await _drop_live(server)
