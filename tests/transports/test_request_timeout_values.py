"""A request's timeout must be a number of seconds >= 0 or None: a NaN (which never expired), a negative
number or a string is refused with a clear error before anything is sent, and the connection keeps working."""

from __future__ import annotations

import math

import pytest

from mcp_notebook import Client, Server


def echo_server() -> Server:
    server = Server("timeouts")

    @server.tool
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


@pytest.mark.parametrize("bad", [math.nan, -1, -0.5, "5", True])
@pytest.mark.parametrize("name", ["timeout", "max_timeout"])
async def test_a_bad_timeout_is_refused_before_the_request_goes_out(name: str, bad: object) -> None:
    async with Client(echo_server()) as client:
        await client.call_tool("echo", {"text": "warm"})  # the first call lists the tools first
        sent = len(client.trace)
        with pytest.raises(ValueError, match=rf"{name} must be a number of seconds >= 0"):
            await client.call_tool("echo", {"text": "x"}, **{name: bad})  # type: ignore[arg-type]
        assert len(client.trace) == sent  # nothing went out
        result = await client.call_tool("echo", {"text": "y"})
        assert result["content"] == [{"type": "text", "text": "y"}]


@pytest.mark.parametrize("good", [0.5, 3, math.inf, None])
async def test_good_timeouts_are_taken(good: float | None) -> None:
    async with Client(echo_server()) as client:
        result = await client.call_tool("echo", {"text": "x"}, timeout=good, max_timeout=good)
        assert result["content"] == [{"type": "text", "text": "x"}]
