"""A JSON-Schema-driven input form built from ipywidgets (DESIGN decision 9).

``SchemaForm(schema)`` shows one field per property (builders in ``fields``), validates the value
through the package's one validation service (``tools/validation.py``: dialect from ``$schema``, 2020-12 by
default, an unsupported dialect named and never validated as another, formats checked, ``$ref`` resolved
locally only — MCP-NOTES §3.9) and shows each message next to the field it is about.
"""

from __future__ import annotations

import html
import json
import logging
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from ..._jsonschema import ValidationError
from ...tools.validation import SchemaProblem, schema_check
from .containers import LazyField, NullableField, ObjectField, UnionField, build_root
from .fields import EMPTY, ERROR, WARN, Field, Key, Kit

__all__ = ["FieldError", "FormInvalid", "SchemaForm"]

_log = logging.getLogger(__name__)
Path = tuple[Key, ...]
Callback = Callable[[dict[str, Any]], None]
REQUIRED_MESSAGE = "This field is required."
#: A value's JSON in the form's snapshot (the saved notebook's HTML/text) is cut at this many characters:
#: a table of 100,000 rows is sent whole, but not written into the notebook with every call.
SNAPSHOT_CHARS = 1_000


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= SNAPSHOT_CHARS:
        return text
    items = f"{len(value):,} items, " if isinstance(value, list | dict) else ""
    return f"{text[:SNAPSHOT_CHARS]}… ({items}{len(text):,} characters in all)"


@dataclass(frozen=True)
class FieldError:
    """A validation message and the path (property names, item indices) of the value it is about."""

    path: Path
    message: str


class FormInvalid(ValueError):
    """``submit()`` from code on a form whose value does not validate; ``.errors`` holds the messages."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors = list(errors)
        lines = "; ".join(f"{_path_text(e.path)}{e.message}" for e in self.errors)
        super().__init__(f"the form is not valid, nothing was sent: {lines}")


class SchemaForm:
    """An input form for a JSON Schema, shown through ``.widget`` (an ``ipywidgets.VBox``)."""

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        title: str | None = None,
        description: str | None = None,
        submit_label: str = "Submit",
        on_submit: Callback | None = None,
        values: Mapping[str, Any] | None = None,
        extra_buttons: Sequence[tuple[str, Callback]] = (),
        namespace: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        """``namespace``: the notebook's variables (or a function returning them), for a table field's
        "Use a variable" (a DataFrame by name); without it a table has no such choice."""
        self.schema = schema
        self.on_submit = on_submit
        names = namespace if namespace is None or callable(namespace) else (lambda: namespace)
        if not isinstance(schema, Mapping):  # a server's inputSchema may be anything
            raise SchemaProblem(
                f"the schema is a {type(schema).__name__}, not a JSON object: no form can be made"
            )
        try:
            self._check = schema_check(schema, strict=False)
            kit = Kit(schema, self._matches, names)
            self._root = build_root(kit, schema)
        except RecursionError:  # a (hostile or generated) schema hundreds of levels deep
            raise SchemaProblem(
                "the schema is nested too deeply to make a form of it; call the tool with mcp.call"
            ) from None
        notes = []
        if self._check.problem and self._check.validator_class is None:
            notes.append(f"{self._check.problem}: values are not checked here; the server checks them.")
        # the form's own widgets share the kit's (empty) layouts and styles: each would be a comm more
        self._top = kit.html()
        self._summary = kit.html()  # next to the buttons: an error higher up may be off-screen
        #: Where callback tracebacks are shown (STYLE rule 7).
        self.output = widgets.Output(layout=kit.plain)
        buttons = [(submit_label, "primary")] + [(label, "") for label, _cb in extra_buttons]
        made = [
            widgets.Button(description=label, button_style=style, layout=kit.plain, style=kit.button_style)
            for label, style in buttons
        ]
        self.submit_button = made[0]
        self.submit_button.on_click(lambda _b: self._submit(reraise=False))
        for button, (_label, callback) in zip(made[1:], extra_buttons, strict=True):
            button.on_click(lambda _b, cb=callback: self._call(cb, self.value, reraise=False))
        header = [
            kit.html(_header(title or schema.get("title"), description or schema.get("description"), notes))
        ]
        self.widget = widgets.VBox(
            [
                *header,
                self._top,
                *self._root.parts,
                widgets.HBox([*made, self._summary], layout=kit.plain),
                self.output,
            ],
            layout=kit.plain,
        )
        if values:  # the others keep their defaults (a large form's unopened pages stay unbuilt)
            if isinstance(self._root, ObjectField):
                self._root.update(values)
            else:
                self.set_value({**self.value, **values})

    # -- value ---------------------------------------------------------------------------------

    @property
    def value(self) -> dict[str, Any]:
        """The current value as JSON; optional fields left empty are omitted."""
        value = self._root.get()
        return {} if value is EMPTY else value

    def field(self, name: str) -> Field:
        """The field of top-level property ``name`` (a table: ``.paste(text)``, ``.use_variable(n)``)."""
        if not isinstance(self._root, ObjectField) or name not in self._root.names:
            raise KeyError(f"the form has no field {name!r}")
        found = self._root.field(name)  # a page of a large form is opened (built and shown) first
        if isinstance(found, LazyField):  # a section of a large form is built when asked for
            found = found.open()
        return found.inner if isinstance(found, NullableField) else found

    def set_value(self, value: Mapping[str, Any]) -> None:
        """Show ``value`` in the fields; fields it does not mention go back to their defaults (or empty).

        A value a field cannot hold (text for a number) is shown as it is and reported, never dropped."""
        self._root.set(dict(value))

    def snapshot(self) -> dict[str, Any]:
        """The form as static HTML (title, description, each top-level field and its value) and rows."""
        value = self.value
        names = self._root.names if isinstance(self._root, ObjectField) else []
        rows = [(n, _shown(value[n]) if n in value else "—") for n in names]
        if not names and value:
            rows = [("value", _shown(value))]
        body = "".join(
            f"<tr><td><b>{html.escape(k)}</b></td><td><code>{html.escape(v)}</code></td></tr>"
            for k, v in rows
        )
        head = self.widget.children[0].value if self.widget.children else ""
        table = f'<table class="mcpnb-table">{body}</table>' if rows else ""
        return {"html": f"{head}{table}", "rows": rows}

    # -- validation ------------------------------------------------------------------------------

    def validate(self) -> list[FieldError]:
        """Validate ``.value``; show each message next to its field (unplaced ones on top)."""
        unusable = self._check.validator_class is None  # an unsupported dialect: named in the header
        problem = None
        try:
            raw = [] if unusable else self._check.errors(self.value)
        except SchemaProblem as exc:
            problem, raw = FieldError((), f"The schema cannot be used to validate: {exc}"), []
        for error in raw:  # a large form's closed page holding one opens: its fields' own checks run too
            _locate(self._root, tuple(error.absolute_path))
        fields = list(_walk(self._root, ()))
        for _path, field in fields:
            field.show_errors([])
        errors = [FieldError(path, m) for path, field in fields for m in field.local_errors()]
        broken = {e.path for e in errors}
        errors += [problem] if problem else []
        for error in raw:
            for found in self._explain(error):
                if not any(found.path[: len(p)] == p for p in broken):
                    errors.append(self._place(found))
        self._show(errors, [self._check.problem] if self._check.problem and not unusable else [])
        return errors

    def _explain(self, error: ValidationError) -> list[FieldError]:
        path: Path = tuple(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, Mapping):
            wanted = error.validator_value if isinstance(error.validator_value, list) else []
            missing = [n for n in wanted if n not in error.instance]
            named = [n for n in missing if repr(n) in error.message] or missing
            if named:
                return [FieldError((*path, named[0]), REQUIRED_MESSAGE)]
        if error.validator in ("anyOf", "oneOf") and error.context:
            picked = self._branch_errors(error, path)
            if picked:
                return [found for sub in picked for found in self._explain(sub)]
        return [FieldError(path, error.message)]

    def _branch_errors(self, error: ValidationError, path: Path) -> list[ValidationError]:
        """The errors of the branch the user picked (the union's Dropdown), else the non-null ones."""
        chain, consumed = _locate(self._root, path)
        chosen = [f.selected_raw() for f in chain if isinstance(f, (UnionField, NullableField))]
        branches = error.validator_value
        context = error.context or []
        if consumed == len(path) and chosen:
            picked = [e for e in context if _branch_of(e, branches) in chosen]
            if picked:
                return picked
        not_null = [e for e in context if not (e.validator == "type" and e.validator_value == "null")]
        return not_null if len(not_null) == 1 else []

    def _place(self, error: FieldError) -> FieldError:
        chain, consumed = _locate(self._root, error.path)
        if consumed == len(error.path) and chain[-1].get() is EMPTY and error.path:
            return FieldError(error.path, REQUIRED_MESSAGE)
        return error

    def _show(self, errors: Sequence[FieldError], notes: list[str]) -> None:
        by_field: dict[int, tuple[Field, list[str]]] = {}
        top = notes
        for error in errors:
            chain, consumed = _locate(self._root, error.path)
            if consumed == 0:
                top.append(f"{_path_text(error.path)}{error.message}")
                continue
            rest = error.path[consumed:]
            by_field.setdefault(id(chain[-1]), (chain[-1], []))[1].append(
                f"{_path_text(rest)}{error.message}"
            )
        for field, messages in by_field.values():
            field.show_errors(messages)
        items = "".join(f"<li>{html.escape(m)}</li>" for m in top)
        self._top.value = f'<ul style="{ERROR}">{items}</ul>' if top else ""
        self._summary.value = _summary(errors)

    @property
    def top_error_text(self) -> str:
        """The messages shown above the fields (errors no field claims)."""
        return str(self._top.value)

    def _matches(self, schema: Mapping[str, Any], value: Any) -> bool:
        defs = {k: self.schema[k] for k in ("$defs", "definitions") if k in self.schema}
        try:
            return not schema_check({**defs, **schema}, strict=False).errors(value)
        except SchemaProblem:
            return False

    # -- submit ----------------------------------------------------------------------------------

    def submit(self) -> None:
        """Validate; if valid, call ``on_submit(value)``, else raise :class:`FormInvalid` (the messages are
        shown next to their fields too). A raising callback is shown, logged, re-raised."""
        self._submit(reraise=True)

    def _submit(self, *, reraise: bool) -> None:
        self.output.outputs = ()
        errors = self.validate()
        if errors:
            if reraise:
                raise FormInvalid(errors)
            return
        if self.on_submit is not None:
            self._call(self.on_submit, self.value, reraise=reraise)

    def _call(self, callback: Callback, value: dict[str, Any], *, reraise: bool) -> None:
        # STYLE rule 7: never swallow a callback's error. A click has no caller to raise to, so the
        # traceback goes into the form's Output and the log; a direct ``submit()`` also re-raises.
        try:
            callback(value)
        except Exception:
            self.output.append_stderr(traceback.format_exc())
            _log.exception("form callback %r raised", callback)
            if reraise:
                raise

    # -- display ---------------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


def _header(title: Any, description: Any, notes: Sequence[str]) -> str:
    parts = [f'<h4 style="margin:4px 0 2px">{html.escape(str(title))}</h4>'] if title else []
    if description:
        parts.append(f'<div style="line-height:1.35">{html.escape(str(description))}</div>')
    parts += [f'<div style="{WARN}">{html.escape(n)}</div>' for n in notes]
    return "".join(parts)


def _summary(errors: Sequence[FieldError]) -> str:
    if not errors:
        return ""
    where = sorted({"/".join(map(str, e.path)) or "(the form)" for e in errors})
    shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
    noun = "problem" if len(errors) == 1 else "problems"
    return f'<span style="{ERROR};line-height:1.35">⚠ {len(errors)} {noun}: {html.escape(shown)}</span>'


def _path_text(path: Path) -> str:
    return f"{'/'.join(map(str, path))}: " if path else ""


def _walk(field: Field, path: Path) -> Iterator[tuple[Path, Field]]:
    yield path, field
    for key, child in field.children():
        yield from _walk(child, path if key is None else (*path, key))


def _same_place(field: Field) -> list[Field]:
    out = [field]
    for key, child in field.children():
        if key is None:
            out += _same_place(child)
    return out


def _locate(root: Field, path: Path) -> tuple[list[Field], int]:
    """The fields at the deepest place ``path`` reaches (wrappers first), and how many parts it used."""
    chain, consumed = _same_place(root), 0
    for part in path:
        for f in chain:  # a message is about to be shown there: a large form's page holding it opens
            if isinstance(f, ObjectField):
                f.reveal(part)
        found = [child for f in chain for key, child in f.children() if key == part]
        if not found:
            break
        chain, consumed = _same_place(found[0]), consumed + 1
    return chain, consumed


def _branch_of(error: ValidationError, branches: Any) -> Any:
    index = error.relative_schema_path[0] if error.relative_schema_path else None
    if isinstance(index, int) and isinstance(branches, list) and index < len(branches):
        return branches[index]
    return None
