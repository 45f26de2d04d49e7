"""The validation fast path may only ever say "valid" when jsonschema agrees (it never decides errors)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_notebook._jsonschema import Draft202012Validator
from mcp_notebook.tools.validation import SchemaCheck, _fast_check

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "s": {"type": "string", "description": "text"},
            "i": {"type": "integer"},
            "n": {"type": "number", "default": 1.5},
            "b": {"type": "boolean"},
        },
        "required": ["s", "i"],
        "additionalProperties": False,
    },
    {"type": "object", "additionalProperties": False},
    # open objects (an outputSchema of a structured result): other keys are allowed, with any value
    {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
    {"type": "object", "properties": {"n": {"type": ["number", "null"]}}, "additionalProperties": True},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("sinbx"), inner, max_size=5),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(instance=json_values)
def test_fast_path_never_accepts_what_jsonschema_rejects(instance: Any) -> None:
    for schema in SCHEMAS:
        surely_valid = _fast_check(schema)
        assert surely_valid is not None
        if surely_valid(instance):
            assert Draft202012Validator(schema).is_valid(instance), (schema, instance)


def test_fast_path_is_used_only_for_the_simple_shape() -> None:
    assert _fast_check({"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}}}) is None
    assert _fast_check({"type": "object", "additionalProperties": {"type": "string"}}) is None
    assert _fast_check({"type": "object", "properties": {"x": {"type": "string"}}}) is not None  # open
    assert _fast_check({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}}) is None


def test_an_open_objects_other_keys_pass_and_a_closed_ones_defer() -> None:
    open_check = _fast_check({"type": "object", "properties": {"result": {"type": "integer"}}})
    closed_check = _fast_check(SCHEMAS[0])
    assert open_check is not None and closed_check is not None
    assert open_check({"result": 3, "other": [1, {"x": None}]})
    assert not open_check({"result": "3"})  # a wrong type still goes to jsonschema
    assert not closed_check({"s": "a", "i": 1, "other": 1})


def test_errors_still_come_from_jsonschema() -> None:
    check = SchemaCheck(SCHEMAS[0])
    assert check.problems({"s": "a", "i": 1}) == []
    assert check.problems({"s": "a", "i": 1.0}) == []  # JSON Schema: 1.0 is an integer; the fast path defers
    assert any("'i' is a required property" in p for p in check.problems({"s": "a"}))
    assert any("True is not of type 'integer'" in p for p in check.problems({"s": "a", "i": True}))
