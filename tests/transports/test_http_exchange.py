"""``_http_common.exchange``, the one HTTP request of the client transports: foreign failures (refused, cut
mid-body) become :class:`ExchangeFailed` whether they happen on entering or inside the block; anything else
passes as it is; the response is released when the block ends. And how the transport reads an answer:
its content type as aiohttp reads it, its JSON body whole."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook.protocol import modern
from mcp_notebook.protocol.jsonrpc import Request, serialize
from mcp_notebook.transports._http_common import ExchangeFailed, content_type, exchange
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport
from tests.local_http import serving
from tests.waiting import WAIT


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="hello")

    app = web.Application()
    app.router.add_post("/", ok)
    async with serving(app) as base:
        yield f"{base}/"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_answer_is_read_inside_the_block_and_released_after(url: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with exchange(http, "POST", url, data=b"x") as resp:
            assert resp.status == 200
            assert await resp.text() == "hello"
        assert resp.closed or resp.connection is None


async def test_a_refused_connection_is_an_unreachable_server() -> None:
    target = f"http://127.0.0.1:{closed_port()}/"
    async with aiohttp.ClientSession() as http:
        with pytest.raises(ExchangeFailed, match="cannot reach the server") as info:
            async with exchange(http, "POST", target, data=b"x"):
                raise AssertionError("not reached")
    assert info.value.unreachable
    assert isinstance(info.value.__cause__, aiohttp.ClientConnectorError)


async def test_a_foreign_failure_inside_the_block_is_translated(url: str) -> None:
    cut = aiohttp.ClientPayloadError("cut mid-body")
    async with aiohttp.ClientSession() as http:
        with pytest.raises(ExchangeFailed, match=r"POST .* failed: ClientPayloadError") as info:
            async with exchange(http, "POST", url, data=b"x"):
                raise cut
    assert not info.value.unreachable
    assert info.value.__cause__ is cut


async def test_other_exceptions_pass_unchanged(url: str) -> None:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(KeyError, match="mine"):
            async with exchange(http, "POST", url, data=b"x"):
                raise KeyError("mine")
        async with exchange(http, "POST", url, data=b"x") as resp:  # the connection is usable again
            assert await resp.text() == "hello"


@pytest.mark.parametrize(
    "header",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/json;charset=UTF-8",
        "text/event-stream",
        "text/plain; charset=utf-8",
    ],
)
async def test_content_type_reads_as_aiohttp_does(header: str) -> None:
    async def typed(request: web.Request) -> web.Response:
        return web.Response(body=b"{}", headers={"Content-Type": header})

    app = web.Application()
    app.router.add_post("/", typed)
    async with (
        serving(app) as base,
        aiohttp.ClientSession() as http,
        exchange(http, "POST", f"{base}/", data=b"x") as resp,
    ):
        assert content_type(resp) == resp.content_type


async def test_a_json_answer_whose_body_comes_after_its_headers_is_read_whole() -> None:
    """The transport takes a JSON body from aiohttp's buffer when all of it came with the headers; a body
    still arriving (sent in two pieces, the second later) is awaited, not cut at what is in."""
    answer = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"text": "x" * 5000}}).encode()

    async def slow(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        await resp.write(answer[:100])
        await asyncio.sleep(0.2)
        await resp.write(answer[100:])
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_post("/", slow)
    async with serving(app) as base:
        transport = await StreamableHTTPClientTransport.start(f"{base}/")
        try:
            meta = {modern.META_PROTOCOL_VERSION: "2026-07-28"}
            await transport.send(serialize(Request(7, "tools/call", {"name": "t", "_meta": meta})))
            received = await asyncio.wait_for(transport.receive(), WAIT)
        finally:
            await transport.aclose()
    assert json.loads(received) == json.loads(answer)
