"""The JSON-Schema form (DESIGN decision 9): a corpus of real schemas, then one behaviour per test; the
corpus and the validation messages here, structure, submit and callbacks in test_form_structure.py.

Corpus: server-everything's 19 tool inputSchemas, the conformance suite's ``json_schema_2020_12_tool``
and SEP-1034/SEP-1330 elicitation schemas (``corpus/``), and pydantic-generated schemas with ``$defs``.
Widgets are driven headless: set a widget's value or ``.click()`` a button, as a user would.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import pytest

from mcp_notebook.notebook.forms.form import FieldError, SchemaForm
from tests.notebook._form import (
    Person,
    _corpus,
    _load,
    check,
    control,
    expected_labels,
    field_box,
    fill,
    html_text,
    resolve,
)

# -- the corpus --------------------------------------------------------------------------------------


@pytest.mark.parametrize("schema", _corpus())
def test_corpus_builds_with_every_property_labelled(schema: dict[str, Any]) -> None:
    form = SchemaForm(schema)
    text = html_text(form.widget)
    for label in expected_labels(schema, schema):
        assert f"<b>{html.escape(label)}</b>" in text, f"property {label!r} has no field"


@pytest.mark.parametrize("schema", _corpus())
def test_corpus_defaults_are_prefilled(schema: dict[str, Any]) -> None:
    form = SchemaForm(schema)
    for name, sub in resolve(schema, schema).get("properties", {}).items():
        if "default" in sub:
            if sub["default"] in ("", [], {}, None) and name not in form.value:
                continue  # an empty default left as it is is omitted: the same value for the server
            assert form.value[name] == sub["default"], name


@pytest.mark.parametrize("schema", _corpus())
def test_corpus_filled_form_validates(schema: dict[str, Any]) -> None:
    form = SchemaForm(schema)
    fill(form)
    assert form.validate() == []
    check(schema, form.value)


def test_everything_corpus_has_all_19_tools() -> None:
    assert len(_load("everything-tools.json")["result"]["tools"]) == 19


def test_sep1034_defaults_for_every_primitive_type() -> None:
    form = SchemaForm(_load("elicitation_sep1034_defaults.json"))
    assert form.value == {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
    assert isinstance(form.value["age"], int) and isinstance(form.value["score"], float)


def test_sep1330_enums_show_titles_and_return_values() -> None:
    form = SchemaForm(_load("elicitation_sep1330_enums.json"))
    titled = control(form, "titledSingle", widgets.Dropdown)
    assert [label for label, _ in titled.options][1:] == ["First Option", "Second Option", "Third Option"]
    legacy = control(form, "legacyEnum", widgets.Dropdown)
    assert "Option Two" in [label for label, _ in legacy.options]
    multi = control(form, "titledMulti", widgets.SelectMultiple)
    assert [label for label, _ in multi.options] == ["First Choice", "Second Choice", "Third Choice"]
    titled.value, legacy.value = 1, 2
    multi.value = (0, 2)
    control(form, "untitledMulti", widgets.SelectMultiple).value = (1,)
    assert form.value == {
        "titledSingle": "value2",
        "legacyEnum": "opt3",
        "untitledMulti": ["option2"],
        "titledMulti": ["value1", "value3"],
    }
    assert form.validate() == []


def test_pydantic_values_convert_to_schema_types() -> None:
    form = SchemaForm(Person.model_json_schema())
    fill(form)
    value = form.value
    assert value["born"] == "2024-01-02"
    assert value["pet"] == {"kind": "cat", "lives": 9}
    assert isinstance(value["height"], float) and value["point"] == [0, 0]
    assert Person.model_validate(value).home.city == "text"


# -- validation messages next to their field --------------------------------------------------------


def test_required_field_error_shows_next_to_the_field() -> None:
    form = SchemaForm(_load("everything-tools.json")["result"]["tools"][0]["inputSchema"])  # echo
    errors = form.validate()
    assert errors == [FieldError(("message",), "This field is required.")]
    assert "This field is required." in html_text(field_box(form, "message"))
    control(form, "message", widgets.Text).value = "hi"
    assert form.validate() == []
    assert "This field is required." not in html_text(field_box(form, "message"))


CHECKED = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "mail": {"type": "string", "format": "email"},
        "when": {"type": "string", "format": "date-time"},
        "site": {"type": "string", "format": "uri"},
        "nick": {"type": "string", "minLength": 2, "maxLength": 4},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2},
    },
}


def test_pattern_format_and_bound_errors_show_next_to_fields() -> None:
    form = SchemaForm(CHECKED)
    bad = {"code": "abc", "mail": "nope", "when": "yesterday", "site": "not a uri", "nick": "x"}
    form.set_value({**bad, "ratio": 0.0, "count": 3})
    errors = {e.path[0]: e.message for e in form.validate()}
    assert set(errors) == {"code", "mail", "when", "site", "nick", "ratio", "count"}
    assert "does not match" in errors["code"] and "email" in errors["mail"]
    assert "date-time" in errors["when"] and "uri" in errors["site"]
    assert "too short" in errors["nick"] and "less than or equal to the minimum" in errors["ratio"]
    for label, message in errors.items():
        assert html.escape(message) in html_text(field_box(form, str(label)))
    form.set_value({"code": "ABC", "when": "2024-01-02T03:04:05Z", "nick": "abcde", "count": 4})
    assert [e.path for e in form.validate()] == [("nick",)]


def test_bounded_numbers_keep_what_was_typed_and_report_the_bound() -> None:
    number = {"type": "integer", "exclusiveMinimum": 0, "maximum": 14}
    schema = {"type": "object", "properties": {"n": number}}
    form = SchemaForm(schema)
    box = control(form, "n", widgets.Text)
    assert box.value == "" and form.value == {}  # optional and empty: not sent
    assert box.placeholder == "whole number, 1 to 14"
    box.value = "30"  # kept as typed, and reported at once (issue 11 item 6)
    assert form.value == {"n": 30}
    assert "greater than the maximum of 14" in html_text(field_box(form, "n"))
    errors = form.validate()
    assert [e.path for e in errors] == [("n",)] and "maximum of 14" in errors[0].message
    box.value = "5"
    assert "maximum" not in html_text(field_box(form, "n"))
    assert form.value == {"n": 5} and form.validate() == []


def test_unplaced_errors_show_at_the_top() -> None:
    form = SchemaForm({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["ghost"]})
    assert [e.path for e in form.validate()] == [("ghost",)]
    assert "ghost" in form.top_error_text


def test_unsupported_dialect_is_named_and_never_validated_as_another() -> None:
    # One rule for an unknown $schema across tools, forms and renderers (MCP-NOTES §3.9): it is named as
    # unsupported and never silently validated as 2020-12 (the server checks the values).
    schema = {
        "$schema": "https://example.org/my-dialect",
        "type": "object",
        "properties": {"s": {"type": "string", "minLength": 5}},
    }
    form = SchemaForm(schema)
    assert "Unsupported JSON Schema dialect" in html_text(form.widget)
    form.set_value({"s": "ab"})
    assert form.validate() == []
