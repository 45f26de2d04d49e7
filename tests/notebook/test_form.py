"""The JSON-Schema form (DESIGN decision 9): a corpus of real schemas, then one behaviour per test.

Corpus: server-everything's 19 tool inputSchemas, the conformance suite's ``json_schema_2020_12_tool``
and SEP-1034/SEP-1330 elicitation schemas (``corpus/``), and pydantic-generated schemas with ``$defs``.
Widgets are driven headless: set a widget's value or ``.click()`` a button, as a user would.
"""

from __future__ import annotations

import datetime as dt
import enum
import html
import json
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import ipywidgets as widgets
import jsonschema
import pytest
from pydantic import BaseModel, Field

from mcp_notebook.notebook.forms.form import FieldError, FormInvalid, SchemaForm

CORPUS = Path(__file__).parent / "corpus"


# -- pydantic models: nested models, enums, Optional, lists of models, Literal, datetime ----------


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str = Field(description="Street and number", examples=["1 Main St"])
    city: str
    zip_code: str | None = Field(default=None, pattern=r"^\d{5}$")


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = Field(default=9, ge=1, le=9)


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


class Person(BaseModel):
    """A person, with most kinds of field pydantic emits."""

    name: str = Field(min_length=1, max_length=50)
    email: str = Field(json_schema_extra={"format": "email"})
    born: dt.date
    last_seen: dt.datetime | None = None
    favourite: Color = Color.RED
    mood: Literal["happy", "sad"] = "happy"
    home: Address
    previous: list[Address] = []
    tags: list[str] = Field(default_factory=list, max_length=5)
    pet: Cat | Dog = Field(discriminator="kind")
    scores: dict[str, int] = {}
    point: tuple[int, int] = (0, 0)
    age: int | None = Field(default=None, ge=0)
    height: float = 1.75
    bio: str = Field(default="", max_length=1000)


class Node(BaseModel):
    """A recursive model: the form must not loop."""

    name: str
    parent: Node | None = None
    children: list[Node] = []


def _load(name: str) -> Any:
    return json.loads((CORPUS / name).read_text(encoding="utf-8"))


def _corpus() -> list[Any]:
    tools = _load("everything-tools.json")["result"]["tools"]
    cases = [pytest.param(t["inputSchema"], id=f"everything-{t['name']}") for t in tools]
    for name in ("json_schema_2020_12_tool", "elicitation_sep1034_defaults", "elicitation_sep1330_enums"):
        cases.append(pytest.param(_load(f"{name}.json"), id=name))
    for model in (Person, Address, Node):
        cases.append(pytest.param(model.model_json_schema(), id=f"pydantic-{model.__name__}"))
    return cases


# -- helpers: walk the widget tree as a user would see it -------------------------------------------


def walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def html_text(widget: Any) -> str:
    return "\n".join(w.value for w in walk(widget) if isinstance(w, widgets.HTML))


@dataclass
class FieldView:
    """A labelled field as laid out: its head (label, help, errors) and the body after it."""

    children: tuple[Any, ...]


def field_box(form: SchemaForm, label: str) -> Any:
    """The last field labelled ``label``: its head HTML and the widget after it in the same box."""
    needle = f"<b>{html.escape(label)}</b>"
    found = [
        FieldView((kid, kids[i + 1]))
        for w in walk(form.widget)
        for kids in [list(getattr(w, "children", ()))]
        for i, kid in enumerate(kids[:-1])
        if isinstance(kid, widgets.HTML) and re.match(r"<div[^>]*>" + re.escape(needle), kid.value)
    ]
    assert found, f"no field labelled {label!r}"
    return found[-1]


def control(form: SchemaForm, label: str, kind: type) -> Any:
    return next(w for w in walk(field_box(form, label)) if isinstance(w, kind))


def resolve(root: Mapping[str, Any], schema: Any) -> Any:
    while isinstance(schema, Mapping) and "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part] if part else target
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def expected_labels(root: Mapping[str, Any], schema: Any, depth: int = 0) -> Iterator[str]:
    """Every property's label, descending into nested objects (not array items or union branches)."""
    schema = resolve(root, schema)
    if depth > 2 or not isinstance(schema, Mapping):
        return
    for name, sub in schema.get("properties", {}).items():
        yield str(sub.get("title") or name)
        yield from expected_labels(root, sub, depth + 1)


FILL = {
    r"^\d{5}$": "12345",
    "name@example.org": "user@example.org",
    "https://…": "https://example.org/x",
    "YYYY-MM-DDTHH:MM:SS+00:00": "2024-01-02T03:04:05+00:00",
}


def fill(form: SchemaForm) -> None:
    """Put a plausible value in every empty input, by setting widget values."""
    for w in list(walk(form.widget)):
        if isinstance(w, widgets.Text) and not w.value and "number" in w.placeholder:
            bounds = re.findall(r"-?\d+(?:\.\d+)?", w.placeholder)  # "whole number, 1 to 14"
            w.value = bounds[0] if bounds and "at most" not in w.placeholder else "1"
        elif isinstance(w, widgets.Text) and not w.value:
            w.value = FILL.get(w.placeholder, w.placeholder or "text")
        elif isinstance(w, widgets.Textarea) and not w.value and w.placeholder != "JSON":
            w.value = "some longer text"
        elif isinstance(w, widgets.Dropdown) and w.value == -1:
            w.value = w.options[1][1]
        elif isinstance(w, widgets.DatePicker) and w.value is None:
            w.value = dt.date(2024, 1, 2)
        elif isinstance(w, widgets.SelectMultiple) and not w.value:
            w.value = (w.options[0][1],)


def check(schema: Mapping[str, Any], value: Any) -> None:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls(schema, format_checker=cls.FORMAT_CHECKER).validate(value)


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
