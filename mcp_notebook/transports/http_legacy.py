"""Client side of the legacy HTTP+SSE transport (2024-11-05): GET an SSE stream, wait for its ``endpoint``
event, POST every message there. Streamable HTTP (``http_client.py``) falls back to it when a server
answers the first POST with 400, 404 or 405 (transports#backwards-compatibility).
Spec: https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

import aiohttp
from yarl import URL

from mcp_notebook.protocol.jsonrpc import (
    Request,
    RequestId,
    peek,
)

from ._http_common import (
    ClientInbox,
    ExchangeFailed,
    error_response,
    exchange,
    http_failure,
    iter_sse,
    owned_session,
    request_body,
    translated,
)
from .base import TransportClosed

__all__ = ["LegacySSEClientTransport"]

log = logging.getLogger("mcp_notebook.http")


class LegacySSEClientTransport:
    """Client side of the 2024-11-05 HTTP+SSE transport: GET an SSE stream, POST to its ``endpoint``."""

    def __init__(
        self,
        url: str,
        http: aiohttp.ClientSession,
        *,
        owns_http: bool,
        headers: Mapping[str, str] | None,
        timeout: float,
        inbox: ClientInbox | None = None,
    ) -> None:
        self.url = url
        self.endpoint: str | None = None
        self._http = http
        self._owns_http = owns_http
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._inbox = inbox if inbox is not None else ClientInbox(f"MCP server at {url} (HTTP+SSE)")
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def start(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        session: aiohttp.ClientSession | None = None,
        inbox: ClientInbox | None = None,
    ) -> LegacySSEClientTransport:
        http, owned = owned_session(session)
        self = cls(url, http, owns_http=owned, headers=headers, timeout=timeout, inbox=inbox)
        try:
            await self._connect()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _connect(self) -> None:
        headers = {**self._headers, "Accept": "text/event-stream"}
        timeout = aiohttp.ClientTimeout(total=None, connect=self._timeout, sock_connect=self._timeout)
        try:
            with translated(f"GET {self.url}"):
                resp = await asyncio.wait_for(
                    self._http.get(self.url, headers=headers, timeout=timeout), self._timeout
                )
        except ExchangeFailed as exc:
            raise TransportClosed(f"{self._inbox.name}: {exc}") from exc
        if resp.status != 200 or resp.content_type != "text/event-stream":
            body = await resp.text(errors="replace")
            resp.release()
            raise TransportClosed(f"{self._inbox.name}: no SSE stream: {http_failure(resp, body)}")
        endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.get_running_loop().create_task(
            self._read(resp, endpoint), name="HTTP+SSE reader"
        )
        try:
            self.endpoint = await asyncio.wait_for(asyncio.shield(endpoint), self._timeout)
        except asyncio.TimeoutError as exc:
            raise TransportClosed(
                f"{self._inbox.name}: no 'endpoint' event within {self._timeout:g} s"
            ) from exc

    async def _read(self, resp: aiohttp.ClientResponse, endpoint: asyncio.Future[str]) -> None:
        reason = "the server closed the SSE stream"
        try:
            async for event in iter_sse(resp, None):
                if event.event == "endpoint" and not endpoint.done():
                    target = URL(self.url).join(URL(event.data.strip()))
                    if target.origin() != URL(self.url).origin():  # never POST our messages elsewhere
                        endpoint.set_exception(TransportClosed(f"endpoint on another origin: {target}"))
                        return
                    endpoint.set_result(str(target))
                elif event.event == "message" and event.data.strip():
                    self._inbox.put(event.data)
        except (ExchangeFailed, ValueError) as exc:
            reason = f"the SSE stream broke: {exc}"
        finally:
            resp.release()
            if not endpoint.done():
                endpoint.set_exception(TransportClosed(f"{self._inbox.name}: {reason} before 'endpoint'"))
            self._inbox.fail(TransportClosed(f"{self._inbox.name}: {reason}"))

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        if self._closed or self.endpoint is None:
            raise TransportClosed(f"{self._inbox.name}: the transport is closed")
        self._inbox.raise_if_failed()
        parsed = peek(message)
        headers = {**self._headers, "Content-Type": "application/json"}
        try:
            async with exchange(
                self._http,
                "POST",
                self.endpoint,
                data=request_body(message),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self._timeout),
            ) as resp:
                if resp.status >= 400:
                    body = await resp.text(errors="replace")
                    if isinstance(parsed, Request):
                        self._inbox.put(
                            error_response(parsed.id, http_failure(resp, body), status=resp.status, body=body)
                        )
                    else:
                        log.warning("%s: POST got %s", self._inbox.name, http_failure(resp, body))
        except ExchangeFailed as exc:
            raise TransportClosed(f"{self._inbox.name}: {exc}") from exc

    async def receive(self) -> str:
        if self._closed:
            raise TransportClosed(f"{self._inbox.name}: the transport is closed")
        return await self._inbox.get()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.wait([self._reader], timeout=self._timeout)
        if self._owns_http:
            await self._http.close()
        self._inbox.fail(TransportClosed(f"{self._inbox.name}: closed by this side"))
