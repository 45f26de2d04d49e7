"""Our server answering stateless 2026-07-28 requests, end to end, over Streamable HTTP and stdio.

One test body per behaviour runs over both transports (the ``peer`` fixture): a raw modern client that
writes exactly the wire messages of MCP-NOTES §2.2 (per-request ``_meta``) and reads every message back.
HTTP-only behaviour (status codes, Mcp-* headers, no session id, a closed stream as cancellation) and the
dual-era endpoint (a legacy ``initialize`` session beside modern requests) have their own tests.
Every wait is bounded by WAIT; nothing sleeps to let things settle.

Spec: basic/versioning (era detection), server/discover, basic/patterns/mrtr, basic/patterns/subscriptions,
server/utilities/caching, basic/transports (2026-07-28 Streamable HTTP).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import pytest

from mcp_notebook import Client
from mcp_notebook.protocol import modern
from mcp_notebook.transports.http_server import StreamableHTTPServer
from mcp_notebook.transports.sse import SSEDecoder
from mcp_notebook.transports.stdio import StdioClientTransport
from tests.modern import _fixture
from tests.modern._fixture import server

LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]  # a dual-era server names them too
WAIT = 20.0
V = "2026-07-28"
FIXTURE = Path(_fixture.__file__)
NAMES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        modern.META_PROTOCOL_VERSION: V,
        modern.META_CLIENT_CAPABILITIES: capabilities or {},
        modern.META_CLIENT_INFO: {"name": "raw-modern-client", "version": "0"},
        **extra,
    }


@dataclass
class Reply:
    """Everything a request got back: the notifications before the answer, the answer, the HTTP status."""

    answer: dict[str, Any]
    notifications: list[dict[str, Any]] = field(default_factory=list)
    status: int | None = None  # None on stdio

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.answer, self.answer
        result: dict[str, Any] = self.answer["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.answer, self.answer
        error: dict[str, Any] = self.answer["error"]
        return error


class Stream(Protocol):
    """An open request (subscriptions/listen, a slow call): read its messages, then hang up."""

    request_id: int

    async def next(self) -> dict[str, Any]: ...
    async def hang_up(self) -> None: ...


class Peer(Protocol):
    name: str

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> Reply: ...
    async def open(self, message: dict[str, Any]) -> Stream: ...


ids = count(1)


def request(method: str, params: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    params = {"_meta": meta(), **(params or {})}
    return {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params, **fields}


async def call(peer: Peer, method: str, params: dict[str, Any] | None = None) -> Reply:
    return await peer.send(request(method, params))


# ---- HTTP --------------------------------------------------------------------------------------------------
def http_headers(message: dict[str, Any]) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": V,
        "Mcp-Method": message["method"],
    }
    name_field = NAMES.get(message["method"])
    if name_field is not None:
        headers["Mcp-Name"] = str(message["params"][name_field])
    return headers


class HTTPStream:
    """A POST whose response is read message by message. The server sends the headers with its first
    message (so an early error still gets its status), hence the response is awaited in a task."""

    def __init__(self, posting: asyncio.Task[aiohttp.ClientResponse], request_id: int) -> None:
        self.posting, self.request_id = posting, request_id
        self.decoder = SSEDecoder()
        self.buffered: list[dict[str, Any]] = []

    @classmethod
    def of(cls, response: aiohttp.ClientResponse, request_id: int) -> HTTPStream:
        done: asyncio.Future[aiohttp.ClientResponse] = asyncio.get_running_loop().create_future()
        done.set_result(response)
        return cls(done, request_id)  # type: ignore[arg-type]

    async def next(self) -> dict[str, Any]:
        response = await asyncio.wait_for(asyncio.shield(self.posting), WAIT)
        assert response.status == 200 and response.content_type == "text/event-stream"
        while not self.buffered:
            chunk = await asyncio.wait_for(response.content.readany(), WAIT)
            assert chunk, "the stream ended"
            self.buffered += [json.loads(e.data) for e in self.decoder.feed(chunk) if e.data]
        return self.buffered.pop(0)

    async def hang_up(self) -> None:
        """2026-07-28: closing the response stream is the cancellation."""
        if self.posting.done():
            self.posting.result().close()
        else:
            self.posting.cancel()
            await asyncio.gather(self.posting, return_exceptions=True)


class HTTPPeer:
    name = "http"

    def __init__(self, url: str, client: aiohttp.ClientSession) -> None:
        self.url, self.client = url, client

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        sent = headers if headers is not None else http_headers(message)
        async with self.client.post(self.url, json=message, headers=sent) as response:
            assert "Mcp-Session-Id" not in response.headers  # no sessions in the modern era
            if response.content_type == "application/json":
                return Reply(await response.json(), status=response.status)
            stream = HTTPStream.of(response, message["id"])
            notes = []
            while "id" not in (got := await stream.next()):
                notes.append(got)
            return Reply(got, notes, response.status)

    async def open(self, message: dict[str, Any]) -> Stream:
        post = self.client.post(self.url, json=message, headers=http_headers(message))
        return HTTPStream(asyncio.ensure_future(post), message["id"])


# ---- stdio -------------------------------------------------------------------------------------------------
class StdioStream:
    def __init__(self, peer: StdioPeer, request_id: int) -> None:
        self.peer, self.request_id = peer, request_id

    async def next(self) -> dict[str, Any]:
        return await self.peer.receive()

    async def hang_up(self) -> None:
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": self.request_id},
        }
        await self.peer.transport.send(json.dumps(cancel))


class StdioPeer:
    name = "stdio"

    def __init__(self, transport: StdioClientTransport) -> None:
        self.transport = transport

    async def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.transport.receive(), WAIT))
        return message

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        await self.transport.send(json.dumps(message))
        notes = []
        while (got := await self.receive()).get("id") != message["id"]:
            assert "id" not in got or "method" not in got, f"a server request on a modern connection: {got}"
            notes.append(got)
        return Reply(got, notes)

    async def open(self, message: dict[str, Any]) -> Stream:
        await self.transport.send(json.dumps(message))
        return StdioStream(self, message["id"])


@asynccontextmanager
async def http_peer() -> AsyncIterator[HTTPPeer]:
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as client:
            yield HTTPPeer(url, client)
    finally:
        await http.stop()


@asynccontextmanager
async def stdio_peer() -> AsyncIterator[StdioPeer]:
    transport = await asyncio.wait_for(StdioClientTransport.start([sys.executable, str(FIXTURE)]), WAIT)
    try:
        yield StdioPeer(transport)
    finally:
        await transport.aclose()


@pytest.fixture(params=["http", "stdio"])
async def peer(request: pytest.FixtureRequest) -> AsyncIterator[Peer]:
    opener = http_peer if request.param == "http" else stdio_peer
    async with opener() as opened:
        yield opened


# ---- discovery, _meta, results -----------------------------------------------------------------------------
async def test_discover_names_versions_capabilities_and_the_server(peer: Peer) -> None:
    result = (await call(peer, "server/discover")).result
    assert result["supportedVersions"] == [V, *LEGACY]  # dual-era (audit item 9)
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["resultType"] == "complete"
    assert result["_meta"][modern.META_SERVER_INFO] == {"name": "modern-fixture", "version": "1.0"}
    assert result["instructions"] == "Fixtures for the 2026-07-28 tests."
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")


async def test_lists_and_reads_carry_cache_hints_and_calls_do_not(peer: Peer) -> None:
    for method, params in [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "note://one"}),
    ]:
        result = (await call(peer, method, params)).result
        assert result["resultType"] == "complete" and "ttlMs" in result and "cacheScope" in result, method
    added = (await call(peer, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})).result
    assert added["structuredContent"] == {"result": 5} and added["resultType"] == "complete"
    assert "ttlMs" not in added and added["_meta"][modern.META_SERVER_INFO]["name"] == "modern-fixture"
    prompt = (await call(peer, "prompts/get", {"name": "hello", "arguments": {"name": "Ada"}})).result
    assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada."


async def test_missing_meta_fields_are_invalid_params(peer: Peer) -> None:
    # An empty _meta says nothing about the era: over HTTP no session id means modern; on stdio before any
    # initialize it is a legacy request too early (-32600), see test_a_bare_request_on_stdio_is_legacy.
    broken_metas: list[dict[str, Any]] = [
        {modern.META_PROTOCOL_VERSION: V},
        {modern.META_CLIENT_CAPABILITIES: {}},
    ]
    for broken in [{}, *broken_metas] if peer.name == "http" else broken_metas:
        message = request("tools/list")
        message["params"]["_meta"] = broken
        reply = await peer.send(message, {**http_headers(message)} if peer.name == "http" else None)
        assert reply.error["code"] == -32602 and reply.answer["id"] == message["id"]
        assert reply.status in (None, 400)


async def test_an_unsupported_version_lists_the_supported_ones(peer: Peer) -> None:
    message = request("tools/list")
    message["params"]["_meta"][modern.META_PROTOCOL_VERSION] = "2099-01-01"
    headers = {**http_headers(message), "MCP-Protocol-Version": "2099-01-01"}
    reply = await peer.send(message, headers if peer.name == "http" else None)
    assert reply.error["code"] == modern.UNSUPPORTED_PROTOCOL_VERSION
    assert reply.error["data"] == {"supported": [V, *LEGACY], "requested": "2099-01-01"}
    assert reply.status in (None, 400)


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "initialize", "resources/subscribe", "no/such"]
)
async def test_methods_the_modern_era_lacks_are_not_found(peer: Peer, method: str) -> None:
    reply = await call(peer, method)
    assert reply.error["code"] == -32601
    assert reply.status in (None, 404)


async def test_an_unknown_resource_is_invalid_params_with_its_uri(peer: Peer) -> None:
    reply = await call(peer, "resources/read", {"uri": "note://missing"})
    assert reply.error["code"] == -32602 and reply.error["data"] == {"uri": "note://missing"}


async def test_logs_follow_the_requests_own_level_and_progress_its_token(peer: Peer) -> None:
    quiet = await call(peer, "tools/call", {"name": "chatty", "arguments": {}})
    assert [n["method"] for n in quiet.notifications] == []  # no logLevel: no notifications/message
    params = {
        "name": "chatty",
        "arguments": {},
        "_meta": meta(**{modern.META_LOG_LEVEL: "info", "progressToken": "p"}),
    }
    loud = await call(peer, "tools/call", params)
    assert [n["method"] for n in loud.notifications] == ["notifications/message", "notifications/progress"]
    assert loud.notifications[0]["params"]["data"] == "an info line"
    assert loud.notifications[1]["params"] == {
        "progressToken": "p",
        "progress": 1,
        "total": 2,
        "message": "half way",
    }


# ---- MRTR --------------------------------------------------------------------------------------------------
ELICIT = {"elicitation": {}}


async def test_an_elicitation_is_an_input_required_result_and_the_retry_completes(peer: Peer) -> None:
    params = {"name": "greet", "arguments": {}, "_meta": meta(ELICIT)}
    first = await call(peer, "tools/call", params)
    assert first.notifications == []  # never a server->client request
    asked = first.result
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"] == {
        "who": {
            "method": "elicitation/create",
            "params": {"message": "Your name?", "requestedSchema": _fixture.NAME},
        }
    }
    retry = {**params, "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}}
    retry["requestState"] = asked["requestState"]
    done = (await call(peer, "tools/call", retry)).result
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "Hello, Ada!"


async def test_a_retry_without_the_answer_is_asked_again(peer: Peer) -> None:
    params = {"name": "greet", "arguments": {}, "_meta": meta(ELICIT)}
    first = (await call(peer, "tools/call", params)).result
    wrong = {
        **params,
        "inputResponses": {"someone_else": {"action": "accept"}},
        "requestState": first["requestState"],
    }
    again = (await call(peer, "tools/call", wrong)).result
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["who"]


async def test_a_threaded_tool_reruns_with_earlier_answers_replayed_from_the_state(peer: Peer) -> None:
    params = {"name": "two_steps", "arguments": {}, "_meta": meta({"elicitation": {}, "sampling": {}})}
    before = (await call(peer, "tools/call", {"name": "counters", "arguments": {}})).result[
        "structuredContent"
    ]
    one = (await call(peer, "tools/call", params)).result
    assert list(one["inputRequests"]) == ["elicitation_1"]
    answer = {"action": "accept", "content": {"name": "Ada"}}
    two = (
        await call(
            peer,
            "tools/call",
            {**params, "inputResponses": {"elicitation_1": answer}, "requestState": one["requestState"]},
        )
    ).result
    assert list(two["inputRequests"]) == ["sampling_2"]
    sampled = {
        "role": "assistant",
        "content": {"type": "text", "text": "hi"},
        "model": "m",
        "stopReason": "endTurn",
    }
    three = {**params, "inputResponses": {"sampling_2": sampled}, "requestState": two["requestState"]}
    done = (await call(peer, "tools/call", three)).result
    assert done["content"][0]["text"] == "Ada / hi"
    after = (await call(peer, "tools/call", {"name": "counters", "arguments": {}})).result[
        "structuredContent"
    ]
    if peer.name == "http":  # the in-process server: the same counters
        assert after["two_steps"] - before["two_steps"] == 3  # re-run from the start on every retry


async def test_a_tampered_request_state_is_invalid_params(peer: Peer) -> None:
    params = {"name": "greet", "arguments": {}, "_meta": meta(ELICIT)}
    first = (await call(peer, "tools/call", params)).result
    tampered = first["requestState"][:-4] + "0000"
    answer = {"who": {"action": "accept", "content": {"name": "Eve"}}}
    reply = await call(peer, "tools/call", {**params, "inputResponses": answer, "requestState": tampered})
    assert reply.error["code"] == -32602


async def test_an_undeclared_capability_is_missing_required_client_capability(peer: Peer) -> None:
    reply = await call(peer, "tools/call", {"name": "greet", "arguments": {}})
    assert reply.error["code"] == modern.MISSING_CLIENT_CAPABILITY
    assert reply.error["data"] == {"requiredCapabilities": {"elicitation": {}}}
    assert reply.status in (None, 400)


# ---- subscriptions/listen and cancellation -----------------------------------------------------------------
async def test_listen_acknowledges_then_delivers_only_what_was_asked(peer: Peer) -> None:
    notifications = {
        "toolsListChanged": True,
        "promptsListChanged": False,
        "resourceSubscriptions": ["note://one"],
    }
    listen = request("subscriptions/listen", {"notifications": notifications})
    stream = await peer.open(listen)
    ack = await stream.next()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    tag = {modern.META_SUBSCRIPTION_ID: listen["id"]}
    assert ack["params"] == {
        "_meta": tag,
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["note://one"]},
    }
    # On stdio the other requests' answers share the channel: skip them, keep the notifications.
    other = request("tools/call", {"name": "toggle_tool", "arguments": {}})
    if isinstance(peer, StdioPeer):
        await peer.transport.send(json.dumps(other))
    else:
        assert (await peer.send(other)).result["content"][0]["text"] == "toggled"
    seen = await _next_notification(stream)
    assert seen == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": tag}}
    touch = request("tools/call", {"name": "touch", "arguments": {"uri": "note://one"}})
    if isinstance(peer, StdioPeer):
        await peer.transport.send(json.dumps(touch))
    else:
        await peer.send(touch)
    updated = await _next_notification(stream)
    assert updated["method"] == "notifications/resources/updated"
    assert updated["params"] == {"uri": "note://one", "_meta": tag}
    await stream.hang_up()
    # The connection (stdio) or endpoint (HTTP) still serves after the listen ended.
    assert (await call(peer, "tools/call", {"name": "toggle_tool", "arguments": {}})).result[
        "resultType"
    ] == "complete"


async def _next_notification(stream: Stream) -> dict[str, Any]:
    while "id" in (got := await stream.next()):
        pass
    return got


async def test_hanging_up_cancels_the_running_request(peer: Peer) -> None:
    before = (await call(peer, "tools/call", {"name": "counters", "arguments": {}})).result[
        "structuredContent"
    ]
    params = {"name": "slow", "arguments": {}, "_meta": meta(progressToken="slow")}
    stream = await peer.open(request("tools/call", params))
    started = await stream.next()  # hang up only once the tool runs (its first progress report)
    assert started["method"] == "notifications/progress" and started["params"]["message"] == "started"
    await stream.hang_up()
    for _ in range(int(WAIT / 0.05)):
        now = (await call(peer, "tools/call", {"name": "counters", "arguments": {}})).result[
            "structuredContent"
        ]
        if now["slow_cancelled"] > before["slow_cancelled"]:
            break
        await asyncio.sleep(0.05)  # polling the server's own counter, bounded by WAIT
    assert now["slow_cancelled"] == before["slow_cancelled"] + 1


async def test_a_bare_request_on_stdio_is_legacy() -> None:
    async with stdio_peer() as peer:
        message = request("tools/list")
        message["params"]["_meta"] = {}
        assert (await peer.send(message)).error["code"] == -32600  # not initialized (legacy lifecycle)


# ---- HTTP only ---------------------------------------------------------------------------------------------
async def test_http_headers_must_match_the_body() -> None:
    async with http_peer() as peer:
        message = request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        good = http_headers(message)
        for headers in (
            {**good, "Mcp-Method": "tools/list"},
            {**good, "Mcp-Name": "sub"},
            {k: v for k, v in good.items() if k != "Mcp-Name"},
            {k: v for k, v in good.items() if k != "Mcp-Method"},
            {**good, "MCP-Protocol-Version": "2025-11-25"},
        ):
            reply = await peer.send(message, headers)
            assert (reply.status, reply.error["code"], reply.answer["id"]) == (
                400,
                modern.HEADER_MISMATCH,
                message["id"],
            )
        spaced = {**good, "mcp-method": " tools/call ", "MCP-NAME": "add"}
        del spaced["Mcp-Method"], spaced["Mcp-Name"]
        assert (await peer.send(message, spaced)).result["structuredContent"] == {"result": 2}


async def test_one_http_endpoint_serves_a_legacy_session_beside_modern_requests() -> None:
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era="legacy") as legacy, aiohttp.ClientSession() as raw:
            assert legacy.negotiated_version is not None and legacy.negotiated_version.name == "2025-11-25"
            peer = HTTPPeer(url, raw)
            assert (await call(peer, "server/discover")).result["supportedVersions"] == [V, *LEGACY]
            assert len(http.sessions) == 1  # only the legacy session is kept; modern requests leave nothing
            result = await legacy.call_tool("add", {"a": 1, "b": 2})
            assert result["structuredContent"] == {"result": 3}
            await legacy.send_ping()
    finally:
        await http.stop()


async def test_one_stdio_process_serves_legacy_and_modern_requests() -> None:
    async with stdio_peer() as peer:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        }
        legacy = {"jsonrpc": "2.0", "id": 1000, "method": "initialize", "params": init}
        assert (await peer.send(legacy)).result["protocolVersion"] == "2025-11-25"
        await peer.transport.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert (await call(peer, "server/discover")).result["resultType"] == "complete"
        ping = {"jsonrpc": "2.0", "id": 1001, "method": "ping"}
        assert (await peer.send(ping)).result == {}
