"""JSON-RPC batches (issue 8): protocol 2025-03-26 has them, later versions refuse them (MCP-NOTES 3.2).

Over stdio a batch line is answered with one array line (JSON-RPC 2.0 section 6), not entry by entry; over
Streamable HTTP a 2025-03-26 session accepts an array body and answers it with an array, while a later
version's session answers 400. An empty batch or one that is not JSON gets a single error. A real
subprocess for stdio, real HTTP on 127.0.0.1; every read bounded.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import Server
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.serving.server import serve
from tests.interop._peers import ROOT
from tests.serving._http import WAIT, Reply, post

TOOLS = """
from mcp_notebook import Server

server = Server("batched")


@server.tool
def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b
"""

NOTE = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}}
ADD = {"name": "add", "arguments": {"a": 2, "b": 3}}
BATCH = [
    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    NOTE,
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ADD},
    5,  # an invalid entry: answered with an error of its own, inside the array
]


def check_batch_answer(answers: Any) -> None:
    assert isinstance(answers, list), answers
    by_id = {a.get("id"): a for a in answers}
    assert set(by_id) == {1, 2, None}, answers
    assert by_id[1]["result"] == {}
    # 2025-03-26 has no structuredContent (audit 7): the text copy carries the wrapped value
    assert by_id[2]["result"]["content"][0]["text"] == '{"result": 5}'
    assert by_id[None]["error"]["code"] == -32600


def initialize(version: str, rid: int = 0) -> dict[str, Any]:
    info = {"name": "batcher", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# ---- stdio -------------------------------------------------------------------------------------------------
class StdioServer:
    def __init__(self, target: Path) -> None:
        command = [sys.executable, "-m", "mcp_notebook", "serve", str(target)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def line(self) -> Any:
        """The next line the server writes, parsed; bounded."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], WAIT)
        assert ready, "the server wrote nothing in time"
        return json.loads(self.process.stdout.readline())

    def nothing_more(self) -> bool:
        """No further line within a moment (used once, after the answer that must come last)."""
        assert self.process.stdout is not None
        return not select.select([self.process.stdout], [], [], 0.5)[0]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(WAIT)
        finally:
            assert self.process.stdout is not None
            self.process.stdout.close()


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[Any]:
    target = tmp_path / "batched_tools.py"
    target.write_text(TOOLS)
    opened: list[StdioServer] = []

    def start(version: str) -> StdioServer:
        server = StdioServer(target)
        opened.append(server)
        server.send(initialize(version))
        assert server.line()["result"]["protocolVersion"] == version
        server.send(INITIALIZED)
        return server

    yield start
    for server in opened:
        server.close()


def test_stdio_answers_a_2025_03_26_batch_with_one_array(stdio: Any) -> None:
    server = stdio("2025-03-26")
    server.send(BATCH)
    check_batch_answer(server.line())
    server.send([NOTE])
    server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})  # a batch of notifications gets nothing back
    assert server.line() == {"jsonrpc": "2.0", "id": 3, "result": {}}


@pytest.mark.parametrize("line", ["[]", '[{"jsonrpc": "2.0", "id": 1, "method": "ping"'])
def test_stdio_answers_an_empty_or_broken_batch_with_a_single_error(stdio: Any, line: str) -> None:
    server = stdio("2025-03-26")
    server.send(line)
    answer = server.line()
    assert isinstance(answer, dict) and answer["id"] is None and answer["error"]["code"] in (-32600, -32700)


def test_stdio_refuses_a_batch_in_a_later_version_with_a_single_error(stdio: Any) -> None:
    server = stdio("2025-06-18")
    server.send(BATCH)
    answer = server.line()
    assert isinstance(answer, dict) and answer["error"]["code"] == -32600
    assert "batch" in answer["error"]["message"]
    assert server.nothing_more()  # no entry of the batch was run


# ---- Streamable HTTP ---------------------------------------------------------------------------------------
@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("batch-test runtime")
    yield rt
    rt.stop()


def make_server() -> Server:
    namespace: dict[str, Any] = {}
    exec(TOOLS, namespace)
    server: Server = namespace["server"]
    return server


def http_session(url: str, token: str, version: str) -> str:
    reply = post(url, initialize(version), token=token, headers={"MCP-Protocol-Version": version})
    assert reply.status == 200, reply
    session = reply.headers["mcp-session-id"]
    headers = {"MCP-Protocol-Version": version}
    assert post(url, INITIALIZED, token=token, session=session, headers=headers).status == 202
    return session


def batch_answer(reply: Reply) -> Any:
    assert reply.status == 200, reply
    messages = reply.messages()
    assert len(messages) == 1, messages  # one JSON body, or one SSE event carrying the array
    return messages[0]


@pytest.mark.parametrize("json_response", [False, True])
def test_http_accepts_a_batch_in_a_2025_03_26_session(runtime: Runtime, json_response: bool) -> None:
    with serve(make_server(), runtime=runtime) as handle:
        handle.http.json_response = json_response
        session = http_session(handle.url, handle.token, "2025-03-26")
        headers = {"MCP-Protocol-Version": "2025-03-26"}
        reply = post(handle.url, BATCH, token=handle.token, session=session, headers=headers)
        check_batch_answer(batch_answer(reply))
        reply = post(handle.url, [NOTE], token=handle.token, session=session, headers=headers)
        assert reply.status == 202  # a batch of notifications: nothing to answer


def test_http_refuses_a_batch_in_a_later_session(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime) as handle:
        session = http_session(handle.url, handle.token, "2025-11-25")
        reply = post(handle.url, BATCH, token=handle.token, session=session)
        assert reply.status == 400 and "batches are not supported" in reply.body
