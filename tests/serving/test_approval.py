"""Incoming calls pass the approval gate (DESIGN decision 11): ask for destructive tools, allow read-only
ones, per-tool and per-client overrides, every decision in the audit log, the console showing it all."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import Server, connect
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.console import ServerConsole
from mcp_notebook.notebook.policy import AuditLog
from mcp_notebook.notebook.serving import IncomingPolicy, serve
from tests.serving._http import WAIT, answer, open_session, request

READ_ONLY = {"annotations": {"readOnlyHint": True}}
DESTRUCTIVE = {"annotations": {"destructiveHint": True}}


def make_server() -> Server:
    server = Server("gated")

    @server.tool(annotations={"readOnlyHint": True})
    def peek() -> str:
        """Read something."""
        return "peeked"

    @server.tool(annotations={"destructiveHint": True})
    def wipe(table: str) -> str:
        """Delete everything in a table."""
        return f"wiped {table}"

    @server.tool
    def plain() -> str:
        """An ordinary notebook tool."""
        raise ValueError("this tool always fails")

    return server


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("approval-test runtime")
    yield rt
    rt.stop()


def wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_policy_defaults_and_overrides() -> None:
    policy = IncomingPolicy()
    assert policy.decide("c", "peek", READ_ONLY).verdict == "allow"
    assert policy.decide("c", "plain", {}).verdict == "allow"
    assert policy.decide("c", "wipe", DESTRUCTIVE).verdict == "ask"
    policy.set("*.wipe", "allow")  # a pattern does not cover a declared-destructive tool
    assert policy.decide("c", "wipe", DESTRUCTIVE).verdict == "ask"
    policy.set("trusted-client.wipe", "allow")  # an exact CLIENT.TOOL rule does
    assert policy.decide("trusted-client", "wipe", DESTRUCTIVE).verdict == "allow"
    policy.set("stranger.*", "deny")  # per client
    assert policy.decide("stranger", "peek", READ_ONLY).verdict == "deny"
    policy.always_allow("c", "wipe")
    assert policy.decide("c", "wipe", DESTRUCTIVE).by == "always allow (this session)"
    assert IncomingPolicy(headless=True).decide("c", "wipe", DESTRUCTIVE).verdict == "deny"
    with pytest.raises(ValueError):
        policy.set("nodot", "allow")


def test_destructive_call_waits_for_the_console_while_pings_answer(runtime: Runtime) -> None:
    console = ServerConsole(interactive=True)
    audit = AuditLog()
    with serve(make_server(), runtime=runtime, console=console, audit=audit) as handle:
        session = open_session(handle.url, handle.token, "claude-test")
        replies: list[Any] = []
        caller = threading.Thread(
            target=lambda: replies.append(
                request(
                    handle.url,
                    handle.token,
                    session,
                    "tools/call",
                    {"name": "wipe", "arguments": {"table": "t"}},
                    rid=5,
                )
            )
        )
        caller.start()
        wait_until(lambda: console.pending, "the approval card")
        assert request(handle.url, handle.token, session, "ping", {}, rid=6).status == 200  # not blocked
        listed = answer(request(handle.url, handle.token, session, "tools/list", {}, rid=7), 7)
        assert {t["name"] for t in listed["result"]["tools"]} == {"peek", "wipe", "plain"}
        assert "waiting for approval: claude-test -> wipe" in console.text()
        assert console.answer("deny") == 1
        caller.join(WAIT)
        result = answer(replies[0], 5)["result"]
        assert result["isError"] is True and "did not approve" in result["content"][0]["text"]
        entry = audit.entries()[-1]
        assert (entry.server, entry.tool, entry.decision, entry.status) == (
            "claude-test",
            "wipe",
            "deny",
            "denied",
        )
        assert entry.decided_by == "you, in the server console"
        # "always allow" for this client: approved now and not asked again
        caller = threading.Thread(
            target=lambda: replies.append(
                request(
                    handle.url,
                    handle.token,
                    session,
                    "tools/call",
                    {"name": "wipe", "arguments": {"table": "u"}},
                    rid=8,
                )
            )
        )
        caller.start()
        wait_until(lambda: console.pending, "the second approval card")
        console.answer("always")
        caller.join(WAIT)
        assert answer(replies[1], 8)["result"]["content"][0]["text"] == "wiped u"
        again = request(
            handle.url,
            handle.token,
            session,
            "tools/call",
            {"name": "wipe", "arguments": {"table": "v"}},
            rid=9,
        )
        assert answer(again, 9)["result"]["content"][0]["text"] == "wiped v"
        assert [e.status for e in audit.entries()] == ["denied", "done", "done"]
        assert audit.entries()[-1].decided_by == "always allow (this session)"


def test_headless_denies_destructive_and_runs_the_rest(runtime: Runtime) -> None:
    console = ServerConsole(interactive=False)
    audit = AuditLog()
    with (
        serve(make_server(), runtime=runtime, console=console, audit=audit) as handle,
        connect(handle.url, headers=handle.headers, runtime=runtime) as client,
    ):
        denied = client.call_tool("wipe", {"table": "t"})
        assert denied["isError"] is True and "headless policy" in denied["content"][0]["text"]
        assert client.call_tool("peek", {})["content"][0]["text"] == "peeked"
        failed = client.call_tool("plain", {})
        # the client gets a clean message; the traceback stays in the console
        assert failed["isError"] is True and "Traceback" not in failed["content"][0]["text"]
        wait_until(lambda: "ValueError" in console.text() and "peeked" in console.text(), "the console rows")
    text = console.text()
    assert "wipe" in text and "denied" in text and "Traceback" not in text  # the text view shows the tail
    assert any(r.traceback and "Traceback" in r.traceback for r in console.records)
    assert "stopped" in text
    assert [(e.tool, e.decision, e.status) for e in audit.entries()] == [
        ("wipe", "deny", "denied"),
        ("peek", "allow", "done"),
        ("plain", "allow", "failed"),
    ]


def test_per_client_rule_denies_without_asking(runtime: Runtime) -> None:
    policy = IncomingPolicy()
    policy.set("untrusted.*", "deny")
    with serve(make_server(), runtime=runtime, policy=policy) as handle:
        untrusted = open_session(handle.url, handle.token, "untrusted")
        reply = request(handle.url, handle.token, untrusted, "tools/call", {"name": "peek"}, rid=1)
        assert answer(reply, 1)["result"]["isError"] is True
        other = open_session(handle.url, handle.token, "someone-else")
        reply = request(handle.url, handle.token, other, "tools/call", {"name": "peek"}, rid=1)
        assert answer(reply, 1)["result"]["content"][0]["text"] == "peeked"


def test_cancelling_a_call_waiting_for_approval(runtime: Runtime) -> None:
    console = ServerConsole(interactive=True)
    with serve(make_server(), runtime=runtime, console=console) as handle:
        session = open_session(handle.url, handle.token)
        replies: list[Any] = []
        caller = threading.Thread(
            target=lambda: replies.append(
                request(
                    handle.url,
                    handle.token,
                    session,
                    "tools/call",
                    {"name": "wipe", "arguments": {"table": "t"}},
                    rid=3,
                )
            )
        )
        caller.start()
        wait_until(lambda: console.pending, "the approval card")
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
        from tests.serving._http import post

        assert post(handle.url, cancel, token=handle.token, session=session).status == 202
        caller.join(WAIT)
        assert not caller.is_alive()
        wait_until(lambda: not console.pending, "the card to go")
        assert request(handle.url, handle.token, session, "ping", {}, rid=4).status == 200
