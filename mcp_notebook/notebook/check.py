"""The exercise checker (``%mcp check TOOL``, ``mcp.check(...)``): does a learner's tool keep its contract?

Points, each pass or fail with what was seen:

* the contract's shape: the lint rules (``lint.py``) find no error or warning; required parameters and
  annotations the exercise asks for are there;
* every sample call succeeds (no ``isError``, no protocol error), its ``structuredContent`` matches the
  ``outputSchema``, and what the exercise expects of the result holds;
* every bad call is refused *as a tool error* (``isError: true`` with a message the model can act on),
  not as a JSON-RPC error, not by succeeding, and not by crashing (an exception other than ``ToolError``,
  a ``ValueError`` or a ``ZeroDivisionError``, is a crash even though the caller also gets ``isError``).

Calls go through the notebook's client like any call (approval policy, audit log, trace), never shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..tools.validation import SchemaCheck
from .rendering.base import esc, one_line, wrap
from .rendering.views import filter_bundle

if TYPE_CHECKING:
    from .calls.handle import CallHandle
    from .calls.pipeline import Calls


class CheckedNotebook(Protocol):
    """What a check needs from the notebook's ``mcp`` object (``api.NotebookMCP``), declared here so that
    the import runs one way (api -> check; tests/test_layers.py)."""

    calls: Calls

    def tool_def(self, name: str) -> dict[str, Any]: ...

    def prepare(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call_timeout: float | None = None,
        **kwargs: Any,
    ) -> CallHandle: ...


__all__ = ["CheckReport", "Point", "check"]

Expect = Mapping[str, Any] | Callable[[dict[str, Any]], bool]


@dataclass(frozen=True)
class Point:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class CheckReport:
    """Pass/fail per point; ``passed`` when every point passed."""

    target: str
    points: list[Point] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.points) and all(p.passed for p in self.points)

    def add(self, name: str, passed: bool, detail: str = "") -> None:
        self.points.append(Point(name, passed, detail))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        score = f"{sum(p.passed for p in self.points)}/{len(self.points)}"
        verdict = "PASS" if self.passed else "FAIL"
        head = f"check of {self.target}: {verdict} ({score} points)"
        rows = "".join(
            f'<tr><td class="{"mcpnb-good" if p.passed else "mcpnb-bad"}">'
            f"{'✓ pass' if p.passed else '✗ fail'}</td><td>{esc(p.name)}</td>"
            f"<td>{esc(one_line(p.detail, 200))}</td></tr>"
            for p in self.points
        )
        html = (
            f'<div class="mcpnb-title {"mcpnb-good" if self.passed else "mcpnb-bad"}">{esc(head)}</div>'
            f'<table class="mcpnb-table"><thead><tr><th></th><th>point</th><th>seen</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
        lines = [head] + [
            f"  {'PASS' if p.passed else 'FAIL'}  {p.name}"
            + (f" -- {one_line(p.detail, 120)}" if p.detail else "")
            for p in self.points
        ]
        return filter_bundle({"text/html": wrap(html), "text/plain": "\n".join(lines)}, include, exclude)

    def __repr__(self) -> str:
        return f"<CheckReport {self.target}: {'PASS' if self.passed else 'FAIL'}>"


def _text(result: Mapping[str, Any]) -> str:
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return " ".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _run(api: CheckedNotebook, target: str, arguments: Mapping[str, Any], timeout: float) -> tuple[Any, str]:
    """(result or None, what went wrong) of one call, made quietly."""
    handle = api.prepare(target, dict(arguments))
    handle._auto_show = False
    if handle.state == "awaiting-approval":
        handle.cancel()
        return None, "the call needs approval: allow it first (mcp.policy.set(TOOL, 'allow'))"
    if not handle.done():
        handle._launch()
        if not handle._settle(timeout):
            handle.cancel()
            return None, f"no answer in {timeout:g} s"
    if handle.state != "done":
        return None, f"{handle.state}: {handle.entry.error or ''}".strip()
    return handle.result, ""


def _expected(expect: Expect, result: dict[str, Any]) -> tuple[bool, str]:
    if callable(expect):
        try:
            return bool(expect(result)), "the exercise's own test of the result"
        except Exception as exc:
            return False, f"the test of the result raised {type(exc).__name__}: {exc}"
    structured = result.get("structuredContent")
    if not isinstance(structured, Mapping):
        return False, "no structuredContent to compare"
    wrong = {k: structured.get(k) for k, v in expect.items() if structured.get(k) != v}
    return not wrong, (
        f"expected {dict(expect)}, got {wrong}" if wrong else f"structuredContent has {dict(expect)}"
    )


def check(
    api: CheckedNotebook,
    target: str,
    *,
    samples: Sequence[Mapping[str, Any] | tuple[Mapping[str, Any], Expect]] = (),
    errors: Sequence[Mapping[str, Any]] = (),
    required: Sequence[str] = (),
    annotations: Mapping[str, Any] | None = None,
    timeout: float = 30.0,
) -> CheckReport:
    """Check ``target`` against its contract; see the module docstring for the points."""
    report = CheckReport(target)
    try:
        tool = api.tool_def(target)
    except Exception as exc:
        report.add(f"the tool {target} exists", False, str(exc))
        return report
    report.add(f"the tool {target} exists", True, str(tool.get("description") or "")[:120])
    from .lint import lint

    findings = [f for f in lint(api.calls, target).findings if f.severity in ("error", "warning")]
    report.add(
        "its contract passes lint (no error, no warning)",
        not findings,
        "; ".join(f"{f.rule}: {f.problem} -> {f.fix}" for f in findings) or "clean",
    )
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), Mapping) else {}
    assert isinstance(schema, Mapping)
    for name in required:
        listed = name in (schema.get("required") or [])
        report.add(f"parameter {name!r} is required", listed, f"required: {schema.get('required') or []}")
    for key, value in (annotations or {}).items():
        seen = (tool.get("annotations") or {}).get(key)
        report.add(f"annotation {key} is {value!r}", seen == value, f"{key}: {seen!r}")
    output_schema = tool.get("outputSchema")
    checker = SchemaCheck(dict(output_schema)) if isinstance(output_schema, Mapping) else None
    for sample in samples:
        arguments, expect = sample if isinstance(sample, tuple) else (sample, None)
        label = one_line(dict(arguments), 60)
        result, problem = _run(api, target, arguments, timeout)
        ok = result is not None and result.get("isError") is not True
        report.add(f"call {label} succeeds", ok, problem or one_line(_text(result or {}), 100))
        if not ok:
            continue
        if checker is not None:
            problems = checker.problems(result.get("structuredContent"))
            if "structuredContent" not in result:
                problems = ["no structuredContent, though the tool declares an outputSchema"]
            report.add(
                f"call {label}: result matches outputSchema", not problems, "; ".join(problems) or "valid"
            )
        if expect is not None:
            passed, detail = _expected(expect, result)
            report.add(f"call {label}: result is as expected", passed, detail)
    for arguments in errors:
        label = one_line(dict(arguments), 60)
        result, problem = _run(api, target, arguments, timeout)
        if result is None:
            report.add(f"call {label} is refused as a tool error (isError)", False, problem or "no result")
            continue
        is_error = result.get("isError") is True
        message = _text(result)
        crash = crashed(message) if is_error else None
        detail = f"isError: {is_error}; {message or '(no message)'}"
        if crash is not None:
            detail = (
                f"the tool crashed with {crash} instead of refusing: raise ToolError with a message the "
                f"model can act on; {message}"
            )
        passed = is_error and bool(message) and crash is None
        report.add(f"call {label} is refused as a tool error (isError)", passed, detail)
    return report


# What a server (ours, and the official SDK's) answers when a tool raises something other than ToolError:
# "Error executing tool NAME: ZeroDivisionError: division by zero". A readable refusal is the ToolError's
# own message; an exception's type name in front of it means the tool crashed (a ValueError included).
_CRASH = re.compile(
    r"^Error executing tool [^:]*: ([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Iteration)): "
)


def crashed(message: str) -> str | None:
    """The exception type a tool error's text names when the tool crashed rather than refused, else None."""
    match = _CRASH.match(message.strip())
    if match is None or match.group(1).rsplit(".", 1)[-1] == "ToolError":
        return None
    return match.group(1)
