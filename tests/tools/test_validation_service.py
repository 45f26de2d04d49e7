"""The one schema-validation service (tools/validation.py): shared compiled checks, the meta-schema verdict
cached per skeleton, and one rule for an unsupported ``$schema`` whoever asks (tools, forms, renderers)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Server
from mcp_notebook._jsonschema import Draft202012Validator
from mcp_notebook.notebook.forms.form import SchemaForm
from mcp_notebook.notebook.rendering.results import result_bundle
from mcp_notebook.tools.tool import make_tool
from mcp_notebook.tools.validation import SchemaCheck, SchemaProblem, schema_check


@pytest.fixture
def meta_checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every schema jsonschema is asked to check against the 2020-12 meta-schema."""
    seen: list[Any] = []
    original = Draft202012Validator.check_schema.__func__  # type: ignore[attr-defined]

    def counting(cls: Any, schema: Any, **kwargs: Any) -> None:
        seen.append(schema)
        original(cls, schema, **kwargs)

    monkeypatch.setattr(Draft202012Validator, "check_schema", classmethod(counting))
    return seen


def _unique(tag: str) -> dict[str, Any]:
    # a property name nobody else uses, so the module-level caches cannot answer from an earlier test
    return {"type": "object", "properties": {f"p_{tag}": {"type": "integer"}}, "required": [f"p_{tag}"]}


def test_identical_schemas_share_one_compiled_check(meta_checks: list[Any]) -> None:
    first = schema_check(_unique("share"))
    second = schema_check(_unique("share"))
    assert first is second
    assert len(meta_checks) == 1


def test_schemas_differing_only_in_annotations_pay_one_meta_check(meta_checks: list[Any]) -> None:
    for i in range(50):
        schema = _unique("annot")
        schema["description"] = f"tool number {i}"
        schema["properties"]["p_annot"]["description"] = f"the {i}th number"
        schema["properties"]["p_annot"]["default"] = i
        schema_check(schema)
    assert len(meta_checks) == 1


def test_registering_many_tools_checks_each_parameter_shape_once(meta_checks: list[Any]) -> None:
    server = Server("many")

    def make(i: int) -> Any:
        def fn(rows_xyz: int, label_xyz: str = "x") -> str:
            """Do a thing.

            Args:
                rows_xyz: How many rows.
                label_xyz: A label.
            """
            return label_xyz * rows_xyz

        fn.__name__ = f"tool_{i}"
        fn.__doc__ = f"Tool number {i}.\n\nArgs:\n    rows_xyz: Rows for tool {i}.\n"
        return fn

    for i in range(300):
        server.tool(make(i))
    # one input shape and one output shape ({"result": string}, maybe checked earlier) among 300 tools;
    # before the cache this was 600 meta-schema checks
    assert 1 <= len(meta_checks) <= 2


def test_ill_typed_annotations_are_still_caught() -> None:
    schema = _unique("illtyped")
    schema["properties"]["p_illtyped"]["description"] = 5
    with pytest.raises(SchemaProblem, match="Invalid JSON Schema"):
        SchemaCheck(schema)


def test_a_property_named_like_an_annotation_is_checked_as_a_schema() -> None:
    # "description" and "title" under "properties" are property names, not keywords: never blanked
    schema = {"type": "object", "properties": {"description": {"type": "strng"}, "title": {"type": "string"}}}
    with pytest.raises(SchemaProblem, match="Invalid JSON Schema"):
        SchemaCheck(schema)
    assert SchemaCheck(schema, strict=False).problem is not None


def test_one_rule_for_an_unsupported_dialect() -> None:
    schema = {
        "$schema": "https://example.org/dialect",
        "type": "object",
        "properties": {"a": {"type": "integer"}},
    }

    def tool(a: int) -> int:
        return a

    with pytest.raises(ValueError, match="Unsupported JSON Schema dialect"):
        make_tool(tool, output_schema=schema)  # we never publish a schema we cannot check
    bundle = result_bundle({"content": [], "structuredContent": {"a": "x"}}, output_schema=schema)
    assert "could not be applied: Unsupported JSON Schema dialect" in bundle["text/plain"]
    assert "is not of type" not in bundle["text/plain"]  # not validated as 2020-12 behind the user's back
    form = SchemaForm(schema)
    form.set_value({"a": 3})
    assert form.validate() == []
    check = schema_check(schema, strict=False)
    assert check.validator_class is None and "Unsupported" in (check.problem or "")
    assert check.problems({"a": "x"}) == [check.problem]


def test_draft_07_is_honoured() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "items": [{"type": "string"}],
    }
    assert schema_check(schema).problems({}) == []


def test_optional_format_packages_are_imported_only_when_their_format_is_checked() -> None:
    # jsonschema imports isoduration (and arrow) and rfc3987_syntax's grammar at import time; we defer both
    # until a "duration" or "iri" value is checked, with the same verdicts (run in a fresh interpreter).
    code = """
import sys
from mcp_notebook.tools.validation import schema_check
lazy = ("isoduration", "arrow", "rfc3987_syntax", "rfc3986_validator", "rfc3339_validator", "uri_template")
heavy = [m for m in lazy if m in sys.modules]
duration = schema_check({"type": "string", "format": "duration"})
iri = schema_check({"type": "string", "format": "iri"})
print(heavy, duration.problems("P1DT2H"), bool(duration.problems("two days")), "arrow" in sys.modules)
print(iri.problems("https://example.org/é"), bool(iri.problems("no iri")))
cases = [("uri", "https://a.example/x", "not a uri"), ("date-time", "2026-12-01T10:00:00Z", "noon"),
         ("uri-template", "https://a/{x}", "https://a/{x"), ("color", "red", "no-colour")]
for fmt, good, bad in cases:
    draft3 = {"$schema": "http://json-schema.org/draft-03/schema#", "format": fmt}
    check = schema_check(draft3 if fmt == "color" else {"type": "string", "format": fmt})
    assert check.problems(good) == [] and check.problems(bad), (fmt, check.problems(bad))
"""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "[] [] True True"
    assert second == "[] True"


def test_time_format_takes_python_isoformat_times() -> None:
    check = schema_check({"type": "string", "format": "time"})
    assert check.problems("03:04:05") == [] and check.problems("03:04:05.25+02:00") == []
    assert check.problems("03:04:05Z") == []
    assert check.problems("3 o'clock") and check.problems("03:04")
