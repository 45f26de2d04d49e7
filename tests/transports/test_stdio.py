"""The stdio transport against real processes and real pipes.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio (newline-delimited
UTF-8 JSON-RPC; nothing else on stdout; stderr is logging) and basic/lifecycle#shutdown (close stdin,
SIGTERM, SIGKILL).
Every wait is bounded by WAIT; nothing sleeps to let things settle.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from mcp_notebook.protocol.errors import PARSE_ERROR
from mcp_notebook.protocol.session import ProtocolViolation, Role, Session
from mcp_notebook.transports.base import Transport, TransportClosed
from mcp_notebook.transports.stdio import StdioClientTransport, StdioServerTransport

WAIT = 20.0
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

ECHO_SERVER = r"""
import json, os, sys, time

out = sys.stdout.buffer
print("echo server: started", file=sys.stderr, flush=True)


def reply(msg, result):
    out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")
    out.flush()


for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "stderr":
        for i in range(params["lines"]):
            print(f"log line {i}", file=sys.stderr)
        sys.stderr.flush()
    elif method == "banner":
        out.write(b"Server ready on stdio\n[INFO] listening\n\n")
    elif method == "env":
        reply(msg, {"env": dict(os.environ)})
        continue
    elif method == "die":
        print("fatal: dying as asked", file=sys.stderr, flush=True)
        os._exit(3)
    elif method == "close_stdin":
        os.close(0)
        reply(msg, {})
        while True:
            time.sleep(60)
    reply(msg, {"echo": params})
"""

STUBBORN_SERVER = r"""
import signal, sys, time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", file=sys.stderr, flush=True)
sys.stdin.buffer.read()  # EOF on stdin: keep running anyway
while True:
    time.sleep(60)
"""

# Exits while a grandchild it started still holds stdout (and stdin: it leaves when stdin closes).
ORPHANING_SERVER = r"""
import os, subprocess, sys

subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read()"])
sys.stdout.write('{"jsonrpc":"2.0","method":"notifications/bye"}\n')
sys.stdout.flush()
os._exit(5)
"""


def script(tmp_path: Path, source: str, name: str = "server.py") -> list[str]:
    path = tmp_path / name
    path.write_text(source)
    return [sys.executable, str(path)]


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


async def start(command: list[str], **options: Any) -> StdioClientTransport:
    return await asyncio.wait_for(StdioClientTransport.start(command, **options), WAIT)


async def receive(transport: Transport) -> str:
    return await asyncio.wait_for(transport.receive(), WAIT)


async def call(
    transport: Transport, request_id: int, method: str, params: dict[str, Any] | None = None
) -> Any:
    await asyncio.wait_for(transport.send(request(request_id, method, params)), WAIT)
    answer = json.loads(await receive(transport))
    assert answer["id"] == request_id
    return answer["result"]


async def wait_for_event(event: asyncio.Event) -> None:
    await asyncio.wait_for(event.wait(), WAIT)


# ---- client side: a real subprocess ---------------------------------------------------------------------
async def test_round_trip_and_polite_shutdown(tmp_path: Path) -> None:
    transport = await start(script(tmp_path, ECHO_SERVER))
    assert isinstance(transport, Transport)
    try:
        assert await call(transport, 1, "ping", {"x": "é"}) == {"echo": {"x": "é"}}
        assert transport.returncode is None and transport.pid > 0
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
    assert transport.returncode == 0  # it left on stdin EOF: no signal needed


async def test_five_megabyte_message_both_ways(tmp_path: Path) -> None:
    blob = "x" * (5 << 20)
    async with await start(script(tmp_path, ECHO_SERVER)) as transport:
        assert await call(transport, 1, "big", {"blob": blob}) == {"echo": {"blob": blob}}
        assert await call(transport, 2, "small") == {"echo": {}}


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_GETPIPE_SZ is Linux's")


def pipe_size(file: Any) -> int:
    import fcntl

    return int(fcntl.fcntl(file.fileno() if hasattr(file, "fileno") else file, fcntl.F_GETPIPE_SZ))


def test_our_own_message_is_written_as_serialize_encoded_it() -> None:
    """No second encoding of what orjson already wrote as UTF-8 (two copies of a 1 MB message)."""
    from mcp_notebook.protocol.jsonrpc import Response, serialize
    from mcp_notebook.transports._stdio_io import frame

    wire = serialize(Response(1, {"content": [{"type": "text", "text": "é" * 1000}]}))
    assert frame(wire) is wire.line
    assert frame(str(wire)) == wire.line  # plain text: encoded here, the same bytes


@linux_only
async def test_the_pipes_to_a_spawned_server_hold_a_large_message(tmp_path: Path) -> None:
    """1 MiB pipes (default 64 KiB): a 1 MB message crosses in one or two writes, not sixteen pipefuls."""
    async with await start(script(tmp_path, ECHO_SERVER)) as transport:
        transport_pipes = transport._transport  # the subprocess transport: stdin and stdout pipes
        for fd in (0, 1):
            pipe_transport = transport_pipes.get_pipe_transport(fd)
            assert pipe_transport is not None
            assert pipe_size(pipe_transport.get_extra_info("pipe")) == 1 << 20
        assert await call(transport, 1, "small") == {"echo": {}}


@linux_only
async def test_a_server_over_pipes_widens_them() -> None:
    stdin_r, stdin_w = pipe()
    stdout_r, stdout_w = pipe()
    transport = StdioServerTransport(stdin_r, stdout_w)
    try:
        await transport.send('{"jsonrpc":"2.0","method":"a"}')
        assert pipe_size(stdin_w) == pipe_size(stdout_r) == 1 << 20
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
        stdin_w.close()
        stdout_r.close()


async def test_stderr_is_drained_into_a_bounded_tail(tmp_path: Path) -> None:
    seen: list[str] = []
    last = asyncio.Event()

    def on_stderr(line: str) -> None:
        seen.append(line)
        if line == "log line 299":
            last.set()

    async with await start(script(tmp_path, ECHO_SERVER), on_stderr=on_stderr) as transport:
        await call(transport, 1, "stderr", {"lines": 300})
        await wait_for_event(last)  # stdout and stderr are separate pipes: no order between them
        tail = transport.stderr_tail().splitlines()
    assert seen[0] == "echo server: started" and len(seen) == 301
    assert len(tail) == 200 and tail[0] == "log line 100" and tail[-1] == "log line 299"


async def test_non_json_stdout_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    reported: list[str] = []
    async with await start(script(tmp_path, ECHO_SERVER), on_invalid_line=reported.append) as transport:
        assert await call(transport, 1, "banner") == {"echo": {}}
        assert reported == ["Server ready on stdio", "[INFO] listening"]  # the blank line is just skipped
        assert transport.invalid_lines() == reported
        assert await call(transport, 2, "ping") == {"echo": {}}  # the connection keeps working


async def test_a_line_over_the_maximum_is_dropped_and_reading_goes_on(tmp_path: Path) -> None:
    reported: list[str] = []
    command = script(tmp_path, ECHO_SERVER)
    async with await start(command, max_line_bytes=1000, on_invalid_line=reported.append) as transport:
        await transport.send(request(1, "big", {"blob": "y" * 5000}))
        failed = json.loads(await receive(transport))  # the answer over the limit fails its own request
        assert failed["id"] == 1
        assert re.fullmatch(r"message of 50\d\d bytes exceeds the limit of 1000", failed["error"]["message"])
        assert await call(transport, 2, "ping") == {"echo": {}}
    assert len(reported) == 1 and reported[0].startswith("<message of 50")


async def test_a_failing_callback_is_reported_not_raised(tmp_path: Path) -> None:
    contexts: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: contexts.append(context))

    def broken(line: str) -> None:
        raise RuntimeError("callback bug")

    try:
        async with await start(script(tmp_path, ECHO_SERVER), on_invalid_line=broken) as transport:
            assert await call(transport, 1, "banner") == {"echo": {}}
    finally:
        loop.set_exception_handler(None)
    assert [str(c["exception"]) for c in contexts] == ["callback bug", "callback bug"]


async def test_server_death_is_reported_with_exit_code_and_stderr(tmp_path: Path) -> None:
    async with await start(script(tmp_path, ECHO_SERVER), name="echo") as transport:
        await transport.send(request(1, "die"))
        with pytest.raises(TransportClosed) as info:
            await receive(transport)
        assert "echo: the server process" in str(info.value) and "exited with code 3" in str(info.value)
        assert info.value.detail is not None and "fatal: dying as asked" in info.value.detail
        with pytest.raises(TransportClosed, match="exited with code 3") as sent:
            await asyncio.wait_for(transport.send(request(2, "ping")), WAIT)
        assert sent.value.detail == info.value.detail
        with pytest.raises(TransportClosed):  # and again: the end is sticky
            await receive(transport)
    assert transport.returncode == 3


async def test_messages_sent_just_before_aclose_reach_the_server_before_its_eof(tmp_path: Path) -> None:
    """The first message of a turn goes at once, the others when the turn ends (test_stdio_gather.py):
    closing in that turn sends them before closing stdin."""
    out = tmp_path / "got.txt"
    keeper = "import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())"
    transport = await start([*script(tmp_path, keeper), str(out)])
    sent = [request(i, "ping") for i in range(5)]
    for text in sent:  # one turn: the first written at once, four gathered
        await transport.send(text)
    await asyncio.wait_for(transport.aclose(), WAIT)
    assert transport.returncode == 0 and out.read_text().splitlines() == sent


@posix_only
async def test_send_into_a_closed_stdin_raises_from_the_broken_pipe(tmp_path: Path) -> None:
    transport = await start(script(tmp_path, ECHO_SERVER), close_timeout=0.5)
    try:
        assert await call(transport, 1, "close_stdin") == {}
        with pytest.raises(TransportClosed, match=r"closed its stdin\) but is still running") as info:
            await asyncio.wait_for(transport.send(request(2, "ping")), WAIT)  # not "closed its stdout"
        assert isinstance(info.value.__cause__, BrokenPipeError)
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
    assert transport.returncode == -signal.SIGTERM


@posix_only
async def test_aclose_escalates_to_kill_for_a_server_ignoring_eof_and_sigterm(tmp_path: Path) -> None:
    ready = asyncio.Event()
    transport = await start(
        script(tmp_path, STUBBORN_SERVER), close_timeout=0.3, on_stderr=lambda line: ready.set()
    )
    await wait_for_event(ready)  # SIGTERM is ignored from here on
    loop = asyncio.get_running_loop()
    began = loop.time()
    await asyncio.wait_for(asyncio.gather(transport.aclose(), transport.aclose()), WAIT)
    assert transport.returncode == -signal.SIGKILL
    assert loop.time() - began < 5  # two bounded waits, then the kill: not a hang
    await transport.aclose()  # idempotent
    with pytest.raises(TransportClosed, match="closed"):
        await transport.send(request(1, "ping"))
    with pytest.raises(TransportClosed, match="closed"):
        await transport.receive()


async def test_exit_ends_the_stream_even_if_a_grandchild_holds_stdout(tmp_path: Path) -> None:
    async with await start(script(tmp_path, ORPHANING_SERVER)) as transport:
        assert json.loads(await receive(transport))["method"] == "notifications/bye"
        with pytest.raises(TransportClosed, match="exited with code 5"):
            await receive(transport)
    # closing stdin let the grandchild go too


def test_a_transport_left_open_is_closed_when_asyncio_run_ends(tmp_path: Path) -> None:
    slow = 3600.0
    source = f"""
import asyncio, sys
from mcp_notebook.transports.stdio import StdioClientTransport


async def main():
    # -X dev turns asyncio's debug mode on, which logs any callback slower than 0.1 s: on a loaded machine
    # the start of the server's process can be that; this test looks for warnings at exit, not for those
    asyncio.get_running_loop().slow_callback_duration = {slow}
    transport = await StdioClientTransport.start({script(tmp_path, ECHO_SERVER)!r})
    await transport.send('{{"jsonrpc":"2.0","id":1,"method":"ping"}}')
    await transport.receive()
    return transport  # never closed


transport = asyncio.run(main())
print(transport.returncode)
"""
    command = [sys.executable, "-X", "dev", *script(tmp_path, source, "leaky.py")[1:]]
    done = subprocess.run(command, capture_output=True, timeout=WAIT, check=True)
    assert (done.stdout, done.stderr) == (b"0\n", b"")  # closed politely; no warning at exit


async def test_missing_executable_is_a_clear_transport_error(tmp_path: Path) -> None:
    with pytest.raises(TransportClosed, match="'no-such-mcp-server-xyz' not found on PATH"):
        await start(["no-such-mcp-server-xyz", "--stdio"])
    missing = str(tmp_path / "missing-server")
    with pytest.raises(TransportClosed, match="cannot start") as info:
        await start([missing])
    assert missing in str(info.value) and isinstance(info.value.__cause__, FileNotFoundError)


async def test_environment_is_added_to_or_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_STDIO_PARENT", "parent")
    command = script(tmp_path, ECHO_SERVER)
    async with await start(command, env={"MCP_STDIO_EXTRA": "1"}) as transport:
        env = (await call(transport, 1, "env"))["env"]
    assert env["MCP_STDIO_EXTRA"] == "1" and env["MCP_STDIO_PARENT"] == "parent"
    async with await start(command, env={"MCP_STDIO_EXTRA": "1"}, inherit_env=False) as transport:
        env = (await call(transport, 1, "env"))["env"]
    assert env["MCP_STDIO_EXTRA"] == "1" and "MCP_STDIO_PARENT" not in env


# ---- server side: pipes, files and streams ---------------------------------------------------------------
def pipe() -> tuple[BinaryIO, BinaryIO]:
    read_fd, write_fd = os.pipe()
    return os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")


def write_chunks(file: BinaryIO, chunks: list[bytes]) -> None:
    with file:
        for chunk in chunks:
            file.write(chunk)
            file.flush()


def parse_error_reply(text: str) -> dict[str, Any]:
    [event] = Session(Role.SERVER).receive(text)
    assert isinstance(event, ProtocolViolation) and event.reply is not None
    reply: dict[str, Any] = json.loads(event.reply)
    return reply


async def test_server_over_pipes_delivers_lines_and_flags_broken_ones() -> None:
    stdin_r, stdin_w = pipe()
    stdout_r, stdout_w = pipe()
    reported: list[str] = []
    transport = StdioServerTransport(
        stdin_r, stdout_w, max_line_bytes=1 << 20, on_invalid_line=reported.append
    )
    huge = b'{"jsonrpc":"2.0","id":9,"method":"x","params":{"blob":"' + b"a" * (3 << 20) + b'"}}'
    chunks = [
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        b"garbage\n\n   \n",
        b'{"half":',  # the rest of the line comes in a later write
        b" 1}\r\n",
        b'{"bad":"\xff\xfe"}\n',
        huge + b"\n",
        b'{"jsonrpc":"2.0","id":2,"method":"ping"}',  # the last line may lack its newline
    ]
    feeder = asyncio.ensure_future(asyncio.to_thread(write_chunks, stdin_w, chunks))
    try:
        got = [await receive(transport) for _ in range(5)]
        with pytest.raises(TransportClosed, match="stdin closed"):
            await receive(transport)
        await asyncio.wait_for(feeder, WAIT)

        assert got[0] == '{"jsonrpc":"2.0","id":1,"method":"ping"}'
        assert got[1] == "garbage"
        assert got[2] == '{"half": 1}'
        assert got[3].startswith("<invalid UTF-8 at byte 8>")
        assert got[4] == '{"jsonrpc":"2.0","id":2,"method":"ping"}'
        # the request over the limit is answered by the transport, with its own id
        over = json.loads(await asyncio.wait_for(asyncio.to_thread(stdout_r.readline), WAIT))
        reason = f"message of {len(huge)} bytes exceeds the limit of 1048576"
        assert over["id"] == 9 and over["error"]["message"] == reason
        assert reported == [got[3], f"<{reason}> {huge[:200].decode()}..."]
        for placeholder in (got[1], got[3]):  # the session answers each with a parse error
            assert parse_error_reply(placeholder)["error"]["code"] == PARSE_ERROR

        await asyncio.gather(
            *(transport.send(f'{{"jsonrpc":"2.0","id":{i},"result":{{}}}}') for i in range(3))
        )
        lines = [await asyncio.wait_for(asyncio.to_thread(stdout_r.readline), WAIT) for _ in range(3)]
        assert sorted(lines) == [f'{{"jsonrpc":"2.0","id":{i},"result":{{}}}}\n'.encode() for i in range(3)]
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
    assert await asyncio.wait_for(asyncio.to_thread(stdout_r.read), WAIT) == b""  # stdout was closed
    stdout_r.close()


async def test_server_send_after_the_client_left_raises() -> None:
    stdin_r, stdin_w = pipe()
    stdout_r, stdout_w = pipe()
    transport = StdioServerTransport(stdin_r, stdout_w)
    try:
        await transport.send('{"jsonrpc":"2.0","method":"a"}')
        stdout_r.close()
        with pytest.raises(TransportClosed, match="cannot write to stdout") as info:
            for _ in range(3):  # the first write may land before the pipe notices
                await asyncio.wait_for(transport.send('{"jsonrpc":"2.0","method":"b"}'), WAIT)
                await asyncio.sleep(0)  # a send gathered after the turn's first is written when it ends
        assert isinstance(info.value.__cause__, BrokenPipeError)
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
        stdin_w.close()


async def test_server_over_files_uses_threads(tmp_path: Path) -> None:
    (tmp_path / "in").write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n')
    transport = StdioServerTransport((tmp_path / "in").open("rb"), (tmp_path / "out").open("wb"))
    try:
        assert await receive(transport) == '{"jsonrpc":"2.0","id":1,"method":"ping"}'
        assert await receive(transport) == "not json"
        with pytest.raises(TransportClosed):
            await receive(transport)
        await transport.send('{"jsonrpc":"2.0","id":1,"result":{}}')
        await transport.send('{"jsonrpc":"2.0","method":"x"}')
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
    assert (
        tmp_path / "out"
    ).read_bytes() == b'{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"x"}\n'


async def test_server_over_an_asyncio_stream_pair() -> None:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    peer_reader, peer_writer = await asyncio.open_connection(sock=theirs)
    transport = StdioServerTransport(reader, writer)
    try:
        peer_writer.write(b'{"jsonrpc":"2.0","method":"hello"}\n')
        assert await receive(transport) == '{"jsonrpc":"2.0","method":"hello"}'
        await transport.send('{"jsonrpc":"2.0","method":"back"}')
        assert await asyncio.wait_for(peer_reader.readline(), WAIT) == b'{"jsonrpc":"2.0","method":"back"}\n'
        with pytest.raises(ValueError, match="newline"):
            await transport.send('{"a":\n1}')
    finally:
        await asyncio.wait_for(transport.aclose(), WAIT)
        peer_writer.close()
        await asyncio.wait_for(peer_writer.wait_closed(), WAIT)


def test_redirect_stdout_to_stderr_keeps_stray_output_off_the_protocol(tmp_path: Path) -> None:
    source = """
import os, subprocess, sys
from mcp_notebook.transports.stdio import redirect_stdout_to_stderr

with redirect_stdout_to_stderr() as protocol:
    print("stray print")
    os.write(1, b"stray fd write\\n")
    subprocess.run([sys.executable, "-c", "print('stray child')"], check=True)
    protocol.write(b'{"jsonrpc":"2.0","method":"ok"}\\n')
    protocol.flush()
print("after")
"""
    done = subprocess.run(script(tmp_path, source), capture_output=True, timeout=WAIT, check=True)
    assert done.stdout == b'{"jsonrpc":"2.0","method":"ok"}\nafter\n'
    assert done.stderr.split() == b"stray print stray fd write stray child".split()


# ---- both sides, as processes ------------------------------------------------------------------------
RAW_SERVER = """
import asyncio, json
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.stdio import StdioServerTransport, redirect_stdout_to_stderr


async def main():
    transport = StdioServerTransport()
    try:
        while True:
            text = await transport.receive()
            print("got", len(text))  # stray output: must end up on stderr
            answer = {"jsonrpc": "2.0", "id": json.loads(text)["id"], "result": {"size": len(text)}}
            await transport.send(json.dumps(answer))
    except TransportClosed:
        pass
    finally:
        await transport.aclose()


with redirect_stdout_to_stderr():
    asyncio.run(main())
"""


async def test_stdio_server_process_serves_a_stdio_client(tmp_path: Path) -> None:
    big = request(1, "big", {"blob": "z" * (5 << 20)})
    async with await start(script(tmp_path, RAW_SERVER)) as transport:
        await transport.send(big)
        assert json.loads(await receive(transport))["result"] == {"size": len(big)}
        assert await call(transport, 2, "ping") == {"size": len(request(2, "ping"))}
    assert transport.returncode == 0
    assert transport.stderr_tail().splitlines() == [f"got {len(big)}", f"got {len(request(2, 'ping'))}"]
    assert transport.invalid_lines() == []


# ---- end to end: mcp_notebook.Server.run_stdio() in a process, mcp_notebook.Client over stdio --------------
TOOL_SERVER = """
from mcp_notebook import Server

server = Server("stdio-e2e")


@server.tool
def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    print("adding", a, b)  # stray output in a tool: must not corrupt the protocol stream
    return a + b


server.run_stdio()
"""


async def test_client_calls_a_server_process_over_stdio(tmp_path: Path) -> None:
    from mcp_notebook import Client

    async with Client(script(tmp_path, TOOL_SERVER), timeout=WAIT) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["add"]
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result["structuredContent"] == {"result": 3} and not result.get("isError")
    # the client's close drained the server's stderr into the trace
    assert "[stderr] adding 1 2" in [entry.raw for entry in client.trace if entry.direction == "note"]


async def test_server_process_answers_undecodable_and_garbage_lines_with_parse_errors(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *script(tmp_path, TOOL_SERVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    try:
        replies = []
        undecodable = [b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}', b"\xfe\xfe\xfe"]
        encoded_surrogate = b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}'  # not UTF-8 either
        for line in [*undecodable, encoded_surrogate, b"garbage"]:
            process.stdin.write(line + b"\n")
            replies.append(json.loads(await asyncio.wait_for(process.stdout.readline(), WAIT)))
        assert [(r["id"], r["error"]["code"]) for r in replies] == [(None, PARSE_ERROR)] * 4
        process.stdin.write(request(2, "initialize", initialize).encode() + b"\n")
        answer = json.loads(await asyncio.wait_for(process.stdout.readline(), WAIT))
        assert answer["id"] == 2 and answer["result"]["serverInfo"]["name"] == "stdio-e2e"  # still serving
    finally:
        process.stdin.close()
        assert await asyncio.wait_for(process.stdout.read(), WAIT) == b""
        await asyncio.wait_for(process.stderr.read(), WAIT)
        assert await asyncio.wait_for(process.wait(), WAIT) == 0
