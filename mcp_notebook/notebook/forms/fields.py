"""Form fields, part 1: the field base classes and the scalar builders (text, number, date, choice, ...).

DESIGN decision 9 / STYLE rule 9. Every field answers ``get()`` (a JSON value, or ``EMPTY`` when the user
left it empty), ``set(value)``, ``reset()``, ``children()`` (for error placement) and
``show_errors(messages)``. The containers (object, array, map, union, nullable) and the ``BUILDERS``
dispatch table are in ``containers``.

Each widget is a comm (and messages) in a live kernel, so a labelled field is two widgets: one HTML head
(label, help and error messages together) and its control, laid out by the parent (issue 11: a
100-property form builds in about half the widgets it used to). Colours come from JupyterLab's CSS
variables, so light, dark and high-contrast themes keep readable text.
"""

from __future__ import annotations

import abc
import datetime as dt
import enum
import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_bool import CheckboxStyle
from ipywidgets.widgets.widget_description import DescriptionStyle
from ipywidgets.widgets.widget_string import HTMLStyle, TextStyle

from .schema import Prepared, Schema, number_bounds

Key = str | int

#: Text colours for the form's HTML: JupyterLab's theme variables, with fallbacks for other frontends.
MUTED = "color:var(--jp-ui-font-color2,inherit)"
ERROR = "color:var(--jp-error-color1,#c62828)"
WARN = "color:var(--jp-warn-color1,#a65e00)"


class _Empty(enum.Enum):
    EMPTY = "EMPTY"


#: What ``Field.get`` returns for a field the user left empty; omitted from the form's value.
EMPTY = _Empty.EMPTY
_PLACEHOLDERS = {
    "date-time": "YYYY-MM-DDTHH:MM:SS+00:00",
    "email": "name@example.org",
    "uri": "https://…",
    "time": "HH:MM:SS",
}


class Kit:
    """Per-form shared state: the root schema (for ``$ref``) and shared layouts (building speed)."""

    def __init__(
        self,
        root: Schema,
        matches: Callable[[Schema, Any], bool],
        namespace: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.root = root
        self.matches = matches  # does a JSON value fit a branch schema? (jsonschema, from the form)
        self.namespace = namespace  # the notebook's variables (a table field's "use a variable")
        self.lazy = False  # build optional nested sections on first open (large forms)
        # Layouts and styles are widgets too: sharing them halves the widgets a form creates.
        self.plain = widgets.Layout()
        self.auto = widgets.Layout(width="auto")
        self.start = widgets.Layout(width="auto", align_self="flex-start")  # a button its own size
        self.wide = widgets.Layout(width="95%")
        self.boxed = widgets.Layout(
            border="1px solid var(--jp-border-color1,#bbb)", padding="2px 8px", margin="2px 0 6px"
        )
        self.html_style = HTMLStyle()
        self.text_style = TextStyle()
        self.desc_style = DescriptionStyle()
        self.check_style = CheckboxStyle()
        self.button_style = widgets.ButtonStyle()

    def html(self, value: str = "") -> Any:
        return widgets.HTML(value, layout=self.plain, style=self.html_style)

    def button(self, label: str) -> Any:
        return widgets.Button(description=label, layout=self.start, style=self.button_style)

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
    #: a bare field in a box of its own (for its error line); False: its ``errors_to`` shows them
    wrapped: bool = True

    @property
    def schema(self) -> Schema:
        return self.prepared.schema


def errors_html(messages: Sequence[str]) -> str:
    if not messages:
        return ""
    lines = "".join(f"<div>⚠ {html.escape(m)}</div>" for m in messages)
    return f'<div class="mcpnb-field-errors" style="{ERROR}">{lines}</div>'


class Field(abc.ABC):
    """A labelled input. Subclasses implement ``get``/``set`` and override ``children``.

    ``parts`` are the widgets the parent lays out: ``[head, body]`` for a labelled field (the head holds
    label, help and errors), ``[widget]`` for a bare one (a box that grows an error line when needed)."""

    is_const = False

    def __init__(self, kit: Kit, spec: Spec, body: Any) -> None:
        self.kit, self.spec, self.body = kit, spec, body
        self._messages: list[str] = []
        self._errors: Any = None  # a bare field's error line, made on first error
        self.head: Any = None
        #: the field whose head shows this one's messages (a nullable's inner field: no box of its own)
        self.errors_to: Field | None = None
        self.parts: list[Any]
        if spec.bare and not spec.wrapped:
            self.widget = body
            self.parts = [body]
        elif spec.bare:
            self.widget = widgets.VBox([body], layout=kit.plain)
            self.parts = [self.widget]
        else:
            self.head = kit.html(self._head_html())
            self.widget = body
            self.parts = [self.head, body]

    def _head_html(self) -> str:
        star = f' <span style="{ERROR}" title="required">*</span>' if self.spec.required else ""
        label = f"<b>{html.escape(self.spec.label)}</b>{star}"
        return f'<div style="line-height:1.35;margin-top:4px">{label}{self._help()}</div>' + errors_html(
            self._messages
        )

    def _help(self) -> str:
        text = self.spec.schema.get("description")
        examples = self.spec.schema.get("examples")
        if isinstance(examples, list) and examples and not self._uses_placeholder():
            text = f"{text or ''} (e.g. {json.dumps(examples[0])})".strip()
        if not text:
            return ""
        return f'<div style="font-size:12px;{MUTED}">{html.escape(str(text))}</div>'

    def _uses_placeholder(self) -> bool:
        return False

    @abc.abstractmethod
    def get(self) -> Any:
        """The field's JSON value, or EMPTY."""

    @abc.abstractmethod
    def set(self, value: Any) -> None:
        """Show ``value`` (JSON) in the widgets; EMPTY empties the field."""

    def reset(self) -> None:
        """Back to the schema's default, or empty when it has none."""
        self.set(self.spec.schema.get("default", EMPTY))

    def children(self) -> list[tuple[Key | None, Field]]:
        """Sub-fields with their key in the value (None: the same place, e.g. a union's branch)."""
        return []

    def local_errors(self) -> list[str]:
        """Errors that exist before any schema validation (e.g. JSON that does not parse)."""
        return []

    def show_errors(self, messages: Sequence[str]) -> None:
        messages = list(messages)
        if self.errors_to is not None:
            self.errors_to.show_errors(messages)
            return
        if messages == self._messages:
            return
        self._messages = messages
        if self.head is not None:
            self.head.value = self._head_html()
            return
        if self._errors is None:
            if not messages:
                return
            self._errors = self.kit.html()
            self.widget.children = (*self.widget.children, self._errors)
        self._errors.value = errors_html(messages)

    @property
    def error_text(self) -> str:
        return errors_html(self._messages)


class ScalarField(Field):
    """One input widget with a reader and a writer converting between widget value and JSON."""

    def __init__(
        self,
        kit: Kit,
        spec: Spec,
        control: Any,
        read: Callable[[Any], Any],
        write: Callable[[Any, Any], None],
        check: Callable[[Any], list[str]] | None = None,
    ) -> None:
        self.control, self._read, self._write, self._check = control, read, write, check
        super().__init__(kit, spec, control)
        if check is not None:  # checked as the person types (a number's bounds: issue 11 item 6)
            control.observe(lambda _change: self.show_errors(self.local_errors()), names="value")

    def _uses_placeholder(self) -> bool:
        return hasattr(self.control, "placeholder")

    def get(self) -> Any:
        return self._read(self.control)

    def set(self, value: Any) -> None:
        self._write(self.control, value)

    def local_errors(self) -> list[str]:
        return self._check(self.control) if self._check is not None else []


class ConstField(ScalarField):
    is_const = True


class JsonField(Field):
    """The last resort: a JSON text editor that parses on change and shows the parse error."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self.control = widgets.Textarea(placeholder="JSON", layout=kit.wide, style=kit.text_style, rows=3)
        self.note = spec.prepared.reason
        super().__init__(kit, spec, self.control)
        self.control.observe(lambda _change: self.show_errors(self.local_errors()), names="value")

    def _help(self) -> str:
        note = f"JSON editor: {self.note}" if self.note and not self.spec.bare else ""
        extra = f'<div style="font-size:12px;{MUTED}">{html.escape(note)}</div>' if note else ""
        return super()._help() + extra

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


# -- readers and writers ------------------------------------------------------------------------


def _read_text(control: Any) -> Any:
    return control.value if control.value != "" else EMPTY


def _write_text(control: Any, value: Any) -> None:
    control.value = "" if value is EMPTY else value if isinstance(value, str) else json.dumps(value)


def parse_number(text: str, integer: bool) -> tuple[Any, str]:
    """``(value, "")`` for a number typed as text, ``(EMPTY, "")`` for nothing, else a message."""
    text = text.strip()
    if not text:
        return EMPTY, ""
    try:
        number = float(text) if not integer else int(text)
    except ValueError:
        try:
            as_float = float(text)
        except ValueError:
            return EMPTY, f"{text!r} is not a number"
        if integer and as_float.is_integer():
            return int(as_float), ""
        return EMPTY, f"{text!r} is not a whole number" if integer else f"{text!r} is not a number"
    if isinstance(number, float) and not math.isfinite(number):
        return EMPTY, f"{text!r} is not a finite number"
    return number, ""


def _bounds_text(low: Any, high: Any, integer: bool) -> str:
    kind = "whole number" if integer else "number"
    if low is not None and high is not None:
        return f"{kind}, {low:g} to {high:g}"
    if low is not None:
        return f"{kind}, at least {low:g}"
    if high is not None:
        return f"{kind}, at most {high:g}"
    return kind


def _write_number(control: Any, value: Any) -> None:
    if value is EMPTY:
        control.value = ""
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        control.value = json.dumps(value)
    else:  # shown as it is, and reported by the field's check: never dropped silently
        control.value = value if isinstance(value, str) else json.dumps(value)


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


class _Holder:
    """Stands in for a control, so a writer computes the first value before the widget (its comm) exists."""

    def __init__(self, value: Any, options: Any = ()) -> None:
        self.value, self.options = value, options


def first_value(write: Callable[[Any, Any], None], schema: Schema, empty: Any) -> Any:
    """The value a control shows first: its schema default as ``write`` shows it. Created with it, the
    widget sends no update message when ``with_default`` sets the same value (issue 19: build time)."""
    holder = _Holder(empty)
    if "default" in schema:
        write(holder, schema["default"])
    return holder.value


def with_default(field: Field) -> Field:
    if "default" in field.spec.schema:
        field.set(field.spec.schema["default"])
    return field


# -- scalar builders: schema kind -> field ---------------------------------------------------------


def build_string(kit: Kit, spec: Spec, textarea: bool = False) -> Field:
    schema = spec.schema
    examples = schema.get("examples")
    hint = str(examples[0]) if isinstance(examples, list) and examples else None
    hint = hint or _PLACEHOLDERS.get(str(schema.get("format"))) or schema.get("pattern") or ""
    if textarea:
        control = widgets.Textarea(
            value=first_value(_write_text, schema, ""),
            placeholder=hint,
            layout=kit.wide,
            style=kit.text_style,
            rows=4,
        )
    else:
        control = widgets.Text(
            value=first_value(_write_text, schema, ""),
            placeholder=hint,
            layout=kit.plain,
            style=kit.text_style,
        )
    return with_default(ScalarField(kit, spec, control, _read_text, _write_text))


def build_textarea(kit: Kit, spec: Spec) -> Field:
    return build_string(kit, spec, textarea=True)


def build_date(kit: Kit, spec: Spec) -> Field:
    control = widgets.DatePicker(
        value=first_value(_write_date, spec.schema, None), layout=kit.plain, style=kit.desc_style
    )
    return with_default(ScalarField(kit, spec, control, _read_date, _write_date))


def build_number(kit: Kit, spec: Spec) -> Field:
    """A text box read as a number: empty stays empty (a required number is never silently 0, issue 11
    item 15), and what is typed is checked against the bounds at once (item 6). Nothing is clamped."""
    schema, integer = spec.schema, spec.schema.get("type") == "integer"
    low, high = number_bounds(schema, integer)
    x_low, x_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    control = widgets.Text(
        value=first_value(_write_number, schema, ""),
        placeholder=_bounds_text(low, high, integer),
        layout=kit.plain,
        style=kit.text_style,
    )

    read = number_reader(integer)

    def check(c: Any) -> list[str]:
        value, problem = parse_number(c.value, integer)
        if problem or value is EMPTY:
            return [problem] if problem else []
        checks: list[tuple[Any, Callable[[float], bool], str]] = [
            (schema.get("minimum"), lambda b: value < b, "less than the minimum"),
            (schema.get("maximum"), lambda b: value > b, "greater than the maximum"),
            (x_low, lambda b: value <= b, "less than or equal to the minimum"),
            (x_high, lambda b: value >= b, "greater than or equal to the maximum"),
        ]
        for bound, broken, words in checks:
            if isinstance(bound, (int, float)) and not isinstance(bound, bool) and broken(bound):
                return [f"{value:g} is {words} of {bound:g}"]  # jsonschema's own words
        return []

    return with_default(ScalarField(kit, spec, control, read, _write_number, check))


def number_reader(integer: bool) -> Callable[[Any], Any]:
    def read(c: Any) -> Any:
        value, problem = parse_number(c.value, integer)
        return c.value.strip() if problem else value  # a bad entry reaches validation as the text it is

    return read


def build_boolean(kit: Kit, spec: Spec) -> Field:
    control = widgets.Checkbox(
        value=first_value(_write_bool, spec.schema, False),
        indent=False,
        layout=kit.plain,
        style=kit.check_style,
    )
    field = ScalarField(kit, spec, control, _read_bool, _write_bool)
    return with_default(field)


def _read_bool(control: Any) -> bool:
    return bool(control.value)


def _write_bool(control: Any, value: Any) -> None:
    control.value = value is True


def choice_first(spec: Spec, values: Sequence[Any], labels: Sequence[str]) -> Any:
    """The Dropdown's options and first value (a stand-in for it, ``_Holder``) for an enum field."""
    options = list(zip(labels, range(len(values)), strict=True))
    blank = not spec.required or "default" not in spec.schema
    if blank:
        options.insert(0, ("—", -1))
    first = _Holder(-1 if blank else 0, options)
    if "default" in spec.schema:
        _choice_writer(values)(first, spec.schema["default"])
    return first


def build_choice(kit: Kit, spec: Spec, values: Sequence[Any], labels: Sequence[str]) -> Field:
    first = choice_first(spec, values, labels)
    control = widgets.Dropdown(
        options=first.options, value=first.value, layout=kit.plain, style=kit.desc_style
    )
    return with_default(ScalarField(kit, spec, control, _choice_reader(values), _choice_writer(values)))


def enum_choices(spec: Spec) -> tuple[list[Any], list[str]]:
    """An ``enum`` (or a SEP-1330 titled one, ``oneOf``/``anyOf`` of ``{const, title}``): values, labels."""
    if spec.prepared.kind == "titled_enum":
        branches = spec.schema.get("oneOf") or spec.schema["anyOf"]
        return [b["const"] for b in branches], [str(b.get("title", b["const"])) for b in branches]
    values = list(spec.schema["enum"])
    names = spec.schema.get("enumNames")  # the deprecated 2025-06-18 titled enum (MCP-NOTES §7.5)
    if not (isinstance(names, list) and len(names) == len(values)):
        names = [v if isinstance(v, str) else json.dumps(v) for v in values]
    return values, [str(n) for n in names]


def build_enum(kit: Kit, spec: Spec) -> Field:
    """``enum``, or SEP-1330's titled enum: a Dropdown showing the titles."""
    return build_choice(kit, spec, *enum_choices(spec))


def build_multi_enum(kit: Kit, spec: Spec) -> Field:
    """SEP-1330 multi-select: ``items.enum`` or ``items.anyOf`` of ``{const, title}``."""
    from .schema import is_const_choice

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

    return with_default(ScalarField(kit, spec, control, read, write))


def build_const(kit: Kit, spec: Spec) -> Field:
    const = spec.schema["const"]
    control = kit.html(f"<code>{html.escape(json.dumps(const))}</code>")
    return ConstField(kit, spec, control, lambda _c: const, lambda _c, _v: None)


def build_null(kit: Kit, spec: Spec) -> Field:
    control = kit.html("<code>null</code>")
    return ConstField(kit, spec, control, lambda _c: None, lambda _c, _v: None)


def build_json(kit: Kit, spec: Spec) -> Field:
    return with_default(JsonField(kit, spec))


#: The scalar kinds' reader, writer and empty control value: ``probe`` computes a field's first value
#: from them, without a widget (a large form's unopened page).
SCALAR_IO: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], None], Any]] = {
    "string": (_read_text, _write_text, ""),
    "textarea": (_read_text, _write_text, ""),
    "date": (_read_date, _write_date, None),
    "integer": (number_reader(True), _write_number, ""),
    "number": (number_reader(False), _write_number, ""),
    "boolean": (_read_bool, _write_bool, False),
}
