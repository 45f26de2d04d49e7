"""Byte plumbing for the stdio transports: line splitting, flow control, pipes driven by the event loop,
and daemon-thread readers/writers for what the loop cannot drive (files, ttys, Windows handles); and what
both sides do with a line: framing, the report of a bad one, the answer to one over the size limit."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import queue
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
from ..protocol.errors import INVALID_REQUEST
from ..protocol.jsonrpc import ErrorResponse, serialize
from ..protocol.truncated import Kind, read_ends
from .base import wait_event

LineCallback = Callable[[str], object]
CHUNK = 1 << 20  # bytes asked for per read
PIPE_SIZE = 1 << 20  # the pipe buffer asked for (Linux): unprivileged processes may have up to 1 MiB
_SETPIPE_SZ: int | None = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
BUFFER = 1 << 20  # StreamReader limit: the pipe is paused while 2x this is unread
HEAD = 1000  # bytes kept of a dropped line, for the report
GATHER_BYTES = 1 << 16  # messages gathered for one write at most (asyncio's own high-water mark)


@dataclass(frozen=True)
class Overlong:
    """A line longer than the maximum, dropped: its size, its first and its last bytes."""

    size: int
    head: bytes
    tail: bytes = b""


class Lines:
    """Splits a byte stream into lines; a line over ``max_bytes`` is dropped up to its newline.

    Cancellation-safe: a chunk joins the buffer in the same step that reads it."""

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self._reader = reader
        self._max = max_bytes
        self._buf = bytearray()
        self._scanned = 0  # no newline before this offset
        self._dropped = 0  # bytes dropped so far of an over-long line (0: not dropping)
        self._head = b""
        self._tail = b""  # the last HEAD bytes dropped so far

    async def next(self) -> bytes | Overlong | None:
        """The next line without its newline; an :class:`Overlong`; None at end of input."""
        buf = self._buf
        while True:
            end = buf.find(b"\n", self._scanned)
            if end >= 0:
                stop = end - 1 if end and buf[end - 1] == 13 else end  # CRLF: Windows text-mode peers
                with memoryview(buf) as view:
                    line = bytes(view[:stop])
                del buf[: end + 1]
                self._scanned = 0
                return self._overlong(line) if self._dropped or end > self._max else line
            if self._dropped or len(buf) > self._max:
                if not self._dropped:
                    self._head = bytes(buf[:HEAD])
                self._tail = (self._tail + bytes(buf[-HEAD:]))[-HEAD:]
                self._dropped += len(buf)
                buf.clear()
            self._scanned = len(buf)
            chunk = await self._reader.read(CHUNK)
            if not chunk:  # end of input; a last line without its newline still counts
                line, self._scanned = bytes(buf), 0
                buf.clear()
                if self._dropped:
                    return self._overlong(line)
                return line or None
            buf += chunk

    def _overlong(self, rest: bytes) -> Overlong:
        head = self._head if self._dropped else rest[:HEAD]
        item = Overlong(self._dropped + len(rest), head, (self._tail + rest[-HEAD:])[-HEAD:])
        self._dropped, self._head, self._tail = 0, b"", b""
        return item


@dataclass(frozen=True)
class Oversize:
    """What to do with a message over the limit: ``reply`` goes back to the peer (it sent a request we cannot
    read), ``deliver`` to our own engine (the message answered one of our requests); both say why."""

    reason: str
    kind: Kind
    reply: str | None = None
    deliver: str | None = None


def oversize(item: Overlong, limit: int, *, unknown_is: Kind) -> Oversize:
    """Fail the request an over-limit message belongs to, by its id when its ends show one.

    ``unknown_is``: what a message with an id but no telling member in view most likely is on this side (a
    server mostly receives requests, a client responses)."""
    reason = f"message of {item.size} bytes exceeds the limit of {limit}"
    ends = read_ends(item.head.decode("utf-8", "replace"), item.tail.decode("utf-8", "replace"))
    kind = unknown_is if ends.kind == "unknown" and ends.id is not None else ends.kind
    if ends.id is None or kind not in ("request", "response"):
        return Oversize(reason, kind)
    error = serialize(ErrorResponse(ends.id, INVALID_REQUEST, reason))
    return Oversize(reason, kind, reply=error) if kind == "request" else Oversize(reason, kind, deliver=error)


def frame(message: str) -> bytes:
    line = getattr(message, "line", None)
    if line is not None:  # our own serialize: orjson's bytes, newline included (none inside: it escapes)
        return line  # type: ignore[no-any-return]
    if not isinstance(message, str):  # a dict slipping through would skip serialization
        raise TypeError("transports carry serialized JSON text")
    if "\n" in message:
        raise ValueError("a stdio message must not contain a newline (spec: basic/transports#stdio)")
    return message.encode() + b"\n"


def preview(raw: bytes, limit: int = 200) -> str:
    return raw[:limit].decode("utf-8", "backslashreplace") + ("..." if len(raw) > limit else "")


def notify(callback: LineCallback | None, line: str, owner: str) -> None:
    """Run a user callback; its failure is reported, not raised into the transport (or swallowed)."""
    if callback is None:
        return
    try:
        callback(line)
    except Exception as exc:
        message = f"{owner}: callback {callback!r} failed"
        asyncio.get_running_loop().call_exception_handler({"message": message, "exception": exc})


class Flow:
    """Write-side flow control of one protocol: ``drain()`` waits while the transport's buffer is full."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self.paused = False  # the transport's buffer is past its high-water mark: writers wait in drain()
        self.lost = asyncio.Event()
        self.exc: BaseException | None = None

    def pause(self) -> None:
        self.paused = True
        self._open.clear()

    def resume(self) -> None:
        self.paused = False
        self._open.set()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.exc = exc
        self.lost.set()
        self.paused = False
        self._open.set()

    async def drain(self) -> None:
        await self._open.wait()

    def error(self) -> OSError:
        if isinstance(self.exc, OSError):
            return self.exc
        return BrokenPipeError(errno.EPIPE, "the reading end of the pipe is closed")


class Sink(Protocol):
    async def write(self, data: bytes) -> None: ...  # OSError when the other end is gone

    def received(self) -> None: ...  # a message came in (see PipeSink)

    def backlog(self) -> int: ...  # bytes written but not yet taken by the reader (buffered, queued)

    async def room(self, limit: int) -> None: ...  # wait until the backlog is below ``limit`` (or the end)

    async def aclose(self) -> None: ...


class PipeSink:
    """Writes through an asyncio write-pipe transport (a child's stdin; our stdout when it is a pipe).

    The first message written since one was received goes out at once (a sequential caller's next request,
    the answer to a lone request: no added latency, no added turn of the loop, and a broken pipe is raised by
    that send as before). Those written after it are gathered and go out in one write when their turn of
    the event loop ends (a batch's next calls after a read of several answers; the answers of tool calls
    that ended together): one system call and one wake-up of the reading process for them all. Past
    :data:`GATHER_BYTES` gathered, or while the transport is paused (its buffer past the high-water mark),
    they go out at once and the writer waits in ``drain`` as before: flow control holds a writer that sends
    less than that per turn too. A gathered message's broken pipe is raised by a later write. ``aclose``
    writes what is gathered first.
    """

    def __init__(self, transport: asyncio.WriteTransport, flow: Flow, close_timeout: float) -> None:
        self._transport, self._flow, self._timeout = transport, flow, close_timeout
        self._loop = asyncio.get_running_loop()
        self._at_once = True  # the next message goes out at once: the first since one was received
        self._gathered: list[bytes] = []
        self._size = 0

    def received(self) -> None:
        self._at_once = True

    async def write(self, data: bytes) -> None:
        transport = self._transport
        if transport.is_closing():
            raise self._flow.error()
        gathered = self._gathered
        if self._at_once and not gathered:
            self._at_once = False
            transport.write(data)
        else:
            if not gathered:
                self._loop.call_soon(self.flush)
            gathered.append(data)
            self._size += len(data)
            if self._size < GATHER_BYTES and not self._flow.paused:
                return
            self.flush()  # then wait to drain, as the first message does
        if transport.is_closing():  # EPIPE inside write(): asyncio closes the pipe instead of raising
            raise self._flow.error()
        await self._flow.drain()
        if self._flow.lost.is_set():
            raise self._flow.error()

    def backlog(self) -> int:
        return self._transport.get_write_buffer_size() + self._size

    async def room(self, limit: int) -> None:
        # past the limit the transport is paused (its high-water mark is far lower): drain() returns once
        # it resumed (below its low-water mark) or the pipe is gone
        while self.backlog() > limit and self._flow.paused and not self._flow.lost.is_set():
            await self._flow.drain()

    def flush(self) -> None:
        """Hand what is gathered to the transport now (the end of a turn; before closing the pipe)."""
        gathered = self._gathered
        if gathered:
            self._gathered, self._size = [], 0
            self._transport.write(gathered[0] if len(gathered) == 1 else b"".join(gathered))

    async def aclose(self) -> None:
        self.flush()
        self._transport.close()  # flushes what is buffered first
        if not await wait_event(self._flow.lost, self._timeout):
            self._transport.abort()


class StreamSink:
    def __init__(self, writer: asyncio.StreamWriter, close_timeout: float) -> None:
        self._writer, self._timeout = writer, close_timeout
        self._lock = asyncio.Lock()  # older asyncio releases asserted on concurrent drain() calls

    def received(self) -> None:
        """Nothing to do: this sink writes each message as it comes (only PipeSink gathers)."""

    async def write(self, data: bytes) -> None:
        if self._writer.is_closing():
            raise BrokenPipeError(errno.EPIPE, "the stream is closed")
        self._writer.write(data)
        async with self._lock:
            await self._writer.drain()

    def backlog(self) -> int:
        return self._writer.transport.get_write_buffer_size()

    async def room(self, limit: int) -> None:
        if self.backlog() > limit and not self._writer.is_closing():
            with contextlib.suppress(OSError):  # a gone reader: the next write says so
                async with self._lock:
                    await self._writer.drain()  # returns below the transport's low-water mark

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self._writer.wait_closed(), self._timeout)


class ThreadSink:
    """Blocking writes in a daemon thread: stdout that is a file or a tty, and Windows (no pipe transport
    for inherited handles). Daemon, so a peer that stops reading cannot hold up interpreter exit."""

    def __init__(self, file: BinaryIO, close_timeout: float) -> None:
        self._file, self._timeout = file, close_timeout
        self._loop = asyncio.get_running_loop()
        self._queue: queue.SimpleQueue[tuple[bytes, asyncio.Future[None]] | None] = queue.SimpleQueue()
        self._finished = asyncio.Event()
        self._stopped = False
        self._pending = 0  # bytes queued or being written
        self._written = asyncio.Event()  # set when a queued message is written (or failed)
        threading.Thread(target=self._run, name="mcp-notebook stdout writer", daemon=True).start()

    def received(self) -> None:
        """Nothing to do: this sink writes each message as it comes (only PipeSink gathers)."""

    def _run(self) -> None:
        try:
            while (item := self._queue.get()) is not None:
                data, future = item
                error: OSError | None = None
                try:
                    view = memoryview(data)
                    while view:
                        view = view[self._file.write(view) :]
                    self._file.flush()
                except Exception as exc:  # ValueError on a closed file is a closed pipe for the caller too
                    error = exc if isinstance(exc, OSError) else BrokenPipeError(errno.EPIPE, str(exc))
                call_threadsafe(self._loop, settle, future, error)
        finally:
            with contextlib.suppress(Exception):
                self._file.close()
            call_threadsafe(self._loop, self._finished.set)

    async def write(self, data: bytes) -> None:
        if self._stopped:
            raise BrokenPipeError(errno.EPIPE, "stdout is closed")
        future: asyncio.Future[None] = self._loop.create_future()
        self._queue.put((data, future))
        self._pending += len(data)
        try:
            await future
        finally:
            self._pending -= len(data)
            self._written.set()

    def backlog(self) -> int:
        return self._pending

    async def room(self, limit: int) -> None:
        while self._pending > limit and not self._stopped and not self._finished.is_set():
            self._written.clear()
            await self._written.wait()

    async def aclose(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._queue.put(None)
        await wait_event(self._finished, self._timeout)


class ThreadReader(asyncio.ReadTransport):
    """Feeds a StreamReader from a blocking file in a daemon thread (stdin that is a file or a tty, Windows).
    The reader's flow control pauses it as it would a pipe transport."""

    def __init__(self, file: BinaryIO, reader: asyncio.StreamReader) -> None:
        super().__init__()
        self._file, self._reader = file, reader
        self._loop = asyncio.get_running_loop()
        self._go = threading.Event()
        self._go.set()
        self._closing = False
        reader.set_transport(self)
        threading.Thread(target=self._run, name="mcp-notebook stdin reader", daemon=True).start()

    def _run(self) -> None:
        read = getattr(self._file, "read1", self._file.read)  # read1: what is there, without waiting for more
        try:
            while self._go.wait() and not self._closing:
                data = read(CHUNK)
                if not call_threadsafe(self._loop, self._deliver, data) or not data:
                    return
        except Exception as exc:
            call_threadsafe(self._loop, self._fail, exc)
        finally:
            with contextlib.suppress(Exception):
                self._file.close()

    def _deliver(self, data: bytes) -> None:
        if self._closing:
            return
        if data:
            self._reader.feed_data(data)
        else:
            self._reader.feed_eof()

    def _fail(self, exc: Exception) -> None:
        if not self._closing:
            self._reader.set_exception(exc)

    def pause_reading(self) -> None:
        self._go.clear()

    def resume_reading(self) -> None:
        self._go.set()

    def is_reading(self) -> bool:
        return self._go.is_set()

    def close(self) -> None:
        # A read blocked in the thread cannot be interrupted; it ends with the next line or at exit.
        if not self._closing:
            self._closing = True
            self._go.set()
            self._reader.feed_eof()  # a receive() waiting now ends

    def is_closing(self) -> bool:
        return self._closing


def settle(future: asyncio.Future[None], error: OSError | None) -> None:
    if future.done():  # the writer was cancelled
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def call_threadsafe(loop: asyncio.AbstractEventLoop, fn: Callable[..., object], *args: Any) -> bool:
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed: nobody is listening any more
        return False
    return True


def widen_pipe(file: Any) -> None:
    """Ask Linux for a pipe buffer of :data:`PIPE_SIZE` (default 64 KiB): a 1 MB message then crosses in one
    or two writes instead of sixteen pipefuls, each a wake-up of the reader and of the writer. Nothing
    happens elsewhere, nor when the system refuses (``/proc/sys/fs/pipe-max-size``, per-user limits)."""
    if _SETPIPE_SZ is None:
        return
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fcntl.fcntl(file.fileno() if hasattr(file, "fileno") else file, _SETPIPE_SZ, PIPE_SIZE)


def is_pipe(file: BinaryIO) -> bool:
    # On Windows the event loop cannot drive inherited pipe handles: threads there.
    if os.name != "posix":
        return False
    try:
        mode = os.fstat(file.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def read_from(file: BinaryIO) -> tuple[asyncio.StreamReader, Callable[[], None]]:
    reader = asyncio.StreamReader(limit=BUFFER)
    if is_pipe(file):
        widen_pipe(file)
        fd = file.fileno()
        try:
            transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), file
            )
        except (OSError, ValueError, NotImplementedError):
            os.set_blocking(fd, True)  # the thread below reads it blocking
        else:

            def stop_reading() -> None:
                transport.close()
                # The pipe is non-blocking now; that flag is shared with whoever else holds it (a shell).
                with contextlib.suppress(OSError):
                    os.set_blocking(fd, True)

            return reader, stop_reading
    return reader, ThreadReader(file, reader).close


class PipeWriter(asyncio.BaseProtocol):
    def __init__(self, fd: int) -> None:
        self.flow = Flow()
        self._fd = fd

    def pause_writing(self) -> None:
        self.flow.pause()

    def resume_writing(self) -> None:
        self.flow.resume()

    def connection_lost(self, exc: Exception | None) -> None:
        with contextlib.suppress(OSError):  # still open here; see read_from
            os.set_blocking(self._fd, True)
        self.flow.connection_lost(exc)


async def write_to(file: BinaryIO, close_timeout: float) -> Sink:
    if is_pipe(file):
        widen_pipe(file)
        protocol = PipeWriter(file.fileno())
        try:
            transport, _ = await asyncio.get_running_loop().connect_write_pipe(lambda: protocol, file)
        except (OSError, ValueError, NotImplementedError):
            os.set_blocking(file.fileno(), True)
        else:
            return PipeSink(transport, protocol.flow, close_timeout)
    return ThreadSink(file, close_timeout)
