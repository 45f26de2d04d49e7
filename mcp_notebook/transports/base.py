"""The one small interface every transport implements (like httpx's BaseTransport).

A transport carries serialized JSON-RPC messages (``str``, one message each) between two peers:

* ``await send(message, related_id=...)`` writes one message. ``related_id`` names the incoming request a
  server-side message belongs to (a response, or progress/log/elicitation sent while handling it), so the
  Streamable HTTP server can put it on that request's SSE stream; other transports ignore it.
* ``await receive()`` returns the next message, or raises :class:`TransportClosed` when the peer is gone
  (with the reason: exit code and stderr tail for a process, HTTP status for a URL...).
* ``await aclose()`` ends it; idempotent; bounded in time.

Foreign exceptions (OSError, aiohttp errors, ...) are translated at this boundary, ``raise ... from``.

What a server-side transport hands the layer above besides messages is declared here too: :class:`Peer`, who
is at the other end as the *connection* knows it (transport kind, session, which credential). Approval rules
match that, never a name the peer declares about itself (DESIGN decision 14).
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..protocol.errors import ConnectionClosedError
from ..protocol.jsonrpc import RequestId

__all__ = [
    "CREDENTIAL_NAME",
    "STREAM_LOST",
    "NeedsToolDefinitions",
    "Peer",
    "PostsInline",
    "Serves",
    "ServesOne",
    "TakesAnswers",
    "Transport",
    "TransportClosed",
    "wait_event",
]

# A credential's name becomes the principal approval rules match (``NAME.TOOL``): no dots, no glob characters.
CREDENTIAL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


#: In the ``data`` of the error a transport answers a request with when the request's 2026-07-28 response
#: stream ended before its answer: the request is lost, and the client MUST re-issue it with a new id
#: (basic/transports/streamable-http; no resumption in 2026-07-28). The engine does, a few times.
STREAM_LOST = "streamLost"


class TransportClosed(ConnectionClosedError):
    """The transport has ended: no more messages will arrive or can be sent."""


@runtime_checkable
class Transport(Protocol):
    async def send(self, message: str, *, related_id: RequestId | None = None) -> None: ...

    async def receive(self) -> str: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Peer:
    """Who is at the other end of a server-side connection, as the connection itself knows it.

    ``transport``: ``"memory"``, ``"stdio"``, ``"http"``... ``session_id``: the session the transport issued
    (HTTP's ``Mcp-Session-Id``), if any. ``credential``: the *name* of the credential that authenticated the
    peer (a named bearer token), never the secret. Nothing here comes from what the peer says about itself.
    """

    transport: str
    session_id: str | None = None
    credential: str | None = None
    # Who authenticated, as a stable key the server binds tasks, sessions, listen streams and sealed states
    # to: "token:NAME" (a named token), "token" (the unnamed one), "oauth:SUBJECT client:CLIENT_ID" (an
    # OAuth access token). None: the connection authenticated nobody.
    identity: str | None = None
    # False for a connection that lives for one request (a 2026-07-28 HTTP POST): without an identity,
    # such a caller has no principal at all; a lasting connection (memory, stdio, an HTTP session) is one.
    lasting: bool = True

    @property
    def principal(self) -> str:
        """The name rules are written for: the credential's name, else the transport kind."""
        return self.credential or self.transport


@runtime_checkable
class NeedsToolDefinitions(Protocol):
    """A client transport that needs the tools' definitions from the layer above: the modern HTTP client
    sends a tool's ``x-mcp-header`` arguments as ``Mcp-Param-*`` headers (SEP-2243). The client keeps
    ``tools`` current after each ``tools/list``."""

    tools: Mapping[str, Mapping[str, Any]]


# Optional client-transport capabilities: the engine's Connection looks each one up once, when it starts, and
# uses it when present; a transport without them works the same, through send() and receive().


@runtime_checkable
class TakesAnswers(Protocol):
    """A client transport that can hand an answer (a response or error, one message) straight to the engine
    instead of queueing it for :meth:`Transport.receive`. The engine sets ``take_answer`` once; the transport
    calls it with the answer's text when nothing is queued before it, and queues the message as usual when it
    returns False (the engine's reader is busy) or while it is None. The HTTP client: an answer in a JSON
    body then costs no queue and no turn of the loop for the reader task."""

    take_answer: Callable[[str], bool] | None


@runtime_checkable
class PostsInline(Protocol):
    """A client transport that can run a 2026-07-28 request's exchange in its caller's task (no task per
    request): ``post_inline(message)`` returns once the exchange is over, its messages delivered as
    :meth:`Transport.send`'s would be (an answer through ``take_answer`` or the queue; a failure as an error
    for the request). Cancelling the caller cuts the exchange, which in 2026-07-28 is the request's
    cancellation on the wire: nothing more is sent for it. Used where :data:`INLINE` holds."""

    async def post_inline(self, message: str) -> None: ...


@runtime_checkable
class Serves(Protocol):
    """What a server-side transport needs from the layer above: someone to serve each new connection."""

    async def serve(self, transport: Transport, *, peer: Peer | None = None) -> None: ...

    def tool_input_schema(self, name: object) -> dict[str, Any] | None:
        """The inputSchema of tool ``name`` (None if unknown): modern HTTP checks ``Mcp-Param-*`` headers.
        Read only; the same object while the tool is unchanged (the transport walks each schema once)."""


# A request's exchange (client) or handler (server) runs in its caller's task instead of one of its own only
# where a task can tell a cancel of ours (a timeout, the connection's end) from another: Task.uncancel, 3.11+.
INLINE = sys.version_info >= (3, 11)


@runtime_checkable
class ServesOne(Protocol):
    """A server that answers a single stateless request without a connection loop of its own (the engine's
    ``Server``); the HTTP server serves a 2026-07-28 POST through it, or else through :meth:`Serves.serve`."""

    def serve_one(self, transport: Transport, message: str, *, peer: Peer) -> Callable[[str], None]:
        """Start answering ``message`` over ``transport``; returns ``end(reason)``, called once it is over."""


async def wait_event(event: asyncio.Event, timeout: float | None) -> bool:
    """Wait until ``event`` is set or ``timeout`` seconds pass (None: no bound); True when it is set.

    A cancellation of the waiting task always propagates. ``asyncio.wait_for(event.wait(), t)`` does not
    promise that on Python 3.10-3.11: when the event is set in the same turn of the loop as the cancel, it
    returns instead of raising, and a loop around it carries on as if nothing was asked (a cancelled call
    then waited for a task nobody would cancel: tests/tasks/test_task_wait.py). ``asyncio.timeout`` (3.11+)
    tells its own cancel from another one, and costs a timer where a task per wait cost a task and two more
    turns of the loop (a Streamable HTTP server waits like this once per request)."""
    if event.is_set():
        return True
    if timeout is None:
        return await event.wait()
    if sys.version_info >= (3, 11):
        try:
            async with asyncio.timeout(timeout):
                return await event.wait()
        except TimeoutError:
            return event.is_set()
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiter}, timeout=timeout)
    finally:
        waiter.cancel()
    return event.is_set()
