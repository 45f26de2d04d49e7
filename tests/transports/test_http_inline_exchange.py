"""A 2026-07-28 POST whose handler runs in the POST's own task (``_http_sessions.Exchange``) builds the
request's session and stream only when the handler sends more than its answer; each way it answers, streams,
ends on a stop and lets go of everything as before."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.transports.base import INLINE
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.waiting import WAIT

pytestmark = pytest.mark.skipif(not INLINE, reason="handlers run in the POST's task on Python 3.11+")


def make_server(gate: asyncio.Event | None = None) -> Server:
    server = Server("exchange")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Reports progress before answering (after ``gate``, when there is one)."""
        await ctx.report_progress(1, 2, "half way")
        if gate is not None:
            await gate.wait()
        return "done"

    return server


@pytest.fixture
def sessions_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ids of the sessions the HTTP server makes (legacy sessions and modern requests' alike)."""
    made: list[str] = []
    make = StreamableHTTPServer._session

    def counted(self: StreamableHTTPServer, session_id: str, *args: Any, **kwargs: Any) -> Any:
        made.append(session_id)
        return make(self, session_id, *args, **kwargs)

    monkeypatch.setattr(StreamableHTTPServer, "_session", counted)
    yield made


@pytest.mark.parametrize("json_response", [False, True])
async def test_a_session_is_made_only_for_a_request_that_sends_more_than_its_answer(
    sessions_made: list[str], json_response: bool
) -> None:
    server = make_server()
    http = StreamableHTTPServer(server, json_response=json_response)
    url = await http.start("127.0.0.1", 0)
    heard: list[str | None] = []
    try:
        async with Client(url, era="modern") as client:
            await client.call_tool("add", {"a": 0, "b": 0})  # discovery, the tools list, the listen stream
            before = len(sessions_made)
            for i in range(5):
                assert (await client.call_tool("add", {"a": i, "b": 1}))["structuredContent"] == {
                    "result": i + 1
                }
            assert len(sessions_made) == before  # answers only: nothing built
            result = await client.call_tool("chatty", {}, progress_callback=lambda p, t, m: heard.append(m))
            assert result["content"][0]["text"] == "done"
            assert len(sessions_made) == before + 1  # its progress made the request's session
            assert (await client.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == {"result": 4}
            assert len(sessions_made) == before + 1
    finally:
        await http.stop()
    # SSE: the progress streamed before the answer; one JSON body (json_response): the answer alone, as before
    assert heard == ([] if json_response else ["half way"])
    assert not server.sessions and not http._modern


async def test_stopping_the_server_answers_a_streaming_request_with_the_reason() -> None:
    gate = asyncio.Event()  # never set: the tool waits after its progress until the server stops
    server = make_server(gate)
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    heard = asyncio.Event()
    async with Client(url, era="modern") as client:
        call = asyncio.ensure_future(
            client.call_tool("chatty", {}, progress_callback=lambda p, t, m: heard.set())
        )
        await asyncio.wait_for(heard.wait(), WAIT)
        await http.stop("stopping for the test")
        with pytest.raises(Exception, match="stopping for the test"):
            await asyncio.wait_for(call, WAIT)
    assert not server.sessions and not http._modern
