"""Hypothesis-generated malformed JSON-RPC against our server, over stdio and HTTP, in both eras.

What JSON-RPC 2.0 and MCP ask (https://www.jsonrpc.org/specification, basic/index#messages):
* a line that is not JSON gets a Parse error (-32700) with id null;
* a request (an object with ``"jsonrpc": "2.0"``, a string or integer id, a string method, object params
  if any) gets exactly one answer with its id: a result object or an error with an integer code and a
  string message;
* a notification and a response (the server asked nothing) get no answer;
* nothing else is answered except with an error.
After every input the server must still answer a well-formed request; at the end it is alive and has
written no traceback on stderr. Each input's request id is made unique, so every answer can be attributed.

The peer runs in its own process (tests/faults/_peer.py); the driver here is plain blocking I/O with bounded
waits. Examples are few (the suite stays well under a minute) and the database is off (no files written).
"""

from __future__ import annotations

import http.client
import itertools
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from mcp_notebook.protocol.era import http_headers, modern_params

PEER = Path(__file__).with_name("_peer.py")
WAIT = 15.0
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
INIT = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
FUZZ = settings(
    max_examples=75,
    deadline=None,
    database=None,
    derandomize=True,  # the same examples on every run: CI does not flake on a new random draw
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# ---- what to send ------------------------------------------------------------------------------------------
METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
names = st.sampled_from(["echo", "greet", "faults://readme", "nope", ""]) | st.text(max_size=10)
tool_params = st.fixed_dictionaries(
    {}, optional={"name": names, "arguments": values | st.fixed_dictionaries({"text": values}), "uri": names}
)
meta_keys = st.sampled_from(
    [
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/logLevel",
        "progressToken",
    ]
)
metas = st.dictionaries(meta_keys, values | st.sampled_from([MODERN, LEGACY, "1999-01-01"]), max_size=4)
params = values | tool_params | st.builds(lambda p, m: {**p, "_meta": m}, tool_params, metas)
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | values,
        "id": st.integers(-5, 5) | st.text(max_size=4) | values,
        "method": st.sampled_from(METHODS) | st.text(max_size=12),
        "params": params,
        "result": values,
        "error": values,
    },
)
requests = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(-5, 5) | st.text(max_size=4),
        "method": st.sampled_from(METHODS),
    },
    optional={"params": tool_params | st.builds(lambda p, m: {**p, "_meta": m}, tool_params, metas)},
)
texts = st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t)
_kinds = [
    st.builds(json.dumps, requests),
    st.builds(json.dumps, envelopes),
    st.builds(json.dumps, values),
    st.builds(json.dumps, st.lists(envelopes, min_size=1, max_size=3)),  # batches
    texts,
]
# well-formed requests (with wild params) weigh most: they reach the deepest code
inputs = st.sampled_from([0, 0, 0, 0, 1, 1, 2, 3, 4]).flatmap(lambda kind: _kinds[kind])

_unique = itertools.count(1)


def unique_ids(text: str) -> tuple[str, Any]:
    """Give the input (or every entry of a batch) a fresh id of the same type; returns (text, id or None)."""
    try:
        message = json.loads(text)
    except ValueError:
        return text, None

    def renumber(item: Any) -> Any:
        if isinstance(item, dict) and "id" in item:
            if isinstance(item["id"], int) and not isinstance(item["id"], bool):
                item["id"] = 10**9 + next(_unique)
            elif isinstance(item["id"], str):
                item["id"] = f"fuzz-{next(_unique)}"
        return item

    if isinstance(message, list):
        return json.dumps([renumber(m) for m in message]), None
    message = renumber(message)
    return json.dumps(message), message.get("id") if isinstance(message, dict) else None


def is_request(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and isinstance(message.get("id"), int | str)
        and not isinstance(message.get("id"), bool)
        and isinstance(message.get("params", {}), dict)
        and "result" not in message
        and "error" not in message
    )


def is_stray(message: Any) -> bool:
    """A request but for stray "result"/"error" members."""
    return (
        isinstance(message, dict)
        and ("result" in message or "error" in message)
        and is_request({k: v for k, v in message.items() if k not in ("result", "error")})
    )


def check_answer(answer: Any) -> None:
    assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", answer
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error, dict) and isinstance(error.get("code"), int), answer
        assert isinstance(error.get("message"), str), answer
    else:
        assert isinstance(answer.get("result"), dict), answer


def check_answers(sent: str, answers: list[Any]) -> None:
    """The answers an input got (the sentinel's taken out), against what JSON-RPC asks."""
    event(f"{len(answers)} answer(s)")
    for answer in answers:
        items = answer if isinstance(answer, list) else [answer]
        for item in items:
            check_answer(item)
    flat = [item for a in answers for item in (a if isinstance(a, list) else [a])]
    try:
        message = json.loads(sent)
    except ValueError:
        if sent.strip():
            assert [(a.get("id"), a.get("error", {}).get("code")) for a in flat] == [(None, -32700)], sent
        return
    if is_request(message):
        assert [a for a in flat if a.get("id") == message["id"]] == flat and len(flat) == 1, (sent, flat)
        return
    if is_stray(message):
        # "method" with "result"/"error" is neither a request nor a response (JSON-RPC 2.0 sections 4, 5):
        # refused with -32600 and the readable id, in both eras, never answered as the request
        assert [(a.get("id"), a.get("error", {}).get("code")) for a in flat] == [(message["id"], -32600)], (
            sent,
            flat,
        )
        return
    for item in flat:
        assert "error" in item or isinstance(message, list), (sent, item)


# ---- stdio ------------------------------------------------------------------------------------------------
class StdioPeer:
    def __init__(self, era: str, tmp: Path) -> None:
        self.era = era
        self.stderr_path = tmp / f"stdio-{era}.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER), "fuzz-stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        if era == "legacy":
            self.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT}))
            assert self.read()["id"] == "init"
            self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def read(self) -> Any:
        return json.loads(self._lines.get(timeout=WAIT))

    def exchange(self, text: str, expect: Any) -> list[Any]:
        """Send ``text`` and a sentinel request; the answers that came before the sentinel's (and the
        answer to ``expect``, which may come after it)."""
        sentinel = f"sentinel-{next(_unique)}"
        self.send(text)
        self.send(json.dumps(sentinel_request(sentinel, self.era)))
        answers: list[Any] = []
        seen_sentinel = False
        while not seen_sentinel or (expect is not None and not any(_has_id(a, expect) for a in answers)):
            answer = self.read()
            if isinstance(answer, dict) and answer.get("id") == sentinel:
                assert "result" in answer, answer  # still serving
                seen_sentinel = True
            else:
                answers.append(answer)
        return answers

    def close(self) -> str:
        assert self.proc.stdin is not None
        return _stop(self.proc, self._stderr, self.stderr_path, self.proc.stdin.close)


def _stop(proc: subprocess.Popen[bytes], stderr: Any, stderr_path: Path, end: Callable[[], None]) -> str:
    """End a server process we started (``end``: close its stdin, or terminate it), kill it if it lingers;
    assert it was still alive (the fuzz must not have killed it); its stderr."""
    alive = proc.poll() is None
    assert proc.stdout is not None
    end()
    try:
        proc.wait(WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
        proc.stdout.close()
        stderr.close()
    assert alive, "the server died"
    return stderr_path.read_text(errors="replace")


def _has_id(answer: Any, wanted: Any) -> bool:
    return isinstance(answer, dict) and answer.get("id") == wanted


def sentinel_request(request_id: str, era: str) -> dict[str, Any]:
    """A well-formed request of the era: ``ping`` (legacy), ``tools/list`` (2026-07-28 has no ping)."""
    if era == "legacy":
        return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
    params = modern_params(None, MODERN, {}, {"name": "fuzz", "version": "1"})
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}


@pytest.fixture(params=["legacy", "modern"])
def stdio_peer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StdioPeer]:
    peer = StdioPeer(request.param, tmp_path)
    try:
        yield peer
    finally:
        stderr = peer.close()
        assert "Traceback" not in stderr, stderr[-3000:]


# the inputs an earlier run found (a request with stray "result"/"error" members was answered as a ping)
STRAY = [
    '{"jsonrpc": "2.0", "error": null, "id": 0, "method": "ping"}',
    '{"jsonrpc": "2.0", "result": {}, "id": "r", "method": "tools/list"}',
    '{"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}, "id": 1, "method": "tools/call"}',
]


@FUZZ
@given(text=inputs)
@example(text=STRAY[0])
@example(text=STRAY[1])
@example(text=STRAY[2])
def test_stdio_server_answers_or_ignores_malformed_input(stdio_peer: StdioPeer, text: str) -> None:
    text, request_id = unique_ids(text)
    expect = request_id if is_request(json.loads(text) if _json(text) else None) else None
    event(kind_of(text))
    check_answers(text, stdio_peer.exchange(text, expect))


def kind_of(text: str) -> str:
    if not _json(text):
        return "not JSON"
    message = json.loads(text)
    if isinstance(message, list):
        return "batch"
    return "request" if is_request(message) else "other JSON"


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# ---- HTTP -------------------------------------------------------------------------------------------------
class HTTPPeer:
    def __init__(self, tmp: Path) -> None:
        self.stderr_path = tmp / "http.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER), "fuzz-http"], stdout=subprocess.PIPE, stderr=self._stderr
        )
        assert self.proc.stdout is not None
        url = self.proc.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), url
        host_port = url.removeprefix("http://").split("/")[0]
        self.host, self.port = host_port.split(":")[0], int(host_port.split(":")[1])
        status, headers, answers = self.post(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}), {}
        )
        assert status == 200 and answers[0]["id"] == 0, (status, answers)
        self.session = headers["mcp-session-id"]
        status, _, _ = self.post(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), self.legacy
        )
        assert status == 202

    @property
    def legacy(self) -> dict[str, str]:
        return {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": LEGACY}

    def post(self, body: str, headers: dict[str, str]) -> tuple[int, dict[str, str], list[Any]]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=WAIT)
        try:
            connection.request(
                "POST",
                "/mcp",
                body=body.encode("utf-8", "surrogatepass"),
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    **headers,
                },
            )
            response = connection.getresponse()
            raw = response.read().decode()
            kind = response.getheader("Content-Type", "")
            found = {k.lower(): v for k, v in response.getheaders()}
        finally:
            connection.close()
        if kind.startswith("text/event-stream"):
            events = [line[5:].strip() for line in raw.splitlines() if line.startswith("data:")]
            return response.status, found, [json.loads(e) for e in events if e]
        if kind.startswith("application/json") and raw.strip():
            return response.status, found, [json.loads(raw)]
        return response.status, found, []

    def alive(self, era: str) -> None:
        message = sentinel_request(f"sentinel-{next(_unique)}", era)
        headers = self.legacy if era == "legacy" else http_headers(message["method"], message.get("params"))
        status, _, answers = self.post(json.dumps(message), headers)
        assert status == 200 and answers and "result" in answers[-1], (status, answers)

    def close(self) -> str:
        return _stop(self.proc, self._stderr, self.stderr_path, self.proc.terminate)


@pytest.fixture(scope="module")
def http_peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HTTPPeer]:
    peer = HTTPPeer(tmp_path_factory.mktemp("fuzz-http"))
    try:
        yield peer
    finally:
        stderr = peer.close()
        assert "Traceback" not in stderr, stderr[-3000:]


@pytest.mark.parametrize("era", ["legacy", "modern"])
@FUZZ
@given(text=inputs)
@example(text=STRAY[0])
@example(text=STRAY[1])
@example(text=STRAY[2])
def test_http_server_answers_or_ignores_malformed_input(http_peer: HTTPPeer, era: str, text: str) -> None:
    text, _ = unique_ids(text)
    event(kind_of(text))
    if era == "legacy":
        headers = http_peer.legacy
    else:  # a stateless request routes by its headers, built from what the body claims to be
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        headers = http_headers(method, message.get("params")) if isinstance(method, str) else {}
        headers = {k: v for k, v in headers.items() if v.isascii() and v.isprintable()}
    status, _, answers = http_peer.post(text, headers)
    event(f"HTTP {status}")
    assert status < 500, (status, text, answers)
    assert status in (200, 202) or 400 <= status < 500, status
    for answer in answers:
        for item in answer if isinstance(answer, list) else [answer]:
            check_answer(item)
    message = json.loads(text) if _json(text) else None
    if status == 200 and is_request(message):
        assert any(_has_id(a, message["id"]) for a in answers), (text, answers)
    if is_stray(message):  # refused as in stdio, whatever era its headers claim
        assert status == 400, (status, text, answers)
        assert [(a.get("id"), a["error"]["code"]) for a in answers] == [(message["id"], -32600)], answers
    http_peer.alive(era)
