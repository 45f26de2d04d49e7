"""A client that listens: 2026-07-28 ``subscriptions/listen`` gives a modern client the change notifications a
legacy session gets unasked, so the same handlers see the same notifications in both eras.

Against our dual-era server, over memory, stdio and Streamable HTTP: the default client (``era="auto"``)
probes, speaks 2026-07-28, opens one listen stream for what the server declares, hears tools/list_changed
and resources/updated through it, re-listens with a new filter (new stream first, then the old one closes)
and ends it on close. The era found is remembered per stdio command / HTTP origin. Every wait is bounded.

Spec: basic/patterns/subscriptions, basic/versioning#era-detection, server/utilities/caching.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook import Client
from mcp_notebook.engine import modern_client
from mcp_notebook.protocol import modern
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.local_http import serving
from tests.modern._fixture import server
from tests.modern.test_modern_client import ANSWERS, FIXTURE, KINDS, LEGACY_STDIO, WAIT, http_url, sent

pytestmark = pytest.mark.timeout(60)


async def _opened(kind: str, url: str | None, **options: Any) -> Client:
    options.setdefault("timeout", WAIT)
    target: Any = url if kind == "http" else [sys.executable, str(FIXTURE)] if kind == "stdio" else server
    return await Client(target, **options).connect()


async def _with_client(kind: str, body: Any, **options: Any) -> None:
    if kind == "http":
        async with http_url() as url:
            client = await _opened(kind, url, **options)
            try:
                await body(client)
            finally:
                await client.aclose()
        return
    client = await _opened(kind, None, **options)
    try:
        await body(client)
    finally:
        await client.aclose()


class Heard:
    """Notifications seen by a handler, awaitable with a bound."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Event()

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.items.append((method, params))
        self._changed.set()

    async def wait_for(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        async def arrived() -> list[dict[str, Any]]:
            while len(found := [p for m, p in self.items if m == method]) < count:
                self._changed.clear()
                await self._changed.wait()
            return found

        return await asyncio.wait_for(arrived(), WAIT)


@pytest.mark.parametrize("kind", KINDS)
async def test_the_default_client_is_modern_and_hears_list_changed_through_a_listen_stream(kind: str) -> None:
    heard = Heard()

    async def body(client: Client) -> None:
        assert client.era == "auto" and client.is_modern
        honoured = client.subscriptions.honoured
        flags = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
        assert honoured == dict.fromkeys(flags, True)
        assert client.subscriptions.listening_for("toolsListChanged")
        await client.list_tools()
        assert (await client.call_tool("toggle_tool"))["content"][0]["text"] == "toggled"
        params = (await heard.wait_for("notifications/tools/list_changed"))[0]
        current = client.subscriptions.current
        assert current is not None
        assert params["_meta"] == {modern.META_SUBSCRIPTION_ID: current.id}
        await client.call_tool("toggle_tool")  # back as it was
        await heard.wait_for("notifications/tools/list_changed", 2)

    await _with_client(kind, body, notification_handler=heard)


@pytest.mark.parametrize("kind", KINDS)
async def test_resource_subscriptions_relisten_and_reach_registered_handlers(kind: str) -> None:
    updated: list[dict[str, Any]] = []
    got = asyncio.Event()

    def on_updated(params: dict[str, Any]) -> None:
        updated.append(params)
        got.set()

    async def body(client: Client) -> None:
        remove = client.subscriptions.on("notifications/resources/updated", on_updated)
        first = client.subscriptions.current
        await client.subscribe_resource("note://one")
        second = client.subscriptions.current
        assert second is not None and first is not None and second is not first
        assert second.honoured is not None
        assert second.honoured["resourceSubscriptions"] == ["note://one"]
        assert first.task is not None and first.task.done(), "the old stream is closed after the new one"
        await client.call_tool("touch", {"uri": "note://elsewhere"})
        await client.call_tool("touch", {"uri": "note://one"})
        await asyncio.wait_for(got.wait(), WAIT)
        assert [p["uri"] for p in updated] == ["note://one"]  # only what we asked for
        await client.unsubscribe_resource("note://one")
        remove()
        listens = [m for m in sent(client) if m.get("method") == "subscriptions/listen"]
        assert [m["params"]["notifications"].get("resourceSubscriptions") for m in listens] == [
            None,
            ["note://one"],
            None,
        ]

    await _with_client(kind, body)


async def test_a_legacy_session_delivers_to_the_same_handlers() -> None:
    heard: list[str] = []
    async with Client(server, era="legacy", timeout=WAIT) as client:
        got = asyncio.Event()

        def on_changed(params: dict[str, Any]) -> None:
            heard.append("tools")
            got.set()

        client.subscriptions.on("notifications/tools/list_changed", on_changed)
        assert client.subscriptions.current is None  # no listen stream in the legacy era
        await client.call_tool("toggle_tool")
        await asyncio.wait_for(got.wait(), WAIT)
        await client.call_tool("toggle_tool")
        assert not [m for m in sent(client) if m.get("method") == "subscriptions/listen"]
    assert heard


async def test_closing_the_client_ends_the_listen_stream_on_the_server() -> None:
    client = await Client(server, timeout=WAIT).connect()
    try:
        assert client.subscriptions.current is not None
        await client.subscriptions.close()
        # the server forgets the stream once cancelled: its session's listens empty out
        for _ in range(int(WAIT / 0.02)):
            if not any(s.listens for s in server.sessions):
                break
            await asyncio.sleep(0.02)  # polling the server's own state, bounded by WAIT
        assert not any(s.listens for s in server.sessions)
    finally:
        await client.aclose()


async def test_a_server_ending_the_stream_is_listened_to_again() -> None:
    heard = Heard()
    client = await Client(server, timeout=WAIT, notification_handler=heard).connect()
    try:
        current = client.subscriptions.current
        assert current is not None and current.id is not None
        first_id = current.id
        # the server tears the stream down (notifications/cancelled naming the listen request)
        (session,) = [s for s in server.sessions if first_id in s.listens]
        await session.connection.notify("notifications/cancelled", {"requestId": first_id})
        for _ in range(int(WAIT / 0.02)):
            if current.id != first_id and current.acknowledged.is_set():
                break
            await asyncio.sleep(0.02)  # the re-listen backs off briefly; bounded by WAIT
        assert current.id != first_id
        await client.call_tool("toggle_tool")
        await heard.wait_for("notifications/tools/list_changed")
        await client.call_tool("toggle_tool")
    finally:
        await client.aclose()


async def test_the_era_is_remembered_per_command_and_origin(tmp_path: Path) -> None:
    script = tmp_path / "legacy.py"
    script.write_text(LEGACY_STDIO.replace("MODE", ANSWERS["method-not-found"]))
    legacy_server = [sys.executable, str(script)]
    modern_client.remember_era(legacy_server, None)
    async with Client(legacy_server, timeout=WAIT) as first:
        assert not first.is_modern
        assert sent(first)[0]["method"] == "server/discover"
    assert modern_client.remembered_era(legacy_server) == "legacy"
    async with Client(legacy_server, timeout=WAIT) as second:  # known legacy: no probe this time
        assert not second.is_modern
        assert sent(second)[0]["method"] == "initialize"
    async with http_url() as url:
        async with Client(url, timeout=WAIT) as client:
            assert client.is_modern
        assert modern_client.remembered_era(url) == "modern"


@pytest.mark.timeout(45)
async def test_a_json_response_server_still_streams_the_listen_answer() -> None:
    """A server answering in JSON (``json_response=True``) still answers subscriptions/listen with its SSE
    stream (subscriptions: "the POST response is a long-lived SSE stream"). Before: the acknowledgement
    had no stream to travel on, and connect waited out the client's whole timeout (60 s) for it."""
    heard = Heard()
    http = StreamableHTTPServer(server, json_response=True)
    url = await http.start("127.0.0.1", 0)
    try:
        # the client's own timeout stays 60 s: connect must not wait for it
        client = await asyncio.wait_for(Client(url, timeout=60, notification_handler=heard).connect(), WAIT)
        try:
            assert client.is_modern
            assert client.subscriptions.listening_for("toolsListChanged")
            assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
            await client.call_tool("toggle_tool")
            await heard.wait_for("notifications/tools/list_changed")
            await client.call_tool("toggle_tool")  # back as it was
        finally:
            await client.aclose()
    finally:
        await http.stop()


@pytest.mark.timeout(45)
async def test_a_listen_answered_in_json_without_an_ack_is_given_up_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server that answers subscriptions/listen with one JSON body and no acknowledgement does not listen:
    the client connects without a stream, says so (a warning, ``subscriptions.failure``) and asks once.
    Before: it asked again five times (a server ending an acknowledged stream is listened to again)."""
    http = StreamableHTTPServer(server)
    upstream = await http.start("127.0.0.1", 0)

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        message = json.loads(body)
        if message.get("method") == "subscriptions/listen":
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete"}}
            return web.json_response(answer)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with (
            aiohttp.ClientSession() as session,
            session.post(upstream, data=body, headers=headers) as resp,
        ):
            text = await resp.read()
            return web.Response(body=text, status=resp.status, content_type=resp.content_type)

    app = web.Application()
    app.router.add_post("/mcp", forward)
    try:
        async with serving(app) as base:
            with caplog.at_level(logging.WARNING, logger="mcp_notebook.engine.client"):
                client = await asyncio.wait_for(Client(f"{base}/mcp", timeout=60).connect(), WAIT)
            try:
                assert client.is_modern
                assert client.subscriptions.current is None
                assert not client.subscriptions.listening_for("toolsListChanged")
                assert "without acknowledging" in str(client.subscriptions.failure)
                assert "subscriptions/listen failed" in caplog.text
                assert len([m for m in sent(client) if m.get("method") == "subscriptions/listen"]) == 1
                result = await client.call_tool("add", {"a": 2, "b": 3})
                assert result["structuredContent"] == {"result": 5}
            finally:
                await client.aclose()
    finally:
        await http.stop()


async def test_closing_after_following_a_task_warns_of_no_failed_listen(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A task call's listen stream is re-opened without its taskIds in the background once the call ends;
    closing the client meanwhile is no listen failure. Before, every such close logged 'subscriptions/listen
    failed, no change notifications: closed by this side' and set ``subscriptions.failure``."""
    from mcp_notebook import Server

    tasks = Server("task-then-close")

    @tasks.tool(task="optional")
    async def job() -> str:
        """Answers as a task."""
        return "done"

    with caplog.at_level(logging.WARNING, logger="mcp_notebook"):
        for _ in range(3):
            client = Client(tasks, era="modern")
            async with client:
                result = await asyncio.wait_for(client.call_tool("job", task=True), WAIT)
                assert result["content"][0]["text"] == "done"
            assert client.subscriptions.failure is None
            assert client.subscriptions.current is None
        async with client:  # connected again, the client listens again
            assert client.subscriptions.current is not None
    assert "subscriptions/listen failed" not in caplog.text
