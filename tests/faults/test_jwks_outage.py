"""Issue 18 item 4: an unreachable or slow JWKS. Before, every request got 500 while the key set was down,
and a slow one serialized requests 15 s each (the fetch ran under a lock). Now: cached keys keep working,
a token needing a key not in the cache gets 503 with ``Retry-After``, and many such requests share one
fetch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook import Server
from mcp_notebook.auth.resource import ProtectedResource
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.auth.local_as import LocalAS
from tests.local_http import serving
from tests.serving._http import INIT

pytestmark = pytest.mark.timeout(60)
WAIT = 30.0


@dataclass
class KeySet:
    """A JWKS endpoint in front of the local authorization server's: up, down (500), or held (slow)."""

    upstream: str
    mode: str = "up"
    hits: int = 0
    release: asyncio.Event = field(default_factory=asyncio.Event)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    in_flight: int = 0
    most_in_flight: int = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits += 1
        self.arrived.set()
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.mode == "down":
                return web.Response(status=500)
            if self.mode == "held":
                await self.release.wait()
            async with aiohttp.ClientSession() as http, http.get(self.upstream + "/jwks") as resp:
                return web.json_response(await resp.json())
        finally:
            self.in_flight -= 1


@pytest.fixture
async def setup() -> AsyncIterator[tuple[LocalAS, KeySet, str]]:
    local = LocalAS()
    await local.start()
    keys = KeySet(local.issuer)
    app = web.Application()
    app.router.add_get("/jwks", keys.handle)
    async with serving(app, access_log=None) as jwks:
        resource = ProtectedResource(None, local.issuer, jwks_uri=f"{jwks}/jwks")
        http = StreamableHTTPServer(
            Server("jwks"), middlewares=[resource.middleware], identify=resource.identity
        )
        url = await http.start()
        resource.bind(url)
        try:
            yield local, keys, url
        finally:
            keys.release.set()
            await http.stop()
    await local.stop()


async def _status(http: aiohttp.ClientSession, url: str, token: str) -> tuple[int, str | None]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    async with http.post(url, json=INIT, headers=headers) as resp:
        return resp.status, resp.headers.get("Retry-After")


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refetch intervals (a minute; 5 s after a failure) are what the clock would give in production."""
    from mcp_notebook.auth import resource

    monkeypatch.setattr(resource, "_JWKS_REFRESH_SECONDS", 0.0)
    monkeypatch.setattr(resource, "_JWKS_RETRY_SECONDS", 0.0)


async def test_a_key_set_outage_is_503_and_cached_keys_keep_working(
    setup: tuple[LocalAS, KeySet, str],
) -> None:
    local, keys, url = setup
    rotated = LocalAS()  # another signing key (a new kid), same issuer: the key set must be fetched again
    rotated.issuer = local.issuer
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
        keys.mode = "down"
        status, retry = await _status(http, url, local.mint(url))
        assert status == 503 and retry is not None and int(retry) >= 1
        keys.mode = "up"
        assert (await _status(http, url, local.mint(url)))[0] == 200
        keys.mode = "down"
        assert (await _status(http, url, local.mint(url)))[0] == 200  # the cached key
        status, retry = await _status(http, url, rotated.mint(url))
        assert status == 503 and retry is not None


async def test_cached_keys_do_not_wait_for_a_pending_fetch(setup: tuple[LocalAS, KeySet, str]) -> None:
    local, keys, url = setup
    rotated = LocalAS()
    rotated.issuer = local.issuer
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
        assert (await _status(http, url, local.mint(url)))[0] == 200
        keys.mode, keys.hits = "held", 0
        keys.arrived.clear()
        waiting = [asyncio.ensure_future(_status(http, url, rotated.mint(url))) for _ in range(10)]
        await asyncio.wait_for(keys.arrived.wait(), WAIT)  # a fetch is pending (held)
        # a token whose key is cached is answered while the fetch is still held (it used to wait on a lock)
        assert (await asyncio.wait_for(_status(http, url, local.mint(url)), WAIT))[0] == 200
        assert not keys.release.is_set()
        keys.release.set()
        statuses = [status for status, _ in await asyncio.gather(*waiting)]
    assert statuses == [401] * 10  # the rotated key is not in the upstream set: unknown once fetched
    assert keys.most_in_flight == 1  # never two fetches at once
