"""stdio, server side: serving over this process's own stdin/stdout (or any pair of files or streams).

Re-exported by :mod:`mcp_notebook.transports.stdio`; see there for the framing rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..protocol.jsonrpc import RequestId
from ._heap import reads_from_the_heap
from ._stdio_io import (
    LineCallback,
    Lines,
    Overlong,
    Sink,
    StreamSink,
    frame,
    notify,
    oversize,
    preview,
    read_from,
    write_to,
)
from .base import TransportClosed

__all__ = ["SERVER_MAX_LINE", "StdioServerTransport", "redirect_stdout_to_stderr"]

SERVER_MAX_LINE = 64 << 20
# Answers written but not yet read by the client past which the server reads no further request until the
# client reads (a client that writes and never reads would otherwise make it keep every answer).
MAX_BACKLOG = 16 << 20

_protocol_stdout: int | None = None  # while redirect_stdout_to_stderr() runs: a descriptor on the real stdout


@contextlib.contextmanager
def redirect_stdout_to_stderr() -> Iterator[BinaryIO]:
    """Keep everything but protocol messages off stdout while serving (spec: the server MUST NOT write
    anything to its stdout that is not a valid MCP message).

    ``sys.stdout`` and descriptor 1 itself point at stderr inside the block, so ``print()`` in a tool, C
    extensions and child processes write there. A :class:`StdioServerTransport` opened inside writes to the
    real stdout through a saved duplicate; the block yields another duplicate as a binary file, for callers
    that frame messages themselves. Everything is restored on exit.
    """
    global _protocol_stdout
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = os.dup(1)
    previous_fd, previous_stdout = _protocol_stdout, sys.stdout
    out = os.fdopen(os.dup(saved), "wb")
    try:
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr at all: stray output goes nowhere rather than into the protocol
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        sys.stdout = sys.stderr
        _protocol_stdout = saved
        yield out
    finally:
        _protocol_stdout = previous_fd
        sys.stdout = previous_stdout
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
        out.close()


@dataclass
class _ServerIO:
    lines: Lines
    stop_reading: Callable[[], None]
    sink: Sink


class StdioServerTransport:
    """Serve one client over this process's stdin/stdout, or over a given pair of byte streams.

    ``stdin``/``stdout``: None for this process's own (through duplicated descriptors, see
    :func:`redirect_stdout_to_stderr`); binary files (a pipe is driven by the event loop; anything else, a
    file, a tty, or any pipe on Windows, by a daemon thread); or an asyncio StreamReader / StreamWriter. The
    transport owns and closes what it is given (a StreamReader ends when its own transport does). It opens on
    first use, so it can be created outside a running loop.

    Every line is delivered, except blank ones. A line that cannot be a message (invalid UTF-8, over
    ``max_line_bytes``) is reported to ``on_invalid_line`` and delivered as a placeholder starting with ``<``,
    which never parses as JSON: the session answers it with a -32700 Parse error and keeps serving.

    Bounded per client: once more than ``max_backlog_bytes`` of answers wait for the client to read them (a
    client that writes requests and never reads), no further request is read until it reads; a client that
    reads as it goes never meets the bound.
    """

    def __init__(
        self,
        stdin: BinaryIO | asyncio.StreamReader | None = None,
        stdout: BinaryIO | asyncio.StreamWriter | None = None,
        *,
        max_line_bytes: int = SERVER_MAX_LINE,
        on_invalid_line: LineCallback | None = None,
        name: str = "stdio server",
        close_timeout: float = 2.0,
        max_backlog_bytes: int = MAX_BACKLOG,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        if max_backlog_bytes < 1:
            raise ValueError("max_backlog_bytes must be positive")
        reads_from_the_heap()  # no mmap per pipe read (transports/_heap.py)
        self._max_backlog = max_backlog_bytes
        self._stdin, self._stdout = stdin, stdout
        self._max_line, self._on_invalid_line = max_line_bytes, on_invalid_line
        self._name, self._close_timeout = name, close_timeout
        self._io: _ServerIO | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    async def _ready(self) -> _ServerIO:
        if self._io is None:
            async with self._lock:
                if self._closed:
                    raise TransportClosed(f"{self._name}: the transport is closed")
                if self._io is None:
                    try:
                        self._io = await self._open()
                    except OSError as exc:
                        raise TransportClosed(f"{self._name}: cannot open stdin/stdout: {exc}") from exc
        return self._io

    async def _open(self) -> _ServerIO:
        stdin, stdout = self._stdin, self._stdout
        if isinstance(stdin, asyncio.StreamReader):
            reader, stop_reading = stdin, _nothing
        else:
            reader, stop_reading = await read_from(stdin if stdin is not None else os.fdopen(os.dup(0), "rb"))
        try:
            if isinstance(stdout, asyncio.StreamWriter):
                sink: Sink = StreamSink(stdout, self._close_timeout)
            else:
                if stdout is None:
                    stdout = os.fdopen(os.dup(1 if _protocol_stdout is None else _protocol_stdout), "wb")
                sink = await write_to(stdout, self._close_timeout)
        except BaseException:
            stop_reading()
            raise
        return _ServerIO(Lines(reader, self._max_line), stop_reading, sink)

    async def receive(self) -> str:
        io = await self._ready()
        lines = io.lines
        while True:
            if self._closed:
                raise TransportClosed(f"{self._name}: the transport is closed")
            if io.sink.backlog() > self._max_backlog:  # the client does not read: neither do we, for now
                await io.sink.room(self._max_backlog)
            try:
                item = await lines.next()
            except OSError as exc:
                raise TransportClosed(f"{self._name}: reading stdin failed: {exc}") from exc
            if item is None:
                why = "the transport is closed" if self._closed else "stdin closed (the client is gone)"
                raise TransportClosed(f"{self._name}: {why}")
            text = await self._message(item)
            if text is not None:
                io.sink.received()
                return text

    async def _message(self, item: bytes | Overlong) -> str | None:
        if isinstance(item, Overlong):
            outcome = oversize(item, self._max_line, unknown_is="request")
            if outcome.reply is None and outcome.deliver is None and outcome.kind != "notification":
                return self._placeholder(outcome.reason, item.head)  # answered by a Parse error, id null
            notify(self._on_invalid_line, f"<{outcome.reason}> {preview(item.head)}", self._name)
            if outcome.reply is not None:  # a request: answered with its own id, so its call fails now
                await self.send(outcome.reply)
            return outcome.deliver  # an answer to one of our requests: that request fails with the reason
        if not item or item.isspace():
            return None
        try:
            return item.decode()
        except UnicodeDecodeError as exc:
            # Not decoded leniently: "replace" or "surrogateescape" would let the broken line parse as JSON.
            return self._placeholder(f"invalid UTF-8 at byte {exc.start}", item)

    def _placeholder(self, reason: str, raw: bytes) -> str:
        text = f"<{reason}> {preview(raw)}"
        notify(self._on_invalid_line, text, self._name)
        return text

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        data = frame(message)
        sink = (await self._ready()).sink
        if self._closed:
            raise TransportClosed(f"{self._name}: cannot send, the transport is closed")
        try:
            await sink.write(data)
        except OSError as exc:
            raise TransportClosed(
                f"{self._name}: cannot write to stdout (the client is gone): {exc}"
            ) from exc

    async def aclose(self) -> None:
        """Stop reading, flush and close stdout (bounded). Idempotent."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            io = self._io
            if io is None:  # never opened: still close what we were given
                for given in (self._stdin, self._stdout):
                    if given is not None and not isinstance(given, asyncio.StreamReader):
                        given.close()
                return
            io.stop_reading()
            await asyncio.sleep(0)  # the pipe transport closes its descriptor in a callback: let it run
            await io.sink.aclose()


def _nothing() -> None:
    pass
