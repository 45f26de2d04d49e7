"""The exercise checker (``%mcp check`` / ``mcp.check``) on a correct solution and on incorrect ones: each
point passes or fails for the reason it names."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from mcp_notebook import Field, Server, ToolError


def _points(report: Any) -> dict[str, bool]:
    return {p.name: p.passed for p in report.points}


def test_a_correct_solution_passes_every_point(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]

    @mcp.tool(annotations={"readOnlyHint": True})
    def forecast(city: str, days: Annotated[int, Field(ge=1, le=14)] = 3) -> dict[str, list[float]]:
        """Forecast the weather.

        Args:
            city: City name.
            days: Days ahead.
        """
        if not city.strip():
            raise ToolError("city must not be empty")
        return {"temps": [12.0] * days}

    report = mcp.check(
        "forecast",
        samples=[{"city": "Paris", "days": 2}, ({"city": "Lyon"}, {"temps": [12.0, 12.0, 12.0]})],
        errors=[{"city": "Paris", "days": 99}, {"city": " "}],
        required=["city"],
        annotations={"readOnlyHint": True},
    )
    assert report.passed, report._repr_mimebundle_()["text/plain"]
    assert len(report.points) == 11
    text = report._repr_mimebundle_()["text/plain"]
    assert text.startswith("check of forecast: PASS (11/11 points)")
    assert "greater than the maximum of 14" in text  # the isError message the model would read


def test_an_incorrect_solution_fails_the_points_it_breaks(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]

    @mcp.tool
    def forecast(city, days: int = 3) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
        return {"temps": [12.0] * (days - 1)}  # one day short; an empty city accepted

    @mcp.tool(
        output_schema={"type": "object", "properties": {"temps": {"type": "array"}}, "required": ["temps"]}
    )
    def drifted(city: str) -> Any:
        """Promises temps, returns something else."""
        return {"temperature": 12.0}

    report = mcp.check(
        "forecast",
        samples=[({"city": "Paris"}, lambda r: len(r["structuredContent"]["temps"]) == 3)],
        errors=[{"city": ""}],
        required=["city"],
        annotations={"readOnlyHint": True},
    )
    points = _points(report)
    assert not report.passed
    assert points["its contract passes lint (no error, no warning)"] is False  # no description
    assert points["parameter 'city' is required"] is True
    assert points["annotation readOnlyHint is True"] is False
    assert points['call {"city":"Paris"} succeeds'] is True
    assert points['call {"city":"Paris"}: result is as expected'] is False
    assert points['call {"city":""} is refused as a tool error (isError)'] is False
    html = report._repr_mimebundle_()["text/html"]
    assert "✗ fail" in html and "FAIL" in html
    off_schema = {p.name: p for p in mcp.check("drifted", samples=[{"city": "x"}]).points}
    assert off_schema['call {"city":"x"} succeeds'].passed is False  # the server refuses its own bad result
    assert "outputSchema" in off_schema['call {"city":"x"} succeeds'].detail


def test_a_crash_is_not_a_refusal(shell: Any) -> None:
    """A tool that crashes (ZeroDivisionError) or raises ValueError where the exercise asks for a ToolError
    also gives the caller isError, but not a message the model can act on: the point fails, naming the
    exception; a ToolError passes. (Before: all three passed.)"""
    mcp = shell.user_ns["mcp"]

    @mcp.tool
    def ratio(a: float, b: float) -> float:
        """a / b.

        Args:
            a: Numerator.
            b: Denominator.
        """
        if a < 0:
            raise ValueError("a must not be negative")
        if a > 100:
            raise ToolError("a is at most 100: pass a smaller a")
        return a / b

    report = mcp.check("ratio", errors=[{"a": 1, "b": 0}, {"a": -1, "b": 1}, {"a": 101, "b": 1}])
    points = {p.name: p for p in report.points}
    crash = points['call {"a":1,"b":0} is refused as a tool error (isError)']
    assert not crash.passed and "crashed with ZeroDivisionError" in crash.detail
    value_error = points['call {"a":-1,"b":1} is refused as a tool error (isError)']
    assert not value_error.passed and "crashed with ValueError" in value_error.detail
    assert "raise ToolError" in value_error.detail
    assert points['call {"a":101,"b":1} is refused as a tool error (isError)'].passed


def test_a_result_off_its_schema_and_a_wrong_expectation_fail(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp = shell.user_ns["mcp"]
    remote = Server("shop")

    @remote.tool(
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    )
    def count(item: str) -> dict[str, Any]:
        """Count items."""
        return {"n": 3}

    mcp.connect("shop", remote)
    mcp.policy.set("shop.count", "allow")
    report = mcp.check("shop.count", samples=[({"item": "x"}, {"n": 4})], errors=[{"item": 5}])
    points = _points(report)
    assert points['call {"item":"x"} succeeds'] and points['call {"item":"x"}: result matches outputSchema']
    assert points['call {"item":"x"}: result is as expected'] is False  # 3, not 4
    assert points['call {"item":5} is refused as a tool error (isError)'] is True  # invalid input: isError
    # a call that needs approval is not made behind the person's back
    mcp.policy.set("shop.count", "ask")
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    asked = mcp.check("shop.count", samples=[{"item": "x"}])
    assert "needs approval" in {p.name: p.detail for p in asked.points}['call {"item":"x"} succeeds']


def test_magic(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: first
            b: second
        """
        return a + b

    report = shell.run_line_magic("mcp", "check add --sample 'a=1 b=2' --error a=x --required a")
    assert report.passed, report._repr_mimebundle_()["text/plain"]
    assert {p.name for p in report.points} >= {'call {"a":1,"b":2} succeeds', "parameter 'a' is required"}
    missing = shell.run_line_magic("mcp", "check nothing_here")
    assert not missing.passed and "has no tool 'nothing_here'" in missing.points[0].detail
