"""A table parameter (an array of flat row objects: a pandas DataFrame's records) as a grid (issue 19).

``TableField`` shows the rows as an editable grid, one column per property of the row schema, and
fills it three ways: typing into cells (+ Add row, a minus button per row), **pasting** tab- or
comma-separated text as copied from Excel, Sheets or a CSV file (a first line naming the columns is
optional), and **a kernel variable**: the name of a DataFrame in the notebook, whose rows are the
argument when the form is submitted. The value is what ``mcp.call`` sends for the same DataFrame: the
records of ``tools.to_jsonable`` with NaN as ``null``. A row object without declared properties (a bare
``pd.DataFrame`` parameter) is a table whose columns come from the pasted header line or the variable.

The pure parts (``table_columns``, ``parse_cell``, ``parse_table``, ``rows_of``) hold no widgets, so the
API and tests use them without a form.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from ...tools import finite, to_jsonable
from .fields import EMPTY, ERROR, MUTED, Field, Kit, Spec, parse_number
from .schema import Schema, is_const_choice, prepare, split_nullable

__all__ = [
    "MAX_GRID_CELLS",
    "MAX_GRID_ROWS",
    "MAX_PASTE_CHARS",
    "MAX_TABLE_ROWS",
    "Column",
    "TableField",
    "TableProblem",
    "build_table",
    "dataframe_names",
    "parse_cell",
    "parse_table",
    "rows_of",
    "table_columns",
]

#: More rows than this are held as data and previewed, not edited cell by cell (each cell is a widget).
MAX_GRID_ROWS = 50
#: ... and more cells than this (rows x columns: a pasted header of 5,000 names would be 5,000 widgets a row).
MAX_GRID_CELLS = 1_000
PREVIEW_COLUMNS = 30
#: A form's table holds at most this many rows (pasted or from a variable); more is a job for ``mcp.call``.
MAX_TABLE_ROWS = 100_000
#: Pasted text longer than this is refused before it is read (a spreadsheet's 100,000 short rows fit).
MAX_PASTE_CHARS = 5_000_000
PREVIEW_ROWS = 10
SCALAR_KINDS = frozenset(
    {"string", "textarea", "date", "integer", "number", "boolean", "enum", "titled_enum", "const"}
)
_NULL_WORDS = frozenset({"nan", "null", "none", "na", "n/a", "#n/a"})  # read as missing in number cells
_TRUE, _FALSE = frozenset({"true", "yes", "1", "y"}), frozenset({"false", "no", "0", "n"})


class TableProblem(ValueError):
    """Pasted text or a variable that cannot become the table's rows; the message says why."""


@dataclass(frozen=True)
class Column:
    """One column of the grid: its name, the schema of its non-null values and their kind."""

    name: str
    schema: Schema
    kind: str | None  # a SCALAR_KINDS member; None: a free column (any JSON scalar, empty: null)
    nullable: bool = False
    required: bool = False

    def choices(self) -> list[tuple[str, Any]]:
        """(label, value) of an enum column."""
        if self.kind == "enum":
            return [(v if isinstance(v, str) else json.dumps(v), v) for v in self.schema["enum"]]
        if self.kind == "titled_enum":
            branches = self.schema.get("oneOf") or self.schema["anyOf"]
            return [(str(b.get("title", b["const"])), b["const"]) for b in branches]
        return []

    def hint(self) -> str:
        kinds = {"integer": "whole number", "number": "number", "date": "YYYY-MM-DD"}
        text = kinds.get(self.kind or "", "")
        if self.schema.get("format") == "date-time":
            text = "YYYY-MM-DDTHH:MM:SS"
        return f"{text}, empty: null" if self.nullable and text else text


def table_columns(root: Schema, items: Any, refs: tuple[str, ...] = ()) -> list[Column] | None:
    """The grid's columns for an array's ``items`` schema; ``[]`` for a row object without declared
    properties (a bare DataFrame); ``None`` when the rows are not flat (a nested value: not a table)."""
    if not isinstance(items, Mapping):
        return None
    prepared = prepare(root, items, refs)
    schema = prepared.schema
    if prepared.kind == "json":
        bare = schema.get("type") == "object" and not schema.get("properties")
        others = ("additionalProperties", "patternProperties", "oneOf", "anyOf", "allOf", "not", "$ref")
        return [] if bare and not any(k in schema for k in others) else None
    if prepared.kind != "object":
        return None
    required = set(schema.get("required") or ())
    columns = []
    for name, sub in schema["properties"].items():
        column = _column(root, str(name), sub, prepared.refs, name in required)
        if column is None:
            return None
        columns.append(column)
    return columns


def _column(root: Schema, name: str, sub: Any, refs: tuple[str, ...], required: bool) -> Column | None:
    prepared, nullable = prepare(root, sub, refs), False
    while prepared.kind == "nullable":  # X | None, possibly wrapped twice (anyOf[[number, null], null])
        inner = split_nullable(prepared.schema)
        if inner is None:
            return None
        prepared, nullable = prepare(root, inner, prepared.refs), True
    if prepared.kind not in SCALAR_KINDS:
        return None
    if prepared.kind == "titled_enum":
        branches = prepared.schema.get("oneOf") or prepared.schema["anyOf"]
        if not all(is_const_choice(b) for b in branches):
            return None
    return Column(name, prepared.schema, prepared.kind, nullable, required)


# -- cells ---------------------------------------------------------------------------------------------


def parse_cell(text: str, column: Column) -> tuple[Any, str]:
    """A cell typed or pasted as text -> ``(JSON value, "")``, ``(EMPTY, "")`` when empty (the row leaves
    it out, or sends ``null`` for a nullable column), or ``(EMPTY, message)``."""
    kind, stripped = column.kind, text.strip()
    if not stripped:
        return (None, "") if column.nullable else (EMPTY, "")
    if kind is None:  # a free column: a JSON scalar when the text is one, else the text
        try:
            value = json.loads(stripped)
        except ValueError:
            return text, ""
        if isinstance(value, float) and not math.isfinite(value):  # NaN: missing; 1e999, Infinity: text
            return (None, "") if math.isnan(value) else (text, "")
        return (value, "") if not isinstance(value, (list, dict)) else (text, "")
    if kind in ("integer", "number"):
        if stripped.lower() in _NULL_WORDS:
            if column.nullable:
                return None, ""
            return EMPTY, f"{stripped!r} is a missing value; this column needs a number"
        return parse_number(stripped, kind == "integer")
    if kind == "boolean":
        word = stripped.lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE, ""
        return EMPTY, f"{stripped!r} is not true or false"
    if kind in ("enum", "titled_enum"):
        for label, value in column.choices():
            if stripped in (label, value if isinstance(value, str) else json.dumps(value)):
                return value, ""
        names = ", ".join(label for label, _ in column.choices())
        return EMPTY, f"{stripped!r} is not one of: {names}"
    if kind == "const":
        return column.schema["const"], ""
    if kind == "date":
        return _date(stripped)
    return text, ""


def _date(text: str) -> tuple[Any, str]:
    try:
        return dt.date.fromisoformat(text).isoformat(), ""
    except ValueError:
        pass
    try:  # a spreadsheet's date with a midnight time: 2024-01-05 00:00:00
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return EMPTY, f"{text!r} is not a date (YYYY-MM-DD)"
    if moment.time() == dt.time(0) and moment.tzinfo is None:
        return moment.date().isoformat(), ""
    return EMPTY, f"{text!r} is a date and time; this column takes a date (YYYY-MM-DD)"


def cell_text(value: Any) -> str:
    """How a JSON value shows in a text cell."""
    if value is None or value is EMPTY:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _row(cells: Sequence[tuple[Column, Any]]) -> dict[str, Any]:
    return {column.name: value for column, value in cells if value is not EMPTY}


# -- pasted text ---------------------------------------------------------------------------------------


def parse_table(text: str, columns: Sequence[Column]) -> tuple[list[Column], list[dict[str, Any]]]:
    """Tab- or comma-separated text (Excel, Sheets, a CSV file) -> ``(columns, rows)``.

    A first line whose cells all name columns is a header: the cells are matched by name, in any order.
    Without one the cells are matched by position. For a table without declared columns the first line
    must be the header, and names the columns. A cell that does not fit its column raises
    :class:`TableProblem` naming the line and the column; nothing is half-taken."""
    if len(text) > MAX_PASTE_CHARS:
        raise TableProblem(
            f"the pasted text has {len(text):,} characters; a form takes at most {MAX_PASTE_CHARS:,} "
            "(pass a DataFrame with mcp.call, or use a variable)"
        )
    text = text.removeprefix("\ufeff")  # a byte order mark, as some CSV files begin
    first_line = next((line for line in io.StringIO(text, newline="") if line.strip()), "")  # no list of all
    if not first_line:
        raise TableProblem("nothing to paste: the text is empty")
    delimiter = (
        "\t" if "\t" in first_line else "," if "," in first_line else ";" if ";" in first_line else "\t"
    )
    # the whole text to the reader, so that a quoted cell keeps its line breaks and empty lines
    records = []
    for record in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
        if any(cell.strip() for cell in record):  # a blank line between rows is no row
            records.append(record)
            if len(records) > MAX_TABLE_ROWS + 1:  # + a header line
                raise TableProblem(f"the pasted text has more than {MAX_TABLE_ROWS:,} rows; {_TOO_MANY}")
    first = [cell.strip() for cell in records[0]]
    if not columns:  # a free table: the header names the columns
        values = [cell for cell in first if parse_number(cell, False)[0] is not EMPTY]
        if len(set(first)) != len(first) or not all(first) or values:
            seen = f": {values[0]!r} is a value, not a name" if values else ""
            raise TableProblem(f"the first line must name each column once (this table declares none){seen}")
        columns = [Column(name, {}, None, nullable=True) for name in first]
        order, body, start = list(columns), records[1:], 2
    else:
        by_name = {c.name.lower(): c for c in columns}
        if all(cell.lower() in by_name for cell in first) and len(set(first)) == len(first):
            order, body, start = [by_name[c.lower()] for c in first], records[1:], 2
        else:
            order, body, start = list(columns), records, 1
    rows = []
    for number, record in enumerate(body, start):
        if len(record) > len(order):
            raise TableProblem(
                f"line {number} has {len(record)} cells; the table has {len(order)} columns "
                f"({', '.join(c.name for c in order)})"
            )
        cells = []
        for column, raw in zip(order, record, strict=False):
            value, problem = parse_cell(raw, column)
            if problem:
                raise TableProblem(
                    _header_problem(number, first, columns)
                    or f"line {number}, column {column.name}: {problem}"
                )
            cells.append((column, value))
        cells += [(c, None) for c in order[len(record) :] if c.nullable]
        rows.append(_row(cells))
    return list(columns), rows


def _header_problem(number: int, first: list[str], columns: Sequence[Column]) -> str:
    """When line 1, read as data, does not fit but names some columns: a header with a wrong name."""
    names = {c.name.lower() for c in columns}
    if number != 1 or not any(cell.lower() in names for cell in first):
        return ""
    unknown = [cell for cell in first if cell.lower() not in names]
    doubled = [cell for cell in dict.fromkeys(first) if first.count(cell) > 1]
    why = f"{', '.join(map(repr, unknown))} names no column" if unknown else f"{doubled[0]!r} is named twice"
    return f"line 1 looks like a header, but {why} (the columns: {', '.join(c.name for c in columns)})"


# -- a variable of the notebook ------------------------------------------------------------------------

_TOO_MANY = "a form sends at most that many (pass the DataFrame with mcp.call, or mcp.map for a call per row)"


def _is_frame(value: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, Mapping) for r in value)


def dataframe_names(namespace: Mapping[str, Any]) -> list[str]:
    """The DataFrames of a namespace (a kernel's ``user_ns``), by name; private names left out."""
    return sorted(n for n, v in list(namespace.items()) if not n.startswith("_") and _is_frame(v))


def rows_of(
    value: Any, columns: Sequence[Column], name: str = "the value", *, sample: bool = False
) -> list[Any]:
    """A DataFrame (or a list of row dicts) as the rows ``mcp.call`` would send: ``to_jsonable``'s
    records, NaN as ``null``. :class:`TableProblem` when it is neither, has more than
    :data:`MAX_TABLE_ROWS` rows or duplicate column names, or its columns do not fit. ``sample``: check
    it all the same, but convert its first row only (what the form shows while a name is typed)."""
    frame = _is_frame(value)
    if not frame and not isinstance(value, list):
        raise TableProblem(f"{name} is a {type(value).__name__}, not a DataFrame")
    if len(value) > MAX_TABLE_ROWS:
        raise TableProblem(
            f"{name} has {len(value):,} rows; {_TOO_MANY.replace('that many', f'{MAX_TABLE_ROWS:,}')}"
        )
    if not frame and not _is_rows(value):
        raise TableProblem(f"{name} is a list of {_kinds(value)}, not a DataFrame or a list of row objects")
    if frame:
        doubled = list(dict.fromkeys(str(c) for c in value.columns[value.columns.duplicated()]))
        if doubled:  # to_dict("records") would keep one of them and drop the others' values
            raise TableProblem(f"{name} has duplicate columns ({', '.join(doubled)}); name each column once")
    rows: list[Any] = finite(to_jsonable(value[:1] if sample else value))
    if columns:
        have = list(dict.fromkeys(k for r in rows for k in r)) if rows else _frame_columns(value)
        names = [c.name for c in columns]
        missing = [c.name for c in columns if c.required and c.name not in have]
        unknown = [k for k in have if k not in names]
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
            if unknown:
                parts.append(f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
            raise TableProblem(
                f"{name} does not fit this table: {'; '.join(parts)} (its columns: {', '.join(names)})"
            )
    return rows


def _kinds(values: list[Any]) -> str:
    return ", ".join(sorted({type(v).__name__ for v in values if not isinstance(v, Mapping)}))


def _frame_columns(value: Any) -> list[str]:
    return [str(c) for c in getattr(value, "columns", [])]


# -- the field -----------------------------------------------------------------------------------------

Namespace = Callable[[], Mapping[str, Any]]
_MODES = [("Edit rows", "grid"), ("Paste", "paste"), ("Use a variable", "variable")]


class TableField(Field):
    """The grid (see the module docstring); ``mode`` is ``grid``, ``paste`` or ``variable``."""

    def __init__(self, kit: Kit, spec: Spec, columns: list[Column]) -> None:
        self.columns = columns
        self.free = not columns
        self.min_items = int(spec.schema.get("minItems", 0))
        self.max_items = spec.schema.get("maxItems")
        self.rows: list[list[Any]] = []  # one control per column, per row
        self._removers: list[Any] = []
        self.held: list[Any] | None = None  # rows past MAX_GRID_ROWS, held as data
        self.variable: Any = None  # the Combobox naming a DataFrame, made when first chosen
        self.paste_box: Any = None
        self._problem = ""  # of the last paste or variable lookup
        modes = [m for m in _MODES if m[1] != "variable" or kit.namespace is not None]
        self.chooser = widgets.ToggleButtons(options=modes, value="grid", layout=kit.plain)
        self.chooser.style.button_width = "auto"
        self.grid = widgets.GridBox(layout=widgets.Layout(grid_gap="2px 4px", width="auto"))
        self.add = kit.button("+ Add row")
        self.add.on_click(lambda _b: self.add_row())
        self.note = kit.html()
        self._slot = widgets.VBox([self.grid, self.add], layout=kit.plain)
        super().__init__(kit, spec, widgets.VBox([self.chooser, self._slot, self.note], layout=kit.plain))
        self.chooser.observe(lambda change: self._switch(str(change["new"])), names="value")
        self.set(EMPTY)

    # -- modes -------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return str(self.chooser.value)

    def _switch(self, mode: str) -> None:
        self._problem = ""
        if mode == "paste":
            self._slot.children = self._paste_parts()
        elif mode == "variable":
            self._slot.children = self._variable_parts()
            self._describe_variable()
        else:
            self._slot.children = (self.grid, self.add)
        self.show_errors([])

    def _paste_parts(self) -> tuple[Any, ...]:
        if self.paste_box is None:
            names = ", ".join(c.name for c in self.columns) or "the first line names them"
            self.paste_box = widgets.Textarea(
                placeholder=f"Paste rows here (tab- or comma-separated; columns: {names})",
                rows=5,
                layout=self.kit.wide,
            )
            self._paste_button = self.kit.button("Put into the grid")
            self._paste_button.on_click(lambda _b: self._paste_clicked())
        return (self.paste_box, self._paste_button)

    def _variable_parts(self) -> tuple[Any, ...]:
        if self.variable is None:
            self.variable = widgets.Combobox(
                placeholder="a DataFrame in the notebook", ensure_option=False, layout=self.kit.plain
            )
            self.variable.observe(lambda _c: self._describe_variable(), names="value")
            self._refresh_button = self.kit.button("\N{CLOCKWISE OPEN CIRCLE ARROW}")
            self._refresh_button.tooltip = "List the notebook's DataFrames again"
            self._refresh_button.on_click(lambda _b: self.refresh_names())
            self.refresh_names()
        return (widgets.HBox([self.variable, self._refresh_button], layout=self.kit.plain),)

    def refresh_names(self) -> list[str]:
        """List the namespace's DataFrames in the variable box; the names."""
        names = dataframe_names(self.kit.namespace()) if self.kit.namespace is not None else []
        if self.variable is not None:
            self.variable.options = tuple(names)
        return names

    # -- the API behind the buttons ----------------------------------------------------------------
    def paste(self, text: str) -> list[dict[str, Any]]:
        """Put pasted text into the grid (replacing its rows) and show the grid; the rows taken.
        :class:`TableProblem` (also shown next to the field) when the text does not fit."""
        try:
            columns, rows = parse_table(text, self.columns)
        except TableProblem as exc:
            self._problem = str(exc)
            self.show_errors([self._problem])
            raise
        if self.free:
            self.columns = columns
        self._problem = ""
        self.chooser.value = "grid"
        self.set(rows)
        return rows

    def _paste_clicked(self) -> None:
        try:
            self.paste(self.paste_box.value)
        except TableProblem:
            if len(self.paste_box.value) > MAX_PASTE_CHARS:  # not kept in the page (nor a saved widget state)
                self.paste_box.value = ""
            return  # shown next to the field
        self.paste_box.value = ""

    def use_variable(self, name: str) -> list[Any]:
        """Name the notebook variable whose rows are the value (as the variable box does); its rows now.
        :class:`TableProblem` (also shown next to the field) when there is no such DataFrame or its
        columns do not fit."""
        self.chooser.value = "variable"
        self.variable.value = name
        rows, problem = self._variable_rows()
        if problem:
            raise TableProblem(problem)
        taken: list[Any] = rows
        return taken

    def _variable_rows(self, sample: bool = False) -> tuple[Any, str]:
        name = (self.variable.value if self.variable is not None else "").strip()
        if not name:
            return EMPTY, "name a DataFrame of the notebook" if self.spec.required else ""
        namespace = self.kit.namespace() if self.kit.namespace is not None else {}
        if name not in namespace:
            frames = dataframe_names(namespace)
            known = f" (DataFrames: {', '.join(frames)})" if frames else " (it has no DataFrame)"
            return EMPTY, f"no variable {name!r} in the notebook{known}"
        try:
            return rows_of(namespace[name], self.columns, repr(name), sample=sample), ""
        except TableProblem as exc:
            return EMPTY, str(exc)
        except Exception as exc:  # a value to_jsonable cannot represent: said, not raised into a click
            return EMPTY, f"{name!r} cannot be sent as JSON: {exc}"

    def _describe_variable(self) -> None:  # at each key typed: the first row converted, not all of them
        rows, problem = self._variable_rows(sample=True)
        self.show_errors([problem] if problem else [])
        if rows is EMPTY:
            self.note.value = ""
            return
        count = len(self.kit.namespace()[self.variable.value.strip()]) if self.kit.namespace else 0
        self.note.value = (
            f'<div style="font-size:12px;{MUTED}">{count} row{"" if count == 1 else "s"} will be sent '
            f"(read again when the form is submitted)</div>"
        )

    # -- the grid ----------------------------------------------------------------------------------
    def add_row(self, values: Mapping[str, Any] | None = None) -> None:
        """Add a row to the grid (empty, or showing ``values``)."""
        self._append(values or {})
        self._layout()

    def _append(self, values: Mapping[str, Any]) -> None:
        self.rows.append([self._cell(c, values.get(c.name, EMPTY)) for c in self.columns])
        remove = self.kit.button("\N{MINUS SIGN}")
        remove.tooltip = "Remove this row"
        remove.on_click(lambda b: self._remove(b))
        self._removers.append(remove)

    def _remove(self, button: Any) -> None:
        index = self._removers.index(button)
        del self.rows[index], self._removers[index]
        self._layout()

    def _cell(self, column: Column, value: Any) -> Any:
        layout = self.kit.auto
        if column.kind == "boolean":
            box = widgets.Checkbox(
                value=value is True, indent=False, layout=layout, style=self.kit.check_style
            )
            box._mcp_column = column
            return box
        if column.kind in ("enum", "titled_enum"):
            choices = column.choices()
            options = [("—", -1)] + [(label, i) for i, (label, _v) in enumerate(choices)]
            index = next((i for i, (_l, v) in enumerate(choices) if v == value and value is not EMPTY), -1)
            drop = widgets.Dropdown(options=options, value=index, layout=layout, style=self.kit.desc_style)
            drop._mcp_column = column
            return drop
        text = widgets.Text(
            value=cell_text(value), placeholder=column.hint(), layout=layout, style=self.kit.text_style
        )
        text._mcp_column = column
        return text

    def _read(self, control: Any) -> tuple[Any, str]:
        column: Column = control._mcp_column
        if isinstance(control, widgets.Checkbox):
            return bool(control.value), ""
        if isinstance(control, widgets.Dropdown):
            if control.value < 0:
                return (None, "") if column.nullable else (EMPTY, "")
            return column.choices()[control.value][1], ""
        return parse_cell(control.value, column)

    def _layout(self) -> None:
        if self.held is not None and not _is_rows(self.held):  # not rows at all: shown, and reported
            text = json.dumps(self.held)
            text = text if len(text) <= 1_000 else f"{text[:1_000]}… ({len(text):,} characters)"
            self.grid.children = (self.kit.html(f"<code>{html.escape(text)}</code>"),)
            self.grid.layout.grid_template_columns = "auto"
            self.add.disabled = True
            return
        if self.held is not None:
            shown = self.held[:PREVIEW_ROWS]
            names = self.columns or [Column(k, {}, None) for k in dict.fromkeys(k for r in shown for k in r)]
            hidden = len(names) - PREVIEW_COLUMNS
            names = names[:PREVIEW_COLUMNS]
            titles = "".join(f"<th>{html.escape(c.name)}</th>" for c in names)
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(cell_text(r.get(c.name)))}</td>" for c in names) + "</tr>"
                for r in shown
            )
            more = len(self.held) - len(shown)
            self.grid.children = (
                self.kit.html(
                    f'<table class="mcpnb-table"><tr>{titles}</tr>{body}</table>'
                    f'<div style="font-size:12px;{MUTED}">{len(self.held)} rows'
                    + (f" ({more} more not shown)" if more > 0 else "")
                    + (f", {hidden:,} more columns not shown" if hidden > 0 else "")
                    + f"; too many to edit here (more than {MAX_GRID_ROWS} rows or {MAX_GRID_CELLS:,} "
                    "cells): paste again, or use a variable</div>"
                ),
            )
            self.grid.layout.grid_template_columns = "auto"
            self.add.disabled = True
            return
        if not self.columns:
            self.grid.children = (
                self.kit.html(
                    f'<div style="font-size:12px;{MUTED}">No columns yet: paste a table whose first line '
                    "names them, or use a variable.</div>"
                ),
            )
            self.grid.layout.grid_template_columns = "auto"
            self.add.disabled = True
            return
        head = [self._header(c) for c in self.columns]
        cells = [w for row, remove in zip(self.rows, self._removers, strict=True) for w in (*row, remove)]
        self.grid.children = (*head, self.kit.html(), *cells)
        self.grid.layout.grid_template_columns = f"repeat({len(self.columns)}, minmax(7em, 1fr)) auto"
        full = (len(self.rows) + 1) * len(self.columns) > MAX_GRID_CELLS
        self.add.disabled = full or (self.max_items is not None and len(self.rows) >= self.max_items)
        for remove in self._removers:
            remove.disabled = len(self.rows) <= self.min_items

    def _header(self, column: Column) -> Any:
        star = f' <span style="{ERROR}" title="required">*</span>' if column.required else ""
        title = column.schema.get("title") or column.name
        kind = column.hint() or column.kind or ""
        help_text = column.schema.get("description") or kind
        return self.kit.html(
            f'<div title="{html.escape(str(help_text))}"><b>{html.escape(str(title))}</b>{star}</div>'
        )

    # -- Field -------------------------------------------------------------------------------------
    def get(self) -> Any:
        if self.mode == "variable":
            return self._variable_rows()[0]
        if self.held is not None:
            return self.held
        if not self.rows and not self.spec.required:
            return EMPTY
        out = []
        for row in self.rows:
            record = {}
            for column, control in zip(self.columns, row, strict=True):
                value, problem = self._read(control)
                if problem:  # reported by local_errors; validation sees the text as it is
                    record[column.name] = control.value
                elif value is not EMPTY:
                    record[column.name] = value
            out.append(record)
        return out

    def set(self, value: Any) -> None:
        """Rows (a list of row objects) or a DataFrame into the grid; EMPTY empties it. A DataFrame that
        cannot be a form's table (too many rows, duplicate columns) leaves the grid empty and says why next
        to the field (``submit`` raises ``FormInvalid`` with it)."""
        self._problem = ""
        if value is not EMPTY and not isinstance(value, list) and _is_frame(value):
            try:
                value = rows_of(value, [], "the DataFrame")
            except TableProblem as exc:
                self.rows, self._removers, self.held = [], [], None
                self._layout()
                self._problem = str(exc)
                self.show_errors([self._problem])
                return
        if value is not EMPTY and not _is_rows(value):  # shown as it is; validation says what is wrong
            self.rows, self._removers, self.held = [], [], value
            self._layout()
            return
        rows = list(value) if isinstance(value, list) else []
        if self.free and rows:
            names = list(dict.fromkeys(k for r in rows if isinstance(r, Mapping) for k in r))
            self.columns = [Column(str(n), {}, None, nullable=True) for n in names]
        self.rows, self._removers, self.held = [], [], None
        if (
            len(rows) > MAX_GRID_ROWS
            or max(len(rows), self.min_items, 1) * len(self.columns) > MAX_GRID_CELLS
        ):
            self.held = rows
            self._layout()
            return
        for row in rows:
            self._append(row)
        for _ in range(self.min_items - len(rows)):
            self._append({})
        self._layout()

    def local_errors(self) -> list[str]:
        if self.mode == "variable":
            problem = self._variable_rows()[1]
            return [problem] if problem else []
        if self._problem:  # of the last paste, or of a DataFrame given to set()
            return [self._problem]
        problems = []
        for number, row in enumerate(self.rows, 1):
            for column, control in zip(self.columns, row, strict=True):
                problem = self._read(control)[1]
                if problem:
                    problems.append(f"row {number}, {column.name}: {problem}")
        return problems


def build_table(kit: Kit, spec: Spec, columns: list[Column]) -> Field:
    field = TableField(kit, spec, columns)
    if "default" in spec.schema:
        field.set(spec.schema["default"])
    return field
