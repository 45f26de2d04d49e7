"""A transport's optional capabilities (transports/base.py ``TakesAnswers``, ``PostsInline``): the engine's
Connection looks them up once when it starts, uses them when present, and works without them."""

from __future__ import annotations

import asyncio

from mcp_notebook import Client, Server
from mcp_notebook.engine.pending import INLINE
from mcp_notebook.protocol.jsonrpc import RequestId
from mcp_notebook.transports import memory_pair
from mcp_notebook.transports.base import PostsInline, TakesAnswers, Transport
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport
from mcp_notebook.transports.http_connect import HTTPClientTransport
from mcp_notebook.transports.memory import MemoryTransport

WAIT = 10.0


def adder() -> Server:
    server = Server("capabilities")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


class Capable:
    """A memory transport with both capabilities, recording their use."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.take_answer: object = None
        self.inline: list[str] = []

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        await self.inner.send(message, related_id=related_id)

    async def post_inline(self, message: str) -> None:
        self.inline.append(message)
        await self.inner.send(message)  # its answer comes back through receive()

    async def receive(self) -> str:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


class Plain:
    """A memory transport with neither capability (the memory transport itself takes answers)."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        await self.inner.send(message, related_id=related_id)

    async def receive(self) -> str:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _served(server: Server, client_side: Transport, server_side: MemoryTransport) -> int:
    serving = asyncio.ensure_future(server.serve(server_side))
    try:
        async with Client(client_side, era="modern", listen=False) as client:
            assert client.is_modern
            result = await asyncio.wait_for(client.call_tool("add", {"a": 2, "b": 3}), WAIT)
            return int(result["structuredContent"]["result"])
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


def test_the_http_client_transports_declare_both() -> None:
    assert issubclass(StreamableHTTPClientTransport, PostsInline)
    assert issubclass(HTTPClientTransport, PostsInline)


async def test_a_transport_without_the_capabilities_works() -> None:
    client_side, server_side = memory_pair()
    plain = Plain(client_side)
    assert not isinstance(plain, (TakesAnswers, PostsInline))
    assert await _served(adder(), plain, server_side) == 5


async def test_a_transport_with_the_capabilities_gets_them_used() -> None:
    client_side, server_side = memory_pair()
    capable = Capable(client_side)
    assert isinstance(capable, TakesAnswers) and isinstance(capable, PostsInline)
    assert await _served(adder(), capable, server_side) == 5
    assert callable(capable.take_answer)  # the engine's hook, set once when the connection started
    calls = [text for text in capable.inline if '"tools/call"' in text]
    if INLINE:  # modern requests go through post_inline (Python 3.11+)
        assert len(calls) == 1
    else:
        assert calls == []
