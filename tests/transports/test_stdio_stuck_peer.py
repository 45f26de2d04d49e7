"""A stdio server that stops reading (hung, or stopped: SIGSTOP) while a request is being sent: once the
pipe is full the send waits, and the request's timeout, a cancel of the caller and the notice of
cancellation must not wait with it.

Before: the timeout was armed only once the request was written, so a request larger than what the pipe
holds never timed out; a caller cancelled meanwhile (``asyncio.wait_for``, a kernel interrupt) then waited
in sending ``notifications/cancelled`` to the same full pipe: both hung for as long as the server did."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from mcp_notebook import Client
from mcp_notebook.errors import RequestTimeoutError
from mcp_notebook.transports.base import INLINE

WAIT = 20.0
BIG = "y" * (3 << 20)  # more than the pipe holds (1 MiB asked of Linux)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

SERVER = """
from mcp_notebook import Server

server = Server("echo")


@server.tool
async def echo(text: str) -> int:
    '''The length of text.'''
    return len(text)


server.run_stdio()
"""


async def stopped_server(tmp_path: Path, era: str) -> tuple[Client, int]:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    client = Client([sys.executable, str(path)], era=era, timeout=WAIT)
    await asyncio.wait_for(client.connect(), WAIT)
    assert (await client.call_tool("echo", {"text": "ok"}))["structuredContent"] == {"result": 2}
    pid: int = client.connection.transport._pid  # type: ignore[attr-defined]
    os.kill(pid, signal.SIGSTOP)
    return client, pid


@pytest.mark.skipif(not INLINE, reason="a send is stopped by its timeout where Task.uncancel exists (3.11+)")
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_request_stuck_in_a_full_pipe_times_out(tmp_path: Path, era: str) -> None:
    client, pid = await stopped_server(tmp_path, era)
    try:
        with pytest.raises(RequestTimeoutError, match=r"timed out after 0\.5 s"):
            await asyncio.wait_for(client.call_tool("echo", {"text": BIG}, timeout=0.5), WAIT)
    finally:
        os.kill(pid, signal.SIGCONT)
    try:  # the server, going on, reads the request and its cancellation; the connection still works
        result = await asyncio.wait_for(client.call_tool("echo", {"text": "again"}), WAIT)
        assert result["structuredContent"] == {"result": 5}
    finally:
        await client.aclose()


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_caller_cancelled_while_its_request_is_stuck_in_a_full_pipe_ends(
    tmp_path: Path, era: str
) -> None:
    client, pid = await stopped_server(tmp_path, era)
    try:
        call = asyncio.ensure_future(client.call_tool("echo", {"text": BIG}, timeout=None))
        done, _ = await asyncio.wait({call}, timeout=0.5)
        assert not done  # stuck in the full pipe
        call.cancel()
        done, _ = await asyncio.wait({call}, timeout=WAIT)
        assert done and call.cancelled()
    finally:
        os.kill(pid, signal.SIGCONT)
    try:
        result = await asyncio.wait_for(client.call_tool("echo", {"text": "again"}), WAIT)
        assert result["structuredContent"] == {"result": 5}
    finally:
        await client.aclose()
