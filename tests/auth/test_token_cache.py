"""The client's tokens are kept in memory with their expiry: the store (a file or the keyring) is read when
they may have changed, not on every request (issue 21). Real HTTP on 127.0.0.1 through the local
authorization server; the store counts its reads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.auth import MemoryTokenStore, OAuth
from mcp_notebook.auth.resource import ProtectedResource
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.auth.local_as import LocalAS

CALLS = 30


class CountingStore(MemoryTokenStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def get(self, key: str) -> dict[str, Any] | None:
        self.reads += 1
        return super().get(key)


def _server() -> Server:
    server = Server("protected")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


@pytest.fixture
async def protected() -> AsyncIterator[tuple[LocalAS, str]]:
    local = LocalAS()
    await local.start()
    resource = ProtectedResource(None, local.issuer)
    http = StreamableHTTPServer(_server(), middlewares=[resource.middleware])
    resource.bind(await http.start())
    try:
        yield local, http.url
    finally:
        await http.stop()
        await local.stop()


def _oauth(store: CountingStore) -> OAuth:
    return OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret", store=store)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_calls_do_not_read_the_token_store(protected: tuple[LocalAS, str], era: str) -> None:
    _, url = protected
    store = CountingStore()
    async with Client(url, auth=_oauth(store), era=era) as client:
        await client.call_tool("add", {"a": 1, "b": 1})  # signs in: the token is written, then used
        before = store.reads
        for i in range(CALLS):
            assert (await client.call_tool("add", {"a": i, "b": 1}))["structuredContent"] == {"result": i + 1}
        assert store.reads == before, f"{store.reads - before} store reads for {CALLS} calls"


async def test_a_token_stored_by_someone_else_is_read_when_ours_is_refused(
    protected: tuple[LocalAS, str],
) -> None:
    """Another process signed in meanwhile (the store changed under us): our stale token gets a 401, the
    store is read again, and its token is used without a new sign-in."""
    local, url = protected
    store = CountingStore()
    oauth = _oauth(store)
    async with Client(url, auth=oauth) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        signed_in = len(local.requests)
        fresh = local.mint(url, expires_in=600)
        oauth._tokens[url].access_token = "revoked-or-stale"  # type: ignore[union-attr]  # what we hold
        store.set(f"token:{url}", {"access_token": fresh, "issuer": local.issuer, "expires_at": 9e9})
        assert (await client.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == {"result": 4}
        assert len(local.requests) == signed_in  # no new token request: the stored one was found
        assert oauth.access_token(url) == fresh


async def test_logout_forgets_the_cached_token_too(protected: tuple[LocalAS, str]) -> None:
    _, url = protected
    oauth = _oauth(CountingStore())
    async with Client(url, auth=oauth) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        first = oauth.access_token(url)
        oauth.logout(url)
        assert oauth._tokens[url] is None
        assert (await client.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == {"result": 4}
        assert oauth.access_token(url) not in (None, first)
