"""Workshop 09: from a tool prototyped in a cell to a shipped server, kept honest by a recorded session."""

from __future__ import annotations

from _cells import Cell, code, md

CELLS: list[Cell] = [
    md("""
# 09 · From prototype to package: record, replay, export, verify

A tool prototyped in a notebook has to live somewhere else one day, and stay correct. This workshop takes
one tool the whole way:

1. **prototype** it in a cell and try it;
2. **record** a session with it: every JSON-RPC message, in a *cassette* (JSON Lines);
3. **replay** the cassette: a server that answers from the recording, offline;
4. **export** the notebook as a standalone server module (no Jupyter needed to run it);
5. **verify** the exported server against the recording: a snapshot test for tools;
6. **break** it and read the diff.
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
## 1. Prototype

A currency converter. The rates are a helper the tool uses: the export will have to take it along.
"""),
    code('''
from typing import Annotated, Literal

from mcp_notebook import Field

RATES = {"USD": 1.08, "GBP": 0.85, "JPY": 162.0}


def rate(currency: str) -> float:
    """Units of ``currency`` per euro."""
    return RATES[currency]


@mcp.tool(annotations={"readOnlyHint": True})
def convert(amount: Annotated[float, Field(ge=0)], to: Literal["USD", "GBP", "JPY"] = "USD") -> float:
    """Convert an amount of euros.

    Args:
        amount: Euros, not negative.
        to: The currency to convert to.
    """
    return round(amount * rate(to), 2)
'''),
    code("""
%mcp call convert amount=10 to=GBP
"""),
    md("""
## 2. Record a session

`mcp.record(NAME)` records the messages of one connection (by default the notebook's own tools) into
`NAME` until it stops; as a `with` block it stops by itself. The magic is `%mcp record NAME [SERVER]` and
`%mcp record --stop`. A recording starts with the connection's handshake and a fresh `tools/list`, so the
tool's schema is in it too. Credentials are blanked out, as in `%mcp trace`.
"""),
    code("""
import tempfile
from pathlib import Path

work = Path(tempfile.mkdtemp(prefix="workshop-09-"))
with mcp.record(work / "session.jsonl") as recording:
    mcp.call("convert", amount=10, to="USD").wait()
    mcp.call("convert", amount=250, to="GBP").wait()
recording
"""),
    md("""
One line per message. The first line is the header (format version, era, server); then who sent each
message, when, and the message itself:
"""),
    code("""
lines = (work / "session.jsonl").read_text().splitlines()
print(lines[0][:160])
for line in lines[1:]:
    print(line[:110])
"""),
    md("""
## 3. Replay it, offline

`Cassette(path)` is a server that answers from the recording: same method and same params, same answer.
What changes on every run never decides a match: JSON-RPC ids, `_meta` (progress tokens), `requestState`.
A request that was never recorded gets an error naming the nearest recorded one. Client code and notebooks
run against a cassette with no server, no network: in CI, in a demo, on a train.
"""),
    code("""
from mcp_notebook import Cassette

mcp.connect("offline", Cassette(work / "session.jsonl"))
"""),
    code("""
%mcp call offline.convert amount=250 to=GBP
"""),
    md("""
The same from plain Python, with no notebook: a client on the cassette.
"""),
    code("""
from mcp_notebook import connect

offline = connect(Cassette(work / "session.jsonl"))
offline.call_tool("convert", {"amount": 250, "to": "GBP"})["structuredContent"]
"""),
    code("""
from mcp_notebook import JSONRPCError

try:
    offline.call_tool("convert", {"amount": 11, "to": "USD"})
except JSONRPCError as error:
    print(error)
offline.close()
"""),
    md("""
From a terminal the same cassette is served with `mcp-notebook replay session.jsonl` (stdio) or
`--http 127.0.0.1:8000`, for any MCP client.

## 4. Export the notebook

`mcp-notebook export NB.ipynb -o server.py` writes the notebook's tools, resources and prompts as one
module, with the imports and the helper cells they use (`RATES`, `rate`), and nothing else: no magics, no
demo calls, no display. The module runs with `python server.py` (stdio) or `--http HOST:PORT`, and
imports nothing from Jupyter.
"""),
    code("""
import subprocess
import sys


def mcp_notebook(*args):
    \"\"\"Run the mcp-notebook command line with this kernel's Python, 2 minutes at most.\"\"\"
    command = [sys.executable, "-m", "mcp_notebook", *map(str, args)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as late:
        print(late.stdout or "", late.stderr or "", "(stopped after 120 s: no answer)", sep="")
        return
    print(done.stdout + done.stderr, f"(exit status {done.returncode})", sep="")


server_py = work / "converter_server.py"
mcp_notebook("export", "09_prototype_to_package.ipynb", "-o", server_py)
print(server_py.read_text())
"""),
    md("""
## 5. Verify the exported server against the recording

`mcp-notebook verify CASSETTE -- COMMAND` starts the server, re-sends every recorded request and compares
the answers, tool schemas included. Values that differ on every run are compared by rule: timestamps and
`_meta` not at all; task ids, cursors and `requestState` by presence (the live ones are used from then
on). Exit status 0: the same; 1: differences (printed); `--update` accepts them.
"""),
    code("""
mcp_notebook("verify", work / "session.jsonl", "--", sys.executable, server_py)
"""),
    md("""
## 6. Break it, see the diff

Someone "fixes" the pound's rate and adds a currency. The recording catches both: the schema change in
`tools/list` (a new `enum` value), and the answer that changed.
"""),
    code("""
broken_py = work / "broken_server.py"
broken = server_py.read_text().replace('"GBP": 0.85', '"GBP": 0.87').replace('"JPY"]', '"JPY", "CHF"]')
broken_py.write_text(broken)
mcp_notebook("verify", work / "session.jsonl", "--", sys.executable, broken_py)
"""),
    md("""
## Where next

* **In CI**: commit the cassette next to the module and run `mcp-notebook verify` (or the pytest plugin,
  below) on every change. `mcp-notebook test NB.ipynb` runs a notebook headless and fails on an error or
  a failed `%mcp check`.
* **pytest**: with `-p mcp_notebook.pytest_plugin` (or `--mcp-notebook`), a test gets connected clients and
  snapshot checks:

  ```python
  @pytest.mark.mcp_verify("session.jsonl", "converter_server.py")
  def test_converter_answers_as_recorded(): ...

  def test_offline(mcp_client):
      client = mcp_client("session.jsonl")          # or a notebook, a module, a command, a URL
      assert client.call_tool("convert", {"amount": 10, "to": "USD"})["structuredContent"]
  ```
* **Remote servers**: `mcp.record("everything.jsonl", "everything")` records a connection to any server;
  replay it to develop against a server that is slow, paid, or not always there.
"""),
]
