"""Approval policy (DESIGN decision 11), the audit log's copy-as-code, k=v parsing, headless detection.

Tool annotations follow spec server/tools#tool-annotations: readOnlyHint defaults to false and
destructiveHint to true, and annotations from untrusted servers are hints, never grounds to relax.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from mcp_notebook.notebook.calls.callargs import (
    format_magic,
    format_python,
    parse_call_args,
    parse_kv,
    parse_value,
    split_json,
)
from mcp_notebook.notebook.calls.history import History
from mcp_notebook.notebook.calls.policy import AuditEntry, AuditLog, Policy, may_be_destructive
from mcp_notebook.notebook.config import MCPNotebook, detect_headless

PLAIN: dict[str, Any] = {"name": "echo", "inputSchema": {"type": "object"}}
READ_ONLY: dict[str, Any] = {**PLAIN, "annotations": {"readOnlyHint": True}}
DESTRUCTIVE: dict[str, Any] = {**PLAIN, "annotations": {"destructiveHint": True}}
SAFE_WRITE: dict[str, Any] = {**PLAIN, "annotations": {"readOnlyHint": False, "destructiveHint": False}}


# ---------------------------------------------------------------------------------------------- policy


def test_defaults_local_tools_run_remote_tools_ask() -> None:
    policy = Policy()
    assert policy.decide("local", "add", PLAIN).verdict == "allow"
    decision = policy.decide("everything", "echo", PLAIN)
    assert (decision.verdict, decision.by) == ("ask", "default: remote tool")


def test_a_local_tool_that_declares_itself_destructive_asks() -> None:
    assert Policy().decide("local", "drop", DESTRUCTIVE).verdict == "ask"


def test_exact_rule_beats_pattern_and_pattern_specificity_orders_rules() -> None:
    policy = Policy(
        {"everything.*": "deny", "everything.echo": "allow", "*": "ask", "everything.en*": "allow"}
    )
    assert policy.decide("everything", "echo", PLAIN).by == "rule 'everything.echo'"
    assert policy.decide("everything", "add", PLAIN).verdict == "deny"  # 'everything.*' beats '*'
    assert policy.decide("other", "x", PLAIN).verdict == "ask"
    assert policy.decide("everything", "env", PLAIN).by == "rule 'everything.en*'"  # more literal characters


def test_pattern_allow_never_covers_a_declared_destructive_tool_but_an_exact_rule_does() -> None:
    policy = Policy({"db.*": "allow"})
    decision = policy.decide("db", "wipe", DESTRUCTIVE)
    assert decision.verdict == "ask"
    assert "destructiveHint" in decision.by
    assert policy.decide("db", "select", PLAIN).verdict == "allow"
    policy.set("db.wipe", "allow")
    assert policy.decide("db", "wipe", DESTRUCTIVE).verdict == "allow"


def test_read_only_is_auto_allowed_only_for_trusted_servers_when_configured() -> None:
    policy = Policy(trusted=["weather"])
    assert policy.decide("weather", "peek", READ_ONLY).verdict == "ask"  # not configured
    policy.auto_allow_read_only = True
    assert policy.decide("weather", "peek", READ_ONLY).verdict == "allow"
    assert policy.decide("weather", "write", PLAIN).verdict == "ask"
    assert policy.decide("stranger", "peek", READ_ONLY).verdict == "ask"  # a claim from an untrusted server


def test_always_allow_is_per_tool_and_after_explicit_rules() -> None:
    policy = Policy({"everything.bad": "deny"})
    policy.always_allow("everything", "echo")
    policy.always_allow("everything", "bad")
    assert policy.decide("everything", "echo", PLAIN).by == "always allow (this session)"
    assert policy.decide("everything", "other", PLAIN).verdict == "ask"
    assert policy.decide("everything", "bad", PLAIN).verdict == "deny"


def test_headless_turns_ask_into_the_declared_policy_but_keeps_explicit_verdicts() -> None:
    policy = Policy({"s.never": "deny"}, headless=True, headless_policy="allow")
    decision = policy.decide("s", "echo", PLAIN)
    assert decision.verdict == "allow"
    assert decision.by.startswith("headless policy")
    assert policy.decide("s", "never", PLAIN).verdict == "deny"
    policy.headless_policy = "deny"
    assert policy.decide("s", "echo", PLAIN).verdict == "deny"


def test_bad_verdicts_and_patterns_are_rejected_with_a_message() -> None:
    with pytest.raises(ValueError, match="not a verdict"):
        Policy({"a.b": "maybe"})
    with pytest.raises(ValueError, match="nobody is there to ask"):
        Policy(headless_policy="ask")
    with pytest.raises(ValueError, match=r"SERVER\.TOOL"):
        Policy().set("echo", "allow")


def test_spec_defaults_make_an_unannotated_tool_possibly_destructive() -> None:
    assert may_be_destructive(PLAIN)
    assert not may_be_destructive(READ_ONLY)
    assert not may_be_destructive(SAFE_WRITE)


def test_policy_renders_as_a_table() -> None:
    policy = Policy({"a.*": "deny"}, trusted=["a"])
    policy.always_allow("b", "c")
    text = policy._repr_mimebundle_()["text/plain"]
    assert "a.*" in text and "b.c" in text and "trusted server" in text


# ------------------------------------------------------------------------------------------ audit log


def test_copy_as_code_round_trips_through_the_magic_parser() -> None:
    arguments = {"city": "Paris", "days": 2, "zip": "01234", "note": "two words", "n": "123", "on": True}
    entry = AuditEntry("weather", "forecast", arguments, "allow", "rule", "done")
    line = entry.magic
    assert line.startswith("%mcp call weather.forecast city=Paris days=2 ")
    tokens = shlex.split(line)[3:]
    assert parse_kv(tokens) == arguments
    assert entry.python == (
        "mcp.call('weather.forecast', {'city': 'Paris', 'days': 2, 'zip': '01234', 'note': 'two words', "
        "'n': '123', 'on': True})"
    )


def test_copy_as_code_for_local_tools_and_odd_keys() -> None:
    assert AuditEntry("local", "add", {"a": 1}, "allow", "d", "done").magic == "%mcp call add a=1"
    dotted = AuditEntry("local", "a.b", {}, "allow", "d", "done")
    assert dotted.magic == "%mcp call local.a.b"
    odd = AuditEntry("s", "t", {"with space": [1, None]}, "allow", "d", "done")
    assert odd.magic == '%mcp call s.t {"with space": [1, null]}'
    assert odd.python == "mcp.call('s.t', {'with space': [1, None]})"
    request = AuditEntry("s", "elicitation", {}, "accept", "you", "accept", kind="elicitation")
    assert request.magic == request.python == ""


def test_audit_log_is_bounded_and_history_is_a_table() -> None:
    log = AuditLog(maxlen=2)
    for i in range(3):
        log.add(AuditEntry("local", "t", {"i": i}, "allow", "d", "done"))
    history = History(log.entries())
    assert [e.arguments["i"] for e in history] == [1, 2]
    bundle = history._repr_mimebundle_()
    assert "%mcp call t i=2" in bundle["text/plain"]
    assert "mcp.call(&#x27;t&#x27;, {&#x27;i&#x27;: 2})" in bundle["text/html"]


# --------------------------------------------------------------------------------------------- k=v


@pytest.mark.parametrize(
    ("raw", "schema", "expected"),
    [
        ("2", None, 2),
        ("Paris", None, "Paris"),
        ("[1, 2]", None, [1, 2]),
        ("01234", {"type": "string"}, "01234"),
        ("123", {"type": "string"}, "123"),
        ("123", {"type": "integer"}, 123),
        ("1.5", {"type": "number"}, 1.5),
        ("3", {"type": "number"}, 3),
        ("True", {"type": "boolean"}, True),
        ("false", {"type": "boolean"}, False),
        ("null", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ("null", {"type": "string"}, "null"),
        ("7", {"type": ["string", "null"]}, "7"),
        ("abc", {"type": "integer"}, "abc"),  # left for the server to reject with a message
        ("b", {"enum": ["a", "b"]}, "b"),
        ("1", {"oneOf": [{"const": 1, "title": "one"}]}, 1),
    ],
)
def test_kv_values_parse_as_json_then_follow_the_schema(raw: str, schema: Any, expected: Any) -> None:
    value = parse_value(raw, schema)
    assert value == expected
    assert type(value) is type(expected)


def test_call_args_accept_kv_or_one_json_object() -> None:
    schema = {"properties": {"name": {"type": "string"}}}
    assert parse_call_args('name=123 n=4 msg="hello world"', schema) == {
        "name": "123",
        "n": 4,
        "msg": "hello world",
    }
    assert parse_call_args('{"a": {"b": [1]}}') == {"a": {"b": [1]}}
    assert parse_call_args("") == {}
    assert split_json('--timeout 5 tool {"a": 1}') == ("--timeout 5 tool", '{"a": 1}')
    assert split_json("tool k='{\"a\": 1}'") == ("tool k='{\"a\": 1}'", "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("novalue", "expected key=value"),
        ("a=1 a=2", "given twice"),
        ("{bad json", "do not parse"),
        ("[1, 2]", "expected key=value"),
        ('x="unclosed', "cannot split"),
    ],
)
def test_bad_call_args_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_call_args(text)


def test_format_helpers_quote_what_needs_quoting() -> None:
    assert format_magic("t", {"s": "it's"}) == "%mcp call t s='it'\"'\"'s'"
    assert shlex.split(format_magic("t", {"s": "it's"}))[3] == "s=it's"
    assert format_magic("t", {"s": "42"}) == "%mcp call t s='\"42\"'"  # JSON-looking text stays a string
    assert format_python("t", {"a": None}) == "mcp.call('t', {'a': None})"


# ------------------------------------------------------------------------------------------ headless


def test_headless_detection_env_then_config_then_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    class ZMQInteractiveShell:  # the kernel's shell class, recognised by name (no ipykernel import)
        pass

    monkeypatch.delenv("MCP_NOTEBOOK_HEADLESS", raising=False)
    assert detect_headless(None, object()) is True
    assert detect_headless(None, ZMQInteractiveShell()) is False
    assert detect_headless(True, ZMQInteractiveShell()) is True
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "1")
    assert detect_headless(False, ZMQInteractiveShell()) is True
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    assert detect_headless(True, object()) is False
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "")
    assert detect_headless(None, object()) is True
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "perhaps")
    with pytest.raises(ValueError, match="expected 1 or 0"):
        detect_headless(None, object())


def test_headless_policy_env_overrides_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_NOTEBOOK_HEADLESS_POLICY", raising=False)
    config = MCPNotebook(headless_policy="allow")
    assert config.effective_headless_policy() == "allow"
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS_POLICY", "DENY")
    assert config.effective_headless_policy() == "deny"
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS_POLICY", "sometimes")
    with pytest.raises(ValueError, match="expected 'allow' or 'deny'"):
        config.effective_headless_policy()


def test_always_allow_beats_an_ask_pattern_but_never_a_deny() -> None:
    from mcp_notebook.notebook.calls.policy import Policy

    policy = Policy({"srv.*": "ask", "srv.rm_*": "deny"})
    policy.always_allow("srv", "echo")
    policy.always_allow("srv", "rm_all")
    assert policy.decide("srv", "echo", None).verdict == "allow"
    assert policy.decide("srv", "rm_all", None).verdict == "deny"
    assert policy.decide("srv", "other", None).verdict == "ask"


def test_incoming_and_outgoing_policies_share_the_rule_mechanics() -> None:
    from mcp_notebook.notebook.calls.policy import IncomingPolicy, Policy, RuleBook

    destructive = {"annotations": {"destructiveHint": True}}
    for policy in (Policy({"a.*": "allow"}), IncomingPolicy({"a.*": "allow"})):
        assert isinstance(policy, RuleBook)
        assert policy.decide("a", "wipe", destructive).verdict == "ask"  # a pattern never covers it
        policy.set("a.wipe", "allow")
        assert policy.decide("a", "wipe", destructive).verdict == "allow"  # an exact rule does
