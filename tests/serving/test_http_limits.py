"""Every HTTP limit holds one misbehaving client while another is still served (issue 8, DESIGN 12 and 14).

The limits live once in ``transports/`` (:class:`HTTPLimits`), so the in-kernel server tested here and the
command line (the lock-out case runs against both) behave alike. Loopback only, bounded counts, every wait
bounded; timing is never asserted, only outcomes.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mcp_notebook import Server
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.serving.server import ServingHandle, serve
from tests.interop._peers import serve_http
from tests.serving._http import INIT, WAIT, Reply, answer, open_session, post, request
from tests.waiting import wait_until


def make_server(release: threading.Event | None = None) -> Server:
    server = Server("limited")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def hold() -> str:
        """Wait until the test lets go."""
        assert release is not None and release.wait(WAIT)
        return "released"

    return server


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("limits-test runtime")
    yield rt
    rt.stop()


def served_ok(url: str, token: str) -> None:
    """Another client: a fresh session, a real tool call, the right answer."""
    session = open_session(url, token, "the-other-client")
    reply = request(url, token, session, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, rid=9)
    assert answer(reply, 9)["result"]["structuredContent"] == {"result": 5}


def ping(url: str, token: str, session: str, rid: int = 1) -> Reply:
    return request(url, token, session, "ping", {}, rid=rid)


# ---- session caps: abandoned sessions never lock a newcomer out ------------------------------------------
def abandon_101_sessions_then_connect(url: str, token: str) -> None:
    """Issue 8's lock-out: 100 sessions that never send DELETE made every later client get 503."""
    abandoned = [open_session(url, token, f"abandoned-{n}") for n in range(101)]
    served_ok(url, token)
    assert ping(url, token, abandoned[0]).status == 404  # the idlest made room
    assert ping(url, token, abandoned[-1]).status == 200


def test_101_abandoned_sessions_do_not_lock_out_the_in_kernel_server(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime) as handle:
        abandon_101_sessions_then_connect(handle.url, handle.token)
        assert len(handle.http.sessions) <= handle.http.limits.max_sessions_per_client


def test_101_abandoned_sessions_do_not_lock_out_the_command_line_server(tmp_path: Path) -> None:
    target = tmp_path / "limited_tools.py"
    target.write_text("from tests.serving.test_http_limits import make_server\nserver = make_server()\n")
    with serve_http(target, tmp_path / "server.log", "--token", "cli-token") as url:
        abandon_101_sessions_then_connect(url, "cli-token")


def test_per_client_cap_evicts_that_clients_idlest_session_only(runtime: Runtime) -> None:
    tokens = {"greedy": "greedy-token", "polite": "polite-token"}
    with serve(make_server(), runtime=runtime, tokens=tokens, max_sessions_per_client=3) as handle:
        polite = open_session(handle.url, tokens["polite"])
        first, second, third = (open_session(handle.url, tokens["greedy"]) for _ in range(3))
        assert ping(handle.url, tokens["greedy"], first).status == 200  # now `second` is the idlest
        fourth = open_session(handle.url, tokens["greedy"])
        assert ping(handle.url, tokens["greedy"], second).status == 404
        for session in (first, third, fourth):
            assert ping(handle.url, tokens["greedy"], session).status == 200
        assert ping(handle.url, tokens["polite"], polite).status == 200  # another client's session stays
        served_ok(handle.url, tokens["polite"])


def test_only_busy_sessions_are_never_evicted(runtime: Runtime) -> None:
    release = threading.Event()
    with serve(make_server(release), runtime=runtime, max_sessions=2) as handle:
        sessions = [open_session(handle.url, handle.token) for _ in range(2)]
        hold = {"name": "hold"}
        callers = [
            threading.Thread(target=request, args=(handle.url, handle.token, s, "tools/call", hold))
            for s in sessions
        ]
        for caller in callers:
            caller.start()
        try:
            wait_until(lambda: all(s.busy for s in handle.http.sessions.values()), "both calls running")
            refused = post(handle.url, INIT, token=handle.token)
            assert refused.status == 503 and "every session is in use" in refused.body
        finally:
            release.set()
            for caller in callers:
                caller.join(WAIT)
        wait_until(lambda: not any(s.busy for s in handle.http.sessions.values()), "the calls to end")
        served_ok(handle.url, handle.token)  # an idle session makes room again


# ---- idle expiry -------------------------------------------------------------------------------------------
def test_idle_sessions_expire_while_a_busy_one_stays(runtime: Runtime) -> None:
    release = threading.Event()
    with serve(make_server(release), runtime=runtime, session_idle_timeout=0.3) as handle:
        idle = open_session(handle.url, handle.token)
        busy = open_session(handle.url, handle.token)
        caller = threading.Thread(
            target=request, args=(handle.url, handle.token, busy, "tools/call", {"name": "hold"})
        )
        caller.start()
        try:
            wait_until(lambda: idle not in handle.http.sessions, "the idle session to expire")
            assert busy in handle.http.sessions  # a call in progress is not idleness
            served_ok(handle.url, handle.token)
        finally:
            release.set()
            caller.join(WAIT)
        assert ping(handle.url, handle.token, idle).status == 404


# ---- slow clients ------------------------------------------------------------------------------------------
def address(handle: ServingHandle) -> tuple[str, int]:
    parts = urlsplit(handle.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def test_slow_headers_are_cut_off_and_do_not_hold_the_server(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime, header_timeout=0.5) as handle:
        host, port = address(handle)
        slow = []
        for _ in range(20):
            sock = socket.create_connection((host, port), timeout=WAIT)
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: ".encode())  # never finished
            slow.append(sock)
        try:
            served_ok(handle.url, handle.token)
            for sock in slow:  # the server closes each (an empty read), well before our own WAIT
                assert sock.recv(1024) == b""
        finally:
            for sock in slow:
                sock.close()
        served_ok(handle.url, handle.token)


def test_a_slow_body_gets_408_while_another_client_is_served(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime, body_timeout=0.5) as handle:
        host, port = address(handle)
        session = open_session(handle.url, handle.token)
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {handle.token}\r\n"
            f"Mcp-Session-Id: {session}\r\nContent-Length: 100\r\n\r\n"
        )
        with socket.create_connection((host, port), timeout=WAIT) as sock:
            sock.sendall(head.encode() + b'{"jsonrpc":')  # 11 of the 100 bytes promised
            served_ok(handle.url, handle.token)
            reply = b""
            while b"\r\n\r\n" not in reply:
                chunk = sock.recv(4096)
                assert chunk, reply
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 408")


# ---- who may talk, and how much ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("headers", "token", "status"),
    [
        ({"Host": "evil.example"}, None, 403),
        ({"Origin": "http://evil.example"}, None, 403),
        ({}, "wrong-token", 401),
    ],
)
def test_refused_callers_do_not_disturb_another_client(
    runtime: Runtime, headers: dict[str, str], token: str | None, status: int
) -> None:
    with serve(make_server(), runtime=runtime) as handle:
        for _ in range(5):
            assert post(handle.url, INIT, token=token or handle.token, headers=headers).status == status
            served_ok(handle.url, handle.token)


def test_an_oversized_body_gets_413_while_another_client_is_served(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime, max_body_size=1024) as handle:
        session = open_session(handle.url, handle.token)
        big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 4096}}
        for _ in range(3):
            assert post(handle.url, big, token=handle.token, session=session).status == 413
            served_ok(handle.url, handle.token)
