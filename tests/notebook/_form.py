"""The JSON-Schema form tests' corpus (``corpus/`` and pydantic models) and the helpers that walk the widget
tree as a user would see it, fill a form and check a value (test_form.py, test_form_structure.py,
test_form_pages.py)."""

from __future__ import annotations

import datetime as dt
import enum
import html
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import ipywidgets as widgets
import jsonschema
import pytest
from pydantic import BaseModel, Field

from mcp_notebook.notebook.forms.form import SchemaForm

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
