"""A stdio server's memory is bounded per client: a client that writes requests and never reads the answers
used to make the server read on and keep every answer (20,000 x 10 KB echo requests: 1.1 GB resident after
10 s, h6review). Past ``max_backlog_bytes`` of answers waiting for the client, the server reads no further
request until the client reads; then it reads on and every answer arrives, in order. Each sink (a pipe, an
asyncio stream, a thread for a file or tty) reports its backlog."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from mcp_notebook.transports._stdio_server import StdioServerTransport
from tests.waiting import wait_until_async

LIMIT = 1 << 20
ANSWER = "x" * (256 << 10)  # five answers are past the bound
WAIT = 30.0


def _requests(count: int) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    for i in range(count):
        reader.feed_data(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() + b"\n")
    reader.feed_eof()
    return reader


def _drain_in_thread(fd: int) -> tuple[threading.Thread, list[bytes]]:
    """The client reading at last: everything the server wrote, until it closes its end."""
    chunks: list[bytes] = []

    def read() -> None:
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                chunks.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    return thread, chunks


async def _answer_until_blocked(
    transport: StdioServerTransport,
) -> tuple[list[asyncio.Future[None]], asyncio.Future[str], int]:
    """Receive requests and answer each (in the background: an answer waits while the pipe is full) until
    receive() is held: the answers' backlog is past the bound."""
    sends: list[asyncio.Future[None]] = []
    sink = (await transport._ready()).sink
    for count in range(40):
        receiving = asyncio.ensure_future(transport.receive())

        async def held(receiving: asyncio.Future[str] = receiving) -> bool:
            return receiving.done() or sink.backlog() > LIMIT

        await wait_until_async(held, "the request read, or the backlog past the bound")
        if not receiving.done():
            # the backlog is past the bound and the request is not read: held until the client reads
            done, _ = await asyncio.wait({receiving}, timeout=0.3)
            assert not done, "a request was read with the answers' backlog past the bound"
            return sends, receiving, count  # the held request: read once the client reads
        request = json.loads(receiving.result())
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"text": ANSWER}}
        sends.append(asyncio.ensure_future(transport.send(json.dumps(answer))))
    raise AssertionError("40 requests read with nobody reading 10 MB of answers: the server is not bounded")


def _ids(chunks: list[bytes]) -> list[Any]:
    return [json.loads(line)["id"] for line in b"".join(chunks).splitlines() if line]


@pytest.mark.parametrize("stdout_kind", ["pipe", "stream"])
async def test_the_server_stops_reading_while_the_client_does_not_read(stdout_kind: str) -> None:
    read_end, write_end = os.pipe()
    stdout: Any
    if stdout_kind == "pipe":
        stdout = os.fdopen(write_end, "wb")  # a pipe: the event loop's write-pipe transport (PipeSink)
    else:
        loop = asyncio.get_running_loop()
        protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
        transport_, _ = await loop.connect_write_pipe(lambda: protocol, os.fdopen(write_end, "wb"))
        stdout = asyncio.StreamWriter(transport_, protocol, None, loop)  # a StreamWriter: StreamSink
    transport = StdioServerTransport(_requests(40), stdout, max_backlog_bytes=LIMIT)
    tasks, held, answered = await _answer_until_blocked(transport)
    assert answered < 10  # held after about LIMIT of answers, not 40 requests later
    thread, chunks = _drain_in_thread(read_end)
    thread.start()  # the client reads: the held request is read, the answers go out
    request = json.loads(await asyncio.wait_for(held, WAIT))
    assert request["id"] == answered
    await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
    await transport.aclose()
    await asyncio.to_thread(thread.join, WAIT)
    assert _ids(chunks) == list(range(answered))  # every answer arrived, in order


async def test_a_thread_sink_reports_its_backlog(tmp_path: Any) -> None:
    """Files, ttys and Windows pipes are written by a thread: its queue is the backlog."""
    from mcp_notebook.transports._stdio_io import ThreadSink

    gate = threading.Event()

    class Slow:
        def write(self, data: Any) -> int:
            gate.wait(WAIT)
            return len(data)

        def flush(self) -> None: ...

        def close(self) -> None: ...

    sink = ThreadSink(Slow(), 2.0)  # type: ignore[arg-type]
    writes = [asyncio.ensure_future(sink.write(b"y" * (512 << 10))) for _ in range(3)]
    await wait_until_async(_async(lambda: sink.backlog() == 3 * (512 << 10)), "three writes queued")
    room = asyncio.ensure_future(sink.room(LIMIT))
    done, _ = await asyncio.wait({room}, timeout=0.3)
    assert not done  # 1.5 MB waiting: no room below 1 MB yet
    gate.set()
    await asyncio.wait_for(room, WAIT)
    await asyncio.wait_for(asyncio.gather(*writes), WAIT)
    assert sink.backlog() == 0
    await sink.aclose()


def _async(check: Callable[[], bool]) -> Callable[[], Any]:
    async def run() -> bool:
        return check()

    return run
