"""What reaches the Streamable HTTP server before our handler, the same with and without aiohttp middlewares
(without, aiohttp's low-level server calls ``StreamableHTTPServer._entry``; with, an Application routes):
other paths are 404, ``Expect: 100-continue`` is answered before the body is sent, any other expectation
is 417, a body past ``max_body_size`` is 413 even without ``Content-Length``, and the rate limit counts
every request, a 404 too."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from mcp_notebook import Server
from mcp_notebook.transports.http_limits import HTTPLimits, RateLimiter
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.serving._http import INIT
from tests.waiting import WAIT


@web.middleware
async def passing(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse = await handler(request)
    return response


@pytest.fixture(params=["no middleware", "a middleware"])
def middlewares(request: pytest.FixtureRequest) -> list[Any]:
    return [] if request.param == "no middleware" else [passing]


async def started(middlewares: list[Any], **options: Any) -> tuple[StreamableHTTPServer, int]:
    http = StreamableHTTPServer(Server("entry"), middlewares=middlewares, **options)
    await http.start("127.0.0.1", 0)
    return http, http.guard.port


@pytest.fixture
async def port(middlewares: list[Any]) -> AsyncIterator[int]:
    http, number = await started(middlewares, limits=HTTPLimits(max_body_size=1000))
    try:
        yield number
    finally:
        await http.stop()


async def exchange(
    port: int, head: str, body: bytes = b"", *, interim: bool = False, together: bool = False
) -> tuple[int, bytes]:
    """Send ``head`` (then ``body``, after the interim answer when ``interim``; in the same write when
    ``together``, so that the server has all of it with the head); the final status and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.replace("\n", "\r\n").encode() + b"\r\n" + (body if together else b""))
        body = b"" if together else body
        if interim:
            line = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
            assert line == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(body)
        status_line = await asyncio.wait_for(reader.readline(), WAIT)
        headers = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        length = next(
            int(line.split(b":", 1)[1])
            for line in headers.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        return int(status_line.split()[1]), await asyncio.wait_for(reader.readexactly(length), WAIT)
    finally:
        writer.close()


def post_head(port: int, path: str, length: int, *extra: str) -> str:
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {length}",
        *extra,
    ]
    return "\n".join(lines) + "\n"


async def test_only_our_path_is_served(port: int) -> None:
    body = json.dumps(INIT).encode()
    for path in ("/other", "/mcp/", "/", "/mcpx"):
        status, text = await exchange(port, post_head(port, path, len(body)), body)
        assert (status, text) == (404, b"404: Not Found"), path
    status, text = await exchange(port, post_head(port, "/mcp?x=1", len(body)), body)
    assert status == 200 and json.loads(text)["result"]["protocolVersion"] == "2025-11-25"


async def test_expect_100_continue_is_answered_before_the_body(port: int) -> None:
    body = json.dumps(INIT).encode()
    head = post_head(port, "/mcp", len(body), "Expect: 100-continue")
    status, text = await exchange(port, head, body, interim=True)
    assert status == 200 and json.loads(text)["id"] == INIT["id"]


async def test_another_expectation_is_417(port: int) -> None:
    body = json.dumps(INIT).encode()
    status, text = await exchange(port, post_head(port, "/mcp", len(body), "Expect: something-else"), body)
    assert status == 417 and b"Unknown Expect: something-else" in text


async def test_a_chunked_body_past_the_limit_is_413(port: int) -> None:
    head = post_head(port, "/mcp", 0).replace("Content-Length: 0", "Transfer-Encoding: chunked")
    chunk = b'{"x": "' + b"a" * 1200 + b'"}'
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk)
    status, text = await exchange(port, head, body)
    assert status == 413 and json.loads(text)["error"]["message"].startswith("Payload Too Large")


async def test_the_rate_limit_counts_every_request(middlewares: list[Any]) -> None:
    limiter = RateLimiter(1.0, 2, clock=lambda: 0.0)  # no concurrency allowance: every request spends
    http, port = await started(middlewares, limiter=limiter)
    try:
        statuses = [(await exchange(port, post_head(port, "/other", 2), b"{}"))[0] for _ in range(3)]
    finally:
        await http.stop()
    assert statuses == [404, 404, 429]


async def test_content_type_accept_and_method_are_checked(port: int) -> None:
    body = json.dumps(INIT).encode()
    plain = post_head(port, "/mcp", len(body))
    for content_type, expected in [
        ("application/json; charset=utf-8", 200),
        ("Application/JSON", 200),
        ("text/plain", 415),
        ("application/jsonx", 415),
        (None, 415),
    ]:
        line = "" if content_type is None else f"Content-Type: {content_type}\n"
        head = plain.replace("Content-Type: application/json\n", line)
        status, _ = await exchange(port, head, body)
        assert status == expected, content_type
    status, text = await exchange(
        port, plain.replace("application/json, text/event-stream", "text/html"), body
    )
    assert status == 406 and b"Not Acceptable" in text
    status, text = await exchange(port, plain.replace("POST", "PUT"), body)
    assert status == 405 and b"Method not allowed" in text


@pytest.mark.parametrize("size", [300, 1200])
async def test_a_chunked_body_that_came_with_its_head_is_read_whole_or_refused(port: int, size: int) -> None:
    """All of a body's chunks in the server's hands with the head: the low-level server takes them at once
    instead of awaiting reads; the same answers as read() gives: the whole body, in order, or 413."""
    head = post_head(port, "/mcp", 0).replace("Content-Length: 0", "Transfer-Encoding: chunked")
    message = json.dumps({**INIT, "params": {**INIT["params"], "padding": "p" * size}}).encode()
    pieces = [message[i : i + 100] for i in range(0, len(message), 100)]  # several chunks
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    status, text = await exchange(port, head, body, together=True)
    if len(message) > 1000:  # the fixture's max_body_size
        assert status == 413 and json.loads(text)["error"]["message"].startswith("Payload Too Large")
    else:
        assert status == 200 and json.loads(text)["result"]["protocolVersion"] == "2025-11-25"
