"""``mcp-notebook serve --http --auth ISSUER`` as a real subprocess: a token for another audience is
rejected, a token for this server accepted, the protected resource metadata published."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys

import aiohttp
import pytest

from tests.auth.local_as import LocalAS
from tests.auth.test_end_to_end import HEADERS, INIT

WAIT = 30.0


async def _serve(
    *args: str, target: str = "mcp_notebook.demo_server"
) -> tuple[asyncio.subprocess.Process, str]:
    command = [
        sys.executable,
        "-m",
        "mcp_notebook",
        "serve",
        target,
        "--http",
        "127.0.0.1:0",
    ]
    process = await asyncio.create_subprocess_exec(
        *command,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    assert process.stderr is not None
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), WAIT)).decode()
        assert line, "the server exited before serving"
        found = re.search(r"serving .* at (http://\S+)", line)
        if found:
            return process, found.group(1)


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        await asyncio.wait_for(process.wait(), WAIT)


async def test_serve_auth_rejects_another_audience(auth_server: LocalAS) -> None:
    process, url = await _serve("--auth", auth_server.issuer, "--tool-scope", "sunrise=mcp:sun")
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as raw:
            async with raw.post(url, data=json.dumps(INIT), headers=HEADERS) as resp:
                assert resp.status == 401
                assert "resource_metadata=" in resp.headers["WWW-Authenticate"]
            prm = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            async with raw.get(prm) as resp:
                document = await resp.json()
            assert document["resource"] == url and document["authorization_servers"] == [auth_server.issuer]
            assert "mcp:sun" in document["scopes_supported"]
            for audience, status in (("https://elsewhere.example/mcp", 401), (url, 200)):
                headers = {**HEADERS, "Authorization": f"Bearer {auth_server.mint(audience)}"}
                async with raw.post(url, data=json.dumps(INIT), headers=headers) as resp:
                    assert resp.status == status, await resp.text()
    finally:
        await _stop(process)


def test_auth_needs_http() -> None:
    from mcp_notebook.cli import main

    with pytest.raises(SystemExit):
        main(["serve", "mcp_notebook.demo_server", "--auth", "https://as.example"])


def test_serving_without_authentication_fails_closed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: ``serve --http`` with neither --token nor --auth served anyone, silently. Off loopback it
    now refuses to start; on loopback it warns."""
    from mcp_notebook import cli

    monkeypatch.delenv(cli.TOKEN_ENV, raising=False)
    assert cli.main(["serve", "mcp_notebook.demo_server", "--http", "0.0.0.0:0"]) == cli.EXIT_USAGE
    assert "refusing to serve 0.0.0.0 without authentication" in capsys.readouterr().err
    for host in ("192.0.2.7", "example.org"):
        assert cli._unauthenticated(host) is not None
    for host in ("127.0.0.1", "::1", "localhost"):
        assert cli._unauthenticated(host) is None
        assert "warning: no --token or --auth" in capsys.readouterr().err
