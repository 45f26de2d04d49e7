"""The one small interface every transport implements (like httpx's BaseTransport).

A transport carries serialized JSON-RPC messages (``str``, one message each) between two peers:

* ``await send(message, related_id=...)`` writes one message. ``related_id`` names the incoming request a
  server-side message belongs to (a response, or progress/log/elicitation sent while handling it), so the
  Streamable HTTP server can put it on that request's SSE stream; other transports ignore it.
* ``await receive()`` returns the next message, or raises :class:`TransportClosed` when the peer is gone
  (with the reason: exit code and stderr tail for a process, HTTP status for a URL...).
* ``await aclose()`` ends it; idempotent; bounded in time.

Foreign exceptions (OSError, aiohttp errors, ...) are translated at this boundary, ``raise ... from``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..protocol.errors import ConnectionClosedError
from ..protocol.jsonrpc import RequestId

__all__ = ["Transport", "TransportClosed"]


class TransportClosed(ConnectionClosedError):
    """The transport has ended: no more messages will arrive or can be sent."""


@runtime_checkable
class Transport(Protocol):
    async def send(self, message: str, *, related_id: RequestId | None = None) -> None: ...

    async def receive(self) -> str: ...

    async def aclose(self) -> None: ...
