"""Contract checks (``%mcp lint``): every rule with a case it flags and a case it passes, then the whole
thing over real connections (a notebook tool, a remote server's tools, calls seen in the trace)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Server
from mcp_notebook.notebook.lint import (
    TOOL_RULES,
    TRACE_RULES,
    SeenCall,
    ToolFacts,
    lint_tool,
    lint_trace,
    seen_calls,
)

GOOD: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather of a city.",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "outputSchema": {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]},
    "annotations": {"readOnlyHint": True},
}
OK_RESULT = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"t": 1.5}}


def _with(**changes: Any) -> dict[str, Any]:
    tool = {**GOOD, **changes}
    return {k: v for k, v in tool.items() if v is not None}


def _schema(**changes: Any) -> dict[str, Any]:
    schema = {**GOOD["inputSchema"], **changes}
    return _with(inputSchema={k: v for k, v in schema.items() if v is not None})


def _call(
    result: dict[str, Any] | None = None, error: dict[str, Any] | None = None, seconds: float = 0.1
) -> SeenCall:
    return SeenCall({"city": "x"}, result, error, seconds)


# (rule, a definition (or facts) it flags, the text of the problem) -- and GOOD passes every rule
BAD: list[tuple[str, ToolFacts, str]] = [
    ("name", ToolFacts(_with(name="x" * 129)), "129 characters"),
    ("name", ToolFacts(_with(name="get weather!")), "' !'"),
    ("description", ToolFacts(_with(description=None)), "no description"),
    (
        "schema-dialect",
        ToolFacts(_schema(**{"$schema": "http://json-schema.org/draft-07/schema#"})),
        "draft-07",
    ),
    ("schema-dialect", ToolFacts(_schema(properties={"city": {"type": "strin"}})), "not a valid schema"),
    ("input-object", ToolFacts(_with(inputSchema={"type": "array"})), "type 'array'"),
    ("input-object", ToolFacts(_with(inputSchema=None)), "no inputSchema"),
    ("input-policy", ToolFacts(_with(inputSchema={"type": "object"})), "only type: object"),
    ("input-policy", ToolFacts(_schema(additionalProperties=None)), "silently accepted"),
    ("input-policy", ToolFacts(_schema(required=None)), "no parameter is required"),
    (
        "param-docs",
        ToolFacts(_schema(properties={"city": {"type": "string"}})),
        "without a description: city",
    ),
    (
        "secret-params",
        ToolFacts(_schema(properties={"api_key": {"type": "string", "description": "k"}})),
        "api_key",
    ),
    (
        "annotations",
        ToolFacts(_with(annotations={"readOnlyHint": True, "destructiveHint": True})),
        "both true",
    ),
    ("annotations", ToolFacts(_with(annotations={})), "clients must assume"),
    (
        "annotations",
        ToolFacts(_with(name="delete_city", annotations={"destructiveHint": False})),
        "says it destroys",
    ),
    ("annotations", ToolFacts(GOOD, remote=True, trusted=False), "a claim, not a fact"),
    ("output-schema", ToolFacts(_with(outputSchema={"type": "array"})), "type 'array'"),
    ("long-calls", ToolFacts(GOOD, [_call(OK_RESULT, seconds=12.0)]), "took 12.0 s"),
    ("long-calls", ToolFacts(_with(execution={"taskSupport": "sometimes"})), "'sometimes'"),
    ("results", ToolFacts(GOOD, [_call({"content": [{"type": "text", "text": "hot"}]})]), "only free text"),
    (
        "results",
        ToolFacts(GOOD, [_call({"content": [], "structuredContent": {"t": "hot"}})]),
        "does not match",
    ),
    ("results", ToolFacts(_with(outputSchema=None), [_call(OK_RESULT)]), "without an outputSchema"),
    (
        "results",
        ToolFacts(GOOD, [_call(error={"code": -32603, "message": "boom"})]),
        "JSON-RPC error (-32603",
    ),
    ("app", ToolFacts(_with(_meta={"ui": {"resourceUri": "https://x/app.html"}})), "resourceUri is 'https"),
    ("app", ToolFacts(_with(_meta={"ui": {"resourceUri": "ui://a", "visibility": ["user"]}})), "['user']"),
    ("app", ToolFacts(_with(_meta={"ui": {"resourceUri": "ui://a", "csp": {}}})), "hosts ignore them"),
]


@pytest.mark.parametrize(("rule", "facts", "text"), BAD, ids=[f"{r}:{t}" for r, _f, t in BAD])
def test_rule_flags_the_mistake(rule: str, facts: ToolFacts, text: str) -> None:
    found = [f for f in lint_tool(facts, "t") if f.rule == rule]
    assert any(text in f.problem for f in found), found
    assert all(f.fix for f in found)


def test_a_good_tool_passes_every_rule() -> None:
    facts = ToolFacts(
        GOOD, [_call(OK_RESULT), _call({"content": [], "isError": True})], remote=True, trusted=True
    )
    assert lint_tool(facts, "t") == []
    # the negatives of the task rules: a long call of a tool that can run as a task
    task_tool = _with(execution={"taskSupport": "optional"})
    assert (
        lint_tool(ToolFacts(task_tool, [_call(OK_RESULT, seconds=60)], remote=True, trusted=True), "t") == []
    )
    assert {rule for rule, _f, _t in BAD} == set(TOOL_RULES)  # every rule has its case


def _entry(direction: str, message: dict[str, Any], time: float = 0.0) -> dict[str, Any]:
    return {"direction": direction, "time": time, "message": {"jsonrpc": "2.0", **message}}


def _handshake(capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    return [_entry("out", {"id": 0, "method": "initialize", "params": {"capabilities": capabilities}})]


def test_trace_rules() -> None:
    sampling = _entry("in", {"id": 5, "method": "sampling/createMessage", "params": {"messages": []}})
    found = lint_trace([*_handshake({"roots": {}}), sampling], "s")
    assert [f.rule for f in found] == ["capabilities"] and "'sampling'" in found[0].problem
    assert lint_trace([*_handshake({"sampling": {}}), sampling], "s") == []

    def ask(props: dict[str, Any], mode: str = "form") -> dict[str, Any]:
        schema = {"type": "object", "properties": props}
        return _entry(
            "in",
            {"id": 6, "method": "elicitation/create", "params": {"mode": mode, "requestedSchema": schema}},
        )

    declared = _handshake({"elicitation": {}})
    found = lint_trace([*declared, ask({"password": {"type": "string"}})], "s")
    assert [f.rule for f in found] == ["elicitation-secrets"] and "password" in found[0].problem
    assert lint_trace([*declared, ask({"language": {"type": "string"}})], "s") == []
    assert set(TRACE_RULES) == {"capabilities", "elicitation-secrets"}


def test_seen_calls_pairs_requests_with_answers_by_id() -> None:
    entries = [
        _entry("out", {"id": 1, "method": "tools/call", "params": {"name": "a", "arguments": {"x": 1}}}, 1.0),
        _entry("in", {"id": 1, "method": "roots/list"}, 1.1),  # the server's own id 1: not an answer
        _entry("in", {"id": 1, "result": {"content": []}}, 3.5),
        _entry("out", {"id": 2, "method": "tools/call", "params": {"name": "a"}}, 4.0),
        _entry("in", {"id": 2, "error": {"code": -1, "message": "no"}}, 4.5),
    ]
    calls = seen_calls(entries)["a"]
    assert [(c.arguments, c.seconds, c.error) for c in calls] == [
        ({"x": 1}, 2.5, None),
        (None, 0.5, {"code": -1, "message": "no"}),
    ]


def test_a_call_answered_as_a_task_is_not_a_result_without_structured_content() -> None:
    """Workshop 08's full_report (taskSupport required) answers tools/call with a task handle; lint counted
    it as a result holding only free text, an error in the workshop's own reference solution
    (failed before)."""
    entries = [
        _entry("out", {"id": 1, "method": "tools/call", "params": {"name": "a"}}, 1.0),
        _entry("in", {"id": 1, "result": {"task": {"taskId": "t1", "status": "working"}}}, 1.1),
        _entry("out", {"id": 2, "method": "tools/call", "params": {"name": "a"}}, 2.0),
        _entry("in", {"id": 2, "result": {"resultType": "task", "task": {"taskId": "t2"}}}, 2.1),
        _entry("out", {"id": 3, "method": "tools/call", "params": {"name": "a"}}, 3.0),
        _entry("in", {"id": 3, "result": {"content": [], "structuredContent": {"n": 1}}}, 3.2),
    ]
    calls = seen_calls(entries)["a"]
    assert [c.result for c in calls] == [{"content": [], "structuredContent": {"n": 1}}]


def test_lint_over_real_connections(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: first
            b: second
        """
        return a + b

    remote = Server("shop")

    @remote.tool(annotations={"readOnlyHint": True, "destructiveHint": True})
    def delete_order(order_id: str) -> str:
        return "gone"

    mcp.connect("shop", remote)
    mcp.call("add", a=1, b=2)
    report = mcp.lint("add")
    # a derived schema is tight; only the advice to say what the tool does (no hints given) remains
    assert (
        report.checked == ["add"] and report.ok and report.rules() == report.rules("info") == {"annotations"}
    )
    shop = mcp.lint("shop")
    assert {"annotations", "description", "param-docs"} <= shop.rules()
    assert not shop.ok and "shop.delete_order" in {f.target for f in shop.findings}
    html = shop._repr_mimebundle_()["text/html"]
    assert "both true" in html and "fix" in html
    everything = shell.run_line_magic("mcp", "lint")
    assert {"add", "shop.delete_order", "local (trace)", "shop (trace)"} <= set(everything.checked)


def test_lint_shows_a_tool_the_client_left_out(shell: Any) -> None:
    # issue 20: one malformed tool is left out of the list (never the whole list) and lint names it
    from tests.spec.test_contracts_bad_tool import server_with_a_bad_tool

    mcp = shell.user_ns["mcp"]
    mcp.connect("odd", server_with_a_bad_tool())
    report = mcp.lint("odd")
    left_out = [f for f in report.findings if f.rule == "tool-left-out"]
    assert [f.target for f in left_out] == ["odd.broken"] and left_out[0].severity == "error"
    assert {"odd.first", "odd.last"} <= set(report.checked)
    assert [f.rule for f in mcp.lint("odd.broken").findings] == ["tool-left-out"]
