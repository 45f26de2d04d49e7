"""The JSON-Schema form (DESIGN decision 9), one behaviour per test: structure (unions, arrays, nullables,
recursion, the JSON editor), submit and callbacks (the corpus and validation messages: test_form.py).

Widgets are driven headless: set a widget's value or ``.click()`` a button, as a user would.
"""

from __future__ import annotations

import html
import logging
from typing import Any

import ipywidgets as widgets
import pytest

from mcp_notebook.notebook.forms.form import FieldError, FormInvalid, SchemaForm
from tests.notebook._form import _load, control, field_box, html_text, walk

# -- structure: unions, arrays, nullables, recursion, the JSON editor --------------------------------


PETS = {
    "type": "object",
    "properties": {
        "pet": {
            "title": "Pet",
            "oneOf": [
                {
                    "title": "Cat",
                    "type": "object",
                    "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer", "default": 9}},
                    "required": ["kind"],
                },
                {
                    "title": "Dog",
                    "type": "object",
                    "properties": {"kind": {"const": "dog"}, "bark": {"type": "string"}},
                    "required": ["kind", "bark"],
                },
            ],
        }
    },
    "required": ["pet"],
}


def test_one_of_branch_switching_rebuilds_the_branch_field() -> None:
    form = SchemaForm(PETS)
    chooser = control(form, "Pet", widgets.Dropdown)
    assert [label for label, _ in chooser.options] == ["Cat", "Dog"]
    assert form.value == {"pet": {"kind": "cat", "lives": 9}}
    chooser.value = 1
    assert "<b>bark</b>" in html_text(form.widget) and "<b>lives</b>" not in html_text(form.widget)
    assert form.validate() == [FieldError(("pet", "bark"), "This field is required.")]
    assert "This field is required." in html_text(field_box(form, "bark"))
    form.set_value({"pet": {"kind": "cat", "lives": 3}})
    assert chooser.value == 0 and form.value == {"pet": {"kind": "cat", "lives": 3}}


def test_array_of_objects_add_and_remove_respect_min_and_max_items() -> None:
    # rows with a nested value (a list): not a table, so one fieldset per item (flat rows: test_form_table)
    person = {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {
            "people": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {"type": "object", "properties": person},
            }
        },
    }
    form = SchemaForm(schema)
    box = field_box(form, "people")
    add = [w for w in walk(box) if isinstance(w, widgets.Button) and "Add" in w.description][-1]  # not tags'

    def removers() -> list[Any]:
        return [w for w in walk(box) if isinstance(w, widgets.Button) and "Remove" in w.description]

    assert len(removers()) == 1 and removers()[0].disabled  # minItems 1
    add.click()
    assert add.disabled and not any(r.disabled for r in removers())  # maxItems 2
    texts = [w for w in walk(box) if isinstance(w, widgets.Text)]
    texts[0].value, texts[1].value = "Ann", "Bob"
    assert form.value == {"people": [{"name": "Ann"}, {"name": "Bob"}]}
    removers()[0].click()
    assert form.value == {"people": [{"name": "Bob"}]} and not add.disabled


def test_array_of_primitives_and_item_errors() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    form = SchemaForm(schema, values={"tags": ["a", "b"]})
    assert form.value == {"tags": ["a", "b"]}
    add = next(w for w in walk(form.widget) if isinstance(w, widgets.Button) and "Add" in w.description)
    add.click()
    assert form.validate() == [FieldError(("tags", 2), "This field is required.")]


@pytest.mark.parametrize(
    "prop",
    [
        {"type": ["string", "null"]},
        {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
    ],
    ids=["type-list", "anyOf"],
)
def test_nullable_toggle(prop: dict[str, Any]) -> None:
    form = SchemaForm({"type": "object", "properties": {"x": prop}, "required": ["x"]})
    null = control(form, "x", widgets.Checkbox)
    assert null.description == "send null (no value)" and not null.value
    control(form, "x", widgets.Text).value = "hello"
    assert form.value == {"x": "hello"}
    null.value = True
    assert form.value == {"x": None} and form.validate() == []
    null.value = False
    form.set_value({"x": None})
    assert null.value


def test_nullable_branch_errors_are_the_chosen_branch() -> None:
    form = SchemaForm(
        {
            "type": "object",
            "properties": {"x": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]}},
        }
    )
    form.set_value({"x": "a"})
    [error] = form.validate()
    assert error.path == ("x",) and "too short" in error.message


def test_recursive_refs_stop_and_fall_back_to_the_json_editor() -> None:
    schema = {
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
        "$ref": "#/$defs/node",
    }
    form = SchemaForm(schema)
    assert "recursive $ref" in html_text(form.widget)
    editor = next(w for w in walk(form.widget) if isinstance(w, widgets.Textarea))
    editor.value = '{"next": {}}'
    assert form.value == {"next": {"next": {"next": {"next": {}}}}}
    assert form.validate() == []


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
        {"not": {"type": "string"}},
        {"if": {"type": "string"}, "then": {"minLength": 2}},
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
    ],
    ids=["patternProperties", "additionalProperties", "not", "if-then", "prefixItems"],
)
def test_unsupported_keywords_get_a_json_editor_with_parse_errors(prop: dict[str, Any]) -> None:
    form = SchemaForm({"type": "object", "properties": {"cfg": prop}})
    editor = control(form, "cfg", widgets.Textarea)
    editor.value = "{not json"
    assert "Invalid JSON" in html_text(field_box(form, "cfg"))
    [error] = form.validate()
    assert error.path == ("cfg",) and error.message.startswith("Invalid JSON")
    assert "cfg" not in form.value
    editor.value = "7"
    assert form.value == {"cfg": 7} and "Invalid JSON" not in html_text(field_box(form, "cfg"))


def test_json_editor_schema_errors_point_inside_the_value() -> None:
    schema = {
        "type": "object",
        "properties": {"m": {"type": "object", "patternProperties": {"": {"type": "integer"}}}},
    }
    form = SchemaForm(schema)
    control(form, "m", widgets.Textarea).value = '{"a": "x"}'
    [error] = form.validate()
    assert error.path == ("m", "a")
    assert html.escape("a: 'x' is not of type 'integer'") in html_text(field_box(form, "m"))


def test_all_of_parts_are_merged_and_labels_marked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "who": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string", "title": "Alpha"}}},
                    {"properties": {"b": {"type": "integer"}}, "required": ["a"]},
                ],
                "description": "Two parts",
            }
        },
    }
    form = SchemaForm(schema)
    assert "Two parts" in html_text(form.widget)
    assert 'Alpha</b> <span style="color:var(--jp-error-color1' in html_text(form.widget)  # the required star


def test_secret_looking_fields_stay_plain_text() -> None:
    schema = {"type": "object", "properties": {"password": {"type": "string", "writeOnly": True}}}
    form = SchemaForm(schema)
    assert not any(isinstance(w, widgets.Password) for w in walk(form.widget))
    assert isinstance(control(form, "password", widgets.Text), widgets.Text)


def test_long_strings_and_examples() -> None:
    schema = {
        "type": "object",
        "properties": {
            "essay": {"type": "string", "maxLength": 5000},
            "city": {"type": "string", "examples": ["Paris"]},
            "when": {"type": "string", "format": "date-time"},
        },
    }
    form = SchemaForm(schema)
    assert isinstance(control(form, "essay", widgets.Textarea), widgets.Textarea)
    assert control(form, "city", widgets.Text).placeholder == "Paris"
    assert control(form, "when", widgets.Text).placeholder.startswith("YYYY-MM-DD")


# -- submit and callbacks ----------------------------------------------------------------------------


def test_submit_calls_on_submit_with_the_value_only_when_valid() -> None:
    seen: list[dict[str, Any]] = []
    schema = _load("everything-tools.json")["result"]["tools"][0]["inputSchema"]
    form = SchemaForm(schema, on_submit=seen.append, title="echo")
    with pytest.raises(FormInvalid, match="message: This field is required"):  # from code: an error
        form.submit()
    form.submit_button.click()  # a click has no caller: the message shows next to the field
    assert seen == []
    control(form, "message", widgets.Text).value = "hi"
    form.submit_button.click()
    assert seen == [{"message": "hi"}]
    assert ">echo</h4>" in html_text(form.widget)


def test_raising_on_submit_shows_traceback_logs_and_reraises(caplog: pytest.LogCaptureFixture) -> None:
    def boom(value: dict[str, Any]) -> None:
        raise RuntimeError("server said no")

    form = SchemaForm({"type": "object", "properties": {}}, on_submit=boom)
    with caplog.at_level(logging.ERROR), pytest.raises(RuntimeError, match="server said no"):
        form.submit()
    [shown] = form.output.outputs
    assert shown["name"] == "stderr" and "Traceback" in shown["text"] and "server said no" in shown["text"]
    assert any("server said no" in (r.exc_text or "") for r in caplog.records)
    form.submit_button.click()  # a click has no caller to raise to: shown, not raised
    assert "server said no" in form.output.outputs[0]["text"]


def test_extra_buttons_get_the_value_without_validation() -> None:
    seen: list[dict[str, Any]] = []
    form = SchemaForm(
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        extra_buttons=[("Decline", seen.append)],
    )
    decline = next(
        w for w in walk(form.widget) if isinstance(w, widgets.Button) and w.description == "Decline"
    )
    decline.click()
    assert seen == [{}]


def test_values_overlay_defaults_and_display_delegates_to_the_widget() -> None:
    form = SchemaForm(_load("elicitation_sep1034_defaults.json"), values={"age": 41})
    assert form.value["age"] == 41 and form.value["name"] == "John Doe"
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_optional_unions_send_nothing_until_filled() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["integer", "string"]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        },
    }
    form = SchemaForm(schema)
    assert form.value == {}
    control(form, "a", widgets.Text).value = "4"
    assert form.value == {"a": 4}


def test_remote_refs_are_never_fetched() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.org/s.json"}}}
    form = SchemaForm(schema)
    assert "never fetched" in html_text(field_box(form, "a"))
    form.set_value({"a": 5})
    [error] = form.validate()
    assert error.path == () and "cannot be resolved locally" in error.message
    assert "example.org" in form.top_error_text


def test_a_schema_invalid_for_its_meta_schema_is_named_not_fatal() -> None:
    form = SchemaForm({"type": "object", "properties": {"a": {"type": "strng"}}})
    assert form.validate() == []
    assert "not valid JSON Schema" in form.top_error_text
    form.set_value({"a": 1})
    assert "Unknown type" in form.validate()[0].message
