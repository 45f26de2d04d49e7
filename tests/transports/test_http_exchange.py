"""``_http_common.exchange``, the one HTTP request of the client transports: foreign failures (refused, cut
mid-body) become :class:`ExchangeFailed` whether they happen on entering or inside the block; anything else
passes as it is; the response is released when the block ends."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from mcp_notebook.transports._http_common import ExchangeFailed, exchange
from tests.local_http import serving


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
