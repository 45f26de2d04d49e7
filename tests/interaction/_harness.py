"""Shared types and helpers for the interaction suite (the fixture itself lives in ``conftest.py``).

A test takes the ``connect`` fixture and writes ``async with connect(server, **client_kwargs) as client``;
it never names a transport. Every wait is bounded (``WAIT`` seconds) and event-driven: no sleeps to let
things settle (STYLE rule 6).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp_notebook.engine.client import Client
from mcp_notebook.engine.server import Server

__all__ = ["WAIT", "Connect", "Inbox", "TransportArm"]

WAIT = 5.0  # the bound on every wait in this suite, in seconds


@dataclass(frozen=True)
class TransportArm:
    """How to reach a :class:`Server` over one transport.

    ``target(server)`` is an async context manager that serves ``server`` and yields what ``Client()`` is
    given (the Server itself for memory; a command list for stdio; a URL for HTTP) and stops serving on exit.
    The server must run in this process: tests observe it through closure-captured events.
    ``drop(server)`` makes the server side hang up on every connected client, mid-conversation.
    """

    target: Callable[[Server], AbstractAsyncContextManager[Any]]
    drop: Callable[[Server], Awaitable[None]]


class Connect:
    """The ``connect`` fixture's value: ``async with connect(server, **client_kwargs) as client``."""

    def __init__(self, transport: str, arm: TransportArm) -> None:
        self.transport = transport
        self._arm = arm

    @asynccontextmanager
    async def __call__(self, server: Server, **client_kwargs: Any) -> AsyncIterator[Client]:
        # This suite is the legacy-era (initialize session) contract; the modern era has tests/modern.
        client_kwargs.setdefault("era", "legacy")
        async with self._arm.target(server) as target, Client(target, **client_kwargs) as client:
            yield client

    async def drop_server(self, server: Server) -> None:
        """The server side closes its end of every connection (a crash, as the client sees it)."""
        await self._arm.drop(server)


class Inbox:
    """A notification handler that records ``(method, params)`` and lets a test await a given method."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._arrived = asyncio.Event()

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.items.append((method, params))
        self._arrived.set()

    def of(self, method: str) -> list[dict[str, Any]]:
        return [params for m, params in self.items if m == method]

    async def wait(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        """The params of the first ``count`` notifications called ``method``, once they have arrived."""

        async def arrived() -> list[dict[str, Any]]:
            while len(self.of(method)) < count:
                self._arrived.clear()
                await self._arrived.wait()
            return self.of(method)[:count]

        return await asyncio.wait_for(arrived(), WAIT)
