"""What :func:`connect_http` returns: Streamable HTTP at a URL, falling back to the 2024-11-05 HTTP+SSE
transport at the same URL when the server answers the first POST with 400, 404 or 405.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#backwards-compatibility.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import aiohttp

from mcp_notebook.protocol.jsonrpc import Request, RequestId, peek

from ._http_common import ClientInbox, error_response
from .base import TransportClosed
from .http_client import StreamableHTTPClientTransport
from .http_legacy import LegacySSEClientTransport

__all__ = ["HTTPClientTransport", "connect_http"]


class HTTPClientTransport:
    """What :func:`connect_http` returns: Streamable HTTP, or HTTP+SSE when the server only speaks that."""

    def __init__(
        self, url: str, http: aiohttp.ClientSession, headers: Mapping[str, str] | None, timeout: float
    ):
        self.url = url
        self._http = http
        self._headers = headers
        self._timeout = timeout
        self._inbox = ClientInbox(f"MCP server at {url}")
        self.streamable = StreamableHTTPClientTransport(
            url, http, owns_http=False, headers=headers, timeout=timeout, inbox=self._inbox
        )
        self.streamable._on_fallback = self._fall_back
        self.legacy: LegacySSEClientTransport | None = None

    @property
    def kind(self) -> str:
        return "sse" if self.legacy is not None else "streamable-http"

    @property
    def session_id(self) -> str | None:
        return self.streamable.session_id

    @property
    def tools(self) -> Mapping[str, Mapping[str, Any]]:
        return self.streamable.tools

    @tools.setter
    def tools(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        self.streamable.tools = tools

    def post_inline(self, message: str) -> Coroutine[Any, Any, None]:
        """A modern request's exchange in the caller's task (Streamable HTTP); after a fall back to HTTP+SSE,
        which has no such exchange, the message is sent as :meth:`send` sends it (its answer comes through
        the queue). The coroutine of the one that does it, returned as it is (no coroutine around it)."""
        if self.legacy is None:
            return self.streamable.post_inline(message)
        return self.legacy.send(message)

    @property
    def take_answer(self) -> Callable[[str], bool] | None:
        """The engine's hook for answers that skip the queue (Streamable HTTP only)."""
        return self.streamable.take_answer

    @take_answer.setter
    def take_answer(self, hook: Callable[[str], bool] | None) -> None:
        self.streamable.take_answer = hook

    async def _fall_back(self, message: str, status: int, body: str) -> None:
        """The initial POST got 400/404/405: try the 2024-11-05 transport at the same URL, then resend."""
        request = peek(message)
        request_id = request.id if isinstance(request, Request) else None
        try:
            self.legacy = await LegacySSEClientTransport.start(
                self.url, headers=self._headers, timeout=self._timeout, session=self._http, inbox=self._inbox
            )
            await self.legacy.send(message)
        except TransportClosed as exc:
            reason = (
                f"Streamable HTTP POST got HTTP {status} ({body}); the HTTP+SSE fallback failed too: {exc}"
            )
            self._inbox.put(error_response(request_id, reason, status=status))

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        target = self.legacy if self.legacy is not None else self.streamable
        await target.send(message, related_id=related_id)

    async def receive(self) -> str:
        return await self._inbox.get()

    async def aclose(self) -> None:
        try:
            await self.streamable.aclose()
            if self.legacy is not None:
                await self.legacy.aclose()
        finally:
            await self._http.close()


async def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    **session_options: Any,
) -> HTTPClientTransport:
    """A transport to ``url``: Streamable HTTP, falling back to HTTP+SSE when the server answers the first
    POST with 400, 404 or 405 (transports#backwards-compatibility). ``session_options`` go to aiohttp."""
    http = aiohttp.ClientSession(**session_options)
    return HTTPClientTransport(url, http, headers, timeout)
