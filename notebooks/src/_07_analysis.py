"""Workshop 07: tools over DataFrames, from analysis cells; mcp.map over a table; figures back."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"

CELLS: list[Cell] = [
    md(f"""
# 07 · Analysis: DataFrames, arrays and figures across the tool boundary

Analysts prototype tools over their own data and call tools from analysis cells. In this workshop the
objects you already work with cross the tool boundary as they are:

1. a tool that takes and returns a **pandas DataFrame**, with a real JSON Schema for its columns;
2. its result back as a DataFrame with **`.to_pandas()`**, and what happens to **NaN**;
3. a tool that returns a **matplotlib figure** (an image block);
4. the same tools **served** over HTTP, as another program would call them;
5. one remote tool over **every row of a table** with `mcp.map`, and a plot of the results.

On the wire it is all JSON ([Tools > Structured Content]({SPEC}/server/tools#structured-content)):
a DataFrame travels as *records*, an array of row objects.
"""),
    code("""
%load_ext mcp_notebook
"""),
    code("""
import json
import sys
from typing import Annotated, TypedDict

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

readings = pd.DataFrame(
    {
        "city": ["Oslo", "Oslo", "Lima", "Lima", "Pune", "Pune"],
        "temp": [4.5, 6.0, 19.5, np.nan, 31.0, 29.5],  # one reading is missing
        "rain_mm": [1.2, 0.0, 0.0, 0.4, 12.5, 8.0],
    }
)
readings
"""),
    md("""
## 1. A tool over a DataFrame

Annotate with `pd.DataFrame`. A bare `DataFrame` is "an array of row objects"; to give the model the
column types, name a row type: `Annotated[pd.DataFrame, Row]` with `Row` a `TypedDict` (or a dataclass,
or a pydantic model). Here the *result*'s columns are declared, so the `outputSchema` says exactly what
comes back.
"""),
    code('''
class CityStats(TypedDict):
    city: str
    mean_temp: float
    rainy_days: int


@mcp.tool
def summarize(readings: pd.DataFrame) -> Annotated[pd.DataFrame, CityStats]:
    """Mean temperature and number of rainy days per city.

    Args:
        readings: One row per reading: city, temp (°C), rain_mm.
    """
    by_city = readings.groupby("city", sort=True)
    rainy = by_city["rain_mm"].apply(lambda mm: int((mm > 0).sum()))
    return pd.DataFrame({"mean_temp": by_city["temp"].mean(), "rainy_days": rainy}).reset_index()


print(json.dumps(mcp.tool_def("summarize")["outputSchema"], indent=2))
'''),
    md("""
`mean_temp` is `{"type": ["number", "null"]}`: a float may be missing. That is the one rule for **NaN
and ±Infinity** (JSON has neither): in `structuredContent` they are `null`, in the text copy they are
spelled out, and a `null` in a float column comes back as NaN.

## 2. Call it from a cell, get a DataFrame back

Pass the DataFrame itself; the result view draws the table (shape, column types, first rows).
"""),
    code("""
stats = mcp.call("summarize", readings=readings)
stats
"""),
    code("""
stats.to_pandas()
"""),
    md("""
Pune and Oslo have complete data. Drop Lima's other reading and its mean is NaN: `null` for programs,
`NaN` for people.
"""),
    code("""
partial = mcp.call("summarize", readings=readings.drop(index=2))
print(partial.structured["result"][0])  # structuredContent: Lima's mean is null
print(partial.text.splitlines()[1])  # the text content: the table as pandas prints it
"""),
    md("""
## 3. Figures are content too

Return a matplotlib `Figure` (or an `Axes`) and the caller gets a PNG image block. The figure is closed
after it is rendered, so a tool that plots on every call does not pile figures up.
"""),
    code('''
@mcp.tool
def plot_city(city: str, readings: pd.DataFrame) -> plt.Figure:
    """A bar chart of one city's temperatures."""
    rows = readings[readings["city"] == city].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(3, 2), dpi=60)
    ax.bar(rows.index.astype(str), rows["temp"].fillna(0))
    ax.set_title(city)
    return fig


chart = mcp.call("plot_city", city="Pune", readings=readings)
print(chart.content[0]["type"], chart.content[0]["mimeType"], "| open figures:", len(plt.get_fignums()))
chart
'''),
    md("""
## 4. Serve them

`mcp.serve()` puts the notebook's tools behind Streamable HTTP on 127.0.0.1 with a bearer token. Any MCP
client can now call `summarize`; here we connect to it like another program would, and the DataFrame
goes out over HTTP as JSON and comes back as a DataFrame.
"""),
    code("""
served = mcp.serve()
lab = mcp.connect("lab", served.url, headers=served.headers)
mcp.policy.set("lab.*", "allow")
mcp.call("lab.summarize", readings=readings).to_pandas()
"""),
    code("""
%mcp disconnect lab
mcp.stop_serving()
"""),
    md("""
## 5. One remote tool over every row of a table

`mcp.map(TOOL, rows)` calls a tool once per row: each row's columns are the arguments (an empty cell
leaves its argument out, so the tool's default applies). It asks **once** for the whole batch ("5 calls
to demo.divide"), shows one progress bar with Cancel and an ETA, runs `concurrency` calls at a time,
retries only transient failures (a timeout, a lost connection, HTTP 429), and **collects** the rows that
fail instead of stopping. (`%mcp map demo.divide pairs` is the magic form; in an `async` cell
`await mcp.map_async(...)` keeps the Cancel button live while it runs.)

The demo server runs as a subprocess over stdio; its `divide` refuses to divide by zero. The policy line
lets the batch run without a card: with **Run All** the next cells would run before anyone could click
Approve (reading a batch that still awaits approval raises "not finished: awaiting approval"). Delete
that line and run the cell on its own to see the card that asks once for all five calls.
"""),
    code("""
demo = mcp.connect("demo", [sys.executable, "-m", "mcp_notebook.demo_server"])
mcp.policy.set("demo.divide", "allow")
pairs = pd.DataFrame({"a": [1.0, 9.0, 2.0, 5.0, 7.0], "b": [4.0, 3.0, 0.0, 2.0, 8.0]}, index=list("vwxyz"))
ratios = mcp.map("demo.divide", pairs, concurrency=4)
ratios
"""),
    md("""
`ratios.to_pandas()` is aligned with the input's index, one row per input row: the result's columns, then
`status` (`ok`, `failed`, or `not run` for a row a cancelled batch never reached) and `error`. Join it
back onto the input and plot the rows that worked.
"""),
    code("""
table = pairs.join(ratios.to_pandas())
table
"""),
    code("""
ok = table[table["status"] == "ok"]
fig, ax = plt.subplots(figsize=(4, 2), dpi=60)
ax.bar(ok.index, ok["result"])
ax.set_title(f"a / b ({len(table) - len(ok)} row failed: {table['error'].dropna().iloc[0]})", fontsize=8)
plt.show()
"""),
    md("""
## What crossed the boundary

| Python | on the wire |
|---|---|
| `pd.DataFrame` | records: an array of row objects (a non-default index becomes columns) |
| numpy scalars and arrays | JSON numbers and nested lists |
| `pd.Timestamp`, `Timedelta` | ISO 8601 strings (`date-time`, `duration`) |
| NaN, ±Infinity | `null` in `structuredContent`, spelled out in the text |
| matplotlib `Figure`, PIL `Image` | an `image` content block (PNG) |

The full table is in the README ("Data frames, arrays and figures"). `mcp.map` comes from the engine:
`await Client(...).map("tool", rows)` does the same in a script, without a notebook.
"""),
    code("""
%mcp disconnect demo
"""),
    md("""
## Exercise: a table in, a table out

Design `flag_outliers`, a tool over a table of readings. Its contract:

- `readings` is a DataFrame whose rows are `{city: str, temp: float}` (declared, so the schema says so);
- the result is the same rows with a boolean column `outlier`: a temperature more than 10 °C from its
  city's median;
- an empty table is refused with a `ToolError` that says so; a row without `temp` never reaches the
  function (the schema refuses it).

Write the tool in the next cell (a solution is there to start from: rewrite it, or break it on purpose)
and run the check after it. Each point passes or fails on its own, with what the checker saw.
"""),
    code('''
from mcp_notebook import ToolError


class Reading(TypedDict):
    city: str
    temp: float


class Flagged(TypedDict):
    city: str
    temp: float
    outlier: bool


@mcp.tool(annotations={"readOnlyHint": True})
def flag_outliers(readings: Annotated[pd.DataFrame, Reading]) -> Annotated[pd.DataFrame, Flagged]:
    """Flag temperatures more than 10 °C away from their city's median.

    Args:
        readings: One row per reading: city and temp (°C).
    """
    if readings.empty:
        raise ToolError("there are no readings to check: send at least one row")
    median = readings.groupby("city")["temp"].transform("median")
    return readings.assign(outlier=(readings["temp"] - median).abs() > 10)
'''),
    code("""
rows = [{"city": "Oslo", "temp": 5.0}, {"city": "Oslo", "temp": 6.0}, {"city": "Oslo", "temp": 30.0}]


def flags(result):
    return [row["outlier"] for row in result["structuredContent"]["result"]]


mcp.check(
    "flag_outliers",
    samples=[({"readings": rows}, lambda result: flags(result) == [False, False, True])],
    errors=[{"readings": []}, {"readings": [{"city": "Oslo"}]}],
    required=["readings"],
    annotations={"readOnlyHint": True},
)
"""),
]
