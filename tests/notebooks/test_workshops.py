"""Every workshop notebook in ``notebooks/`` runs end to end in a real kernel, headless, and shows what it
teaches.

Nobody can click in these runs, so ``MCP_NOTEBOOK_HEADLESS=1`` and ``MCP_NOTEBOOK_HEADLESS_POLICY=allow``
answer the approval cards (the notebooks explain that in their own words). Each notebook gets a fresh
kernel, a bounded time per cell, and its kernel is shut down however the run ends (nbclient's
``execute`` owns the kernel and cleans it up in a ``finally``). The quickstart runs in
``tests/browser/test_notebooks.py``, next to the check that the committed notebooks are what
``notebooks/src/_build.py`` writes, so neither is repeated here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
RUN_ELSEWHERE = {"quickstart"}  # tests/browser/test_notebooks.py
CELL_TIMEOUT = 60  # seconds; the slowest cell (a counted progress bar) takes about 2

# What each notebook must have shown once it ran: substrings of its outputs (printed text, text/plain and
# text/html of results), each the visible trace of one thing the notebook teaches.
EXPECTED: dict[str, list[str]] = {
    "02_remote_servers": [
        "check of to_fahrenheit: PASS (12/12 points)",  # the exercise, checked
        "'name': 'demo'",  # connected over stdio; the serverInfo server/discover returned
        "Hello, Ada!",  # a remote call, approved by the headless policy
        "'temperatures': [",  # structuredContent
        "data:image/png;base64,",  # an image content block, rendered inline
        "data:audio/wav;base64,",  # an audio player
        "['text', 'resource_link', 'resource']",  # a link and an embedded resource
        "# The demo server",  # the linked resource, read
        "Counted to 5.",  # progress, to the end
        "('cancelled', (",  # a call cancelled after its first progress notification
        "HTTP 401",  # the HTTP server refuses a client without its bearer token
        "weather.temperature",  # ... and answers one with it
        "('2026-07-28',\n {'tools': {'listChanged': True}",  # the default era (server/discover), capabilities
        "<code>server/discover</code>",  # the HTTP conversation's trace: no handshake in 2026-07-28
        "disconnected 'weather'",
    ],
    "03_forms_and_approvals": [
        "check of reserve_table: PASS",  # the exercise, checked
        "application/vnd.jupyter.widget-view+json",  # the forms are widgets
        '"$ref": "#/$defs/Traveller"',  # a nested object in the derived schema
        "('traveller.email', \"'ada-at-example' is not a 'email'\")",  # validated before sending
        "('stops.0.city', 'This field is required.')",
        "Ada: Lyon, Nice; 3 nights from 2026-05-01 to 2026-05-04, economy",  # submitted from code
        "headless policy (default: remote tool)",  # who approved, when nobody can click
        "The call to demo.divide was denied (rule 'demo.divide')",  # a denial is a result
        "Hello, Grace!",  # always allow
        "default: read-only tool of a trusted server",  # trust + auto_allow_read_only
        "but the tool declares destructiveHint",  # a pattern never auto-allows a destructive tool
        "%mcp call plan_trip traveller=",  # history, copied as a magic ...
        "mcp.call('plan_trip', {'traveller':",  # ... and as Python
        "No booking made (you chose 'decline')",  # elicitation, declined headless
        "(True, 'allow')",  # mcp.headless and the headless policy
    ],
    "04_tool_contracts_and_errors": [
        "check of split_bill: PASS",  # the exercise, checked
        "a bill can be split at most 50 ways, not 51",
        '"enum": [',  # Literal -> enum
        '"maximum": 30',  # Annotated[int, Field(le=30)]
        '"description": "How many nights, 1 to 30."',  # from the docstring's Args
        '"outputSchema": {',
        "'structuredContent': {'room': 'double', 'nights': 2, 'total_eur': 250.0}",
        "at 'nights': 40 is greater than the maximum of 30",  # input validation: a tool error ...
        "'isError': True",
        "a suite can be booked for at most 7 nights, not 9",  # ToolError
        "KeyError: '2026-06-01'",  # an unexpected exception, still an isError result
        "code: -32602\nmessage: Unknown tool: book_room",  # a protocol error
        "-32602 (Invalid params)",  # ... as the trace shows it
        """({'result': None}, '{"result": NaN}')""",  # NaN: null, and spelled out in the text
    ],
    "05_tools_resources_prompts": [
        "check of count_words: PASS",  # the exercise, checked
        "{'result': ['hobbit']}",  # the tool
        "shop://books/{book_id}",  # a resource template, listed
        "The Hobbit, by J. R. R. Tolkien",  # ... and read
        # a missing resource: -32602 in 2026-07-28 (the default era), -32002 up to 2025-11-25; a URI that
        # matches nothing and a resource function that raises the legacy code both get the era's code
        "2026-07-28 -32602 Resource not found {'uri': 'shop://authors/austen'}",
        "2026-07-28 -32602 Resource not found {'uri': 'shop://books/moby-dick'}",
        "2025-11-25 -32002 Resource not found {'uri': 'shop://authors/austen'}",
        "2025-11-25 -32002 Resource not found {'uri': 'shop://books/moby-dick'}",
        "I feel curious. Recommend one book of short length",  # the prompt's messages
        "-32602 Missing required arguments for prompt 'recommend': mood",
        "'values': ['homesick', 'hopeful']",  # completion of a prompt argument
        "'values': ['hobbit']",  # ... and of a template variable
    ],
    "09_prototype_to_package": [
        "recorded 'local' to ",  # mcp.record as a with block
        '{"cassette":"mcp-notebook","version":1,"era":"modern"',  # the cassette's header line
        "{'result': 212.5}",  # replayed offline: 250 EUR in GBP, from the recording
        '"result": 212.5',  # ... and through a notebook connection to the cassette (%mcp call)
        "the nearest recorded request is #",  # an unrecorded request names the nearest one
        "def rate(currency: str) -> float:",  # the export took the helper along ...
        "server = mcp",  # ... into a standalone module
        "3 requests, all answered as recorded",  # the exported server passes the recording
        "result.tools[convert].inputSchema.properties.to.enum[3]:",  # the broken one: its schema ...
        "result.structuredContent.result:\n    recorded: 212.5\n    live:     217.5",  # ... and an answer
        "(exit status 1)",
    ],
    "08_design_exercise": [
        "['README.md', 'src/tidy.py', 'tests/test_tidy.py']",  # listed inside the client's roots
        "['Which language should the summary be in?'] -> {'language': 'fr'",  # form elicitation
        "Tidy range les fichiers d'un dossier par type",  # ... then sampling
        "this client shares no roots: tell it which project folder to use",  # capability checked first
        "exists already: #1",  # a duplicate issue is a tool error
        "a call took 0.6 s and the tool cannot run as a task",  # lint's long-calls rule
        "{'issues': 1, 'readme_lines': 4, 'verdict': 'tidy enough'}",  # the long report, run as a task
        "full_report  completed",  # ... listed by %mcp tasks
        "check of project.create_issue: PASS (12/12 points)",  # the design, checked
        "project (trace): 0 error(s), 0 warning(s)",  # ... and the whole server passes its own lint
    ],
    "06_under_the_hood": [
        '<svg class="mcpnb-seq"',  # the trace as a sequence diagram
        "check of shout: PASS",  # the exercise, checked
        "there is nothing to shout: text is empty",  # ... whose refusal is an isError result
        '"method": "initialize"',  # the raw handshake, asked for with era="legacy"
        '"protocolVersion": "2025-11-25"',
        "notifications/initialized",
        "('2026-07-28',\n ['server/discover',\n  'result',\n  'note',",  # the default era: no handshake
        '"io.modelcontextprotocol/protocolVersion": "2026-07-28"',  # ... the version in every request
        '"progressToken": ',  # a request asking for progress ...
        '"method": "notifications/progress"',  # ... and the notifications
        '"method": "notifications/cancelled"',  # cancellation, on the wire
        '"code": -32602',  # a protocol error
        '"isError": true',  # a tool execution error
        "notifications/tools/list_changed",  # a redefined tool
        "updated tool 'double'",
        '"method":"notifications/cancelled"',  # the plain Client's raw trace
        "Hello, Python!",
    ],
    "07_analysis": [
        "check of flag_outliers: PASS (9/9 points)",  # the exercise, checked
        # the DataFrame's outputSchema: a float column may be null (NaN)
        '"mean_temp": {\n          "type": [\n            "number",\n            "null"',
        "table: 3 rows x 3 columns",  # a DataFrame result, drawn as a table
        "✓ valid against outputSchema",
        "{'city': 'Lima', 'mean_temp': None, 'rainy_days': 1}",  # NaN is null in structuredContent ...
        "0  Lima        NaN           1",  # ... and spelled out in the text
        "image image/png | open figures: 0",  # a figure became a PNG and was closed
        "-> summarize",  # served over HTTP, the console saw the call
        "5 calls to demo.divide: 4 succeeded, 1 failed",  # mcp.map over a table, over stdio
        "x  2.0  0.0     NaN  failed  cannot divide by zero: pass a non-zero b",  # aligned with the input
        "data:image/png;base64,",  # the figure, rendered inline from its image block
    ],
}


def workshops() -> list[str]:
    return sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb") if path.stem not in RUN_ELSEWHERE)


def shown(notebook: Any) -> str:
    """Everything the notebook's code cells printed or displayed, as one string."""
    parts: list[str] = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            if output.output_type == "stream":
                parts.append(output.text)
            data = output.get("data", {})
            parts.extend(str(data[mime]) for mime in ("text/plain", "text/html") if mime in data)
            if "application/vnd.jupyter.widget-view+json" in data:
                parts.append("application/vnd.jupyter.widget-view+json")
    return "\n".join(parts)


def test_the_notebooks_folder_shows_notebooks_first() -> None:
    """Issue 19: Jupyter's file browser listed the generator's ``_*.py`` files above the notebooks; they
    live in notebooks/src/ (failed before: eleven .py files beside the notebooks)."""
    assert sorted(path.name for path in NOTEBOOKS.glob("*.py")) == []
    assert (NOTEBOOKS / "src" / "_build.py").is_file()


def test_every_workshop_has_checks() -> None:
    assert workshops() == sorted(EXPECTED), "add the new notebook's key outputs to EXPECTED"


@pytest.mark.parametrize("name", sorted({"quickstart", *workshops()}))
def test_workshop_needs_no_network(name: str) -> None:
    """Workshops run anywhere: local subprocesses (sys.executable), in-notebook servers, 127.0.0.1 only."""
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        assert "npx" not in cell.source, cell.source
        for url in re.findall(r"https?://[^\s\"')]+", cell.source):
            assert url.startswith("http://127.0.0.1"), url


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", workshops())
def test_workshop_runs_headless(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "1")
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS_POLICY", "allow")
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    where = {"metadata": {"path": str(NOTEBOOKS)}}  # the kernel's working directory
    client = NotebookClient(
        notebook, timeout=CELL_TIMEOUT, startup_timeout=60, kernel_name="python3", resources=where
    )
    client.execute()  # raises CellExecutionError (with the traceback) at the first failing cell
    keep = os.environ.get("MCP_NOTEBOOK_EXECUTED_DIR")  # scripts/test: the docs site shows these runs
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, str(Path(keep) / f"{name}.ipynb"))
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors
    unrun = [cell.id for cell in notebook.cells if cell.cell_type == "code" and cell.execution_count is None]
    assert not unrun
    text = shown(notebook)
    missing = [expected for expected in EXPECTED.get(name, []) if expected not in text]
    assert not missing, f"{name} did not show: {missing}"
