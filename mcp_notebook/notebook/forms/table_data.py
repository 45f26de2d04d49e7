"""The pure half of a table parameter (issue 19): the columns of a row schema, cells and pasted text
parsed into typed rows, and a DataFrame (or a list of row objects) checked and converted into the rows
``mcp.call`` would send. No widgets here: the API and tests use these without a form; ``table.py`` is the
grid that shows them.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...tools import finite, to_jsonable
from .fields import EMPTY, parse_number
from .schema import Schema, is_const_choice, prepare, split_nullable

__all__ = [
    "MAX_GRID_CELLS",
    "MAX_GRID_ROWS",
    "MAX_PASTE_CHARS",
    "MAX_TABLE_ROWS",
    "PREVIEW_COLUMNS",
    "PREVIEW_ROWS",
    "Column",
    "TableProblem",
    "cell_text",
    "dataframe_names",
    "is_frame",
    "is_rows",
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


def is_frame(value: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def is_rows(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, Mapping) for r in value)


def dataframe_names(namespace: Mapping[str, Any]) -> list[str]:
    """The DataFrames of a namespace (a kernel's ``user_ns``), by name; private names left out."""
    return sorted(n for n, v in list(namespace.items()) if not n.startswith("_") and is_frame(v))


def rows_of(
    value: Any, columns: Sequence[Column], name: str = "the value", *, sample: bool = False
) -> list[Any]:
    """A DataFrame (or a list of row dicts) as the rows ``mcp.call`` would send: ``to_jsonable``'s
    records, NaN as ``null``. :class:`TableProblem` when it is neither, has more than
    :data:`MAX_TABLE_ROWS` rows or duplicate column names, or its columns do not fit. ``sample``: check
    it all the same, but convert its first row only (what the form shows while a name is typed)."""
    frame = is_frame(value)
    if not frame and not isinstance(value, list):
        raise TableProblem(f"{name} is a {type(value).__name__}, not a DataFrame")
    if len(value) > MAX_TABLE_ROWS:
        raise TableProblem(
            f"{name} has {len(value):,} rows; {_TOO_MANY.replace('that many', f'{MAX_TABLE_ROWS:,}')}"
        )
    if not frame and not is_rows(value):
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
