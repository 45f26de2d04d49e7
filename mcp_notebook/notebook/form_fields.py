"""Form fields: one small builder per schema kind, chosen through the ``BUILDERS`` dispatch table.

DESIGN decision 9 / STYLE rule 9. Every field answers ``get()`` (a JSON value, or ``EMPTY`` when the user
left it empty), ``set(value)``, ``children()`` (for error placement) and ``show_errors(messages)``.
"""

from __future__ import annotations

import abc
import datetime as dt
import enum
import html
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_bool import CheckboxStyle
from ipywidgets.widgets.widget_description import DescriptionStyle
from ipywidgets.widgets.widget_string import HTMLStyle, TextStyle

from .form_schema import (
    Prepared,
    Schema,
    branch_label,
    is_const_choice,
    number_bounds,
    prepare,
    split_nullable,
    union_branches,
)

Key = str | int


class _Empty(enum.Enum):
    EMPTY = "EMPTY"


#: What ``Field.get`` returns for a field the user left empty; omitted from the form's value.
EMPTY = _Empty.EMPTY
_SAFE_INT = 2**53 - 1  # the other side of a one-sided bound (BoundedIntText needs both)
_PLACEHOLDERS = {
    "date-time": "YYYY-MM-DDTHH:MM:SS+00:00",
    "email": "name@example.org",
    "uri": "https://…",
    "time": "HH:MM:SS",
}


class Kit:
    """Per-form shared state: the root schema (for ``$ref``) and shared layouts (building speed)."""

    def __init__(self, root: Schema, matches: Callable[[Schema, Any], bool]) -> None:
        self.root = root
        self.matches = matches  # does a JSON value fit a branch schema? (jsonschema, from the form)
        # Layouts and styles are widgets too: sharing them halves the widgets a form creates.
        self.plain = widgets.Layout()
        self.auto = widgets.Layout(width="auto")
        self.wide = widgets.Layout(width="95%")
        self.boxed = widgets.Layout(border="1px solid #ccc", padding="4px 8px", margin="4px 0")
        self.html_style = HTMLStyle()
        self.text_style = TextStyle()
        self.desc_style = DescriptionStyle()
        self.check_style = CheckboxStyle()
        self.button_style = widgets.ButtonStyle()

    def html(self, value: str = "") -> Any:
        return widgets.HTML(value, layout=self.plain, style=self.html_style)

    def button(self, label: str) -> Any:
        return widgets.Button(description=label, layout=self.auto, style=self.button_style)

    def checkbox(self, label: str, value: bool = False) -> Any:
        return widgets.Checkbox(
            value=value, description=label, indent=False, layout=self.auto, style=self.check_style
        )


@dataclass(frozen=True)
class Spec:
    """Where a field sits: its prepared schema, label, and whether its parent requires it."""

    prepared: Prepared
    label: str
    required: bool
    bare: bool = False  # no label/help: an array item, a union branch, a nullable's inner field

    @property
    def schema(self) -> Schema:
        return self.prepared.schema


class Field(abc.ABC):
    """A labelled input. Subclasses implement ``get``/``set`` and override ``children``."""

    is_const = False

    def __init__(self, kit: Kit, spec: Spec, body: Any) -> None:
        self.kit, self.spec, self.body = kit, spec, body
        self._errors: Any = None
        # Label and help share one HTML widget: each widget is a comm (and messages) in a live kernel.
        parts = [body] if spec.bare else [self.kit.html(self._label_html() + self._help()), body]
        self.widget = widgets.VBox(parts, layout=kit.plain)

    def _label_html(self) -> str:
        star = ' <span style="color:#c00" title="required">*</span>' if self.spec.required else ""
        return f"<b>{html.escape(self.spec.label)}</b>{star}"

    def _help(self) -> str:
        text = self.spec.schema.get("description")
        examples = self.spec.schema.get("examples")
        if isinstance(examples, list) and examples and not self._uses_placeholder():
            text = f"{text or ''} (e.g. {json.dumps(examples[0])})".strip()
        if not text:
            return ""
        return f'<br><small style="color:#666">{html.escape(str(text))}</small>'

    def _uses_placeholder(self) -> bool:
        return False

    @abc.abstractmethod
    def get(self) -> Any:
        """The field's JSON value, or EMPTY."""

    @abc.abstractmethod
    def set(self, value: Any) -> None:
        """Show ``value`` (JSON) in the widgets."""

    def children(self) -> list[tuple[Key | None, Field]]:
        """Sub-fields with their key in the value (None: the same place, e.g. a union's branch)."""
        return []

    def local_errors(self) -> list[str]:
        """Errors that exist before any schema validation (e.g. JSON that does not parse)."""
        return []

    def show_errors(self, messages: Sequence[str]) -> None:
        text = "".join(f"<div>⚠ {html.escape(m)}</div>" for m in messages)
        if self._errors is None:
            if not text:
                return
            self._errors = self.kit.html()
            self.widget.children = (*self.widget.children, self._errors)
        self._errors.value = f'<div style="color:#c00">{text}</div>' if text else ""

    @property
    def error_text(self) -> str:
        return "" if self._errors is None else str(self._errors.value)


class ScalarField(Field):
    """One input widget with a reader and a writer converting between widget value and JSON."""

    def __init__(
        self,
        kit: Kit,
        spec: Spec,
        control: Any,
        read: Callable[[Any], Any],
        write: Callable[[Any, Any], None],
        include: Any = None,
    ) -> None:
        self.control, self._read, self._write, self.include = control, read, write, include
        body = control if include is None else widgets.HBox([include, control], layout=kit.plain)
        super().__init__(kit, spec, body)
        if include is not None:  # typing a number means "send it" (IntText has no empty state)
            control.observe(lambda _change: setattr(include, "value", True), names="value")

    def _uses_placeholder(self) -> bool:
        return hasattr(self.control, "placeholder")

    def get(self) -> Any:
        if self.include is not None and not self.include.value:
            return EMPTY
        return self._read(self.control)

    def set(self, value: Any) -> None:
        self._write(self.control, value)
        if self.include is not None:
            self.include.value = value is not EMPTY


class ConstField(ScalarField):
    is_const = True


class JsonField(Field):
    """The last resort: a JSON text editor that parses on change and shows the parse error."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self.control = widgets.Textarea(placeholder="JSON", layout=kit.wide, style=kit.text_style, rows=3)
        note = spec.prepared.reason
        super().__init__(kit, spec, self.control)
        if note and not spec.bare:
            self.widget.children = (
                *self.widget.children,
                kit.html(f'<small style="color:#666">JSON editor: {html.escape(note)}</small>'),
            )
        self.control.observe(lambda _change: self.show_errors(self.local_errors()), names="value")

    def _parse(self) -> tuple[Any, str]:
        text = self.control.value.strip()
        if not text:
            return EMPTY, ""
        try:
            return json.loads(text), ""
        except json.JSONDecodeError as exc:
            return EMPTY, f"Invalid JSON: {exc}"

    def get(self) -> Any:
        return self._parse()[0]

    def set(self, value: Any) -> None:
        self.control.value = "" if value is EMPTY else json.dumps(value, indent=2)

    def local_errors(self) -> list[str]:
        error = self._parse()[1]
        return [error] if error else []


class ObjectField(Field):
    """A fieldset: a header, then one field per property, in schema order."""

    def __init__(self, kit: Kit, spec: Spec, root: bool = False) -> None:
        self.root = root
        required = set(spec.schema.get("required", ()))
        self.fields: dict[str, Field] = {}
        for name, sub in spec.schema["properties"].items():
            label = sub.get("title") if isinstance(sub, Mapping) else None
            prepared = prepare(kit.root, sub, spec.prepared.refs)
            self.fields[name] = build(kit, Spec(prepared, str(label or name), name in required))
        body = widgets.VBox([f.widget for f in self.fields.values()], layout=kit.plain)
        super().__init__(kit, spec, body)
        if not root:
            self.widget.layout = kit.boxed

    def get(self) -> Any:
        out = {name: f.get() for name, f in self.fields.items()}
        out = {name: v for name, v in out.items() if v is not EMPTY}
        meaningful = any(not self.fields[name].is_const for name in out)
        if not meaningful and not (self.spec.required or self.root):
            return EMPTY
        return out

    def set(self, value: Any) -> None:
        value = value if isinstance(value, Mapping) else {}
        for name, f in self.fields.items():
            f.set(value.get(name, EMPTY))

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(name, field) for name, field in self.fields.items()]


class ArrayField(Field):
    """A list of item fields with "+ Add" and "- Remove" buttons, respecting minItems/maxItems."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self.items: list[Field] = []
        self._rows = widgets.VBox(layout=kit.plain)
        self._add = kit.button("+ Add")
        self._add.on_click(lambda _b: self.append(EMPTY))
        self.min_items = int(spec.schema.get("minItems", 0))
        self.max_items = spec.schema.get("maxItems")
        self._removers: list[Any] = []
        super().__init__(kit, spec, widgets.VBox([self._rows, self._add], layout=kit.plain))
        self.set(EMPTY)

    def append(self, value: Any) -> Field:
        prepared = prepare(self.kit.root, self.spec.schema["items"], self.spec.prepared.refs)
        item = build(self.kit, Spec(prepared, f"item {len(self.items) + 1}", required=True, bare=True))
        if value is not EMPTY:
            item.set(value)
        remove = self.kit.button("\N{MINUS SIGN} Remove")
        remove.on_click(lambda _b: self.remove(item))
        self.items.append(item)
        self._removers.append(remove)
        self._refresh()
        return item

    def remove(self, item: Field) -> None:
        index = self.items.index(item)
        del self.items[index], self._removers[index]
        self._refresh()

    def _refresh(self) -> None:
        rows = [
            widgets.HBox([f.widget, r], layout=self.kit.plain)
            for f, r in zip(self.items, self._removers, strict=True)
        ]
        self._rows.children = rows
        self._add.disabled = self.max_items is not None and len(self.items) >= self.max_items
        for remover in self._removers:
            remover.disabled = len(self.items) <= self.min_items

    def get(self) -> Any:
        if not self.items and not self.spec.required:
            return EMPTY
        values = [f.get() for f in self.items]
        return [None if v is EMPTY else v for v in values]  # kept in place so error paths line up

    def set(self, value: Any) -> None:
        self.items, self._removers = [], []
        values = list(value) if isinstance(value, list) else []
        values += [EMPTY] * (self.min_items - len(values))
        for item in values:
            self.append(item)
        self._refresh()

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(index, item) for index, item in enumerate(self.items)]


class UnionField(Field):
    """``oneOf``/``anyOf``: a Dropdown choosing the branch, and that branch's field below it."""

    def __init__(self, kit: Kit, spec: Spec, branches: Sequence[Schema]) -> None:
        self.branches = [prepare(kit.root, b, spec.prepared.refs) for b in branches]
        self.raw = list(spec.schema.get("oneOf") or spec.schema.get("anyOf") or [])
        labels = [branch_label(p.schema, i) for i, p in enumerate(self.branches)]
        options = [(lab, i) for i, lab in enumerate(labels)]
        self.chooser = widgets.Dropdown(options=options, value=0, layout=kit.plain, style=kit.desc_style)
        self._slot = widgets.VBox(layout=kit.plain)
        super().__init__(kit, spec, widgets.VBox([self.chooser, self._slot], layout=kit.plain))
        self.current = self._build(0)
        self.chooser.observe(lambda change: self._switch(int(change["new"])), names="value")

    def _build(self, index: int) -> Field:
        # the branch is as required as the union: an optional union's number branch may stay unset
        field = build(self.kit, Spec(self.branches[index], self.spec.label, self.spec.required, bare=True))
        self._slot.children = (field.widget,)
        return field

    def _switch(self, index: int) -> None:
        self.current = self._build(index)

    def get(self) -> Any:
        return self.current.get()

    def set(self, value: Any) -> None:
        if value is EMPTY:
            self.current.set(EMPTY)
            return
        for index, branch in enumerate(self.branches):
            if self.kit.matches(branch.schema, value):
                self.chooser.value = index  # rebuilds the branch field through the observer
                break
        self.current.set(value)

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(None, self.current)]

    def selected_raw(self) -> Any:
        """The schema's own ``oneOf``/``anyOf`` entry now chosen (to pick its validation errors)."""
        return self.raw[self.chooser.value] if len(self.raw) == len(self.branches) else None


class NullableField(Field):
    """``type: [X, "null"]``: the X field plus a "null" checkbox that disables it."""

    def __init__(self, kit: Kit, spec: Spec, inner: Field) -> None:
        self.inner = inner
        self.null = kit.checkbox("null")
        self._holder = widgets.Box([inner.widget], layout=widgets.Layout())  # its own layout: hidden alone
        self.null.observe(lambda change: self._show_inner(not change["new"]), names="value")
        super().__init__(kit, spec, widgets.VBox([self.null, self._holder], layout=kit.plain))

    def _show_inner(self, show: bool) -> None:
        self._holder.layout.display = None if show else "none"

    def get(self) -> Any:
        return None if self.null.value else self.inner.get()

    def set(self, value: Any) -> None:
        self.null.value = value is None
        if value is not None:
            self.inner.set(value)

    def children(self) -> list[tuple[Key | None, Field]]:
        return [] if self.null.value else [(None, self.inner)]

    def selected_raw(self) -> Any:
        """The ``anyOf``/``oneOf`` entry now chosen: the null one, or the other."""
        branches = self.spec.schema.get("oneOf") or self.spec.schema.get("anyOf") or []
        chosen = [b for b in branches if _is_null_branch(b) == bool(self.null.value)]
        if len(chosen) == 1:
            return chosen[0]
        return self.inner.selected_raw() if isinstance(self.inner, UnionField) else None


def _is_null_branch(branch: Any) -> bool:
    return isinstance(branch, Mapping) and branch.get("type") == "null"


# -- readers and writers ------------------------------------------------------------------------


def _read_text(control: Any) -> Any:
    return control.value if control.value != "" else EMPTY


def _write_text(control: Any, value: Any) -> None:
    control.value = "" if value is EMPTY else value if isinstance(value, str) else json.dumps(value)


def _write_number(control: Any, value: Any) -> None:
    if value is EMPTY or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    control.value = value


def _read_date(control: Any) -> Any:
    return control.value.isoformat() if control.value is not None else EMPTY


def _write_date(control: Any, value: Any) -> None:
    try:
        control.value = dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        control.value = None


def _choice_reader(values: Sequence[Any]) -> Callable[[Any], Any]:
    return lambda control: EMPTY if control.value < 0 else values[control.value]


def _choice_writer(values: Sequence[Any]) -> Callable[[Any, Any], None]:
    def write(control: Any, value: Any) -> None:
        matches = [i for i, v in enumerate(values) if v == value and type(v) is type(value)]
        control.value = matches[0] if matches else -1 if _has_blank(control) else 0

    return write


def _has_blank(control: Any) -> bool:
    return any(index < 0 for _label, index in control.options)


def _with_default(field: Field) -> Field:
    if "default" in field.spec.schema:
        field.set(field.spec.schema["default"])
    return field


# -- builders: schema kind -> field ---------------------------------------------------------------


def build_string(kit: Kit, spec: Spec, textarea: bool = False) -> Field:
    schema = spec.schema
    examples = schema.get("examples")
    hint = str(examples[0]) if isinstance(examples, list) and examples else None
    hint = hint or _PLACEHOLDERS.get(str(schema.get("format"))) or schema.get("pattern") or ""
    if textarea:
        control = widgets.Textarea(placeholder=hint, layout=kit.wide, style=kit.text_style, rows=4)
    else:
        control = widgets.Text(placeholder=hint, layout=kit.plain, style=kit.text_style)
    return _with_default(ScalarField(kit, spec, control, _read_text, _write_text))


def build_textarea(kit: Kit, spec: Spec) -> Field:
    return build_string(kit, spec, textarea=True)


def build_date(kit: Kit, spec: Spec) -> Field:
    control = widgets.DatePicker(value=None, layout=kit.plain, style=kit.desc_style)
    return _with_default(ScalarField(kit, spec, control, _read_date, _write_date))


def build_number(kit: Kit, spec: Spec) -> Field:
    schema, integer = spec.schema, spec.schema.get("type") == "integer"
    low, high = number_bounds(schema, integer)
    # Plain (unbounded) widgets: a Bounded* widget silently clamps what the user typed (30 becomes 14),
    # where the form must keep the value and show "greater than the maximum" next to the field.
    start = max(-_SAFE_INT if low is None else low, min(0, _SAFE_INT if high is None else high))
    control = (widgets.IntText if integer else widgets.FloatText)(
        value=start, layout=kit.plain, style=kit.desc_style
    )
    cast: Callable[[Any], Any] = int if integer else float
    include = None
    if not spec.required and "default" not in schema:
        include = kit.checkbox("set")
    field = ScalarField(kit, spec, control, lambda c: cast(c.value), _write_number, include)
    return _with_default(field)


def build_boolean(kit: Kit, spec: Spec) -> Field:
    control = widgets.Checkbox(value=False, indent=False, layout=kit.plain, style=kit.check_style)
    field = ScalarField(kit, spec, control, lambda c: bool(c.value), _write_bool)
    return _with_default(field)


def _write_bool(control: Any, value: Any) -> None:
    control.value = value is True


def build_choice(kit: Kit, spec: Spec, values: Sequence[Any], labels: Sequence[str]) -> Field:
    options = list(zip(labels, range(len(values)), strict=True))
    blank = not spec.required or "default" not in spec.schema
    if blank:
        options.insert(0, ("—", -1))
    start = -1 if blank else 0
    control = widgets.Dropdown(options=options, value=start, layout=kit.plain, style=kit.desc_style)
    return _with_default(ScalarField(kit, spec, control, _choice_reader(values), _choice_writer(values)))


def build_enum(kit: Kit, spec: Spec) -> Field:
    values = list(spec.schema["enum"])
    names = spec.schema.get("enumNames")  # the deprecated 2025-06-18 titled enum (MCP-NOTES §7.5)
    if not (isinstance(names, list) and len(names) == len(values)):
        names = [v if isinstance(v, str) else json.dumps(v) for v in values]
    return build_choice(kit, spec, values, [str(n) for n in names])


def build_titled_enum(kit: Kit, spec: Spec) -> Field:
    """SEP-1330 ``oneOf``/``anyOf`` of ``{const, title}``: a Dropdown showing the titles."""
    branches = spec.schema.get("oneOf") or spec.schema["anyOf"]
    values = [b["const"] for b in branches]
    return build_choice(kit, spec, values, [str(b.get("title", b["const"])) for b in branches])


def build_multi_enum(kit: Kit, spec: Spec) -> Field:
    """SEP-1330 multi-select: ``items.enum`` or ``items.anyOf`` of ``{const, title}``."""
    items = spec.schema["items"]
    if "enum" in items:
        values, labels = list(items["enum"]), [str(v) for v in items["enum"]]
    else:
        branches = [b for b in items.get("anyOf") or items["oneOf"] if is_const_choice(b)]
        values, labels = [b["const"] for b in branches], [str(b.get("title", b["const"])) for b in branches]
    options = list(zip(labels, range(len(values)), strict=True))
    control = widgets.SelectMultiple(
        options=options, rows=min(len(values), 6), layout=kit.plain, style=kit.desc_style
    )

    def read(c: Any) -> Any:
        chosen = [values[i] for i in c.value]
        return chosen if chosen or spec.required else EMPTY

    def write(c: Any, value: Any) -> None:
        chosen = value if isinstance(value, list) else []
        c.value = tuple(i for i, v in enumerate(values) if v in chosen)

    return _with_default(ScalarField(kit, spec, control, read, write))


def build_const(kit: Kit, spec: Spec) -> Field:
    const = spec.schema["const"]
    control = kit.html(f"<code>{html.escape(json.dumps(const))}</code>")
    return ConstField(kit, spec, control, lambda _c: const, lambda _c, _v: None)


def build_null(kit: Kit, spec: Spec) -> Field:
    control = kit.html("<code>null</code>")
    return ConstField(kit, spec, control, lambda _c: None, lambda _c, _v: None)


def build_object(kit: Kit, spec: Spec) -> Field:
    return _with_default(ObjectField(kit, spec))


def build_array(kit: Kit, spec: Spec) -> Field:
    return _with_default(ArrayField(kit, spec))


def build_union(kit: Kit, spec: Spec) -> Field:
    return _with_default(UnionField(kit, spec, union_branches(spec.schema)))


def build_nullable(kit: Kit, spec: Spec) -> Field:
    inner_schema = split_nullable(spec.schema)
    prepared = prepare(kit.root, inner_schema, spec.prepared.refs)
    inner = build(kit, Spec(prepared, spec.label, spec.required, bare=True))
    field = NullableField(kit, spec, inner)
    field.set(spec.schema.get("default", EMPTY))
    return field


def build_json(kit: Kit, spec: Spec) -> Field:
    return _with_default(JsonField(kit, spec))


Builder = Callable[[Kit, Spec], Field]

#: Schema kind (from ``form_schema.classify``) -> field builder.
BUILDERS: dict[str, Builder] = {
    "string": build_string,
    "textarea": build_textarea,
    "date": build_date,
    "integer": build_number,
    "number": build_number,
    "boolean": build_boolean,
    "null": build_null,
    "const": build_const,
    "enum": build_enum,
    "titled_enum": build_titled_enum,
    "multi_enum": build_multi_enum,
    "object": build_object,
    "array": build_array,
    "union": build_union,
    "nullable": build_nullable,
    "json": build_json,
}


def build(kit: Kit, spec: Spec) -> Field:
    """Build the field for ``spec`` through the dispatch table."""
    return BUILDERS[spec.prepared.kind](kit, spec)


def build_root(kit: Kit, schema: Schema) -> Field:
    """The form's top field: a bare object (no header, no frame) when the schema is an object."""
    prepared = prepare(kit.root, schema)
    spec = Spec(prepared, str(schema.get("title", "")), required=True, bare=True)
    if prepared.kind == "object":
        return _with_default(ObjectField(kit, spec, root=True))
    return build(kit, replace(spec, bare=False))
