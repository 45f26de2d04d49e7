"""A notebook's session as a cassette (issue 23): ``%mcp record`` / ``mcp.record`` on the notebook's own
tools, replayed offline; the notebook exported as a module (``mcp-notebook export``) that passes the same
cassette as the notebook it came from, over stdio; a broken export reports the change."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError

from mcp_notebook import Cassette, Client
from mcp_notebook.engine.cassette import exchanges, read_cassette
from mcp_notebook.engine.verify import verify
from mcp_notebook.errors import TargetError
from mcp_notebook.export import export_notebook
from tests.cassette.test_cassette_cli import cli
from tests.notebook import ipyshell

shell = ipyshell.shell
shell_factory = ipyshell.shell_factory
RUN_TIMEOUT = 120

CELLS = [
    "%load_ext mcp_notebook",
    "import math\nfrom typing import Annotated\n\nfrom mcp_notebook import Field\nimport IPython",
    "UNITS = {'km': 1000.0, 'mi': 1609.344}\n\n\ndef to_metres(value: float, unit: str) -> float:\n"
    "    return value * UNITS[unit]",
    "to_metres(1, 'mi')  # a look at the helper: display only",
    "@mcp.tool\ndef distance(value: Annotated[float, Field(ge=0)], unit: str = 'km') -> float:\n"
    "    '''A distance in metres.'''\n    return round(to_metres(value, unit), 3)",
    "%%mcp_tool --read-only\ndef hypot(a: float, b: float) -> float:\n    '''The hypotenuse.'''\n"
    "    return math.hypot(a, b)",
    "@mcp.resource('units://all')\ndef units() -> str:\n    '''The units known.'''\n"
    "    return ', '.join(sorted(UNITS))",
    "@mcp.prompt\ndef convert(value: str) -> str:\n    '''Ask for a conversion.'''\n"
    "    return f'Convert {value} to metres'",
    "%mcp call distance value=2 unit=mi",
    "unused = IPython.get_ipython()",
]


def write_notebook(path: Path, cells: list[str]) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(notebook, str(path))
    return path


def run(shell: Any, cells: list[str]) -> None:
    for source in cells:
        result = shell.run_cell(source)
        assert result.success, result.error_in_exec or result.error_before_exec


def session(mcp: Any) -> None:
    mcp.call("distance", value=2, unit="mi").wait()
    mcp.call("hypot", a=3, b=4).wait()
    mcp.read("units://all")
    mcp.prompt_get("convert", {"value": "3 km"})


def test_magic_records_the_notebook_tools_and_replays(shell: Any, tmp_path: Path) -> None:
    run(shell, CELLS[1:8])
    path = tmp_path / "session"
    recording = shell.run_line_magic("mcp", f"record {path}")
    assert recording.recording and recording.path == tmp_path / "session.jsonl"
    with pytest.raises(UsageError, match="already being recorded"):
        shell.run_line_magic("mcp", f"record {tmp_path / 'again'}")
    session(shell.user_ns["mcp"])
    stopped = shell.run_line_magic("mcp", "record --stop")
    assert not stopped.recording and stopped.count > 0
    with pytest.raises(UsageError, match="nothing is being recorded"):
        shell.run_line_magic("mcp", "record --stop")
    methods = [e.method for e in exchanges(read_cassette(recording.path).messages)]
    assert {"tools/list", "tools/call", "resources/read", "prompts/get"} <= set(methods)


def test_record_magic_help_and_usage(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert shell.run_line_magic("mcp", "record --help") is None
    assert "%mcp record" in capsys.readouterr().out
    with pytest.raises(UsageError, match="name the cassette"):
        shell.run_line_magic("mcp", "record")


async def test_record_context_manager_and_offline_replay(shell: Any, tmp_path: Path) -> None:
    run(shell, CELLS[1:8])
    mcp = shell.user_ns["mcp"]
    with mcp.record(tmp_path / "ctx.jsonl") as recording:
        result = mcp.call("hypot", a=3, b=4).wait()
    assert not recording.recording
    async with Client(Cassette(recording.path)) as offline:
        replayed = await offline.call_tool("hypot", {"a": 3, "b": 4})
    assert replayed["structuredContent"] == result.result["structuredContent"] == {"result": 5.0}


def test_export_keeps_what_the_tools_need(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "units.ipynb", CELLS)
    text = export_notebook(notebook)
    assert "def to_metres" in text and "UNITS = " in text and "import math" in text
    assert '@mcp.tool(annotations={"readOnlyHint": True})\ndef hypot' in text
    assert "@mcp.resource('units://all')" in text and "@mcp.prompt" in text
    assert "%" not in text.replace("%mcp", "")  # no magic left
    assert "IPython" not in text and "to_metres(1, 'mi')" not in text and "unused" not in text
    module = tmp_path / "units_server.py"
    module.write_text(text)
    check = subprocess.run(  # importing the module (loading its tools) imports nothing from Jupyter
        [sys.executable, "-c", _NO_JUPYTER, str(module)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=tmp_path,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["convert", "distance", "hypot", "units://all", "1000.0", "[]"]


def test_export_refuses_an_app_tool_by_name(tmp_path: Path) -> None:
    app = "@mcp.tool(app='<p>hi</p>')\ndef shown() -> str:\n    return 'x'"
    notebook = write_notebook(tmp_path / "app.ipynb", [CELLS[0], app])
    with pytest.raises(TargetError, match="cell 2: tool 'shown' has an MCP App"):
        export_notebook(notebook)


_NO_JUPYTER = """
import asyncio, runpy, sys
from mcp_notebook import Client
ns = runpy.run_path(sys.argv[1])

async def main():
    async with Client(ns["server"]) as c:
        names = [t["name"] for t in await c.list_tools()] + [p["name"] for p in await c.list_prompts()]
        names += [r["uri"] for r in await c.list_resources()]
        result = await c.call_tool("distance", {"value": 1, "unit": "km"})
        print(*sorted(names), result["structuredContent"]["result"])

asyncio.run(main())
jupyter = ("IPython", "ipykernel", "jupyter_client", "ipywidgets")
print(sorted(m for m in sys.modules if m.split(".")[0] in jupyter))
"""


async def test_exported_module_passes_the_notebook_cassette(shell: Any, tmp_path: Path) -> None:
    """The acceptance of issue 23: record against the notebook, export it, verify the module over stdio
    with the same cassette; a changed module fails with the change in the diff."""
    run(shell, CELLS[1:8])
    mcp = shell.user_ns["mcp"]
    cassette = tmp_path / "notebook.jsonl"
    with mcp.record(cassette):
        session(mcp)
    notebook = write_notebook(tmp_path / "units.ipynb", CELLS)
    exported = tmp_path / "server.py"
    made = cli("export", str(notebook), "-o", str(exported))
    assert made.returncode == 0, made.stderr

    passed = cli("verify", str(cassette), "--", sys.executable, str(exported))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "all answered as recorded" in passed.stdout

    served = cli("verify", str(cassette), str(notebook))  # the notebook itself, by the command line
    assert served.returncode == 0, served.stdout + served.stderr

    from mcp_notebook.notebook.notebook_file import load_notebook, unload_notebook

    served = load_notebook(notebook)  # and the notebook itself, served headless, passes it too
    try:
        report = await verify(cassette, served)
    finally:
        unload_notebook(served)
    assert report.ok, report.text()

    broken = tmp_path / "broken.py"
    broken.write_text(exported.read_text().replace("math.hypot(a, b)", "a + b"))
    failed = cli("verify", str(cassette), "--", sys.executable, str(broken))
    assert failed.returncode == 1
    assert "result.structuredContent.result" in failed.stdout
    assert "recorded: 5.0" in failed.stdout and "live:     7.0" in failed.stdout
