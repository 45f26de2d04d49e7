"""Two transports joined in memory. They still carry serialized JSON (DESIGN decision 2)."""

from __future__ import annotations

import asyncio

from ..protocol.jsonrpc import RequestId
from .base import TransportClosed

__all__ = ["MemoryTransport", "memory_pair"]

_EOF = object()


class MemoryTransport:
    def __init__(self, inbox: asyncio.Queue[object], outbox: asyncio.Queue[object], name: str) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._name = name
        self._closed = False

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        if self._closed:
            raise TransportClosed(f"{self._name}: cannot send, the transport is closed")
        if not isinstance(message, str):  # a dict slipping through would skip serialization
            raise TypeError("transports carry serialized JSON text")
        # The plain text only (a Wire's decoded value stays here): the other end decodes what it receives,
        # as over any other transport, and never shares our objects.
        self._outbox.put_nowait(str.__str__(message) if type(message) is not str else message)

    async def receive(self) -> str:
        if self._closed:
            raise TransportClosed(f"{self._name}: the transport is closed")
        item = await self._inbox.get()
        if item is _EOF:
            self._closed = True
            self._inbox.put_nowait(_EOF)  # later receive() calls fail the same way
            raise TransportClosed(f"{self._name}: the peer closed the connection")
        assert isinstance(item, str)
        return item

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._outbox.put_nowait(_EOF)
            self._inbox.put_nowait(_EOF)


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """(client side, server side)."""
    a: asyncio.Queue[object] = asyncio.Queue()
    b: asyncio.Queue[object] = asyncio.Queue()
    return MemoryTransport(a, b, "memory client"), MemoryTransport(b, a, "memory server")
