"""Write the workshop notebooks from their cell lists, outputs cleared, so they stay reviewable.

The quickstart's cells are below; each workshop's are in ``_NN_<name>.py`` next to this file, in
``notebooks/src/`` (so that a person opening ``notebooks/`` in Jupyter sees the notebooks, not these).

Usage: python notebooks/src/_build.py          (write them)
       python notebooks/src/_build.py --check  (exit 1 if a notebook differs from what this file says)

Cell ids are fixed (``<notebook>-<n>``), so rebuilding an unchanged notebook changes no byte.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import _exercises as exercises
import nbformat

# The workshop modules sit next to this file (the script's directory is on sys.path when it runs).
from _02_remote_servers import CELLS as REMOTE_SERVERS
from _03_forms_and_approvals import CELLS as FORMS_AND_APPROVALS
from _04_tool_contracts_and_errors import CELLS as TOOL_CONTRACTS_AND_ERRORS
from _05_tools_resources_prompts import CELLS as TOOLS_RESOURCES_PROMPTS
from _06_under_the_hood import CELLS as UNDER_THE_HOOD
from _07_analysis import CELLS as ANALYSIS
from _08_design_exercise import CELLS as DESIGN_EXERCISE
from _09_prototype_to_package import CELLS as PROTOTYPE_TO_PACKAGE
from _cells import Cell, code, md

HERE = Path(__file__).resolve().parent.parent  # notebooks/: the generator lives in notebooks/src/


QUICKSTART: list[Cell] = [
    md("""
# mcp_notebook quickstart

The [Model Context Protocol](https://modelcontextprotocol.io) (MCP) lets an AI application call
**tools** that a **server** offers. In this notebook you will:

1. turn a Python function into an MCP tool,
2. look at the schema MCP derives from it, call it, and fill in its form,
3. connect to a real MCP server (a small demo that runs on this machine) and call one of its tools,
4. read the JSON-RPC messages that went back and forth.

Run the cells one by one with **Shift+Enter**.
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
## 1. Build a tool

`@mcp.tool` turns a function into a tool. The type hints become the tool's **input schema** (what the
caller may send), the docstring its description, and the return type its **output schema**.
Re-running the cell updates the tool.
"""),
    code('''
from dataclasses import dataclass
from typing import Annotated

from mcp_notebook import Field


@dataclass
class Forecast:
    city: str
    temperatures: list[float]


@mcp.tool
def forecast(city: str, days: Annotated[int, Field(ge=1, le=14)] = 3) -> Forecast:
    """Forecast the weather (made up, for the demo).

    Args:
        city: City name.
        days: How many days ahead (1 to 14).
    """
    temperatures = [round(12.0 + 3.5 * ((len(city) + day) % 4), 1) for day in range(days)]
    return Forecast(city, temperatures)
'''),
    md("""
## 2. See its schema

`%mcp tools` lists every tool this notebook can call. Under the table, open **schemas of forecast** to
see its input and output schemas: `days` is an integer between 1 and 14 with a default of 3, and `city`
is required.
"""),
    code("""
%mcp tools
"""),
    md("""
## 3. Call it

`%mcp call TOOL name=value ...` calls the tool through a real MCP client, exactly as an AI application
would, and shows the result.
"""),
    code("""
%mcp call forecast city=Paris days=2
"""),
    md("""
Assign the call to keep the result: `r.structured` is the structured value (checked against the
output schema), `r.result` the whole MCP result.
"""),
    code("""
r = %mcp call forecast city=Lyon days=3
r.structured
"""),
    md("""
A value the schema forbids never reaches your function: the caller gets a readable tool error instead.
"""),
    code("""
%mcp call forecast city=Lyon days=30
"""),
    md("""
## 4. Fill its form

The same schema drives a form: required fields are marked, bounds are checked before anything is sent.
Type a city and press **Call**.
"""),
    code("""
%mcp form forecast
"""),
    md("""
## 5. Connect to a server

`mcp_notebook` ships a small demo server. `%mcp connect NAME -- COMMAND` starts it as a subprocess and
talks MCP to it over its stdin and stdout (the *stdio* transport); nothing goes over the network.
"""),
    code("""
%mcp connect demo -- python -m mcp_notebook.demo_server
"""),
    md("""
If `python` there is not the Python running this notebook, connect from Python instead:
`mcp.connect("demo", [sys.executable, "-m", "mcp_notebook.demo_server"])` (after `import sys`).
The table of tools now lists the demo server's tools too:
"""),
    code("""
%mcp tools
"""),
    md("""
## 6. Call a remote tool

A tool from another server runs only once you say so: press **Approve** on the card below. The demo
server's `sunrise` tool draws a picture; it comes back as an *image content block* and shows inline.
"""),
    code("""
%mcp call demo.sunrise
"""),
    md("""
## 7. Look under the hood

Everything above was JSON-RPC messages: `server/discover` (which protocol versions the server speaks;
an older server gets the `initialize` handshake instead), `tools/list`, `tools/call`, and the answers.
`%mcp trace` shows them in order; open a row to read the JSON.
"""),
    code("""
%mcp trace
"""),
    md("""
## Where next

Try the demo server's other tools: `demo.count_slowly` (a progress bar with a **Cancel call** button),
`demo.tone` (a sound), `demo.find_docs` (a resource link), `demo.book_table` (the server asks *you* a
question) and `demo.divide a=1 b=0` (a tool error). Leave out a required argument
(`%mcp call demo.divide b=0`) and you are told before any approval card appears. `%mcp --help` lists
every command.
"""),
]

NOTEBOOKS: dict[str, list[Cell]] = {
    "quickstart": QUICKSTART,
    # each workshop ends with an exercise: a contract to design and a cell that checks it
    "02_remote_servers": [*REMOTE_SERVERS, *exercises.REMOTE_SERVERS],
    "03_forms_and_approvals": [*FORMS_AND_APPROVALS, *exercises.FORMS_AND_APPROVALS],
    "04_tool_contracts_and_errors": [*TOOL_CONTRACTS_AND_ERRORS, *exercises.TOOL_CONTRACTS],
    "05_tools_resources_prompts": [*TOOLS_RESOURCES_PROMPTS, *exercises.TOOLS_RESOURCES_PROMPTS],
    "06_under_the_hood": [*UNDER_THE_HOOD, *exercises.UNDER_THE_HOOD],
    "07_analysis": ANALYSIS,
    "08_design_exercise": DESIGN_EXERCISE,  # an exercise from start to end
    "09_prototype_to_package": PROTOTYPE_TO_PACKAGE,
}


def build(name: str, cells: list[Cell]) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    # ipykernel's whole language_info, version included: JupyterLab writes the running kernel's into the
    # notebook and marks it modified unless it is already there (issue 19: the quickstart opened
    # "modified"). The version is the building Python's (scripts/setup.sh's); --check ignores it.
    notebook.metadata["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": platform.python_version(),
    }
    for number, (kind, source) in enumerate(cells, start=1):
        cell = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
        cell["id"] = f"{name}-{number}"
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    return nbformat.writes(notebook) + "\n"


def _unversioned(text: str) -> str:
    """The notebook's text without its language_info version (which Python built it is no difference)."""
    notebook = json.loads(text)
    notebook.get("metadata", {}).get("language_info", {}).pop("version", None)
    return json.dumps(notebook, sort_keys=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a notebook is not up to date")
    args = parser.parse_args()
    stale = []
    for name, cells in NOTEBOOKS.items():
        path, text = HERE / f"{name}.ipynb", build(name, cells)
        if args.check:
            if not path.exists() or _unversioned(path.read_text()) != _unversioned(text):
                stale.append(path.name)
        elif not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(HERE.parent)}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run: python notebooks/src/_build.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
