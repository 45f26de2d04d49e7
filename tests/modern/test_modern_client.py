"""Our dual-era Client against our dual-era server (memory, stdio, Streamable HTTP) and legacy-only peers.

Against our server the ``era="auto"`` probe finds 2026-07-28: every request carries ``_meta``, no
``initialize`` is sent, MRTR ``input_required`` results are answered by the same handlers legacy
server->client requests use, and cancelling works per transport (HTTP: the stream is closed, nothing is
POSTed; stdio: ``notifications/cancelled``). Against a legacy-only server the probe falls back to the
``initialize`` handshake, whatever the error. ``era="legacy"`` never probes. Every wait is bounded by WAIT.

Spec: basic/versioning#era-detection, basic/patterns/mrtr, basic/transports (2026-07-28), caching.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook import Client, Server
from mcp_notebook.protocol import era, modern
from mcp_notebook.protocol.errors import LocalProtocolError, RemoteProtocolError
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.local_http import serving
from tests.modern import _fixture
from tests.modern._fixture import server

WAIT = 20.0
V = "2026-07-28"
FIXTURE = Path(_fixture.__file__)

pytestmark = pytest.mark.timeout(60)


def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def answer_sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "two"}, "model": "m"}


@asynccontextmanager
async def http_url(target: Server = server) -> AsyncIterator[str]:
    http = StreamableHTTPServer(target)
    url = await http.start("127.0.0.1", 0)
    try:
        yield url
    finally:
        await http.stop()


@asynccontextmanager
async def opened(kind: str, **options: Any) -> AsyncIterator[Client]:
    options.setdefault("timeout", WAIT)
    if kind == "http":
        async with http_url() as url, Client(url, **options) as client:
            yield client
    elif kind == "stdio":
        async with Client([sys.executable, str(FIXTURE)], **options) as client:
            yield client
    else:
        async with Client(server, **options) as client:
            yield client


def sent(client: Client) -> list[dict[str, Any]]:
    """Every JSON-RPC message the client wrote, in order."""
    return [entry.message for entry in client.trace if entry.direction == "out"]


KINDS = ["memory", "stdio", "http"]


# ---- our server: modern -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
async def test_auto_picks_modern_and_every_request_carries_meta(kind: str) -> None:
    async with opened(kind) as client:
        assert client.is_modern and client.negotiated_version is not None
        assert client.negotiated_version.name == V
        assert client.server_info["name"] == "modern-fixture"
        assert client.instructions == "Fixtures for the 2026-07-28 tests."
        assert "tools" in client.server_capabilities
        tools = {tool["name"] for tool in await client.list_tools()}
        assert {"add", "greet", "two_steps"} <= tools
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert "resultType" not in result and era.era_meta(result)["resultType"] == "complete"
        assert result["structuredContent"] == {"result": 5}
        assert (await client.get_prompt("hello", {"name": "Bo"}))["messages"]
        assert (await client.read_resource("note://one"))["contents"]
        messages = sent(client)
    methods = [m.get("method") for m in messages]
    assert methods[0] == "server/discover"
    assert "initialize" not in methods and "notifications/initialized" not in methods
    for message in messages:
        if "id" in message:
            meta = message["params"]["_meta"]
            assert meta[modern.META_PROTOCOL_VERSION] == V
            assert meta[modern.META_CLIENT_INFO]["name"] == "mcp-notebook"
            assert isinstance(meta[modern.META_CLIENT_CAPABILITIES], dict)


@pytest.mark.parametrize("kind", KINDS)
async def test_input_required_is_answered_by_the_handlers_and_retried(kind: str) -> None:
    seen: list[dict[str, Any]] = []

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return answer_name(params)

    async with opened(kind, elicitation_handler=elicit, sampling_handler=answer_sample) as client:
        result = await client.call_tool("greet")
        assert result["content"][0]["text"] == "Hello, Ada!"
        assert seen and seen[0]["message"] == "Your name?"
        two = await client.call_tool("two_steps")
        assert two["content"][0]["text"] == "Ada / two"
        calls = [m for m in sent(client) if m.get("method") == "tools/call"]
    greet = [m for m in calls if m["params"]["name"] == "greet"]
    assert len(greet) == 2 and greet[0]["id"] != greet[1]["id"]  # the retry is a new request
    assert "inputResponses" not in greet[0]["params"]
    assert greet[1]["params"]["inputResponses"] == {"who": {"action": "accept", "content": {"name": "Ada"}}}
    assert isinstance(greet[1]["params"]["requestState"], str)
    caps = greet[0]["params"]["_meta"][modern.META_CLIENT_CAPABILITIES]
    assert "elicitation" in caps and "sampling" in caps


@pytest.mark.parametrize("kind", KINDS)
async def test_progress_and_logs_arrive_on_a_modern_call(kind: str) -> None:
    logs: list[dict[str, Any]] = []
    progress: list[tuple[float, Any, Any]] = []

    async with opened(kind, logging_handler=logs.append) as client:
        await client.set_logging_level("info")
        result = await client.call_tool(
            "chatty", progress_callback=lambda p, t, m: progress.append((p, t, m))
        )
        assert result["content"][0]["text"] == "said things"
    assert [entry["data"] for entry in logs] == ["an info line"]
    assert progress == [(1, 2, "half way")]


@pytest.mark.parametrize("kind", ["stdio", "http"])
async def test_cancelling_a_modern_call_stops_the_tool(kind: str) -> None:
    started = asyncio.Event()
    async with opened(kind) as client:
        before = (await client.call_tool("counters"))["structuredContent"]["slow_cancelled"]
        call = asyncio.ensure_future(client.call_tool("slow", progress_callback=lambda *a: started.set()))
        await asyncio.wait_for(started.wait(), WAIT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        deadline = time.monotonic() + WAIT
        while (await client.call_tool("counters"))["structuredContent"]["slow_cancelled"] == before:
            assert time.monotonic() < deadline, "the tool was not cancelled"
            await asyncio.sleep(0.05)
        cancels = [m for m in sent(client) if m.get("method") == "notifications/cancelled"]
    if kind == "stdio":
        assert cancels, "stdio cancels with notifications/cancelled"
    # HTTP: the caller's own exchange is cut (closing the stream); the trace notes it and nothing is POSTed


async def test_http_requests_carry_the_2026_headers_and_no_session() -> None:
    seen: list[dict[str, str]] = []

    @web.middleware
    async def spy(request: web.Request, handler: Any) -> web.StreamResponse:
        seen.append(dict(request.headers))
        return await handler(request)

    async with http_url() as url:
        app = web.Application(middlewares=[spy])

        async def forward(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            keep = {
                k: v for k, v in request.headers.items() if k.lower().startswith(("mcp", "content", "accept"))
            }
            async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=keep) as resp:
                out = web.StreamResponse(status=resp.status, headers={"Content-Type": resp.content_type})
                await out.prepare(request)
                async for chunk in resp.content.iter_any():
                    await out.write(chunk)
                return out

        app.router.add_route("*", "/mcp", forward)
        async with serving(app) as base, Client(f"{base}/mcp", timeout=WAIT, era="auto") as client:
            assert client.is_modern
            await client.call_tool("add", {"a": 1, "b": 1})
            await client.read_resource("note://one")
    assert all(h.get("MCP-Protocol-Version") == V for h in seen)
    assert all("Mcp-Session-Id" not in h for h in seen)
    by_method = {h["Mcp-Method"]: h for h in seen}
    assert set(by_method) >= {"server/discover", "tools/list", "tools/call", "resources/read"}
    assert by_method["tools/call"]["Mcp-Name"] == "add"
    assert by_method["resources/read"]["Mcp-Name"] == "note://one"


async def test_modern_only_methods_fail_locally_and_legacy_ones_are_translated() -> None:
    async with opened("memory") as client:
        with pytest.raises(LocalProtocolError):
            await client.request("ping")
        await client.send_ping()  # a round trip all the same: server/discover stands in for ping
        assert sent(client)[-1]["method"] == "server/discover"
        await client.set_logging_level("debug")  # travels in _meta from now on
        await client.send_roots_list_changed()  # nothing to send in 2026
        result = await client.call_tool("add", {"a": 1, "b": 1})
        assert result["structuredContent"] == {"result": 2}


async def test_legacy_mode_never_probes_our_dual_era_server() -> None:
    async with opened("memory", era="legacy") as client:
        assert not client.is_modern
        assert client.negotiated_version is not None and client.negotiated_version.name == "2025-11-25"
        await client.send_ping()
        methods = [m.get("method") for m in sent(client)]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert "server/discover" not in methods


async def test_a_legacy_protocol_version_means_legacy() -> None:
    async with opened("memory", protocol_version="2025-06-18", era=None) as client:
        assert not client.is_modern and client.negotiated_version is not None
        assert client.negotiated_version.name == "2025-06-18"


# ---- legacy-only peers: fall back --------------------------------------------------------------------------
LEGACY_STDIO = """
import sys, json
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "tiny-legacy", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    elif msg["method"] == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
    elif msg["method"] == "server/discover":
        MODE
    else:
        err = {"code": -32601, "message": "Method not found"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": err}), flush=True)
"""
ANSWERS = {
    "method-not-found": 'print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], '
    '"error": {"code": -32601, "message": "no"}}), flush=True)',
    "invalid-params": 'print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], '
    '"error": {"code": -32602, "message": "bad"}}), flush=True)',
    "odd-code": 'print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], '
    '"error": {"code": -1, "message": "?"}}), flush=True)',
    "junk-result": 'print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), flush=True)',
    "silence": "pass",
}


@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_stdio_falls_back_on_any_non_modern_answer(answer: str, tmp_path: Path) -> None:
    script = tmp_path / "legacy.py"
    script.write_text(LEGACY_STDIO.replace("MODE", ANSWERS[answer]))
    started = time.monotonic()
    async with Client([sys.executable, str(script)], timeout=WAIT, probe_timeout=1.0, era="auto") as client:
        assert not client.is_modern
        assert client.server_info["name"] == "tiny-legacy"
        assert client.negotiated_version is not None and client.negotiated_version.name == "2025-06-18"
        assert await client.list_tools() == []
        methods = [m.get("method") for m in sent(client)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert time.monotonic() - started < (5.0 if answer == "silence" else 3.0)


async def test_http_falls_back_on_a_session_requiring_legacy_server() -> None:
    """A legacy Streamable HTTP server rejects the session-less probe with 400: initialize follows."""

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if body.get("method") == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-http", "version": "0"},
            }
            return web.json_response(
                {"jsonrpc": "2.0", "id": body["id"], "result": result}, headers={"Mcp-Session-Id": "s1"}
            )
        if request.headers.get("Mcp-Session-Id") != "s1":
            error = {"code": -32000, "message": "Bad Request: No valid session ID provided"}
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": error}, status=400)
        if "id" not in body:
            return web.Response(status=202)
        if body["method"] == "tools/list":
            return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": {}})

    async def refuse(request: web.Request) -> web.StreamResponse:
        return web.Response(status=405)

    app = web.Application()
    app.router.add_post("/mcp", handle)
    app.router.add_route("GET", "/mcp", refuse)
    app.router.add_route("DELETE", "/mcp", refuse)
    async with serving(app) as base, Client(f"{base}/mcp", timeout=WAIT, era="auto") as client:
        assert not client.is_modern
        assert client.server_info["name"] == "legacy-http"
        assert await client.list_tools() == []
        methods = [m.get("method") for m in sent(client)]
    assert methods[:2] == ["server/discover", "initialize"]


async def test_modern_mode_refuses_a_legacy_server(tmp_path: Path) -> None:
    script = tmp_path / "legacy.py"
    script.write_text(LEGACY_STDIO.replace("MODE", ANSWERS["method-not-found"]))
    with pytest.raises(RemoteProtocolError, match="does not speak 2026-07-28"):
        async with Client([sys.executable, str(script)], timeout=WAIT, era="modern"):
            pass


# ---- the pure decisions -----------------------------------------------------------------------------------
def test_probe_verdicts() -> None:
    discover = {
        "supportedVersions": [V, "2025-11-25"],
        "capabilities": {"tools": {}},
        "_meta": {modern.META_SERVER_INFO: {"name": "s", "version": "1"}},
    }
    verdict = era.classify_discover_result(discover, V)
    assert isinstance(verdict, era.UseModern) and verdict.server.server_info["name"] == "s"
    legacy_only = era.classify_discover_result({"supportedVersions": ["2025-06-18"], "capabilities": {}}, V)
    assert isinstance(legacy_only, era.UseLegacy) and legacy_only.version == "2025-06-18"
    assert isinstance(era.classify_discover_result({}, V), era.UseLegacy)
    for code in (-32601, -32602, -32600, -32000, -1, None):
        assert isinstance(era.classify_discover_error(code, None, V), era.UseLegacy)
    both = {"supported": ["2025-11-25"], "requested": V}
    assert era.classify_discover_error(-32022, both, V) == era.UseLegacy(
        "the server speaks no modern version we do, but a legacy one", "2025-11-25"
    )
    retry = era.classify_discover_error(-32022, {"supported": [V]}, "2026-01-01", (V, "2026-01-01"))
    assert retry == era.Retry(V)
    with pytest.raises(RemoteProtocolError):
        era.classify_discover_error(-32022, {"supported": ["2099-01-01"]}, V)


def test_results_headers_and_retries() -> None:
    assert era.read_result("tools/list", {"tools": []}) is None
    assert era.read_result("tools/call", {"resultType": "complete"}) is None
    with pytest.raises(RemoteProtocolError):
        era.read_result("tools/call", {"resultType": "mystery"})
    with pytest.raises(RemoteProtocolError):
        era.read_result("tools/list", {"resultType": "input_required", "requestState": "s"})
    step = era.read_result(
        "tools/call",
        {
            "resultType": "input_required",
            "inputRequests": {"k": {"method": "roots/list"}},
            "requestState": "s",
        },
    )
    assert step is not None and step.requests == {"k": {"method": "roots/list"}}
    params = era.retry_params({"name": "t", "inputResponses": {"old": {}}}, step, {"k": {"roots": []}})
    assert params == {"name": "t", "inputResponses": {"k": {"roots": []}}, "requestState": "s"}
    stateless = era.read_result(
        "tools/call", {"resultType": "input_required", "inputRequests": {"k": {"method": "x"}}}
    )
    assert stateless is not None and "requestState" not in era.retry_params({"name": "t"}, stateless, {})
    headers = era.http_headers("tools/call", era.modern_params({"name": "héllo"}, V, {}, {}))
    assert headers["MCP-Protocol-Version"] == V and headers["Mcp-Method"] == "tools/call"
    assert headers["Mcp-Name"].startswith("=?base64?")
    assert modern.decode_header_value(headers["Mcp-Name"]) == "héllo"
    schema = {
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer"}}
    }
    assert era.param_headers(schema, {"region": "eu", "n": 1}) == {"Mcp-Param-Region": "eu"}
    assert era.client_capabilities({"roots": {"listChanged": True}}) == {"roots": {}}
    assert era.cache_deadline({"ttlMs": -5}, now=10.0) == 10.0
    assert era.cache_deadline({"ttlMs": 2000}, now=10.0) == 12.0
