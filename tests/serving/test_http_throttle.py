"""The default HTTP limits never throttle a well-behaved client, and still stop a flood (issue 21, DESIGN 20).

A well-behaved client waits for its answers: one caller in a loop, or 16 stateless 2026-07-28 clients at once
(what ``mcp.map`` at concurrency 16 does). Against the defaults a user gets (``StreamableHTTPServer`` as
``serve_http()`` builds it, and ``mcp-notebook serve --http`` in a subprocess) none of their requests may get
429, whatever the machine's speed. A flood (hundreds of requests in flight at once) still does. Raw HTTP, so
every status is seen (our client would retry a 429 quietly). No timing is asserted; counts only.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Client, Server
from mcp_notebook.protocol.modern import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION
from mcp_notebook.transports import http_limits
from mcp_notebook.transports.http_limits import HTTPLimits, RateLimiter
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.interop._peers import serve_http

SEQUENTIAL = 1000  # more than the old default bucket (200 saved + 100/s) allowed at any loopback speed
CLIENTS, PER_CLIENT = 16, 60
WAIT = 60.0
_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TARGET = '''
from mcp_notebook import Client, Server

server = Server("throttle-target")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


def make_server(release: asyncio.Event | None = None) -> Server:
    server = Server("throttle")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def hold() -> str:
        """Wait until the test lets go."""
        assert release is not None
        await asyncio.wait_for(release.wait(), WAIT)
        return "released"

    return server


class Raw:
    """One raw Streamable HTTP client: a 2025-11-25 session, or stateless 2026-07-28 requests."""

    def __init__(self, url: str, http: aiohttp.ClientSession, *, modern: bool) -> None:
        self.url, self.http, self.modern = url, http, modern
        self.headers = dict(_ACCEPT)
        self.statuses: Counter[int] = Counter()
        self.next_id = 0

    async def post(self, message: dict[str, Any], extra: dict[str, str] | None = None) -> tuple[int, Any]:
        async with self.http.post(
            self.url, data=json.dumps(message), headers={**self.headers, **(extra or {})}
        ) as response:
            body = await response.text()
            self.statuses[response.status] += 1
            if "mcp-session-id" in response.headers:
                self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
            if response.status != 200:
                return response.status, None
            if response.content_type == "application/json":
                return 200, json.loads(body)
            data = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
            return 200, next(json.loads(d) for d in data if d and '"id"' in d)

    async def open(self) -> None:
        if self.modern:
            return
        info = {"name": "throttle-test", "version": "0"}
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
        status, _ = await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert status == 200
        self.headers["MCP-Protocol-Version"] = "2025-11-25"
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str = "add", arguments: dict[str, Any] | None = None) -> tuple[int, Any]:
        self.next_id += 1
        arguments = {"a": 2, "b": 3} if arguments is None else arguments
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        extra = None
        if self.modern:
            params["_meta"] = {
                META_PROTOCOL_VERSION: "2026-07-28",
                META_CLIENT_CAPABILITIES: {},
                META_CLIENT_INFO: {"name": "throttle-test", "version": "0"},
            }
            extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        return await self.post(message, extra)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        yield session


async def sequential(url: str, http: aiohttp.ClientSession, *, modern: bool) -> Counter[int]:
    raw = Raw(url, http, modern=modern)
    await raw.open()
    for _ in range(SEQUENTIAL):
        status, answer = await raw.call()
        assert status != 200 or answer["result"]["structuredContent"] == {"result": 5}
    return raw.statuses


async def concurrent_stateless(url: str, http: aiohttp.ClientSession) -> Counter[int]:
    clients = [Raw(url, http, modern=True) for _ in range(CLIENTS)]

    async def run(raw: Raw) -> None:
        for _ in range(PER_CLIENT):
            await raw.call()

    await asyncio.wait_for(asyncio.gather(*(run(raw) for raw in clients)), WAIT)
    return sum((raw.statuses for raw in clients), Counter())


@pytest.mark.parametrize("modern", [False, True], ids=["session", "stateless"])
async def test_a_sequential_client_is_never_throttled_by_the_defaults(
    http: aiohttp.ClientSession, modern: bool
) -> None:
    server = StreamableHTTPServer(make_server())  # what serve_http() builds when given no limits
    url = await server.start()
    try:
        statuses = await asyncio.wait_for(sequential(url, http, modern=modern), WAIT)
    finally:
        await server.stop()
    assert statuses[429] == 0 and statuses[200] >= SEQUENTIAL, statuses


async def test_16_concurrent_stateless_clients_from_one_address_are_not_throttled(
    http: aiohttp.ClientSession,
) -> None:
    server = StreamableHTTPServer(make_server())
    url = await server.start()
    try:
        statuses = await concurrent_stateless(url, http)
    finally:
        await server.stop()
    assert statuses == Counter({200: CLIENTS * PER_CLIENT}), statuses


async def test_16_modern_clients_of_ours_with_their_listen_streams_are_not_throttled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Our own client retries a 429 quietly, so the server's 429s are counted where they are made."""
    refused: list[float] = []
    original = http_limits.rate_limit_response

    def counted(wait: float) -> Any:
        refused.append(wait)
        return original(wait)

    monkeypatch.setattr(http_limits, "rate_limit_response", counted)
    server = StreamableHTTPServer(make_server())
    url = await server.start()
    try:
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(Client(url, era="modern")) for _ in range(CLIENTS)]

            async def run(client: Client) -> None:
                for i in range(PER_CLIENT // 2):
                    result = await client.call_tool("add", {"a": i, "b": 1})
                    assert result["structuredContent"] == {"result": i + 1}

            await asyncio.wait_for(asyncio.gather(*(run(client) for client in clients)), WAIT)
    finally:
        await server.stop()
    assert refused == []


async def test_the_command_line_server_defaults_do_not_throttle(
    http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    target = tmp_path / "target.py"
    target.write_text(TARGET, encoding="utf-8")
    with serve_http(target, tmp_path / "server.log") as url:
        statuses = await asyncio.wait_for(sequential(url, http, modern=False), WAIT)
        statuses += await concurrent_stateless(url, http)
    assert statuses[429] == 0, statuses


async def test_a_flood_still_gets_429_and_the_held_requests_finish(http: aiohttp.ClientSession) -> None:
    """300 requests in flight on one session: the default allowance (64) and bucket (200) run out. The
    limiter's clock is frozen so that no token refills while the flood arrives, however slow the machine."""
    defaults = HTTPLimits()
    assert defaults.rate is not None
    limiter = RateLimiter(
        defaults.rate,
        defaults.burst,
        concurrency=defaults.concurrency,
        address_concurrency=defaults.address_concurrency,
        clock=lambda: 1000.0,
    )
    release = asyncio.Event()
    server = StreamableHTTPServer(make_server(release), limiter=limiter)
    url = await server.start()
    flood = 300
    try:
        raw = Raw(url, http, modern=False)
        await raw.open()
        calls = [asyncio.ensure_future(raw.call("hold", {})) for _ in range(flood)]
        refused = expected = flood - defaults.concurrency - defaults.burst
        done: set[asyncio.Future[tuple[int, Any]]] = set()
        while sum(1 for c in done if c.result()[0] == 429) < refused:  # the 429s come while the rest wait
            finished, _ = await asyncio.wait(calls, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
            assert finished - done, "no answer while the flood waits"
            done |= finished
            calls = [c for c in calls if c not in done]
        release.set()
        results = await asyncio.wait_for(asyncio.gather(*calls), WAIT)
    finally:
        release.set()
        await server.stop()
    assert [status for status, _ in results] == [200] * (defaults.concurrency + defaults.burst)
    assert all(answer["result"]["content"][0]["text"] == "released" for _, answer in results)
    assert raw.statuses[429] == expected


def test_fresh_sessions_or_tokens_from_one_address_share_its_allowance() -> None:
    """Minting client keys (sessions, made-up tokens) does not escape the address's own allowance."""
    limiter = RateLimiter(2.0, 3, concurrency=1, address_concurrency=4, clock=lambda: 0.0)
    assert [limiter.admit(f"credential:{i}", "10.0.0.1") for i in range(4)] == [0.0] * 4
    assert [limiter.admit(f"credential:{i}", "10.0.0.1") for i in range(4, 7)] == [0.0] * 3  # the burst
    assert limiter.admit("credential:7", "10.0.0.1") > 0  # bucket empty: 429
    assert limiter.admit("credential:8", "10.0.0.2") == 0.0  # another address is not affected
    limiter.release("credential:0", "10.0.0.1")
    assert limiter.in_flight("from:10.0.0.1") == 6


def test_a_client_known_only_by_its_address_is_counted_once() -> None:
    """Without a session or a token the client's key is its address: its requests count once toward its
    own allowance and once toward the address's, not twice toward either."""
    limiter = RateLimiter(1.0, 1, concurrency=2, address_concurrency=8, clock=lambda: 0.0)
    assert [limiter.admit("address:127.0.0.1", "127.0.0.1") for _ in range(2)] == [0.0, 0.0]
    assert limiter.in_flight("address:127.0.0.1") == 2 and limiter.in_flight("from:127.0.0.1") == 2


def test_a_client_with_its_answers_in_hand_spends_nothing() -> None:
    limiter = RateLimiter(1.0, 1, concurrency=2, address_concurrency=8, clock=lambda: 0.0)
    for _ in range(1000):  # sequential: admitted, answered, released; the bucket is never touched
        assert limiter.admit("session:a", "127.0.0.1") == 0.0
        limiter.release("session:a", "127.0.0.1")
    assert [limiter.admit("session:a", "127.0.0.1") for _ in range(3)] == [0.0, 0.0, 0.0]  # 2 free, 1 token
    assert limiter.admit("session:a", "127.0.0.1") > 0
