"""Issue 20 item 4 (OAuth interop): dynamic registration asks for the scope the client will request, and
registers again once when the authorization server answers ``invalid_scope``. Against a local AS that, like
the official SDK's auth server and FastMCP's in-memory provider, grants a client only the scopes it
registered with: without default scopes, a registration without ``scope`` made every sign-in fail."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcp_notebook import Client
from mcp_notebook.auth import MemoryTokenStore, OAuth
from tests.auth.local_as import LocalAS
from tests.auth.test_end_to_end import HeadlessBrowser, _protect

pytestmark = [pytest.mark.timeout(60), pytest.mark.requirement("auth-dcr-scope")]


async def strict_as(default_scopes: str | None) -> LocalAS:
    local = LocalAS(registered_scopes_only=True, default_scopes=default_scopes)
    await local.start()
    return local


@pytest.fixture(params=[None, "mcp:tools"], ids=["no-default-scopes", "default-scopes"])
async def local_as(request: pytest.FixtureRequest) -> AsyncIterator[LocalAS]:
    local = await strict_as(request.param)
    yield local
    await local.stop()


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_registration_sends_the_scope_it_will_ask_for(local_as: LocalAS, era: str) -> None:
    http, _ = await _protect(local_as)
    try:
        auth = OAuth(store=MemoryTokenStore(), on_authorize=HeadlessBrowser(), scopes=["mcp:tools"])
        async with Client(http.url, auth=auth, era=era) as client:  # type: ignore[arg-type]
            assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        (registered,) = local_as.clients.values()
        assert "mcp:tools" in registered["scope"].split()  # was: no scope; sign-in failed (invalid_scope)
    finally:
        await http.stop()


async def test_a_registration_that_does_not_cover_the_scope_is_made_again_once(local_as: LocalAS) -> None:
    http, _ = await _protect(local_as)
    store = MemoryTokenStore()
    try:
        narrow = OAuth(store=store, on_authorize=HeadlessBrowser(), scopes=["mcp:tools"])
        async with Client(http.url, auth=narrow) as client:
            await client.list_tools()
        narrow.logout(http.url)  # signed out; the registration (scope mcp:tools) stays in the store
        wider = OAuth(store=store, on_authorize=HeadlessBrowser(), scopes=["mcp:tools", "admin"])
        async with Client(http.url, auth=wider) as client:
            await client.list_tools()  # the stored registration is refused (invalid_scope), then renewed
        assert len(local_as.clients) == 2
        assert set(list(local_as.clients.values())[-1]["scope"].split()) >= {"mcp:tools", "admin"}
    finally:
        await http.stop()
