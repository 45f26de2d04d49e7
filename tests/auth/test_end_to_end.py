"""Our client against our own protected server, through a local authorization server, all real HTTP on
127.0.0.1: the authorization-code flow driven headless (the "browser" follows the redirects to the client's
one-shot loopback listener), stored tokens reused, audience checks, introspection, per-tool scopes with
step-up, client credentials."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import aiohttp

from mcp_notebook import Client, Server
from mcp_notebook.auth import FileTokenStore, MemoryTokenStore, OAuth
from mcp_notebook.auth.resource import ProtectedResource
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.auth.local_as import LocalAS
from tests.serving._http import INIT

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _server() -> Server:
    server = Server("protected")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def secret() -> str:
        """Needs the admin scope."""
        return "the secret"

    return server


async def _protect(local: LocalAS, **options: Any) -> tuple[StreamableHTTPServer, ProtectedResource]:
    resource = ProtectedResource(None, local.issuer, **options)
    http = StreamableHTTPServer(_server(), middlewares=[resource.middleware])
    resource.bind(await http.start())
    return http, resource


class HeadlessBrowser:
    """Opens the authorization URL and follows every redirect, ending on the client's loopback listener."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, url: str) -> None:
        self.opened.append(url)
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            assert resp.status == 200, await resp.text()
            assert "close this tab" in await resp.text()


async def test_authorization_code_flow_headless_then_stored_token(
    auth_server: LocalAS, tmp_path: Path
) -> None:
    http, resource = await _protect(auth_server)
    browser = HeadlessBrowser()
    store = FileTokenStore(tmp_path / "tokens")
    try:
        async with Client(http.url, auth=OAuth(store=store, on_authorize=browser)) as client:
            assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        assert len(browser.opened) == 1
        assert "code_challenge_method=S256" in browser.opened[0]
        code_request = next(r for r in auth_server.requests if r["grant_type"] == "authorization_code")
        assert code_request["resource"] == resource.resource == http.url
        # the token file is private to the user, and its name says nothing about the server
        files = list((tmp_path / "tokens").iterdir())
        assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
        assert stat.S_IMODE((tmp_path / "tokens").stat().st_mode) == 0o700
        assert not any("127.0.0.1" in f.name for f in files)
        # a second client finds the stored token: nobody is asked again
        async with Client(http.url, auth=OAuth(store=store, on_authorize=browser)) as client:
            await client.list_tools()
        assert len(browser.opened) == 1
    finally:
        await http.stop()


async def test_token_for_another_audience_is_rejected(auth_server: LocalAS) -> None:
    http, resource = await _protect(auth_server)
    try:
        async with aiohttp.ClientSession() as raw:
            async with raw.post(http.url, data=json.dumps(INIT), headers=HEADERS) as resp:
                assert resp.status == 401
                challenge = resp.headers["WWW-Authenticate"]
                assert f'resource_metadata="{resource.metadata_url}"' in challenge
            async with raw.get(resource.metadata_url) as resp:
                document = await resp.json()
                assert document["resource"] == http.url
                assert document["authorization_servers"] == [auth_server.issuer]
            other = auth_server.mint("http://127.0.0.1:1/mcp")
            headers = {**HEADERS, "Authorization": f"Bearer {other}"}
            async with raw.post(http.url, data=json.dumps(INIT), headers=headers) as resp:
                assert resp.status == 401
                assert 'error="invalid_token"' in resp.headers["WWW-Authenticate"]
                assert other not in await resp.text()
            expired = auth_server.mint(http.url, expires_in=-120)
            headers = {**HEADERS, "Authorization": f"Bearer {expired}"}
            async with raw.post(http.url, data=json.dumps(INIT), headers=headers) as resp:
                assert resp.status == 401
            good = auth_server.mint(http.url)
            headers = {**HEADERS, "Authorization": f"Bearer {good}"}
            async with raw.post(http.url, data=json.dumps(INIT), headers=headers) as resp:
                assert resp.status == 200
    finally:
        await http.stop()


async def test_introspection_checks_audience(auth_server: LocalAS) -> None:
    http, _ = await _protect(auth_server, introspection_endpoint=f"{auth_server.issuer}/introspect")
    try:
        async with aiohttp.ClientSession() as raw:
            for audience, status in (("http://127.0.0.1:1/mcp", 401), (http.url, 200)):
                headers = {**HEADERS, "Authorization": f"Bearer {auth_server.mint(audience)}"}
                async with raw.post(http.url, data=json.dumps(INIT), headers=headers) as resp:
                    assert resp.status == status
    finally:
        await http.stop()


async def test_tool_scope_steps_up(auth_server: LocalAS) -> None:
    auth_server.scopes.append("mcp:admin")
    http, _ = await _protect(
        auth_server, required_scopes=["mcp:tools"], tool_scopes={"secret": ["mcp:admin"]}
    )
    browser = HeadlessBrowser()
    try:
        async with Client(http.url, auth=OAuth(store="memory", on_authorize=browser)) as client:
            assert not (await client.call_tool("add", {"a": 1, "b": 1})).get("isError")
            result = await client.call_tool("secret", {})
            assert result["content"][0]["text"] == "the secret"
        assert len(browser.opened) == 2  # the second sign-in asked for more
        assert "mcp%3Aadmin" in browser.opened[1] and "mcp%3Atools" in browser.opened[1]
    finally:
        await http.stop()


async def test_client_credentials_need_no_person(auth_server: LocalAS) -> None:
    http, _ = await _protect(auth_server)
    oauth = OAuth(
        grant="client_credentials", client_id="machine", client_secret="s3cret", store=MemoryTokenStore()
    )
    try:
        async with Client(http.url, auth=oauth) as client:
            assert (await client.call_tool("add", {"a": 4, "b": 5}))["structuredContent"] == {"result": 9}
        assert "s3cret" not in repr(oauth)
    finally:
        await http.stop()


def test_file_store_round_trip(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path)
    store.set("token:https://h/mcp", {"access_token": "t"})
    assert store.get("token:https://h/mcp") == {"access_token": "t"}
    assert store.get("token:https://other/mcp") is None
    store.delete("token:https://h/mcp")
    assert store.get("token:https://h/mcp") is None
    assert os.listdir(tmp_path) == []


async def test_expired_token_is_refreshed_not_signed_in_again(auth_server: LocalAS) -> None:
    """offline_access was asked for (the server lists it), so a refresh token came; a token about to
    expire is refreshed before the request, with the resource indicator, and nobody is asked again."""
    auth_server.expires_in = 20  # inside the client's 30 s safety margin: every use needs a refresh
    http, _ = await _protect(auth_server, required_scopes=["mcp:tools"])
    browser = HeadlessBrowser()
    try:
        async with Client(http.url, auth=OAuth(store="memory", on_authorize=browser)) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            assert "offline_access" in browser.opened[0]
            auth_server.expires_in = 600
            assert (await client.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == {"result": 4}
        refreshes = [r for r in auth_server.requests if r["grant_type"] == "refresh_token"]
        assert refreshes and refreshes[0]["resource"] == http.url
        assert len(browser.opened) == 1
    finally:
        await http.stop()


async def test_expired_token_without_refresh_gets_a_new_one(auth_server: LocalAS) -> None:
    """A stored token past its expiry and no refresh token: the 401 leads to a new token, not to the old
    one being sent again."""
    http, _ = await _protect(auth_server)
    store = MemoryTokenStore()
    expired = auth_server.mint(http.url, expires_in=-120)
    store.set(f"token:{http.url}", {"access_token": expired, "issuer": auth_server.issuer, "expires_at": 1.0})
    oauth = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret", store=store)
    try:
        async with Client(http.url, auth=oauth) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
        assert oauth.access_token(http.url) not in (None, expired)
    finally:
        await http.stop()


async def test_slow_sign_in_does_not_count_against_the_era_probe(auth_server: LocalAS) -> None:
    """A person who takes longer than ``probe_timeout`` to sign in must not make the client give up on the
    2026-07-28 era: the sign-in happens before the probe."""
    http, _ = await _protect(auth_server)
    browser = HeadlessBrowser()
    person_done = asyncio.Event()

    async def slow_person(url: str) -> None:
        asyncio.get_running_loop().call_later(0.6, person_done.set)  # a person reading the page
        await asyncio.wait_for(person_done.wait(), 10)
        await browser(url)

    oauth = OAuth(store="memory", on_authorize=slow_person)
    try:
        async with Client(http.url, auth=oauth, era="auto", probe_timeout=0.3) as client:
            assert client.is_modern
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
    finally:
        await http.stop()
