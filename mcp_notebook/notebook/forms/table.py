"""A table parameter (an array of flat row objects: a pandas DataFrame's records) as a grid (issue 19).

``TableField`` shows the rows as an editable grid, one column per property of the row schema, and
fills it three ways: typing into cells (+ Add row, a minus button per row), **pasting** tab- or
comma-separated text as copied from Excel, Sheets or a CSV file (a first line naming the columns is
optional), and **a kernel variable**: the name of a DataFrame in the notebook, whose rows are the
argument when the form is submitted. The value is what ``mcp.call`` sends for the same DataFrame: the
records of ``tools.to_jsonable`` with NaN as ``null``. A row object without declared properties (a bare
``pd.DataFrame`` parameter) is a table whose columns come from the pasted header line or the variable.

The pure parts (``table_columns``, ``parse_cell``, ``parse_table``, ``rows_of``) live in ``table_data.py``,
which holds no widgets, so the API and tests use them without a form.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from .fields import EMPTY, ERROR, MUTED, Field, Kit, Spec
from .table_data import (
    MAX_GRID_CELLS,
    MAX_GRID_ROWS,
    MAX_PASTE_CHARS,
    MAX_TABLE_ROWS,
    PREVIEW_COLUMNS,
    PREVIEW_ROWS,
    Column,
    TableProblem,
    cell_text,
    dataframe_names,
    is_frame,
    is_rows,
    parse_cell,
    parse_table,
    rows_of,
    table_columns,
)

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
        if self.held is not None and not is_rows(self.held):  # not rows at all: shown, and reported
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
        if value is not EMPTY and not isinstance(value, list) and is_frame(value):
            try:
                value = rows_of(value, [], "the DataFrame")
            except TableProblem as exc:
                self.rows, self._removers, self.held = [], [], None
                self._layout()
                self._problem = str(exc)
                self.show_errors([self._problem])
                return
        if value is not EMPTY and not is_rows(value):  # shown as it is; validation says what is wrong
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
