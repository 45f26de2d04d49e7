"""The in-kernel HTTP server's defences and lifecycle (DESIGN 12; issue 5 "Reliability and security").

Served in-process on the runtime loop exactly as ``%mcp serve`` does, probed with raw HTTP so statuses and
headers are exact. Every wait is bounded.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from mcp_notebook import Server, connect
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.serving.server import ServingHandle, active_handle, serve, stop_serving
from mcp_notebook.transports.http_limits import RateLimiter
from tests.serving._http import INIT, WAIT, answer, open_session, post, request


def make_server() -> Server:
    server = Server("served")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("serving-test runtime")
    yield rt
    rt.stop()


@pytest.fixture
def served(runtime: Runtime) -> Iterator[ServingHandle]:
    handle = serve(make_server(), runtime=runtime)
    yield handle
    handle.stop()


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def test_defaults_local_random_token_and_unguessable_sessions(served: ServingHandle) -> None:
    assert urlsplit(served.url).hostname == "127.0.0.1"
    assert len(served.token) >= 40  # token_urlsafe(32)
    other = serve(make_server(), runtime=served.runtime)
    try:
        assert other.token != served.token
    finally:
        other.stop()
    first, second = open_session(served.url, served.token), open_session(served.url, served.token)
    assert first != second and len(first) >= 40


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_missing_or_wrong_token_is_401(served: ServingHandle, token: str | None) -> None:
    reply = post(served.url, INIT, token=token)
    assert reply.status == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")
    assert "mcp-session-id" not in reply.headers


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example:80"},
        {"Origin": "http://evil.example"},
        {"Origin": "https://attacker.test:8888"},
    ],
)
def test_foreign_host_or_origin_is_403(served: ServingHandle, headers: dict[str, str]) -> None:
    reply = post(served.url, INIT, token=served.token, headers=headers)
    assert reply.status == 403


def test_local_origin_is_accepted(served: ServingHandle) -> None:
    reply = post(served.url, INIT, token=served.token, headers={"Origin": "http://localhost:8888"})
    assert reply.status == 200


def test_oversized_body_is_413(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime, max_body_size=1024) as handle:
        session = open_session(handle.url, handle.token)
        big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "x": "y" * 4096}}
        reply = post(handle.url, big, token=handle.token, session=session)
        assert reply.status == 413


def test_flood_gets_429_while_another_client_is_served(runtime: Runtime) -> None:
    now = [1000.0]
    limiter = RateLimiter(rate=1.0, burst=5, clock=lambda: now[0])  # a frozen clock: nothing refills
    with serve(make_server(), runtime=runtime, limiter=limiter) as handle:
        # initialize counts against the address (no session yet), then each session has its own bucket
        flooder = open_session(handle.url, handle.token, "flooder")  # notifications/initialized: 1 of 5
        polite = open_session(handle.url, handle.token, "polite")
        statuses = [
            request(handle.url, handle.token, flooder, "ping", {}, rid=i).status for i in range(1, 11)
        ]
        assert statuses[:4] == [200, 200, 200, 200]
        assert set(statuses[4:]) == {429}
        limited = request(handle.url, handle.token, flooder, "ping", {}, rid=99)
        assert limited.status == 429 and int(limited.headers["retry-after"]) >= 1
        assert json.loads(limited.body)["error"]["message"].startswith("Too Many Requests")
        served_meanwhile = request(
            handle.url, handle.token, polite, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}
        )
        assert served_meanwhile.status == 200
        assert answer(served_meanwhile, 1)["result"]["structuredContent"] == {"result": 5}
        now[0] += 2.0  # two seconds later the flooder has two tokens again
        assert request(handle.url, handle.token, flooder, "ping", {}, rid=100).status == 200


def test_rate_limiter_buckets() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=2, clock=lambda: now[0])
    assert [limiter.take("a"), limiter.take("a")] == [0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)
    assert limiter.take("b") == 0.0
    now[0] += 0.5
    assert limiter.take("a") == 0.0
    with pytest.raises(ValueError):
        RateLimiter(rate=0, burst=1)


def test_client_disconnecting_mid_call_leaves_nothing_stuck(runtime: Runtime) -> None:
    server = make_server()
    started, release = threading.Event(), threading.Event()

    @server.tool
    def slow() -> str:
        """Wait for the test."""
        started.set()
        release.wait(WAIT)
        return "finished"

    with serve(server, runtime=runtime) as handle:
        session = open_session(handle.url, handle.token)
        parts = urlsplit(handle.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=WAIT)
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {}},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {handle.token}",
            "Mcp-Session-Id": session,
        }
        conn.request("POST", parts.path, body=json.dumps(body), headers=headers)
        assert started.wait(WAIT)
        conn.close()  # the client vanishes mid-call
        release.set()
        # the same session, and a new client, are served as before
        again = request(
            handle.url,
            handle.token,
            session,
            "tools/call",
            {"name": "add", "arguments": {"a": 1, "b": 1}},
            rid=8,
        )
        assert answer(again, 8)["result"]["structuredContent"] == {"result": 2}
        with connect(handle.url, headers=handle.headers, runtime=runtime) as client:
            assert client.call_tool("slow", {})["content"][0]["text"] == "finished"
    assert handle.stopped and not handle.http.sessions


def test_stop_frees_the_port_and_reserving_replaces(runtime: Runtime) -> None:
    server = make_server()
    first = serve(server, runtime=runtime)
    port = port_of(first.url)
    assert active_handle(server) is first
    second = serve(server, runtime=runtime, port=0)  # re-serving replaces the previous server
    assert first.stopped and active_handle(server) is second
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
    assert stop_serving(server) and second.stopped and not stop_serving(server)
    with socket.socket() as probe:  # the port is free again
        probe.bind(("127.0.0.1", port_of(second.url)))
    third = serve(server, runtime=runtime, port=port)  # and can be served on again
    try:
        with connect(third.url, headers=third.headers, runtime=runtime) as client:
            assert [t["name"] for t in client.list_tools()] == ["add"]
    finally:
        third.stop()
    third.stop()  # idempotent


def test_stop_ends_in_flight_calls_promptly(runtime: Runtime) -> None:
    server = make_server()
    started, release = threading.Event(), threading.Event()

    @server.tool
    def hang() -> str:
        """Wait for the test."""
        started.set()
        release.wait(WAIT)
        return "late"

    handle = serve(server, runtime=runtime)
    client = connect(handle.url, headers=handle.headers, runtime=runtime)
    outcome: list[BaseException | dict[str, object]] = []

    def call() -> None:
        try:
            outcome.append(client.call_tool("hang", {}, timeout=WAIT))
        except Exception as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    try:
        assert started.wait(WAIT)
        handle.stop()  # the session ends: the waiting client learns it at once, the tool's answer is dropped
        caller.join(WAIT)
        assert not caller.is_alive()
        assert isinstance(outcome[0], Exception), outcome
        assert "stopped serving before answering" in str(outcome[0])
    finally:
        release.set()
        caller.join(WAIT)
        client.close()


def test_connection_info_renders_and_the_python_snippet_works(served: ServingHandle) -> None:
    bundle = served._repr_mimebundle_()
    for text in (bundle["text/plain"], bundle["text/html"]):
        assert served.url in text and served.token not in text  # the token never enters an output
        assert "mcpServers" in text and "@modelcontextprotocol/inspector --cli" in text
        assert "from mcp_notebook import connect" in text and "MCP_NOTEBOOK_TOKEN" in text
    entry = served.mcp_servers_entry["mcpServers"]["served"]
    assert entry == {
        "type": "http",
        "url": served.url,
        "headers": {"Authorization": f"Bearer {served.token}"},
    }
    namespace: dict[str, object] = {}
    snippet = served.python_snippet.replace("c.list_tools()", "tools = c.list_tools(); c.close()")
    exec(snippet, namespace)
    assert [t["name"] for t in namespace["tools"]] == ["add"]  # type: ignore[attr-defined]
    shown: dict[str, object] = {}  # the snippet as shown, with the token in the environment
    snippet = served.shown_python_snippet.replace("c.list_tools()", "tools = c.list_tools(); c.close()")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MCP_NOTEBOOK_TOKEN", served.token)
        exec(snippet, shown)
    assert [t["name"] for t in shown["tools"]] == ["add"]  # type: ignore[attr-defined]
    served.stop()
    assert "stopped" in served._repr_mimebundle_()["text/plain"]
