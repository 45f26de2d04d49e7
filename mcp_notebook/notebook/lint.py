"""Contract checks for teaching (``%mcp lint``, ``mcp.lint(...)``): what a tool promises, held against the
spec's rules, the lesson's "common mistakes" and what its calls really returned.

A rule is a small function of one tool (its wire definition plus the calls seen in the connection's trace)
or of one connection's trace, yielding ``(severity, problem, fix)``; :data:`TOOL_RULES` and
:data:`TRACE_RULES` are the tables. Severities: ``error`` breaks the spec (a MUST) or a client, ``warning``
is a common design mistake, ``info`` is advice. Each finding says how to fix it.
Spec notes: tool names §Tools (SEP-986), schema dialect §3.9 (SEP-1613), annotations (hints are claims),
structured content vs ``outputSchema``, tool errors as ``isError`` (2025-11-25), capabilities, elicitation
(form mode MUST NOT ask for sensitive information).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..tools.validation import SchemaCheck
from .rendering.base import esc, table_bundle
from .rendering.views import filter_bundle

if TYPE_CHECKING:
    from .calls.pipeline import Calls

__all__ = [
    "TOOL_RULES",
    "TRACE_RULES",
    "Finding",
    "LintReport",
    "SeenCall",
    "ToolFacts",
    "lint",
    "lint_tool",
    "lint_trace",
    "seen_calls",
]

Problem = tuple[str, str, str]  # severity, problem, fix
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_SECRET = re.compile(r"pass(word|wd|phrase)?$|secret|token|api[_-]?key|private[_-]?key|credential|pin$", re.I)
_DESTRUCTIVE_VERB = re.compile(r"^(delete|remove|drop|destroy|purge|wipe|reset|kill|erase|truncate)", re.I)
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
LONG_CALL_SECONDS = 10.0


@dataclass(frozen=True)
class SeenCall:
    """One ``tools/call`` seen in a trace: what was sent and what came back (a result or an error)."""

    arguments: Any
    result: Mapping[str, Any] | None
    error: Mapping[str, Any] | None
    seconds: float | None


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    target: str
    problem: str
    fix: str

    def row(self) -> dict[str, str]:
        return {
            "severity": self.severity,
            "rule": self.rule,
            "target": self.target,
            "problem": self.problem,
            "fix": self.fix,
        }


@dataclass
class ToolFacts:
    definition: Mapping[str, Any]
    calls: Sequence[SeenCall] = ()
    remote: bool = False  # from a connected server (its annotations are claims), not this notebook
    trusted: bool = False
    long_call: float = LONG_CALL_SECONDS

    @property
    def input_schema(self) -> Mapping[str, Any]:
        schema = self.definition.get("inputSchema")
        return schema if isinstance(schema, Mapping) else {}

    @property
    def annotations(self) -> Mapping[str, Any]:
        ann = self.definition.get("annotations")
        return ann if isinstance(ann, Mapping) else {}


# ---- tool rules -------------------------------------------------------------------------------------------
def _name(t: ToolFacts) -> Iterator[Problem]:
    name = t.definition.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 128:
        yield (
            "error",
            f"the name has {len(name) if isinstance(name, str) else 0} characters",
            ("use 1 to 128 characters (SEP-986)"),
        )
    elif not _NAME.fullmatch(name):
        bad = sorted(set(re.sub(r"[A-Za-z0-9_.-]", "", name)))
        yield "warning", f"the name uses {''.join(bad)!r}", "use only A-Z a-z 0-9 _ - . (SEP-986)"


def _description(t: ToolFacts) -> Iterator[Problem]:
    if not str(t.definition.get("description") or "").strip():
        yield (
            "warning",
            "no description: a model cannot tell when to use the tool",
            ("write a docstring: what it does, when to use it, what it returns"),
        )


def _schema_dialect(t: ToolFacts) -> Iterator[Problem]:
    for key in ("inputSchema", "outputSchema"):
        schema = t.definition.get(key)
        if not isinstance(schema, Mapping):
            continue
        declared = schema.get("$schema")
        if isinstance(declared, str) and declared.rstrip("#") != _DRAFT_2020_12:
            yield (
                "warning",
                f"{key} declares $schema {declared!r}",
                ("drop $schema (2020-12 is the default) or use 2020-12: clients need only support that"),
            )
        try:
            SchemaCheck(dict(schema))
        except ValueError as exc:
            yield (
                "error",
                f"{key} is not a valid schema: {exc}",
                "fix the schema; clients cannot validate against it",
            )


def _input_object(t: ToolFacts) -> Iterator[Problem]:
    schema = t.definition.get("inputSchema")
    if not isinstance(schema, Mapping):
        yield "error", "no inputSchema", 'give one; a tool without parameters has {"type": "object"}'
    elif schema.get("type") != "object":
        yield (
            "error",
            f"inputSchema has type {schema.get('type')!r}",
            'the input is an object: "type": "object"',
        )


def _input_policy(t: ToolFacts) -> Iterator[Problem]:
    schema = t.input_schema
    if schema.get("type") != "object":
        return
    props = schema.get("properties")
    if not props and schema.get("additionalProperties") is not False:
        yield (
            "warning",
            "inputSchema is only type: object: any input is accepted",
            ("list the properties, or set additionalProperties: false for a tool without parameters"),
        )
        return
    if isinstance(props, Mapping) and props:
        if "additionalProperties" not in schema and "unevaluatedProperties" not in schema:
            yield (
                "warning",
                "unknown fields are silently accepted (a typo goes unnoticed)",
                ("set additionalProperties: false"),
            )
        if not schema.get("required"):
            yield "info", "no parameter is required", "list the ones a call cannot do without in required"


def _param_docs(t: ToolFacts) -> Iterator[Problem]:
    props = t.input_schema.get("properties")
    if isinstance(props, Mapping):
        bare = [p for p, s in props.items() if not (isinstance(s, Mapping) and s.get("description"))]
        if bare:
            yield (
                "info",
                f"parameters without a description: {', '.join(map(str, bare))}",
                ("describe each one (Args: in the docstring): units, formats, examples"),
            )


def _secret_params(t: ToolFacts) -> Iterator[Problem]:
    props = t.input_schema.get("properties")
    if isinstance(props, Mapping):
        secret = [str(p) for p in props if _SECRET.search(str(p))]
        if secret:
            yield (
                "warning",
                f"asks the caller for a secret: {', '.join(secret)}",
                (
                    "keep secrets out of tool arguments (they pass through the model and logs): "
                    "configure the server, or use authorization"
                ),
            )


def _annotations(t: ToolFacts) -> Iterator[Problem]:
    ann = t.annotations
    name = str(t.definition.get("name") or "")
    if ann.get("readOnlyHint") is True and ann.get("destructiveHint") is True:
        yield (
            "error",
            "readOnlyHint and destructiveHint are both true",
            "a read-only tool destroys nothing: drop one",
        )
    elif ann.get("readOnlyHint") is True and ("destructiveHint" in ann or "idempotentHint" in ann):
        yield (
            "info",
            "destructiveHint/idempotentHint mean something only when readOnlyHint is false",
            ("drop them from a read-only tool"),
        )
    if _DESTRUCTIVE_VERB.match(name) and (
        ann.get("readOnlyHint") is True or ann.get("destructiveHint") is False
    ):
        yield (
            "warning",
            f"the name {name!r} says it destroys, the annotations say it does not",
            ("annotate honestly: destructiveHint: true (clients then ask before calling)"),
        )
    if "readOnlyHint" not in ann and "destructiveHint" not in ann:
        yield (
            "info",
            "no readOnlyHint/destructiveHint: clients must assume it may destroy data",
            ("say what it does: readOnlyHint: true, or destructiveHint: true/false"),
        )
    if t.remote and not t.trusted and ann.get("readOnlyHint") is True:
        yield (
            "info",
            "readOnlyHint from an untrusted server is a claim, not a fact",
            ("treat hints as claims: keep asking until you trust the server (%mcp policy trust)"),
        )


def _output_schema(t: ToolFacts) -> Iterator[Problem]:
    schema = t.definition.get("outputSchema")
    if isinstance(schema, Mapping) and schema.get("type") not in ("object", None):
        yield (
            "warning",
            f"outputSchema has type {schema.get('type')!r}",
            ("wrap the value in an object (2025-11-25 clients expect type: object)"),
        )


def _execution(t: ToolFacts) -> Iterator[Problem]:
    execution = t.definition.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    if support is not None and support not in ("forbidden", "optional", "required"):
        yield "error", f"execution.taskSupport is {support!r}", "use forbidden, optional or required"
    slow = [c.seconds for c in t.calls if c.seconds is not None and c.seconds >= t.long_call]
    if slow and support in (None, "forbidden"):
        yield (
            "warning",
            f"a call took {max(slow):.1f} s and the tool cannot run as a task",
            ("make a long job a task (execution.taskSupport: optional) so the caller can poll and cancel"),
        )


def _results(t: ToolFacts) -> Iterator[Problem]:
    schema = t.definition.get("outputSchema")
    results = [c.result for c in t.calls if c.result is not None and c.result.get("isError") is not True]
    if isinstance(schema, Mapping):
        free = [r for r in results if "structuredContent" not in r]
        if free:
            yield (
                "error",
                f"has an outputSchema, but {len(free)} result(s) held only free text",
                ("return structuredContent matching outputSchema in every successful result"),
            )
        try:
            check = SchemaCheck(dict(schema))
        except ValueError:
            return
        for r in results:
            problems = check.problems(r.get("structuredContent")) if "structuredContent" in r else []
            if problems:
                yield (
                    "error",
                    f"structuredContent does not match outputSchema: {problems[0]}",
                    ("return what the schema says, or fix the schema"),
                )
                break
    elif any("structuredContent" in r for r in results):
        yield (
            "info",
            "returns structuredContent without an outputSchema",
            ("declare outputSchema so callers can validate and rely on the shape"),
        )
    protocol_errors = [c.error for c in t.calls if c.error is not None]
    if protocol_errors:
        first = protocol_errors[0]
        yield (
            "warning",
            f"a call failed as a JSON-RPC error ({first.get('code')}: {first.get('message')})",
            (
                "report tool failures (bad input included) as a result with isError: true and a message "
                "the model can act on"
            ),
        )


def _app(t: ToolFacts) -> Iterator[Problem]:
    """MCP Apps metadata (ext-apps spec: McpUiToolMeta)."""
    meta = t.definition.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    if not isinstance(ui, Mapping):
        return
    uri = ui.get("resourceUri")
    if uri is not None and not (isinstance(uri, str) and uri.startswith("ui://")):
        yield "error", f"_meta.ui.resourceUri is {uri!r}", "name a ui:// resource (hosts render nothing else)"
    seen = ui.get("visibility")
    if seen is not None and not (isinstance(seen, list) and seen and set(seen) <= {"model", "app"}):
        yield "error", f"_meta.ui.visibility is {seen!r}", 'use a non-empty list of "model" and "app"'
    if "csp" in ui or "permissions" in ui:
        yield (
            "warning",
            "csp/permissions sit on the tool, where hosts ignore them",
            ("put them in the ui:// resource's _meta.ui (its resources/read content)"),
        )


ToolRule = Callable[[ToolFacts], Iterable[Problem]]
TOOL_RULES: dict[str, ToolRule] = {
    "name": _name,
    "description": _description,
    "schema-dialect": _schema_dialect,
    "input-object": _input_object,
    "input-policy": _input_policy,
    "param-docs": _param_docs,
    "secret-params": _secret_params,
    "annotations": _annotations,
    "output-schema": _output_schema,
    "long-calls": _execution,
    "results": _results,
    "app": _app,
}


# ---- connection rules, from the trace ---------------------------------------------------------------------
def _messages(entries: Sequence[Mapping[str, Any]], direction: str) -> Iterator[Mapping[str, Any]]:
    for e in entries:
        message = e.get("message")
        if e.get("direction") == direction and isinstance(message, Mapping):
            yield message


def _capabilities(entries: Sequence[Mapping[str, Any]]) -> Iterator[Problem]:
    declared: Mapping[str, Any] | None = None
    for m in _messages(entries, "out"):
        if m.get("method") == "initialize" and isinstance(m.get("params"), Mapping):
            caps = m["params"].get("capabilities")
            declared = caps if isinstance(caps, Mapping) else {}
    if declared is None:
        return  # no handshake seen (or the modern era: capabilities per request)
    needs = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
    for m in _messages(entries, "in"):
        capability = needs.get(str(m.get("method")))
        if capability and capability not in declared:
            yield (
                "error",
                f"the server sent {m.get('method')} but the client never declared {capability!r}",
                (
                    f"check the client's capabilities before asking (if not {capability!r} in "
                    "client capabilities: do without)"
                ),
            )


def _elicitation_secrets(entries: Sequence[Mapping[str, Any]]) -> Iterator[Problem]:
    for m in _messages(entries, "in"):
        params = m.get("params")
        if m.get("method") != "elicitation/create" or not isinstance(params, Mapping):
            continue
        if params.get("mode", "form") != "form":
            continue
        schema = params.get("requestedSchema")
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        secret = [str(p) for p in props or {} if _SECRET.search(str(p))]
        if secret:
            yield (
                "error",
                f"a form elicitation asks for a secret: {', '.join(secret)}",
                ("form mode MUST NOT request sensitive information: use URL mode elicitation"),
            )


TraceRule = Callable[[Sequence[Mapping[str, Any]]], Iterable[Problem]]
TRACE_RULES: dict[str, TraceRule] = {
    "capabilities": _capabilities,
    "elicitation-secrets": _elicitation_secrets,
}


def _final(result: Mapping[str, Any]) -> bool:
    """A tool's own answer, not a task handle (``{"task": ...}``, ``resultType: "task"``) or an MRTR step."""
    if result.get("resultType", "complete") != "complete":
        return False
    return not ("task" in result and "content" not in result)


def seen_calls(entries: Sequence[Mapping[str, Any]]) -> dict[str, list[SeenCall]]:
    """The ``tools/call`` exchanges of a client's trace, by tool name."""
    pending: dict[str, tuple[str, Any, float | None]] = {}
    calls: dict[str, list[SeenCall]] = {}
    for e in entries:
        m, time = e.get("message"), e.get("time")
        if not isinstance(m, Mapping) or "id" not in m:
            continue
        key = repr(m.get("id"))
        t = float(time) if isinstance(time, (int, float)) else None
        if (
            e.get("direction") == "out"
            and m.get("method") == "tools/call"
            and isinstance(m.get("params"), Mapping)
        ):
            pending[key] = (str(m["params"].get("name")), m["params"].get("arguments"), t)
        elif e.get("direction") == "in" and key in pending and "method" not in m:
            name, args, asked = pending.pop(key)
            result, error = m.get("result"), m.get("error")
            if isinstance(result, Mapping) and not _final(result):
                continue  # a task started (its result comes by tasks/result) or an MRTR step: not the answer
            seconds = t - asked if t is not None and asked is not None else None
            calls.setdefault(name, []).append(
                SeenCall(
                    args,
                    result if isinstance(result, Mapping) else None,
                    error if isinstance(error, Mapping) else None,
                    seconds,
                )
            )
    return calls


def lint_tool(facts: ToolFacts, target: str) -> list[Finding]:
    """Every tool rule's findings for one tool."""
    return [
        Finding(rule, severity, target, problem, fix)
        for rule, check in TOOL_RULES.items()
        for severity, problem, fix in check(facts)
    ]


def lint_trace(entries: Sequence[Mapping[str, Any]], target: str) -> list[Finding]:
    """Every connection rule's findings for one client's trace."""
    return [
        Finding(rule, severity, target, problem, fix)
        for rule, check in TRACE_RULES.items()
        for severity, problem, fix in check(entries)
    ]


def lint(pipeline: Calls, target: str | None = None, *, long_call: float = LONG_CALL_SECONDS) -> LintReport:
    """``mcp.lint``: a tool (``TOOL`` / ``SERVER.TOOL``), a connection (``SERVER``), or everything."""
    from .calls.policy import LOCAL

    if target is None or target in pipeline.connections.names():
        servers, only = [target] if target else pipeline.connections.names(), None
    else:
        server, only = pipeline.split(target)
        servers = [server]
    findings: list[Finding] = []
    checked: list[str] = []
    for server in servers:
        client = pipeline.client(server)
        entries = client.trace.entries()
        calls = seen_calls(entries)
        tools = pipeline.tools(server, only)
        dropped: dict[str, str] = client.dropped_tools
        names = [only] if only else sorted(tools)
        if only is not None and only in dropped and only not in tools:
            names = []  # a tool the client left out has no definition to check: its finding is below
        for name in names:
            definition = pipeline.definition(server, name, tools)
            shown = name if server == LOCAL and "." not in name else f"{server}.{name}"
            facts = ToolFacts(
                definition,
                calls.get(name, ()),
                remote=server != LOCAL,
                trusted=pipeline.policy.is_trusted(server),
                long_call=long_call,
            )
            findings += lint_tool(facts, shown)
            checked.append(shown)
        for name, reason in dropped.items():
            if only is None or only == name:  # the client left it out of the list: shown here, not hidden
                fix = "fix the tool's definition on the server (the spec's Tool shape; x-mcp-header rules)"
                findings.append(Finding("tool-left-out", "error", f"{server}.{name}", reason, fix))
        if only is None:
            findings += lint_trace(entries, server)
            checked.append(f"{server} (trace)")
    return LintReport(findings, checked)


_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class LintReport:
    """The findings, worst first; ``ok`` when none is an error or a warning."""

    findings: list[Finding]
    checked: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.findings.sort(key=lambda f: (_ORDER.get(f.severity, 3), f.target))

    @property
    def ok(self) -> bool:
        return not any(f.severity in ("error", "warning") for f in self.findings)

    def rules(self, severity: str | None = None) -> set[str]:
        return {f.rule for f in self.findings if severity is None or f.severity == severity}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        counts = {s: sum(f.severity == s for f in self.findings) for s in _ORDER}
        title = (
            f"lint of {', '.join(self.checked) or 'nothing'}: {counts['error']} error(s), "
            f"{counts['warning']} warning(s), {counts['info']} note(s)"
        )
        rows = [f.row() for f in self.findings]
        bundle = table_bundle(rows, ["severity", "rule", "target", "problem", "fix"], title=title)
        if not rows:
            bundle = {
                "text/html": f"<b>{esc(title)}</b>: nothing to fix",
                "text/plain": f"{title}: nothing to fix",
            }
        return filter_bundle(bundle, include, exclude)

    def __repr__(self) -> str:
        return f"<LintReport {len(self.findings)} findings, ok={self.ok}>"
