"""Large forms in pages (issue 21 round 5): an object of more than ``PAGE`` properties in a large form
builds its first ``PAGE`` fields; the others wait behind one button per page, built when it is opened.

Each test compares with the same form built whole (``PAGE`` raised): an unopened page's fields give the
same value, validate the same, submit the same, and are reachable and editable once opened.
"""

from __future__ import annotations

import copy
from typing import Any

import ipywidgets as widgets
import pytest

from mcp_notebook.notebook.forms import containers
from mcp_notebook.notebook.forms.containers import PAGE, ObjectField
from mcp_notebook.notebook.forms.form import SchemaForm
from tests.notebook._form import _corpus, control, field_box, html_text, walk

POINT = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 2}}}
KINDS: list[dict[str, Any]] = [  # every field kind, with and without defaults (good and bad ones)
    {"type": "string"},
    {"type": "string", "default": "hi", "examples": ["e"]},
    {"type": "string", "default": 5},
    {"type": "string", "maxLength": 500, "default": "long"},
    {"type": "integer", "minimum": 0, "maximum": 100, "default": 5},
    {"type": "integer", "default": 1.0},
    {"type": "integer", "maximum": 3, "default": 9},
    {"type": "number", "default": 0.5},
    {"type": "boolean"},
    {"type": "boolean", "default": True},
    {"type": "string", "enum": ["a", "b", "c"]},
    {"type": "string", "enum": ["a", "b", "c"], "default": "b"},
    {"type": "string", "enum": ["a", "b"], "default": "zz"},
    {"oneOf": [{"const": 1, "title": "One"}, {"const": 2, "title": "Two"}], "default": 2},
    {"type": "array", "items": {"enum": ["p", "q"]}, "default": ["q"]},
    {"type": "string", "format": "date", "default": "2024-02-03"},
    {"type": "string", "format": "date", "default": "not a date"},
    {"const": "fixed"},
    {"type": "null"},
    {"type": ["string", "null"]},
    {"type": ["integer", "null"], "default": None},
    {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "x"},
    {"anyOf": [POINT, {"type": "null"}]},
    {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": ["string", "integer"], "default": 3},
    {"not": {"type": "string"}, "default": {"a": [1, 2]}},
    {"not": {"type": "string"}},
    POINT,
    {**POINT, "default": {"x": 1}},
    {"$ref": "#/$defs/point"},
    {"type": "array", "items": {"type": "string"}, "default": ["x", "y"]},
    {"type": "array", "items": {"type": "integer"}, "minItems": 2},
    {"type": "array", "items": POINT},
    {"type": "object", "additionalProperties": {"type": "integer"}, "default": {"k": 1}},
    {"anyOf": [{"type": "object", "properties": {"c": {"const": 1}}}, {"type": "null"}]},
    {"type": "array", "items": {"type": "integer"}, "default": [1, "x", None], "minItems": 4},
    {"type": "array", "items": {"enum": [1, 2]}, "default": [2]},
    {"type": "array", "items": {"type": "array", "items": {"type": "string"}, "minItems": 1}, "minItems": 2},
]


def long_schema(properties: dict[str, Any], required: list[str], defs: dict[str, Any] | None = None) -> Any:
    """``properties`` after ``PAGE`` plain text fields: all of them land in unopened pages."""
    pad = {f"pad_{i}": {"type": "string"} for i in range(PAGE)}
    return {
        "type": "object",
        "$defs": {"point": POINT, **(defs or {})},
        "properties": {**pad, **copy.deepcopy(properties)},
        "required": required,
    }


def zoo(copies: int = 1) -> Any:
    props = {f"k{c}_{i}_{req}": kind for c in range(copies) for i, kind in enumerate(KINDS) for req in "ro"}
    return long_schema(props, [name for name in props if name.endswith("_r")])


def corpus_long() -> list[Any]:
    out = []
    for case in _corpus():
        schema = case.values[0]
        if isinstance(schema.get("properties"), dict) and schema["properties"]:
            defs = {**schema.get("$defs", {}), **schema.get("definitions", {})}
            long = long_schema(schema["properties"], list(schema.get("required", [])), defs)
            long["definitions"] = schema.get("definitions", {})
            out.append(pytest.param(long, id=case.id))
    return out


def whole(schema: Any, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> SchemaForm:
    """The same form with every field built (no pages): the reference."""
    with monkeypatch.context() as m:
        m.setattr(containers, "PAGE", 10**9)
        form = SchemaForm(schema, **kw)
    assert not form._root.pages  # type: ignore[attr-defined]
    return form


def paged(schema: Any, **kw: Any) -> SchemaForm:
    form = SchemaForm(schema, **kw)
    assert isinstance(form._root, ObjectField) and form._root.pages
    return form


def page_buttons(form: SchemaForm) -> list[Any]:
    return [w for w in walk(form.widget) if isinstance(w, widgets.Button) and "Show fields" in w.description]


def messages(form: SchemaForm) -> set[tuple[Any, str]]:
    return {(e.path, e.message) for e in form.validate()}


@pytest.mark.parametrize("schema", [zoo(), *corpus_long()])
def test_unopened_pages_give_the_value_and_messages_of_the_built_form(
    schema: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    form, reference = paged(schema), whole(schema, monkeypatch)
    assert form.value == reference.value
    assert list(form.value) == list(reference.value)  # the same order of arguments
    assert messages(form) == messages(reference)
    assert form.value == reference.value and form.top_error_text == reference.top_error_text


def test_a_page_opens_in_place_and_what_is_typed_there_is_submitted(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = zoo(copies=6)  # 100 + 408 properties: pages 2 to 6
    form, reference = paged(schema), whole(schema, monkeypatch)
    buttons = page_buttons(form)
    total = len(schema["properties"])
    assert len(buttons) == 5 and buttons[0].description.startswith(f"▸ Show fields 101-200 of {total}")
    assert "k0_0_r … k1_11_o" in buttons[0].description and "50 required" in buttons[0].description
    assert "<b>k0_0_r</b>" not in html_text(form.widget)
    body = form._root.body  # type: ignore[attr-defined]
    at = list(body.children).index(buttons[0])
    buttons[0].click()
    assert page_buttons(form) == buttons[1:]
    assert "<b>k0_0_r</b>" in list(body.children)[at].value  # its first field where its button was
    for f in (form, reference):  # typed on the opened page, as a person types
        control(f, "k0_0_r", widgets.Text).value = "typed"
        control(f, "k0_8_o", widgets.Checkbox).value = True
        control(f, "k0_10_r", widgets.Dropdown).value = 2
        control(f, "k1_4_o", widgets.Text).value = "7"
    assert form.value == reference.value
    assert (form.value["k0_0_r"], form.value["k0_8_o"], form.value["k0_10_r"]) == ("typed", True, "c")
    assert messages(form) == messages(reference)
    assert page_buttons(form) == []  # each page with a message was opened to show it
    assert form.value == reference.value


def test_submit_sends_the_typed_fields_and_the_unopened_pages_defaults() -> None:
    properties: dict[str, Any] = {f"f{i}": {"type": "string"} for i in range(4 * PAGE)}
    properties["f150"] = {"type": "integer", "minimum": 1, "default": 4}
    properties["f250"] = {"type": "string", "enum": ["a", "b"], "default": "b"}
    properties["f350"] = {"type": "boolean", "default": True}
    form = paged({"type": "object", "properties": properties, "required": ["f120"]})
    sent: list[Any] = []
    form.on_submit = sent.append
    page_buttons(form)[0].click()
    control(form, "f120", widgets.Text).value = "typed"
    control(form, "f150", widgets.Text).value = "0"
    assert [e.message for e in form.validate()] == ["0 is less than the minimum of 1"]
    form.submit_button.click()
    assert sent == [] and "1 problem: f150" in form._summary.value
    control(form, "f150", widgets.Text).value = "9"
    form.submit_button.click()
    assert sent == [{"f120": "typed", "f150": 9, "f250": "b", "f350": True}]
    assert len(page_buttons(form)) == 2  # the pages of f250 and f350 were never opened


def test_a_required_field_in_an_unopened_page_is_reported_next_to_it() -> None:
    properties = {f"f{i}": {"type": "string"} for i in range(3 * PAGE)}
    form = paged({"type": "object", "properties": properties, "required": ["f5", "f250"]})
    first, second = page_buttons(form)
    assert "1 required" not in first.description and "f200 … f299, 1 required" in second.description
    assert [(e.path, e.message) for e in form.validate()] == [
        (("f5",), "This field is required."),
        (("f250",), "This field is required."),
    ]
    assert page_buttons(form) == [first]  # the page of f250 opened, the other still closed
    assert "This field is required." in field_box(form, "f250").children[0].value  # in its head
    control(form, "f5", widgets.Text).value = "a"
    control(form, "f250", widgets.Text).value = "b"
    sent: list[Any] = []
    form.on_submit = sent.append
    form.submit()
    assert sent == [{"f5": "a", "f250": "b"}]


def test_values_set_value_and_field_reach_unopened_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = zoo(copies=3)
    values = {"k0_0_o": "given", "k1_30_r": ["a"], "k2_27_o": {"x": 5}}
    form, reference = paged(schema, values=values), whole(schema, monkeypatch, values=values)
    assert form.value == reference.value and form.value["k0_0_o"] == "given"
    assert len(page_buttons(form)) == 3  # set, not shown: the pages stay closed
    built = set(form._root.fields)  # type: ignore[attr-defined]
    assert {"k0_0_o", "k1_30_r"} <= built and "k0_1_o" not in built
    form.set_value({"k0_1_o": "other"})
    reference.set_value({"k0_1_o": "other"})
    assert form.value == reference.value and "k0_0_o" not in form.value  # back to its default (none)
    form.value["k2_30_o"].append("changed by the caller")  # a value read is the caller's own
    assert form.value["k2_30_o"] == ["x", "y"]
    text = form.field("k2_0_o")  # opens its page, to be seen
    assert len(page_buttons(form)) == 2
    text.set("via field")
    assert form.value["k2_0_o"] == "via field"
    with pytest.raises(KeyError):
        form.field("nope")


def test_a_3000_property_form_creates_widgets_for_its_first_page_only() -> None:
    kinds = [{"type": "string"}, {"type": "integer", "default": 1}, {"type": "boolean"}, {"enum": ["a", "b"]}]
    properties = {f"p{i}": kinds[i % len(kinds)] for i in range(3000)}
    made: list[Any] = []
    original = widgets.Widget.open

    def counting(self: Any) -> None:
        made.append(self)
        original(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(widgets.Widget, "open", counting)
        form = SchemaForm({"type": "object", "properties": properties, "required": ["p2999"]})
    assert len(made) < 3 * PAGE + 60  # ~2 per field of the first page, a button per other page
    assert len(page_buttons(form)) == 29
    ones, offs = {f"p{i}": 1 for i in range(1, 3000, 4)}, {f"p{i}": False for i in range(2, 3000, 4)}
    assert form.value == {**ones, **offs}


def test_a_long_nested_object_under_a_small_form_is_paged_too(monkeypatch: pytest.MonkeyPatch) -> None:
    inner = zoo()
    schema = {
        "type": "object",
        "$defs": inner.pop("$defs"),
        "properties": {"config": inner, "n": {"type": "integer"}},
    }
    schema["required"] = ["config"]
    form, reference = SchemaForm(schema), whole(schema, monkeypatch)
    assert len(page_buttons(form)) == 1 and page_buttons(reference) == []
    assert form.value == reference.value and messages(form) == messages(reference)
    assert page_buttons(form) == []  # the messages about its fields opened the page
