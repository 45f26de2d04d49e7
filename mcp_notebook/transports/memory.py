"""Two transports joined in memory. They still carry serialized JSON (DESIGN decision 2).

An answer (a response or an error) or a request goes to the other end's engine at once when that end's
reader is idle and nothing is queued before it (``take_answer``, transports/base.py ``TakesAnswers``, as the
HTTP client does for answers): the other end still decodes the text, but no queue and no turn of the loop
for its reader task. Notifications are always queued (the reader handles them in order)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from ..protocol.jsonrpc import ErrorResponse, Request, RequestId, Response, Wire
from .base import TransportClosed

__all__ = ["MemoryTransport", "memory_pair"]

_EOF = object()
_TAKEN = (Response, ErrorResponse, Request)  # what the other end's engine may take at once


class Channel:
    """One direction of a pair: messages in order, and whoever waits for one woken when it comes.

    What ``asyncio.Queue`` does for an unbounded queue, without its bookkeeping (a dozen calls per message:
    ``full``, ``_put``, ``_wakeup_next``, ``empty``, ``_get``...): a deque and the waiting futures."""

    __slots__ = ("_items", "_waiters")

    def __init__(self) -> None:
        self._items: deque[object] = deque()
        self._waiters: list[asyncio.Future[None]] = []

    def put_nowait(self, item: object) -> None:
        self._items.append(item)
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def get(self) -> object:
        items = self._items
        while not items:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise
        return items.popleft()


class MemoryTransport:
    def __init__(self, inbox: Channel, outbox: Channel, name: str) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._name = name
        self._closed = False
        self.peer: MemoryTransport | None = None  # the other end (memory_pair joins them)
        #: Set by this end's engine: takes an answer or request at once; False when its reader is busy.
        self.take_answer: Callable[[str], bool] | None = None

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        if self._closed:
            raise TransportClosed(f"{self._name}: cannot send, the transport is closed")
        if not isinstance(message, str):  # a dict slipping through would skip serialization
            raise TypeError("transports carry serialized JSON text")
        # The plain text only (a Wire's decoded value stays here): the other end decodes what it receives,
        # as over any other transport, and never shares our objects.
        text = str.__str__(message) if type(message) is not str else message
        if type(message) is Wire and type(message.message) in _TAKEN:  # an answer or request serialize made
            peer = self.peer
            take = peer.take_answer if peer is not None else None
            if take is not None and not self._outbox._items and take(text):
                return
        self._outbox.put_nowait(text)

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
    a, b = Channel(), Channel()
    client, server = MemoryTransport(a, b, "memory client"), MemoryTransport(b, a, "memory server")
    client.peer, server.peer = server, client
    return client, server
