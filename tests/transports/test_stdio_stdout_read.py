"""The stdio client reads a spawned server's stdout straight into its reader (transports/stdio.py
``_Stdout``): asyncio's subprocess transport would hand each read over through ``call_soon``, a turn of the
event loop per read. What came before holds: every line, in order, then the end of the process."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.stdio import StdioClientTransport

WAIT = 20.0
ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{}}\n'

# Writes 300 notifications in one go, then exits with code 4.
BURST_THEN_EXIT = r"""
import sys
out = sys.stdout.buffer
out.write(b"".join(b'{"jsonrpc":"2.0","method":"n","params":{"i":%d}}\n' % i for i in range(300)))
out.flush()
sys.exit(4)
"""
WAIT_FOR_EOF = "import sys; sys.stdin.buffer.read()"


async def start(tmp_path: Path, source: str) -> StdioClientTransport:
    path = tmp_path / "server.py"
    path.write_text(source)
    return await asyncio.wait_for(StdioClientTransport.start([sys.executable, str(path)]), WAIT)


async def test_a_read_of_stdout_reaches_the_reader_without_a_turn_of_the_loop(tmp_path: Path) -> None:
    transport = await start(tmp_path, WAIT_FOR_EOF)
    try:
        pipe = transport._transport.get_pipe_transport(1)
        assert isinstance(pipe, asyncio.ReadTransport)
        pipe.get_protocol().data_received(ANSWER)  # type: ignore[attr-defined]  # as the pipe's read does
        receiving = transport.receive()
        with pytest.raises(StopIteration) as done:  # no wait: the line is there already
            receiving.send(None)
        assert done.value.value == ANSWER.decode().rstrip("\n")
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)


async def test_every_line_comes_in_order_before_the_end_of_the_process(tmp_path: Path) -> None:
    transport = await start(tmp_path, BURST_THEN_EXIT)
    try:
        got = []
        with pytest.raises(TransportClosed, match="exited with code 4"):
            while True:
                got.append(json.loads(await asyncio.wait_for(transport.receive(), WAIT))["params"]["i"])
        assert got == list(range(300))
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
    assert transport.returncode == 4
