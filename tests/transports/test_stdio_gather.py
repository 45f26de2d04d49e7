"""stdio over pipes: the first message written since one was received goes out at once, those written
after it in one write when their turn of the event loop ends (transports/_stdio_io.py ``PipeSink``). Order,
flow control and closing are as before; these tests pin them. No subprocess: a server transport over
``os.pipe()``s.
"""

from __future__ import annotations

import asyncio
import os
from typing import BinaryIO

import pytest

from mcp_notebook.transports._stdio_io import GATHER_BYTES
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.stdio import StdioServerTransport
from tests.waiting import wait_until_async

WAIT = 20.0


def pipe() -> tuple[BinaryIO, BinaryIO]:
    read_fd, write_fd = os.pipe()
    return os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")


def message(i: int, pad: int = 0) -> str:
    return f'{{"jsonrpc":"2.0","id":{i},"result":{{"pad":"{"x" * pad}"}}}}'


def available(file: BinaryIO) -> bytes:
    """What the pipe holds now, without waiting."""
    os.set_blocking(file.fileno(), False)
    try:
        return os.read(file.fileno(), 1 << 22)
    except BlockingIOError:
        return b""
    finally:
        os.set_blocking(file.fileno(), True)


def read_all(file: BinaryIO) -> bytes:
    with file:
        return file.read()


@pytest.fixture
async def served() -> tuple[StdioServerTransport, BinaryIO, BinaryIO]:
    stdin_r, stdin_w = pipe()
    stdout_r, stdout_w = pipe()
    transport = StdioServerTransport(stdin_r, stdout_w)
    yield transport, stdout_r, stdin_w
    await asyncio.wait_for(transport.aclose(), WAIT)
    stdin_w.close()
    if not stdout_r.closed:
        stdout_r.close()


async def test_the_first_message_since_one_came_in_goes_at_once_the_rest_when_the_turn_ends(
    served: tuple[StdioServerTransport, BinaryIO, BinaryIO],
) -> None:
    transport, stdout_r, stdin_w = served
    for round_ in range(2):
        stdin_w.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        stdin_w.flush()
        await asyncio.wait_for(transport.receive(), WAIT)
        first = 10 * round_
        for i in range(first, first + 5):  # one turn: no send below waits for anything
            await transport.send(message(i))
        assert available(stdout_r) == (message(first) + "\n").encode()  # the answer: written at once
        await asyncio.sleep(0)  # the turn ends: the four others, in order, in one write
        assert available(stdout_r) == "".join(message(i) + "\n" for i in range(first + 1, first + 5)).encode()
    await transport.send(message(99))  # nothing came in since: gathered too, written when the turn ends
    assert available(stdout_r) == b""
    await asyncio.sleep(0)
    assert available(stdout_r) == (message(99) + "\n").encode()


async def test_order_is_kept_across_gathered_and_large_messages_and_close_sends_what_is_gathered(
    served: tuple[StdioServerTransport, BinaryIO, BinaryIO],
) -> None:
    transport, stdout_r, _ = served
    reader = asyncio.ensure_future(asyncio.to_thread(read_all, stdout_r))
    sizes = [0, 10, GATHER_BYTES, 5, GATHER_BYTES // 3, GATHER_BYTES // 3, GATHER_BYTES // 3, 0, 3 << 20, 1]
    sent = [message(i, pad) for i, pad in enumerate(sizes)]
    for text in sent:  # gathered past GATHER_BYTES goes out before the next is gathered; 3 MB waits to drain
        await transport.send(text)
    await transport.send(message(99))  # then closed in the same turn: gathered, written before the end
    await asyncio.wait_for(transport.aclose(), WAIT)
    got = (await asyncio.wait_for(reader, WAIT)).decode().splitlines()
    assert got == [*sent, message(99)]


async def test_a_broken_pipe_under_gathered_messages_is_raised_by_a_later_send(
    served: tuple[StdioServerTransport, BinaryIO, BinaryIO],
) -> None:
    transport, stdout_r, _ = served
    await transport.send(message(0))
    stdout_r.close()
    with pytest.raises(TransportClosed, match="cannot write to stdout") as info:
        for i in range(1, 4):  # each gathered, written as its turn ends: that fails, a later send raises
            await transport.send(message(i))
            await asyncio.sleep(0)
    assert isinstance(info.value.__cause__, BrokenPipeError)


async def test_flow_control_holds_a_writer_that_sends_less_than_a_gathering_per_turn(
    served: tuple[StdioServerTransport, BinaryIO, BinaryIO],
) -> None:
    """A tool sending one notification per turn of the loop to a client that does not read: each message is
    gathered and flushed when its turn ends, so none reaches GATHER_BYTES. Once the pipe is full and the
    transport paused, the sender must wait there (drain), not grow asyncio's buffer without bound."""
    transport, _, _ = served
    sent = 0

    async def produce() -> None:
        nonlocal sent
        for i in range(100_000):  # ~100 MB: far past the pipe (1 MiB at most) and the high-water mark
            await transport.send(message(i, 1000))
            sent += 1
            await asyncio.sleep(0)  # the tool's own work between two notifications

    producer = asyncio.ensure_future(produce())
    try:
        await transport.send(message(-1))  # the transport's pipe is opened by its first use
        io = transport._io
        assert io is not None
        flow = io.sink._flow  # type: ignore[attr-defined]

        async def full() -> bool:
            return bool(flow.paused or producer.done())

        await wait_until_async(full, "the pipe to fill", timeout=WAIT)
        assert not producer.done()
        before = sent
        for _ in range(200):  # two hundred turns of the loop while paused: the producer stays held
            await asyncio.sleep(0)
        assert sent - before <= 1
        assert io.sink._transport.get_write_buffer_size() < 4 * GATHER_BYTES  # type: ignore[attr-defined]
    finally:
        producer.cancel()
        await asyncio.gather(producer, return_exceptions=True)
