"""Issue 11, "the notebook as a person meets it": the form (items 6, 8, 14, 15, 16 and the build size).

Each test names the item it shows fixed; each failed before the fix.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import ipywidgets as widgets
from pydantic import BaseModel, Field

from mcp_notebook.notebook.forms.containers import LAZY_AFTER, LazyField, MapField
from mcp_notebook.notebook.forms.form import SchemaForm


def walk(widget: Any) -> Any:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def html_text(widget: Any) -> str:
    return "\n".join(w.value for w in walk(widget) if isinstance(w, widgets.HTML))


def control_after(form: SchemaForm, label: str) -> Any:
    """The widget laid out right after the head labelled ``label``."""
    for w in walk(form.widget):
        kids = list(getattr(w, "children", ()))
        for i, kid in enumerate(kids[:-1]):
            if isinstance(kid, widgets.HTML) and re.match(rf"<div[^>]*><b>{re.escape(label)}</b>", kid.value):
                return kids[i + 1]
    raise AssertionError(f"no field {label!r}")


def head_of(form: SchemaForm, label: str) -> str:
    for w in walk(form.widget):
        if isinstance(w, widgets.HTML) and re.match(rf"<div[^>]*><b>{re.escape(label)}</b>", w.value):
            return str(w.value)
    raise AssertionError(f"no field {label!r}")


ADD = {  # FastMCP's add(a: int, b: int)
    "type": "object",
    "properties": {"a": {"type": "integer", "title": "A"}, "b": {"type": "integer", "title": "B"}},
    "required": ["a", "b"],
}


def test_item15_a_required_integer_starts_empty_and_is_reported_missing() -> None:
    form = SchemaForm(ADD)
    assert form.value == {}  # was {"a": 0, "b": 0}
    assert [(e.path, e.message) for e in form.validate()] == [
        (("a",), "This field is required."),
        (("b",), "This field is required."),
    ]
    control_after(form, "A").value = "2"
    control_after(form, "B").value = "0"
    assert form.value == {"a": 2, "b": 0} and form.validate() == []


def test_item16_set_value_resets_what_it_does_not_mention_and_reports_bad_numbers() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "default": "Paris"},
            "days": {"type": "integer", "default": 3},
            "n": {"type": "number"},
        },
    }
    form = SchemaForm(schema)
    form.set_value({"city": "Lyon", "days": 5, "n": 1.5})
    assert form.value == {"city": "Lyon", "days": 5, "n": 1.5}
    form.set_value({"city": "Nice"})  # the others: back to their defaults, or empty
    assert form.value == {"city": "Nice", "days": 3}
    form.set_value({})
    assert form.value == {"city": "Paris", "days": 3}  # text defaults are kept too
    form.set_value({"n": "lots"})  # never ignored silently
    [error] = form.validate()
    assert error.path == ("n",) and "'lots' is not a number" in error.message
    assert "is not a number" in head_of(form, "n")


def test_item6_bounds_are_checked_while_typing_and_summarised_by_the_button() -> None:
    class Forecast(BaseModel):
        city: str
        days: Annotated[int, Field(ge=1, le=14)] = 3

    form = SchemaForm(Forecast.model_json_schema(), submit_label="Call")
    days = control_after(form, "Days")
    days.value = "20"  # typing: no Call pressed yet
    assert "20 is greater than the maximum of 14" in head_of(form, "Days")
    days.value = "14"
    assert "maximum" not in head_of(form, "Days")
    form.submit_button.click()
    summary = form._summary.value
    assert "1 problem: city" in summary  # next to the Call button, whatever is scrolled off
    buttons = form.widget.children[-2]
    assert form._summary in buttons.children and form.submit_button in buttons.children


def test_item14_a_typed_dict_is_key_value_rows_not_a_json_box() -> None:
    class Scores(BaseModel):
        scores: dict[str, int]

    form = SchemaForm(Scores.model_json_schema())
    rows = [w for w in walk(form.widget) if isinstance(w, widgets.Textarea)]
    assert rows == []  # no JSON editor
    field = form._root.fields["scores"]  # type: ignore[attr-defined]
    assert isinstance(field, MapField)
    value = field.append(7)
    field.keys[0].value = "ada"
    assert form.value == {"scores": {"ada": 7}} and form.validate() == []
    value.set("x")
    assert [e.path for e in form.validate()] == [("scores", "ada")]
    field.append(1)
    assert any("every row needs a key" in e.message for e in form.validate())


def test_item8_styling_uses_theme_variables_and_no_null_checkbox_for_optional_fields() -> None:
    class Trip(BaseModel):
        """Plan a trip."""

        note: str | None = Field(default=None, description="Anything else")
        stops: list[str] = []

    form = SchemaForm(Trip.model_json_schema(), title="trip")
    text = html_text(form.widget)
    assert "#666" not in text and "#c00" not in text
    assert "var(--jp-ui-font-color2" in text
    checkboxes = [w.description for w in walk(form.widget) if isinstance(w, widgets.Checkbox)]
    assert "null" not in checkboxes and checkboxes == []
    assert text.index(">trip</h4>") < text.index("Plan a trip.")  # the description under the title
    add = next(w for w in walk(form.widget) if isinstance(w, widgets.Button) and "Add" in w.description)
    add.click()
    remove = next(w for w in walk(form.widget) if isinstance(w, widgets.Button) and "Remove" in w.description)
    assert add.layout.align_self == "flex-start" and add.layout is remove.layout  # both their own size


def test_large_forms_build_optional_nested_sections_on_first_open() -> None:
    properties: dict[str, Any] = {f"f{i}": {"type": "string"} for i in range(LAZY_AFTER)}
    properties["point"] = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}
    properties["tags"] = {"type": "array", "items": {"type": "string"}, "default": ["a", "b"]}
    form = SchemaForm({"type": "object", "properties": properties})
    point, tags = form._root.fields["point"], form._root.fields["tags"]  # type: ignore[attr-defined]
    assert isinstance(point, LazyField) and isinstance(tags, LazyField)
    assert form.value["tags"] == ["a", "b"] and "point" not in form.value
    assert "(2 items)" in tags.open_button.description
    before = len([w for w in walk(form.widget)])
    point.open_button.click()
    assert len([w for w in walk(form.widget)]) > before
    control_after(form, "x").value = "1.5"
    assert form.value["point"] == {"x": 1.5}
    form.set_value({"tags": ["z"]})
    assert form.value == {"tags": ["z"]}
    tags.open_button.click()
    assert [w.value for w in walk(form.widget) if isinstance(w, widgets.Text) and w.value == "z"] == ["z"]


def test_the_bench_form_opens_about_half_the_comms_it_used_to() -> None:
    """Each widget is a comm (and messages) in a live kernel: the 100-property bench schema built 620
    widgets before issue 11, which is what took 142-164 ms there; now about half. A count, not a timing
    (timings live in bench/: bench/run.py --only notebook)."""
    import sys
    from pathlib import Path

    import ipywidgets.widgets.widget as widget_module

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        import bench_form
    finally:
        sys.path.pop(0)
    before = len(widget_module._instances)
    SchemaForm(bench_form.schema())
    assert len(widget_module._instances) - before <= 320


def test_the_bench_form_builds_with_fewer_comms_and_no_update_messages(monkeypatch: Any) -> None:
    """Issue 19 (a 100-property form took 155-240 ms in a live kernel): every widget is a comm_open and
    every trait set after it an update message. Defaults are now given to the widgets as they are made,
    a large form's closed section is its button alone, a nullable's inner field has no box of its own and
    the form's own widgets share the kit's layouts. Before: 311 widgets and 49 update messages. Counts,
    not timings (bench/bench_form.py --kernel times it)."""
    import sys
    from pathlib import Path

    import ipywidgets.widgets.widget as widget_module

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        import bench_form
    finally:
        sys.path.pop(0)
    SchemaForm(bench_form.schema())  # first build: the kit's shared styles of any earlier form aside
    updates: list[str] = []
    original = widget_module.Widget.send_state

    def counted(self: Any, key: Any = None) -> None:
        updates.append(f"{type(self).__name__}.{key}")
        original(self, key)

    monkeypatch.setattr(widget_module.Widget, "send_state", counted)
    before = len(widget_module._instances)
    SchemaForm(bench_form.schema())
    assert len(widget_module._instances) - before <= 280
    assert len(updates) <= 10, updates


def test_a_nullable_fields_messages_show_in_its_head() -> None:
    schema = {"type": "object", "properties": {"age": {"type": ["integer", "null"], "minimum": 0}}}
    form = SchemaForm(schema)
    age = form.field("age")
    assert age.errors_to is not None and len(age.parts) == 1  # no box of its own
    age.control.value = "-5"  # type: ignore[attr-defined]
    head = age.errors_to.head
    assert "-5 is less than the minimum of 0" in head.value
    assert [e.message for e in form.validate()] == ["-5 is less than the minimum of 0"]
    assert "-5 is less than the minimum of 0" in head.value
    age.control.value = "5"  # type: ignore[attr-defined]
    assert form.validate() == [] and "minimum" not in head.value
