"""Streamable HTTP, both directions (basic/transports#streamable-http), plus the HTTP+SSE fallback.

A tiny echo server built on the sans-IO Session checks the transports alone; the end-to-end tests run the real
Client and Server over them. Every wait is bounded; nothing sleeps to let things settle.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook.protocol.jsonrpc import RequestId
from mcp_notebook.protocol.session import (
    ErrorReceived,
    NotificationReceived,
    ProtocolViolation,
    RequestReceived,
    ResultReceived,
    Role,
    Session,
)
from mcp_notebook.transports.base import Peer as ConnectionPeer
from mcp_notebook.transports.base import Transport, TransportClosed
from mcp_notebook.transports.http_client import SessionExpired, StreamableHTTPClientTransport
from mcp_notebook.transports.http_connect import connect_http
from mcp_notebook.transports.http_server import HTTPSessionTransport, StreamableHTTPServer
from mcp_notebook.transports.sse import SSEDecoder, encode_event
from tests.local_http import serving

WAIT = 10.0
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# ---- a minimal server and client on the sans-IO session --------------------------------------------------
class EchoServer:
    """``echo`` answers its params; ``chatty`` sends a related notification first; ``gated`` waits for
    ``gate``; ``broadcast`` first sends an unrelated notification (GET stream); ``poll`` closes its SSE stream
    mid-call."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()  # a gated request has arrived and waits for the gate
        self.transports: list[Transport] = []
        self.ended = asyncio.Event()

    def tool_input_schema(self, name: object) -> dict[str, Any] | None:
        return None

    async def serve(self, transport: Transport, *, peer: ConnectionPeer | None = None) -> None:
        self.transports.append(transport)
        session = Session(Role.SERVER, capabilities={})
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                text = await transport.receive()
                for event in session.receive(text):
                    if isinstance(event, RequestReceived) and event.method == "initialize":
                        result = session.accept_initialize(event.params)
                        await transport.send(session.send_result(event.id, result), related_id=event.id)
                    elif isinstance(event, RequestReceived):
                        task = asyncio.get_running_loop().create_task(self._answer(session, transport, event))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    elif isinstance(event, ProtocolViolation) and event.reply:
                        await transport.send(event.reply)
        except TransportClosed:
            pass
        finally:
            for task in tasks:
                task.cancel()
            self.ended.set()

    async def _answer(self, session: Session, transport: Transport, event: RequestReceived) -> None:
        rid = event.id
        if event.method == "chatty":
            await transport.send(session.send_notification("notifications/message", {"n": 1}), related_id=rid)
        elif event.method == "broadcast":
            await transport.send(session.send_notification("notifications/hello", {"to": "all"}))
        elif event.method in ("gated", "poll"):
            if event.method == "poll":
                assert isinstance(transport, HTTPSessionTransport)
                assert transport.close_sse_stream(rid)
            self.waiting.set()
            await self.gate.wait()
            await transport.send(
                session.send_notification("notifications/message", {"late": True}), related_id=rid
            )
        await transport.send(session.send_result(rid, {"echo": event.params}), related_id=rid)


class Peer:
    """A client session over a transport: ``request()`` waits for its answer; notifications are queued."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.session = Session(Role.CLIENT)
        self.notes: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.waiting: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self.closed: asyncio.Future[TransportClosed] = asyncio.get_running_loop().create_future()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                for event in self.session.receive(await self.transport.receive()):
                    if isinstance(event, ResultReceived):
                        self.waiting.pop(event.id).set_result(event.result)
                    elif isinstance(event, ErrorReceived):
                        self.waiting.pop(event.id).set_exception(event.error)
                    elif isinstance(event, NotificationReceived):
                        self.notes.put_nowait((event.method, event.params))
        except TransportClosed as exc:
            self.closed.set_result(exc)
            for future in self.waiting.values():
                future.set_exception(exc)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id, text = self.session.send_request(method, params)
        future = self.waiting[request_id] = asyncio.get_running_loop().create_future()
        await self.transport.send(text)
        return await asyncio.wait_for(future, WAIT)

    async def initialize(self) -> dict[str, Any]:
        request_id, text = self.session.initialize_request()
        future = self.waiting[request_id] = asyncio.get_running_loop().create_future()
        await self.transport.send(text)
        result: dict[str, Any] = await asyncio.wait_for(future, WAIT)
        await self.transport.send(self.session.send_notification("notifications/initialized"))
        return result

    async def next_note(self) -> tuple[str, dict[str, Any]]:
        return await asyncio.wait_for(self.notes.get(), WAIT)

    async def aclose(self) -> None:
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)
        await self.transport.aclose()


@pytest.fixture
async def echo() -> EchoServer:
    return EchoServer()


@pytest.fixture
async def http_server(echo: EchoServer) -> AsyncIterator[StreamableHTTPServer]:
    server = StreamableHTTPServer(echo)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def raw() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def connect(url: str, **options: Any) -> Peer:
    peer = Peer(await StreamableHTTPClientTransport.start(url, **options))
    await peer.initialize()
    return peer


def initialize_body(request_id: int = 1) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})


async def read_sse(resp: aiohttp.ClientResponse, count: int) -> list[Any]:
    """The first ``count`` SSE events (id, data) of a response."""
    decoder, events = SSEDecoder(), []

    async def collect() -> None:
        async for chunk in resp.content.iter_any():
            events.extend(decoder.feed(chunk))
            if len(events) >= count:
                return

    await asyncio.wait_for(collect(), WAIT)
    return events[:count]


async def raw_session(raw: aiohttp.ClientSession, url: str) -> str:
    async with raw.post(url, data=initialize_body(), headers=JSON_HEADERS) as resp:
        assert resp.status == 200
        session_id = resp.headers["Mcp-Session-Id"]
        await read_sse(resp, 1)
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    async with raw.post(url, data=note, headers={**JSON_HEADERS, "Mcp-Session-Id": session_id}) as resp:
        assert resp.status == 202
    return session_id


# ---- SSE framing -----------------------------------------------------------------------------------------
def test_sse_decoder_handles_split_lines_crlf_comments_and_multiline_data() -> None:
    decoder = SSEDecoder()
    stream = b": hi\r\nid: 7\r\nretry: 1500\r\ndata: a\r\ndata: b\r\n\r\nevent: endpoint\rdata: /x\r\r"
    events = [e for i in range(len(stream)) for e in decoder.feed(stream[i : i + 1])] + decoder.close()
    assert [(e.event, e.data, e.id) for e in events] == [("message", "a\nb", "7"), ("endpoint", "/x", "7")]
    assert events[0].retry == 1500 and decoder.retry == 1500
    assert SSEDecoder().feed(encode_event("x\ny", event_id="s1_0")) == [
        SSEDecoder().feed(b"id: s1_0\ndata: x\ndata: y\n\n")[0]
    ]


# ---- client and server together --------------------------------------------------------------------------
async def test_sse_response_carries_related_notification_then_answer(
    http_server: StreamableHTTPServer,
) -> None:
    peer = await connect(http_server.url)
    transport = peer.transport
    assert isinstance(transport, StreamableHTTPClientTransport)
    assert transport.session_id and transport.protocol_version == "2025-11-25"
    assert await peer.request("chatty", {"x": 1}) == {"echo": {"x": 1}}
    assert await peer.next_note() == ("notifications/message", {"n": 1})
    await peer.aclose()


async def test_an_answer_alone_is_one_json_body_and_anything_before_it_makes_a_stream(
    http_server: StreamableHTTPServer, raw: aiohttp.ClientSession
) -> None:
    """transports#sending-messages-to-the-server: the server picks JSON or SSE per request; one JSON body
    when the answer is all there is (one write), SSE when a related message comes first."""
    session_id = await raw_session(raw, http_server.url)
    headers = {**JSON_HEADERS, "Mcp-Session-Id": session_id}
    body = '{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1}}'
    async with raw.post(http_server.url, data=body, headers=headers) as resp:
        assert resp.status == 200 and resp.content_type == "application/json"
        assert (await resp.json())["result"] == {"echo": {"a": 1}}
    body = '{"jsonrpc":"2.0","id":8,"method":"chatty","params":{"b":2}}'
    async with raw.post(http_server.url, data=body, headers=headers) as resp:
        assert resp.content_type == "text/event-stream"
        events = [json.loads(e.data) for e in await read_sse(resp, 3) if e.data]
    assert [e.get("method", "answer") for e in events] == ["notifications/message", "answer"]


async def test_json_response_mode(echo: EchoServer, raw: aiohttp.ClientSession) -> None:
    server = StreamableHTTPServer(echo, json_response=True)
    url = await server.start()
    try:
        async with raw.post(url, data=initialize_body(), headers=JSON_HEADERS) as resp:
            assert resp.status == 200 and resp.content_type == "application/json"
            assert (await resp.json())["result"]["protocolVersion"] == "2025-11-25"
        peer = await connect(url)
        assert await peer.request("echo", {"y": 2}) == {"echo": {"y": 2}}
        await peer.aclose()
    finally:
        await server.stop()


async def test_get_stream_delivers_server_notification(http_server: StreamableHTTPServer) -> None:
    peer = await connect(http_server.url)
    assert await peer.request("broadcast") == {"echo": {}}
    assert await peer.next_note() == ("notifications/hello", {"to": "all"})
    await peer.aclose()


async def test_delete_ends_the_session_and_its_serve_task(
    echo: EchoServer, http_server: StreamableHTTPServer
) -> None:
    peer = await connect(http_server.url)
    assert len(http_server.sessions) == 1
    await peer.aclose()  # sends DELETE
    await asyncio.wait_for(echo.ended.wait(), WAIT)
    assert http_server.sessions == {}


async def test_unknown_session_is_404_and_the_client_learns_it_expired(
    http_server: StreamableHTTPServer, raw: aiohttp.ClientSession
) -> None:
    async with raw.post(
        http_server.url, data='{"jsonrpc":"2.0","id":5,"method":"ping"}', headers=JSON_HEADERS
    ) as r:
        assert r.status == 400  # no session id
    headers = {**JSON_HEADERS, "Mcp-Session-Id": "nope"}
    async with raw.post(
        http_server.url, data='{"jsonrpc":"2.0","id":5,"method":"ping"}', headers=headers
    ) as r:
        assert r.status == 404
    peer = await connect(http_server.url)
    for session in list(http_server.sessions.values()):
        session.terminate("test")
    with pytest.raises(Exception, match="404"):
        await peer.request("echo")
    assert isinstance(await asyncio.wait_for(peer.closed, WAIT), SessionExpired)
    await peer.aclose()


async def test_resumption_with_last_event_id_after_the_server_closes_the_stream(echo: EchoServer) -> None:
    server = StreamableHTTPServer(echo, sse_polling=True, sse_retry_ms=10, sse_poll_seconds=60)
    url = await server.start()
    try:
        peer = await connect(url)
        call = asyncio.ensure_future(peer.request("poll"))
        # the tool closed its stream; the client now resumes by GET + Last-Event-ID; release the tool:
        echo.gate.set()
        assert await asyncio.wait_for(call, WAIT) == {"echo": {}}
        assert await peer.next_note() == ("notifications/message", {"late": True})
        await peer.aclose()
    finally:
        await server.stop()


async def test_sse_polling_primes_streams_and_replays_missed_events(
    echo: EchoServer, raw: aiohttp.ClientSession
) -> None:
    server = StreamableHTTPServer(echo, sse_polling=True, sse_retry_ms=1234, sse_poll_seconds=0)
    url = await server.start()
    try:
        session_id = await raw_session(raw, url)
        headers = {**JSON_HEADERS, "Mcp-Session-Id": session_id}
        body = '{"jsonrpc":"2.0","id":9,"method":"gated"}'
        async with raw.post(url, data=body, headers=headers) as resp:
            text = await asyncio.wait_for(resp.text(), WAIT)  # closed right after priming: the answer is late
        (priming,) = SSEDecoder().feed(text.encode())
        assert priming.data == "" and priming.retry == 1234 and priming.id
        echo.gate.set()
        get_headers = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session_id,
            "Last-Event-ID": priming.id,
        }
        async with raw.get(url, headers=get_headers) as resp:
            events = [e for e in await read_sse(resp, 3) if e.data]
        assert [json.loads(e.data).get("id") for e in events] == [None, 9]
        get_headers["Last-Event-ID"] = "s999_0"
        async with raw.get(url, headers=get_headers) as resp:
            assert resp.status == 400
    finally:
        await server.stop()


async def test_two_concurrent_clients_and_one_vanishing_mid_stream(
    echo: EchoServer, http_server: StreamableHTTPServer, raw: aiohttp.ClientSession
) -> None:
    good = await connect(http_server.url)
    other = await connect(http_server.url)
    session_id = await raw_session(raw, http_server.url)
    headers = {**JSON_HEADERS, "Mcp-Session-Id": session_id}
    post = asyncio.ensure_future(
        raw.post(http_server.url, data='{"jsonrpc":"2.0","id":3,"method":"gated"}', headers=headers)
    )
    await asyncio.wait_for(echo.waiting.wait(), 5)
    post.cancel()  # this client disconnects while its request is still running
    with contextlib.suppress(asyncio.CancelledError):
        await post
    results = await asyncio.gather(*(c.request("echo", {"i": i}) for i, c in enumerate([good, other] * 3)))
    assert [r["echo"]["i"] for r in results] == list(range(6))
    echo.gate.set()  # the abandoned request answers into a closed connection: nothing breaks
    assert await good.request("echo", {"after": True}) == {"echo": {"after": True}}
    await good.aclose()
    await other.aclose()


async def test_http_errors_fail_the_request_instead_of_hanging(raw: aiohttp.ClientSession) -> None:
    async def boom(request: web.Request) -> web.Response:
        return web.Response(status=500, text="kaboom in the server")

    app = web.Application()
    app.router.add_post("/mcp", boom)
    async with serving(app) as base:
        transport = await StreamableHTTPClientTransport.start(f"{base}/mcp")
        peer = Peer(transport)
        with pytest.raises(Exception, match=r"HTTP 500.*kaboom"):
            await peer.initialize()
        await peer.aclose()


# ---- security and validation -----------------------------------------------------------------------------
async def test_host_and_origin_are_validated(
    http_server: StreamableHTTPServer, raw: aiohttp.ClientSession
) -> None:
    port = http_server.url.split(":")[2].split("/")[0]
    bad = [
        {"Host": "evil.example.com"},
        {"Host": f"evil.example.com:{port}"},
        {"Origin": "http://evil.example.com"},
    ]
    for extra in bad:
        async with raw.post(
            http_server.url, data=initialize_body(), headers={**JSON_HEADERS, **extra}
        ) as resp:
            assert resp.status == 403, extra
    good = {"Host": f"localhost:{port}", "Origin": f"http://127.0.0.1:{port}"}
    async with raw.post(http_server.url, data=initialize_body(), headers={**JSON_HEADERS, **good}) as resp:
        assert resp.status == 200


def test_host_verdicts_are_cached_until_the_port_or_the_allowed_hosts_change() -> None:
    """The Host check is remembered per header value (a client sends the same one every time); a new port
    or a newly allowed host is seen at once, and made-up Host values cannot grow the memory past its bound."""
    from aiohttp.test_utils import make_mocked_request

    from mcp_notebook.transports._http_guard import Guard

    def verdict(guard: Guard, host: str) -> int | None:
        refusal = guard.check(make_mocked_request("POST", "/mcp", headers={"Host": host}))
        return None if refusal is None else refusal.status

    guard = Guard(token=None, tokens=None, allowed_hosts=None, allowed_origins=())
    guard.port = 8000
    assert verdict(guard, "127.0.0.1:8000") is None and verdict(guard, "127.0.0.1:9000") == 403
    guard.port = 9000
    assert verdict(guard, "127.0.0.1:9000") is None and verdict(guard, "127.0.0.1:8000") == 403
    assert verdict(guard, "mcp.example.com:9000") == 403
    guard.allow_host("MCP.example.com")
    assert verdict(guard, "mcp.example.com:9000") is None
    for i in range(1000):
        assert verdict(guard, f"evil{i}.example.com:9000") == 403
    assert len(guard._host_verdicts) <= 256
    assert verdict(guard, "mcp.example.com:9000") is None


async def test_bearer_token(echo: EchoServer, raw: aiohttp.ClientSession) -> None:
    server = StreamableHTTPServer(echo, token="s3cret")
    url = await server.start()
    try:
        for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
            async with raw.post(url, data=initialize_body(), headers={**JSON_HEADERS, **auth}) as resp:
                assert resp.status == 401
                assert resp.headers["WWW-Authenticate"].startswith("Bearer")
        peer = await connect(url, headers={"Authorization": "Bearer s3cret"})
        assert await peer.request("echo") == {"echo": {}}
        await peer.aclose()
    finally:
        await server.stop()


async def test_size_accept_batch_and_version_checks(
    echo: EchoServer, http_server: StreamableHTTPServer, raw: aiohttp.ClientSession
) -> None:
    url = http_server.url
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": "a" * (5 * 1024 * 1024)}})
    async with raw.post(url, data=io.BytesIO(big.encode()), headers=JSON_HEADERS) as resp:
        assert resp.status == 413
    async with raw.post(
        url, data=initialize_body(), headers={**JSON_HEADERS, "Accept": "application/json"}
    ) as resp:
        assert resp.status == 406
    async with raw.post(url, data="[" + initialize_body() + "]", headers=JSON_HEADERS) as resp:
        assert resp.status == 400 and (await resp.json())["error"]["code"] == -32600
    async with raw.post(url, data="{not json", headers=JSON_HEADERS) as resp:
        assert resp.status == 400 and (await resp.json())["error"]["code"] == -32700
    session_id = await raw_session(raw, url)
    headers = {**JSON_HEADERS, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "1999-01-01"}
    async with raw.post(url, data='{"jsonrpc":"2.0","id":2,"method":"echo"}', headers=headers) as resp:
        assert resp.status == 400
    async with raw.get(url, headers={"Accept": "application/json", "Mcp-Session-Id": session_id}) as resp:
        assert resp.status == 406


async def test_stop_answers_in_flight_requests_and_frees_the_port(echo: EchoServer) -> None:
    server = StreamableHTTPServer(echo)
    url = await server.start()
    peer = await connect(url)
    call = asyncio.ensure_future(peer.request("gated"))
    await asyncio.sleep(0)  # let the POST start (not a settle-wait: the assertion below holds either way)
    await asyncio.wait_for(server.stop(), WAIT)
    with pytest.raises(Exception, match=r"ended|stopping|closed|failed"):
        await asyncio.wait_for(call, WAIT)
    await peer.aclose()
    port = int(url.split(":")[2].split("/")[0])
    with socket.create_server(("127.0.0.1", port)):
        pass


# ---- fallback to the 2024-11-05 HTTP+SSE transport -------------------------------------------------------
async def test_connect_http_falls_back_to_legacy_sse() -> None:
    inbox: asyncio.Queue[str] = asyncio.Queue()

    async def sse(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(encode_event("/messages?sid=1", event="endpoint"))
        while True:
            await resp.write(encode_event(await inbox.get(), event="message"))

    async def messages(request: web.Request) -> web.Response:
        body = await request.json()
        if "id" in body and "method" in body:
            result = {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "old"}}
            if body["method"] != "initialize":
                result = {"echo": body.get("params", {})}
            inbox.put_nowait(json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}))
        return web.Response(status=202)

    app = web.Application()
    app.router.add_get("/sse", sse)
    app.router.add_post("/messages", messages)
    async with serving(app, shutdown_timeout=0.5) as base:
        transport = await connect_http(f"{base}/sse")
        peer = Peer(transport)
        peer.session.supported_versions = ("2024-11-05",)
        await peer.initialize()
        assert transport.kind == "sse"
        assert await peer.request("echo", {"z": 1}) == {"echo": {"z": 1}}
        await peer.aclose()


# ---- the real Client and Server --------------------------------------------------------------------------
async def test_end_to_end_client_calls_a_tool_over_http() -> None:
    from mcp_notebook import Client, Server

    server = Server("e2e")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    http = StreamableHTTPServer(server, token="tok")
    url = await http.start()
    try:
        async with Client(url, headers={"Authorization": "Bearer tok"}) as client:
            assert [t["name"] for t in await client.list_tools()] == ["add"]
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result["structuredContent"] == {"result": 5}
    finally:
        await http.stop()


async def test_client_starts_a_new_session_after_the_server_ended_its_own() -> None:
    """transports#session-management: after a 404 for its session the client MUST start a new session."""
    from mcp_notebook import Client, Server
    from mcp_notebook.transports._http_common import SessionExpired

    server = Server("renewing")

    @server.tool
    def ping_me() -> str:
        return "pong"

    http = StreamableHTTPServer(server)
    url = await http.start()
    try:
        async with Client(url, era="legacy") as client:  # sessions are legacy-only
            assert (await client.call_tool("ping_me"))["content"][0]["text"] == "pong"
            first = client.connection.transport
            for session in list(http.sessions.values()):
                session.terminate("the test ended it")
            with pytest.raises(SessionExpired):
                await client.call_tool("ping_me")  # this one meets the 404
            assert (await client.call_tool("ping_me"))["content"][0]["text"] == "pong"  # a new session
            assert client.connection.transport is not first
            assert any("starting a new one" in entry.raw for entry in client.trace)
    finally:
        await http.stop()
