"""A POST's JSON body is read from its bytes as they came (http_client._take_json, round 8): UTF-8 JSON is
decoded once, straight from the bytes; a body that is not UTF-8 is read as text with the bad bytes replaced,
as it always was (JSON then, or the error quoting that text). The answers are the same either way."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

from tests.transports.test_http_json_not_an_answer import request_answered_with
from tests.waiting import WAIT

BIG = 2**70  # past 64 bits: the stdlib decodes it exactly
BODIES: dict[str, tuple[bytes, Any]] = {
    # name: (the body, the result the request gets or the start of its error's message)
    "utf-8": ('{"jsonrpc":"2.0","id":7,"result":{"text":"héllo ✓"}}'.encode(), {"text": "héllo ✓"}),
    "a long integer": (b'{"jsonrpc":"2.0","id":7,"result":{"n":%d}}' % BIG, {"n": BIG}),
    "not utf-8": (b'{"jsonrpc":"2.0","id":7,"result":{"text":"a\xffb"}}', {"text": "a\ufffdb"}),
    "not json": (b"<html>oops</html>", "invalid JSON from the server: <html>oops</html>"),
    "not utf-8, not json": (b"\xff<html>", "invalid JSON from the server: \ufffd<html>"),
}


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("name", list(BODIES))
async def test_a_json_body_is_read_from_its_bytes(era: str, name: str) -> None:
    body, expected = BODIES[name]

    def response() -> web.Response:
        return web.Response(body=body, content_type="application/json")

    async with request_answered_with(response, era) as transport:
        received = await asyncio.wait_for(transport.receive(), WAIT)
    message = json.loads(received)
    assert message["id"] == 7
    if isinstance(expected, dict):
        assert message["result"] == expected
    else:
        assert message["error"]["message"].startswith(expected)
