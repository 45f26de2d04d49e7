"""Incoming calls pass the server's approval hook (DESIGN decisions 11 and 14): ask for destructive tools,
allow read-only ones, per-tool and per-principal overrides (the principal is what the connection knows:
the named token or the transport, never the client's declared name), every decision in the audit log, the
console showing it all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import Server, connect
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.calls.policy import AuditLog
from mcp_notebook.notebook.serving.console import ServerConsole
from mcp_notebook.notebook.serving.server import IncomingPolicy, serve
from tests.serving._http import WAIT, Reply, answer, open_session, request
from tests.waiting import wait_until

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


def test_policy_defaults_and_overrides() -> None:
    policy = IncomingPolicy()
    assert policy.decide("http", "peek", READ_ONLY).verdict == "allow"
    assert policy.decide("http", "plain", {}).verdict == "allow"
    assert policy.decide("http", "wipe", DESTRUCTIVE).verdict == "ask"
    policy.set("*.wipe", "allow")  # a pattern does not cover a declared-destructive tool
    assert policy.decide("http", "wipe", DESTRUCTIVE).verdict == "ask"
    policy.set("ci.wipe", "allow")  # an exact PRINCIPAL.TOOL rule does (a token named "ci")
    assert policy.decide("ci", "wipe", DESTRUCTIVE).verdict == "allow"
    policy.set("stranger.*", "deny")  # per principal
    assert policy.decide("stranger", "peek", READ_ONLY).verdict == "deny"
    policy.always_allow("http", "wipe")
    assert policy.decide("http", "wipe", DESTRUCTIVE).by == "always allow (this session)"
    assert IncomingPolicy(headless=True).decide("http", "wipe", DESTRUCTIVE).verdict == "deny"
    with pytest.raises(ValueError):
        policy.set("nodot", "allow")


def wipe(handle: Any, session: str, table: str, rid: int) -> Reply:
    """``tools/call wipe(table)`` over the served handle's HTTP, as request ``rid``."""
    arguments = {"name": "wipe", "arguments": {"table": table}}
    return request(handle.url, handle.token, session, "tools/call", arguments, rid=rid)


def wipe_in_thread(handle: Any, session: str, table: str, rid: int, replies: list[Any]) -> threading.Thread:
    """:func:`wipe` from another thread; its reply goes to ``replies``."""
    caller = threading.Thread(target=lambda: replies.append(wipe(handle, session, table, rid)))
    caller.start()
    return caller


def test_destructive_call_waits_for_the_console_while_pings_answer(runtime: Runtime) -> None:
    console = ServerConsole(interactive=True)
    audit = AuditLog()
    with serve(make_server(), runtime=runtime, console=console, audit=audit) as handle:
        session = open_session(handle.url, handle.token, "claude-test")
        replies: list[Any] = []
        caller = wipe_in_thread(handle, session, "t", 5, replies)
        wait_until(lambda: console.pending, "the approval card")
        assert request(handle.url, handle.token, session, "ping", {}, rid=6).status == 200  # not blocked
        listed = answer(request(handle.url, handle.token, session, "tools/list", {}, rid=7), 7)
        assert {t["name"] for t in listed["result"]["tools"]} == {"peek", "wipe", "plain"}
        assert "waiting for approval: http ('claude-test') -> wipe" in console.text()
        assert console.answer("deny") == 1
        caller.join(WAIT)
        result = answer(replies[0], 5)["result"]
        assert result["isError"] is True and "did not approve" in result["content"][0]["text"]
        entry = audit.entries()[-1]
        assert (entry.server, entry.client, entry.tool, entry.decision, entry.status) == (
            "http",
            "claude-test",
            "wipe",
            "deny",
            "denied",
        )
        assert entry.decided_by == "you, in the server console"
        # "always allow" for this client: approved now and not asked again
        caller = wipe_in_thread(handle, session, "u", 8, replies)
        wait_until(lambda: console.pending, "the second approval card")
        console.answer("always")
        caller.join(WAIT)
        assert answer(replies[1], 8)["result"]["content"][0]["text"] == "wiped u"
        again = wipe(handle, session, "v", 9)
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


def test_per_principal_rule_denies_without_asking(runtime: Runtime) -> None:
    """Named tokens make principals: a rule for one token's holder leaves the other's calls alone."""
    policy = IncomingPolicy()
    policy.set("untrusted.*", "deny")
    tokens = {"untrusted": "token-of-the-untrusted", "partner": "token-of-the-partner"}
    with serve(make_server(), runtime=runtime, policy=policy, tokens=tokens) as handle:
        untrusted = open_session(
            handle.url, tokens["untrusted"], "partner"
        )  # a borrowed name changes nothing
        reply = request(handle.url, tokens["untrusted"], untrusted, "tools/call", {"name": "peek"}, rid=1)
        result = answer(reply, 1)["result"]
        assert result["isError"] is True and "rule 'untrusted.*'" in result["content"][0]["text"]
        other = open_session(handle.url, tokens["partner"], "untrusted")
        reply = request(handle.url, tokens["partner"], other, "tools/call", {"name": "peek"}, rid=1)
        assert answer(reply, 1)["result"]["content"][0]["text"] == "peeked"
        # a session answers only to the token that opened it
        stolen = request(handle.url, tokens["partner"], untrusted, "tools/call", {"name": "peek"}, rid=2)
        assert stolen.status == 404


HOSTILE_NAMES = [
    "*",
    "x.read_",
    "*.wipe",
    "http",
    "http.wipe",
    "[a-z]*",
    "?",
    "<b onclick=x>evil</b>",
    "a.b.c",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_client_name_cannot_bypass_a_deny_or_the_destructive_safeguard(
    runtime: Runtime, name: str
) -> None:
    """Issue 8's approval bypass: the key was ``f"{clientInfo.name}.{tool}"``, so a client named ``*`` turned
    the pattern ``*.wipe: allow`` into an exact rule (skipping the destructiveHint safeguard) and one named
    ``x.read_`` made ``*.read_*: allow`` outrank ``*.hello: deny``. Rules now see the connection only."""
    server = make_server()

    @server.tool
    def hello() -> str:
        """Say hello."""
        return "hello"

    policy = IncomingPolicy({"*.wipe": "allow", "*.read_*": "allow", "*.hello": "deny"}, headless=True)
    audit = AuditLog()
    with serve(server, runtime=runtime, policy=policy, audit=audit) as handle:
        session = open_session(handle.url, handle.token, name)
        wipe = {"name": "wipe", "arguments": {"table": "t"}}
        wiped = answer(request(handle.url, handle.token, session, "tools/call", wipe, rid=1), 1)["result"]
        assert wiped["isError"] is True, wiped  # the pattern allow never covers a destructive tool
        assert "destructiveHint" in wiped["content"][0]["text"]
        said = answer(request(handle.url, handle.token, session, "tools/call", {"name": "hello"}, rid=2), 2)
        assert said["result"]["isError"] is True
        assert "rule '*.hello'" in said["result"]["content"][0]["text"]
        assert [(e.server, e.client, e.decision) for e in audit.entries()] == [
            ("http", name, "deny"),
            ("http", name, "deny"),
        ]
        ok = answer(request(handle.url, handle.token, session, "tools/call", {"name": "peek"}, rid=3), 3)
        assert ok["result"]["content"][0]["text"] == "peeked"


def test_the_console_shows_a_declared_name_escaped(runtime: Runtime) -> None:
    console = ServerConsole(interactive=False)
    policy = IncomingPolicy({"*.peek": "deny"})
    with serve(make_server(), runtime=runtime, console=console, policy=policy) as handle:
        session = open_session(handle.url, handle.token, "<img src=x onerror=alert(1)>")
        request(handle.url, handle.token, session, "tools/call", {"name": "peek"}, rid=1)
        wait_until(lambda: "denied" in console.text(), "the denied row")
        page = console._repr_mimebundle_()["text/html"]
        assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_cancelling_a_call_waiting_for_approval(runtime: Runtime) -> None:
    console = ServerConsole(interactive=True)
    with serve(make_server(), runtime=runtime, console=console) as handle:
        session = open_session(handle.url, handle.token)
        replies: list[Any] = []
        caller = wipe_in_thread(handle, session, "t", 3, replies)
        wait_until(lambda: console.pending, "the approval card")
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
        from tests.serving._http import post

        assert post(handle.url, cancel, token=handle.token, session=session).status == 202
        caller.join(WAIT)
        assert not caller.is_alive()
        wait_until(lambda: not console.pending, "the card to go")
        assert request(handle.url, handle.token, session, "ping", {}, rid=4).status == 200


def test_the_console_table_is_styled_like_every_other_table() -> None:
    """Issue 19: the console's table sat outside the package's scoped wrapper, so none of the shared table
    style applied (no borders, centred headers, columns spread over the whole output). Failed before."""
    from mcp_notebook.notebook.serving.console import ConsoleRecord

    console = ServerConsole(interactive=True)
    console.records.append(ConsoleRecord("http ('inspector')", "peek", {"table": "t"}))
    for page in (console._repr_mimebundle_()["text/html"], console.widget().children[2].value):
        assert page.startswith("<style>") and ".mcpnb table.mcpnb-table" in page
        wrapper = page.index('<div class="mcpnb">')
        assert wrapper < page.index("<table class='mcpnb-table'>")


def test_the_console_card_is_styled_like_the_notebooks_own_card() -> None:
    """Issue 19: the console's approval card had its text outside the scoped wrapper (its notes unstyled)
    and fixed-width buttons, unlike the notebook's own card. Failed before."""
    from types import SimpleNamespace

    from mcp_notebook.notebook.serving.console import _Card

    call = SimpleNamespace(
        tool="wipe",
        session_id="abcdef0123",
        peer=SimpleNamespace(principal="http"),
        declared_name="inspector",
        arguments={"table": "t"},
    )
    card = _Card(call, "destructive tool", lambda verdict: None)  # type: ignore[arg-type]
    head = card.widget.children[0].value
    assert head.startswith("<style>") and '<div class="mcpnb">' in head and "mcpnb-note" in head
    assert [button.layout.width for button in card.buttons] == ["auto", "auto", "auto"]
