"""A local authorization server and an MCP server protected by it, on their own thread and loop, so a test
whose thread blocks (an IPython cell, Playwright) still gets answers. ``python -m tests.auth._servers``
runs both until stdin closes, printing ``AS <url>`` and ``MCP <url>`` (the browser test's servers)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mcp_notebook.auth.resource import ProtectedResource
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.auth.local_as import LocalAS
from tests.auth.test_end_to_end import _server

WAIT = 30.0


@dataclass
class Servers:
    auth: LocalAS
    mcp_url: str


@contextmanager
def running(consent: bool = False) -> Iterator[Servers]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test servers", daemon=True)
    thread.start()
    local = LocalAS(consent=consent)

    async def start() -> StreamableHTTPServer:
        await local.start()
        resource = ProtectedResource(None, local.issuer)
        http = StreamableHTTPServer(_server(), middlewares=[resource.middleware], identify=resource.identity)
        resource.bind(await http.start())
        return http

    http = asyncio.run_coroutine_threadsafe(start(), loop).result(WAIT)
    try:
        yield Servers(local, http.url)
    finally:
        asyncio.run_coroutine_threadsafe(http.stop(), loop).result(WAIT)
        asyncio.run_coroutine_threadsafe(local.stop(), loop).result(WAIT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()


if __name__ == "__main__":
    with running(consent="--consent" in sys.argv) as servers:
        print(f"AS {servers.auth.issuer}", flush=True)
        print(f"MCP {servers.mcp_url}", flush=True)
        sys.stdin.read()  # until the test closes our stdin
