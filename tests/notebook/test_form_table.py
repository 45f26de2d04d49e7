"""A DataFrame parameter in a form is a grid (issue 19): columns from the row schema, add/remove rows,
paste of tab- or comma-separated text, and "use a kernel variable"; the value is what ``mcp.call`` sends.

Before: one fieldset per row, no paste, no variable (these tests failed: no ``TableField``, no
``form.field``).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterator
from typing import Annotated, Any, Literal, TypedDict

import ipywidgets as widgets
import pandas as pd
import pytest

from mcp_notebook.notebook.forms.fields import EMPTY
from mcp_notebook.notebook.forms.form import FormInvalid, SchemaForm
from mcp_notebook.notebook.forms.table import (
    MAX_GRID_CELLS,
    MAX_GRID_ROWS,
    MAX_PASTE_CHARS,
    MAX_TABLE_ROWS,
    Column,
    TableField,
    TableProblem,
    dataframe_names,
    parse_cell,
    parse_table,
    table_columns,
)
from mcp_notebook.tools import input_schema_for
from tests.notebook.ipyshell import WAIT, api


class Reading(TypedDict):
    city: str
    temp: float  # a float column: null allowed (NaN in the frame)
    count: int
    ok: bool
    day: dt.date
    kind: Literal["raw", "clean"]


def tool(readings: Annotated[pd.DataFrame, Reading]) -> int:
    """Count rows.

    Args:
        readings: The measurements.
    """
    return len(readings)


def bare(rows: pd.DataFrame) -> int:
    """Any table."""
    return len(rows)


SCHEMA = input_schema_for(tool)[0]
BARE = input_schema_for(bare)[0]


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "city": ["Oslo", "Rome"],
            "temp": [1.5, math.nan],
            "count": [3, 4],
            "ok": [True, False],
            "day": [dt.date(2024, 1, 5), dt.date(2024, 2, 29)],
            "kind": ["raw", "clean"],
        }
    )


ROWS = [
    {"city": "Oslo", "temp": 1.5, "count": 3, "ok": True, "day": "2024-01-05", "kind": "raw"},
    {"city": "Rome", "temp": None, "count": 4, "ok": False, "day": "2024-02-29", "kind": "clean"},
]


def walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def table(form: SchemaForm, name: str = "readings") -> TableField:
    field = form.field(name)
    assert isinstance(field, TableField)
    return field


# -- the columns ----------------------------------------------------------------------------------------


def test_a_dataframe_parameter_is_a_grid_with_a_column_per_row_property() -> None:
    form = SchemaForm(SCHEMA)
    grid = table(form)
    assert [c.name for c in grid.columns] == ["city", "temp", "count", "ok", "day", "kind"]
    temp = grid.columns[1]
    assert (temp.kind, temp.nullable, temp.required) == ("number", True, True)
    assert [c.kind for c in grid.columns] == ["string", "number", "integer", "boolean", "date", "enum"]
    headers = [w.value for w in grid.grid.children if isinstance(w, widgets.HTML)]
    assert any("<b>city</b>" in h for h in headers) and any("<b>kind</b>" in h for h in headers)
    assert "The measurements." in form.widget.children[0].value or "The measurements." in grid.head.value


def test_nested_rows_are_not_a_table_and_a_bare_frame_is_a_free_table() -> None:
    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}
    assert table_columns({}, nested) is None
    assert table_columns({}, {"type": "object"}) == []
    assert table_columns({}, {"type": "string"}) is None


# -- typing into the grid -------------------------------------------------------------------------------


def test_typed_cells_round_trip_the_types() -> None:
    form = SchemaForm(SCHEMA)
    grid = table(form)
    assert form.value == {"readings": []}  # required: an empty table, never a missing argument
    grid.add_row()
    city, temp, count, ok, day, kind = grid.rows[0]
    city.value, temp.value, count.value, day.value = "Oslo", "1.5", "3", "2024-01-05"
    ok.value = True
    kind.value = 0
    grid.add_row()
    city2, temp2, count2, _ok2, day2, kind2 = grid.rows[1]
    city2.value, temp2.value, count2.value, day2.value, kind2.value = "Rome", "", "4", "2024-02-29", 1
    assert form.value == {"readings": ROWS}
    assert form.validate() == []
    value = form.value["readings"]
    assert isinstance(value[0]["temp"], float) and isinstance(value[0]["count"], int)


def test_a_bad_cell_is_named_next_to_the_field_and_nothing_is_sent() -> None:
    sent: list[Any] = []
    form = SchemaForm(SCHEMA, on_submit=sent.append)
    grid = table(form)
    grid.set(ROWS)
    grid.rows[1][2].value = "many"
    with pytest.raises(FormInvalid, match=r"row 2, count: 'many' is not a number"):
        form.submit()
    assert "row 2, count" in grid.head.value and sent == []


def test_add_and_remove_rows_respect_min_and_max_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "people": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            }
        },
    }
    form = SchemaForm(schema)
    grid = table(form, "people")
    assert len(grid.rows) == 1 and grid._removers[0].disabled  # minItems 1
    grid.add.click()
    assert grid.add.disabled and not any(r.disabled for r in grid._removers)  # maxItems 2
    grid.rows[0][0].value, grid.rows[1][0].value = "Ann", "Bob"
    assert form.value == {"people": [{"name": "Ann"}, {"name": "Bob"}]}
    grid._removers[0].click()
    assert form.value == {"people": [{"name": "Bob"}]} and not grid.add.disabled


# -- paste ----------------------------------------------------------------------------------------------

COLUMNS = table_columns(SCHEMA, SCHEMA["properties"]["readings"]["items"]) or []


@pytest.mark.parametrize(
    "text",
    [
        "city\ttemp\tcount\tok\tday\tkind\nOslo\t1.5\t3\tTRUE\t2024-01-05\traw\nRome\t\t4\tFALSE\t2024-02-29\tclean\n",
        "Oslo\t1.5\t3\ttrue\t2024-01-05\traw\r\nRome\tNaN\t4\tfalse\t2024-02-29 00:00:00\tclean",
        'city,temp,count,ok,day,kind\n"Oslo",1.5,3,1,2024-01-05,raw\nRome,,4,0,2024-02-29,clean\n',
        "kind,day,ok,count,temp,city\nraw,2024-01-05,yes,3,1.5,Oslo\nclean,2024-02-29,no,4,,Rome",
    ],
    ids=["excel-with-header", "sheets-no-header", "csv", "header-in-another-order"],
)
def test_paste_parses_tab_or_comma_separated_text_with_or_without_a_header(text: str) -> None:
    assert parse_table(text, COLUMNS)[1] == ROWS
    form = SchemaForm(SCHEMA)
    grid = table(form)
    grid.chooser.value = "paste"
    grid.paste_box.value = text
    grid._paste_button.click()
    assert grid.mode == "grid" and len(grid.rows) == 2
    assert form.value == {"readings": ROWS} and form.validate() == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Oslo\tx\t3\ttrue\t2024-01-05\traw", "line 1, column temp: 'x' is not a number"),
        ("Oslo\t1\t3\ttrue\t5/1/2024\traw", "line 1, column day: '5/1/2024' is not a date"),
        ("Oslo\t1\t3\tmaybe\t2024-01-05\traw", "line 1, column ok: 'maybe' is not true or false"),
        ("Oslo\t1\t3\ttrue\t2024-01-05\tcooked", "line 1, column kind: 'cooked' is not one of: raw, clean"),
        ("a\tb\tc\td\te\tf\tg", "line 1 has 7 cells; the table has 6 columns"),
        ("   \n", "nothing to paste"),
    ],
)
def test_paste_that_does_not_fit_says_where_and_takes_nothing(text: str, message: str) -> None:
    with pytest.raises(TableProblem, match=message.replace("(", r"\(")):
        parse_table(text, COLUMNS)
    form = SchemaForm(SCHEMA)
    grid = table(form)
    grid.set(ROWS)
    with pytest.raises(TableProblem):
        grid.paste(text)
    assert message.split(":")[0] in grid.head.value
    assert form.value == {"readings": ROWS}  # the grid kept its rows


def test_paste_into_a_bare_dataframe_takes_the_columns_from_the_header() -> None:
    form = SchemaForm(BARE)
    grid = table(form, "rows")
    assert grid.columns == [] and "No columns yet" in grid.grid.children[0].value
    with pytest.raises(TableProblem, match="first line must name each column"):
        grid.paste("1,2\n3,")
    grid.paste("x,label,flag\n1,a,true\n2.5,007,null\n")
    assert form.value == {
        "rows": [{"x": 1, "label": "a", "flag": True}, {"x": 2.5, "label": "007", "flag": None}]
    }


def test_parse_cell_keeps_types_and_missing_values_apart() -> None:
    number = Column("n", {"type": "number"}, "number")
    nullable = Column("n", {"type": "number"}, "number", nullable=True)
    assert parse_cell("2", number) == (2.0, "") and isinstance(parse_cell("2", number)[0], float)
    assert parse_cell("2", Column("i", {}, "integer")) == (2, "")
    assert parse_cell("", number) == (EMPTY, "") and parse_cell("", nullable) == (None, "")
    assert parse_cell("NaN", nullable) == (None, "")
    assert parse_cell("NaN", number)[1] == "'NaN' is a missing value; this column needs a number"
    assert parse_cell(" x ", Column("s", {}, "string")) == (" x ", "")  # text kept as typed


def test_many_pasted_rows_are_held_and_previewed_not_made_into_widgets() -> None:
    form = SchemaForm(SCHEMA)
    grid = table(form)
    lines = "\n".join(f"c{i}\t{i}\t{i}\ttrue\t2024-01-05\traw" for i in range(MAX_GRID_ROWS + 5))
    grid.paste(lines)
    assert grid.rows == [] and grid.held is not None and len(form.value["readings"]) == MAX_GRID_ROWS + 5
    preview = grid.grid.children[0].value
    assert f"{MAX_GRID_ROWS + 5} rows" in preview and "c0" in preview and "too many to edit here" in preview


# -- a kernel variable ----------------------------------------------------------------------------------


def test_use_a_variable_sends_its_rows_and_bad_names_or_columns_are_refused() -> None:
    namespace: dict[str, Any] = {"frame": frame(), "other": pd.DataFrame({"temperature": [1.0]}), "n": 3}
    sent: list[Any] = []
    form = SchemaForm(SCHEMA, on_submit=sent.append, namespace=namespace)
    grid = table(form)
    assert dataframe_names(namespace) == ["frame", "other"]
    grid.chooser.value = "variable"
    assert grid.variable.options == ("frame", "other")
    assert grid.use_variable("frame") == ROWS
    assert "2 rows will be sent" in grid.note.value
    form.submit()
    assert sent == [{"readings": ROWS}]
    namespace["frame"] = frame().iloc[:1]  # read again when submitted
    form.submit()
    assert sent[-1] == {"readings": ROWS[:1]}
    for name, message in [
        ("nope", "no variable 'nope' in the notebook (DataFrames: frame, other)"),
        ("n", "'n' is a int, not a DataFrame"),
        (
            "other",
            "'other' does not fit this table: missing columns city, temp, count, ok, day, kind; "
            "unknown column temperature",
        ),
    ]:
        with pytest.raises(TableProblem):
            grid.use_variable(name)
        assert json.dumps(message)[1:-1].replace("'", "&#x27;") in grid.head.value
        with pytest.raises(FormInvalid, match=message.split(" (")[0]):
            form.submit()
    assert len(sent) == 2  # nothing went out for a bad name


def test_no_namespace_no_variable_choice() -> None:
    grid = table(SchemaForm(SCHEMA))
    assert [value for _label, value in grid.chooser.options] == ["grid", "paste"]


def test_set_value_takes_a_dataframe() -> None:
    form = SchemaForm(SCHEMA, values={"readings": frame()})
    assert form.value == {"readings": ROWS}
    assert table(form).rows[1][1].value == ""  # NaN: an empty cell


# -- the same as mcp.call -------------------------------------------------------------------------------


def _sent_arguments(mcp: Any) -> list[Any]:
    messages = [entry["message"] for entry in mcp.trace("local").entries]
    return [m["params"]["arguments"] for m in messages if m.get("method") == "tools/call"]


def test_the_form_value_is_what_mcp_call_sends_for_the_same_dataframe(shell: Any) -> None:
    mcp = api(shell)
    mcp.tool(tool)
    shell.user_ns["frame"] = frame()
    direct = mcp.call("tool", readings=shell.user_ns["frame"])
    direct.wait(WAIT)
    form = mcp.form("tool")
    table(form.form).use_variable("frame")
    via_variable = form.submit()
    via_variable.wait(WAIT)
    pasted = mcp.form("tool")
    table(pasted.form).paste(frame().to_csv(index=False))
    via_paste = pasted.submit()
    via_paste.wait(WAIT)
    first, second, third = _sent_arguments(mcp)
    assert first == second == third == {"readings": ROWS} == form.form.value
    assert via_variable.structured == via_paste.structured == direct.structured == {"result": 2}


# -- edges a person (or a careless file) brings ---------------------------------------------------------


def test_a_byte_order_mark_before_the_header_is_not_part_of_the_first_name() -> None:
    """Before: '\\ufeffcity' named no column, so the header was read as a row ('temp' is not a number)."""
    text = "\ufeffcity,temp,count,ok,day,kind\nOslo,1.5,3,1,2024-01-05,raw\nRome,,4,0,2024-02-29,clean\n"
    assert parse_table(text, COLUMNS)[1] == ROWS
    columns, rows = parse_table("\ufeffx,y\n1,2\n", [])
    assert [c.name for c in columns] == ["x", "y"] and rows == [{"x": 1, "y": 2}]


def test_quoted_cells_keep_their_delimiters_line_breaks_and_empty_lines() -> None:
    """Before: the text was cut into lines first, so a quoted line break was lost ('Os\\nlo' -> 'Oslo')
    and an empty line inside quotes dropped."""
    text = (
        'city,temp,count,ok,day,kind\n"Oslo, NO",1.5,3,1,2024-01-05,raw\n\n'
        '"line one\nline two\n\nline four",,4,0,2024-02-29,clean\n'
    )
    rows = parse_table(text, COLUMNS)[1]
    assert [r["city"] for r in rows] == ["Oslo, NO", "line one\nline two\n\nline four"]
    assert rows[1]["temp"] is None and len(rows) == 2  # the blank line between rows is no row


def test_a_huge_paste_is_refused_before_it_is_read_and_the_message_says_the_bound() -> None:
    """Before: 10 MB (or a million lines) was read cell by cell, then held in the form."""
    line = "Oslo\t1.5\t3\ttrue\t2024-01-05\traw\n"
    with pytest.raises(TableProblem, match=f"at most {MAX_PASTE_CHARS:,}"):
        parse_table(line * (MAX_PASTE_CHARS // len(line) + 1), COLUMNS)
    with pytest.raises(TableProblem, match=f"more than {MAX_TABLE_ROWS:,} rows"):
        parse_table("x\n" + "1\n" * 1_000_000, [])  # 2 MB: under the size, over the rows
    form = SchemaForm(SCHEMA)
    grid = table(form)
    grid.set(ROWS)
    with pytest.raises(TableProblem):
        grid.paste("city\n" + "Oslo\n" * (MAX_TABLE_ROWS + 1))
    assert f"{MAX_TABLE_ROWS:,}" in grid.head.value and form.value == {"readings": ROWS}
    grid.chooser.value = "paste"
    grid.paste_box.value = "x" * (MAX_PASTE_CHARS + 1)  # pasted into the box, then the button
    grid._paste_button.click()
    assert f"at most {MAX_PASTE_CHARS:,}" in grid.head.value and grid.paste_box.value == ""


def test_free_columns_keep_infinite_looking_text_and_read_nan_as_missing() -> None:
    """Before: '1e999' and 'Infinity' became float('inf'), which goes on the wire as null: a value lost."""
    free = Column("x", {}, None, nullable=True)
    assert parse_cell("1e999", free) == ("1e999", "") and parse_cell("-Infinity", free) == ("-Infinity", "")
    assert parse_cell("NaN", free) == (None, "") and parse_cell("2.5", free) == (2.5, "")


def test_a_variable_with_too_many_rows_or_duplicate_columns_is_refused_with_the_reason() -> None:
    """Before: a frame of any size was converted (at each key typed), and duplicate columns silently kept
    one column's values."""
    big = pd.DataFrame({"x": range(MAX_TABLE_ROWS + 1)})
    doubled = pd.DataFrame([[1, 2, 3]], columns=["a", "a", "b"])
    namespace: dict[str, Any] = {"big": big, "doubled": doubled, "ints": [1, 2]}
    sent: list[Any] = []
    form = SchemaForm(BARE, on_submit=sent.append, namespace=namespace)
    grid = table(form, "rows")
    for name, message in [
        ("big", f"'big' has {MAX_TABLE_ROWS + 1:,} rows; a form sends at most {MAX_TABLE_ROWS:,}"),
        ("doubled", "'doubled' has duplicate columns (a); name each column once"),
        ("ints", "'ints' is a list of int, not a DataFrame or a list of row objects"),
    ]:
        with pytest.raises(TableProblem, match=message.replace("(", r"\(").replace(")", r"\)")):
            grid.use_variable(name)
        with pytest.raises(FormInvalid):
            form.submit()
    assert sent == []
    given = SchemaForm(BARE, on_submit=sent.append, values={"rows": big})  # as form.submit(values) does
    with pytest.raises(FormInvalid, match=f"the DataFrame has {MAX_TABLE_ROWS + 1:,} rows"):
        given.submit()
    assert sent == [] and f"at most {MAX_TABLE_ROWS:,}" in table(given, "rows").head.value


def test_a_big_table_is_sent_whole_but_its_snapshots_and_card_are_cut(shell: Any, interactive: None) -> None:
    """Before: the form's snapshot (written into the notebook with every call), its "last call" note and
    the approval card's arguments table held every row's JSON: ~2 MB of HTML for 20,000 rows."""
    from mcp_notebook.notebook.calls.widgets import ApprovalCard

    mcp = api(shell)
    mcp.tool(bare)
    many = pd.DataFrame({"x": range(20_000), "label": ["some text"] * 20_000})
    shell.user_ns["many"] = many
    form = mcp.form("bare")
    table(form.form, "rows").use_variable("many")
    handle = form.submit()
    handle.wait(WAIT)
    assert handle.structured == {"result": 20_000}  # all of it went out
    snapshot = form.static_bundle()
    for text in (snapshot["text/html"], snapshot["text/plain"]):
        assert len(text) < 5_000, len(text)
    assert "20,000 items" in snapshot["text/plain"]
    card = ApprovalCard(mcp.prepare("bare", {"rows": many.to_dict("records")}))  # as the form sends it
    table_html = card.widget.children[0].value.split("as JSON")[0]
    assert len(table_html) < 5_000 and "characters in all" in table_html


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("City\tTemp\tCnt\tok\tday\tkind", "'Cnt' names no column"),
        ("=SUM(A1)\ttemp\tcount\tok\tday\tkind", "'=SUM(A1)' names no column"),  # a formula, as text
        ("city\tcity\tcount\tok\tday\tkind", "'city' is named twice"),
    ],
)
def test_a_header_with_a_wrong_name_is_said_as_such(header: str, said: str) -> None:
    """Before: it was read as a row of data: "line 1, column temp: 'Temp' is not a number"."""
    with pytest.raises(TableProblem, match=f"line 1 looks like a header, but {re.escape(said)}"):
        parse_table(f"{header}\nOslo\t1.5\t3\ttrue\t2024-01-05\traw", COLUMNS)
    assert parse_table("Oslo\t1.5\t3\ttrue\t2024-01-05\traw", COLUMNS)[1] == ROWS[:1]  # no header: data


def test_a_paste_with_thousands_of_columns_is_held_not_made_into_widgets() -> None:
    """Before: a header of 2,000 names made 2,000 header widgets and 2,000 cells a row (4,000+ widgets)."""
    from ipywidgets.widgets import widget as widget_module

    form = SchemaForm(BARE)
    grid = table(form, "rows")
    names = [f"c{i}" for i in range(2_000)]
    before = len(widget_module._instances)
    grid.paste(",".join(names) + "\n" + ",".join(str(i) for i in range(2_000)))
    assert len(widget_module._instances) - before < 20 and grid.held is not None
    assert form.value == {"rows": [{n: i for i, n in enumerate(names)}]}
    preview = grid.grid.children[0].value
    assert "1,970 more columns not shown" in preview and f"{MAX_GRID_CELLS:,} cells" in preview
    assert "c29" in preview and "c30<" not in preview


def test_a_huge_min_items_does_not_make_that_many_rows_of_widgets() -> None:
    """A schema asking for at least 100,000 rows: held (empty) and said, not 100,000 rows of widgets."""
    from ipywidgets.widgets import widget as widget_module

    items = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema = {"type": "object", "properties": {"t": {"type": "array", "minItems": 100_000, "items": items}}}
    before = len(widget_module._instances)
    form = SchemaForm(schema)
    assert len(widget_module._instances) - before < 200 and table(form, "t").held == []
    assert "too many to edit here" in table(form, "t").grid.children[0].value
