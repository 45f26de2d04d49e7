"""Issue 18 item 3: the OAuth client's SSRF guard and its loopback callback.

Before: a public server's discovery document could 302 us to 127.0.0.1 (redirects were followed unchecked),
a DNS name resolving to a local address was never checked, documents had no size bound (400 MB -> 1.6 GiB),
errors quoted values from the fetched answer, and any request to the loopback callback (a wrong ``state``
included) ended the sign-in. Real HTTP servers on loopback; 127.0.0.2 stands for a public address (the
guard's address test is told so), since a test may not leave the machine.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook.auth import discovery
from mcp_notebook.auth.discovery import AuthError, check_issuer, check_resource
from mcp_notebook.auth.fetch import get_json
from mcp_notebook.auth.loopback import CallbackListener
from mcp_notebook.auth.oauth import OAuth
from tests.local_http import serving

pytestmark = pytest.mark.timeout(60)
SECRET = {"internal": "the-metadata-service-secret"}


@pytest.fixture
async def internal() -> AsyncIterator[int]:
    """A "metadata service" on 127.0.0.1 holding a secret, and a 2 MiB document."""

    async def secret(request: web.Request) -> web.Response:
        return web.json_response(SECRET)

    async def huge(request: web.Request) -> web.Response:
        return web.Response(text='{"x": "' + "a" * (2 << 20) + '"}', content_type="application/json")

    app = web.Application()
    app.router.add_get("/secret", secret)
    app.router.add_get("/huge", huge)
    async with serving(app, access_log=None) as base:
        yield int(base.rsplit(":", 1)[1])  # the port the system picked


@pytest.fixture
def public_127_0_0_2(monkeypatch: pytest.MonkeyPatch) -> None:
    real = discovery.is_local_address
    monkeypatch.setattr(
        discovery, "is_local_address", lambda address: address != "127.0.0.2" and real(address)
    )


async def _fetch(server_url: str, url: str) -> Any:
    oauth = OAuth(store="memory")
    oauth._server_url = server_url
    async with oauth._session() as http:
        return await get_json(http, server_url, url)


async def test_every_redirect_hop_is_checked(internal: int, public_127_0_0_2: None) -> None:
    async def bounce(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://127.0.0.1:{internal}/secret")

    app = web.Application()
    app.router.add_get("/.well-known/x", bounce)
    async with serving(app, "127.0.0.2", access_log=None) as base:
        with pytest.raises(AuthError, match="local address") as refused:
            await _fetch(f"{base}/mcp", f"{base}/.well-known/x")
        assert "the-metadata-service-secret" not in str(refused.value)


async def test_a_name_resolving_to_a_local_address_is_refused(
    internal: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.getaddrinfo

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        local = ("metadata.attacker.test", "mcp.lan.test")
        return real("127.0.0.1" if host in local else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(AuthError, match="resolves to a local address"):
        await _fetch("http://mcp.public.test/mcp", f"http://metadata.attacker.test:{internal}/secret")
    # a server that is itself local (development, a LAN name) is reached, and may point at local names
    lan = f"http://mcp.lan.test:{internal}"
    assert await _fetch(f"{lan}/mcp", f"{lan}/secret") == SECRET
    assert (
        await _fetch(f"http://127.0.0.1:{internal}/mcp", f"http://metadata.attacker.test:{internal}/secret")
        == SECRET
    )


async def test_documents_are_bounded_in_size(internal: int) -> None:
    assert await _fetch(f"http://127.0.0.1:{internal}/mcp", f"http://127.0.0.1:{internal}/huge") is None


def test_errors_do_not_echo_what_was_fetched() -> None:
    with pytest.raises(AuthError) as wrong_resource:
        check_resource("https://mcp.example/mcp", "the-metadata-service-secret")
    with pytest.raises(AuthError) as wrong_issuer:
        check_issuer("https://as.example", {"issuer": "the-metadata-service-secret"})
    for raised in (wrong_resource, wrong_issuer):
        assert "the-metadata-service-secret" not in str(raised.value)


async def test_the_callback_ignores_a_wrong_state_and_keeps_waiting() -> None:
    listener = await CallbackListener.start()
    listener.state = "the-real-state"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as http:
            async with http.get(listener.redirect_uri, params={"code": "c", "state": "forged"}) as resp:
                assert resp.status == 400
            assert not listener.result.done()
            async with http.get(
                listener.redirect_uri, params={"code": "c", "state": "the-real-state"}
            ) as resp:
                assert resp.status == 200
        url = await asyncio.wait_for(listener.result, 20)
        assert "state=the-real-state" in url
    finally:
        await listener.stop()
