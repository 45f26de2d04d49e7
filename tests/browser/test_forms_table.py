"""Issue 19 in a real browser: a DataFrame parameter's grid (paste into it, or name a kernel variable) and
``%mcp tools`` rows that open a form, each ending with the call's result in the cell, as a person does it.

Screenshots go to ``screenshot_dir`` (outside the repository; the path is printed).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import expect

from .conftest import UI_TIMEOUT_MS, Notebook, both_frontends

OpenNotebook = Callable[..., Notebook]
TOOL = '''\
from typing import Annotated, TypedDict
import pandas as pd

class Reading(TypedDict):
    city: str
    temp: float
    count: int

@mcp.tool
def summarize(readings: Annotated[pd.DataFrame, Reading]) -> str:
    """Summarize readings."""
    return (f"{len(readings)} rows; count {int(readings['count'].sum())}; "
            f"missing temp {int(readings['temp'].isna().sum())}; cities {'+'.join(readings['city'])}")'''
FRAME = (
    'frame = pd.DataFrame({"city": ["Oslo", "Rome", "Kyiv"], "temp": [1.5, None, -3.0], "count": [1, 2, 4]})'
)
#: as copied from a spreadsheet: tab-separated, a header line, an empty cell (a missing temperature)
PASTED = "city\ttemp\tcount\nOslo\t1.5\t3\nRome\t\t4\n"


@both_frontends
def test_paste_rows_into_the_grid_and_call(open_notebook: OpenNotebook, screenshot_dir: Path) -> None:
    notebook = open_notebook(["%load_ext mcp_notebook", TOOL, "%mcp form summarize"])
    notebook.run_all()
    form = notebook.output(2)
    form.get_by_role("button", name="Paste", exact=True).click()
    box = form.locator("textarea").first
    box.focus()
    notebook.page.keyboard.insert_text(PASTED)  # what a paste (Ctrl+V) puts into the box
    form.get_by_role("button", name="Put into the grid").click()
    cells = form.locator(".widget-gridbox input[type=text]")
    expect(cells).to_have_count(6, timeout=UI_TIMEOUT_MS)  # 2 rows x 3 columns
    assert [cells.nth(i).input_value() for i in range(6)] == ["Oslo", "1.5", "3", "Rome", "", "4"]
    form.get_by_role("button", name="Call", exact=True).click()
    expect(form).to_contain_text("2 rows; count 7; missing temp 1; cities Oslo+Rome", timeout=UI_TIMEOUT_MS)
    assert not notebook.errors(), notebook.errors()
    shot = notebook.screenshot(screenshot_dir / f"form-table-paste-{notebook.frontend}.png", whole=True)
    print(f"\nthe grid after a paste and a call: {shot}", file=sys.stderr)


@both_frontends
def test_use_a_kernel_variable_and_call_then_restart_and_reload(
    open_notebook: OpenNotebook, screenshot_dir: Path
) -> None:
    """Also: after Kernel > Restart and a reload the form with its grid shows its snapshot (the rows it
    sent), never "Error displaying widget: model not found"."""
    notebook = open_notebook(["%load_ext mcp_notebook", TOOL, FRAME, "%mcp form summarize"])
    notebook.run_all()
    form = notebook.output(3)
    form.get_by_role("button", name="Use a variable", exact=True).click()
    name = form.get_by_placeholder("a DataFrame in the notebook")
    name.fill("nope")
    expect(form).to_contain_text(
        "no variable 'nope' in the notebook (DataFrames: frame)", timeout=UI_TIMEOUT_MS
    )
    form.get_by_role("button", name="Call", exact=True).click()
    expect(form).to_contain_text("1 problem", timeout=UI_TIMEOUT_MS)
    expect(form).to_contain_text("Calls made with the form of summarize show here.")  # nothing was sent
    name.fill("frame")
    expect(form).to_contain_text("3 rows will be sent", timeout=UI_TIMEOUT_MS)
    form.get_by_role("button", name="Call", exact=True).click()
    expect(form).to_contain_text(
        "3 rows; count 7; missing temp 1; cities Oslo+Rome+Kyiv", timeout=UI_TIMEOUT_MS
    )
    assert not notebook.errors(), notebook.errors()
    shot = notebook.screenshot(screenshot_dir / f"form-table-variable-{notebook.frontend}.png", whole=True)
    print(f"\nthe grid fed by a kernel variable: {shot}", file=sys.stderr)

    notebook.save()
    notebook.restart_kernel()
    notebook.reload()
    shot = notebook.screenshot(screenshot_dir / f"form-table-restarted-{notebook.frontend}.png", whole=True)
    print(f"\nthe grid's form after restart + reload: {shot}", file=sys.stderr)
    assert not notebook.widget_errors(), notebook.widget_errors()
    form = notebook.output(3)
    expect(form).to_contain_text("Summarize readings.", timeout=UI_TIMEOUT_MS)
    expect(form).to_contain_text('"city": "Kyiv"')  # the snapshot: the rows the variable gave
    expect(form).to_contain_text("3 rows; count 7; missing temp 1; cities Oslo+Rome+Kyiv")


@both_frontends
def test_a_tool_row_opens_its_form_in_the_cell_and_survives_restart_and_reload(
    open_notebook: OpenNotebook, screenshot_dir: Path
) -> None:
    add = '@mcp.tool\ndef add(a: int, b: int = 2) -> int:\n    """Add two numbers."""\n    return a + b'
    notebook = open_notebook(["%load_ext mcp_notebook", add, "%mcp tools", "x = 1"])
    notebook.run_all()
    listing = notebook.output(2)
    listing.get_by_role("button", name="add", exact=True).click()
    expect(listing).to_contain_text("Add two numbers.", timeout=UI_TIMEOUT_MS)
    notebook.form_input(listing, "a").fill("40")
    listing.get_by_role("button", name="Call", exact=True).click()
    expect(listing).to_contain_text("42", timeout=UI_TIMEOUT_MS)
    expect(notebook.output(3)).to_have_text("")  # nothing went to the cell that ran last
    assert not notebook.errors(), notebook.errors()
    shot = notebook.screenshot(screenshot_dir / f"tool-row-form-{notebook.frontend}.png", whole=True)
    print(f"\na tool row opened into its form: {shot}", file=sys.stderr)

    # after Kernel > Restart and a reload: the table, the form and its result as saved, no "model not found"
    notebook.save()
    notebook.restart_kernel()
    notebook.reload()
    assert not notebook.widget_errors(), notebook.widget_errors()
    listing = notebook.output(2)
    expect(listing).to_contain_text("Add two numbers.", timeout=UI_TIMEOUT_MS)
    expect(listing).to_contain_text("Last call: add(a=40, b=2) — done.")
    expect(listing).to_contain_text("42")


WIDE = """\
ns = {}
exec("def wide(need: int, " + ", ".join(f"p{i}: str = 'd{i}'" for i in range(250))
     + ") -> str:\\n    return f'{need}/{p0}/{p150}/{p249}'", ns)
_ = mcp.tool(ns["wide"])"""


@both_frontends
def test_a_long_form_shows_its_first_fields_and_opens_the_others_in_pages(
    open_notebook: OpenNotebook, screenshot_dir: Path
) -> None:
    """A tool of 251 parameters: the form shows 100 fields and one button per other page; a page opens in
    place, what is typed there is sent, and a closed page's defaults are sent too."""
    notebook = open_notebook(["%load_ext mcp_notebook", WIDE, "%mcp form wide"])
    notebook.run_all()
    form = notebook.output(2)
    expect(form.locator("b", has_text="p98")).to_have_count(1, timeout=UI_TIMEOUT_MS)
    expect(form.locator("b", has_text="p150")).to_have_count(0)
    pages = form.get_by_role("button", name="Show fields")
    expect(pages).to_have_count(2)
    expect(pages.first).to_have_text("▸ Show fields 101-200 of 251: p99 … p198")
    notebook.form_input(form, "need").fill("7")
    pages.first.scroll_into_view_if_needed()
    shot = notebook.screenshot(screenshot_dir / f"form-long-pages-closed-{notebook.frontend}.png")
    print(f"\na long form, its pages closed: {shot}", file=sys.stderr)
    pages.first.click()
    expect(pages).to_have_count(1, timeout=UI_TIMEOUT_MS)
    box = notebook.form_input(form, "p150")
    expect(box).to_have_value("d150")
    box.fill("typed")
    box.scroll_into_view_if_needed()
    shot = notebook.screenshot(screenshot_dir / f"form-long-page-open-{notebook.frontend}.png")
    print(f"\na long form, its second page opened: {shot}", file=sys.stderr)
    form.get_by_role("button", name="Call", exact=True).click()
    expect(form).to_contain_text("7/d0/typed/d249", timeout=UI_TIMEOUT_MS)
    assert not notebook.errors(), notebook.errors()
