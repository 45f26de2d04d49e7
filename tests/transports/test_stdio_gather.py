"""stdio over pipes: messages written in one turn of the event loop go out together (transports/_stdio_io.py
``PipeSink``): the first at once, those after it in one write when the turn ends. Order, flow control and
closing are as before; these tests pin them. No subprocess: a server transport over ``os.pipe()``s.
"""

from __future__ import annotations

import asyncio
import os
from typing import BinaryIO

import pytest

from mcp_notebook.transports._stdio_io import GATHER_BYTES
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.stdio import StdioServerTransport

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


async def test_the_first_message_of_a_turn_goes_at_once_the_rest_when_the_turn_ends(
    served: tuple[StdioServerTransport, BinaryIO, BinaryIO],
) -> None:
    transport, stdout_r, _ = served
    await transport.send(message(0))  # opens the transport (it yields once); sent in a later turn
    await asyncio.sleep(0)
    assert available(stdout_r) == (message(0) + "\n").encode()
    for i in range(1, 6):  # one turn: no send below waits for anything
        await transport.send(message(i))
    assert available(stdout_r) == (message(1) + "\n").encode()  # the first: written at once
    await asyncio.sleep(0)  # the turn ends: the four others, in order, in one write
    assert available(stdout_r) == "".join(message(i) + "\n" for i in range(2, 6)).encode()


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
        for i in range(1, 4):  # one send each turn: the first of a turn is written, and fails
            await transport.send(message(i))
            await asyncio.sleep(0)
    assert isinstance(info.value.__cause__, BrokenPipeError)
