"""A script that uses the sync client (``connect``) and leaves it open, as README's "Without async" does,
exits quietly: the runtime closes the clients still open at exit, then ends what still runs on its loop.

Before, the loop was stopped and closed with the connections' tasks pending: an in-memory server's script
printed "Task was destroyed but it is pending!" for each of them and a traceback ("Event loop is closed")
from the server's clean-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

IN_MEMORY = """
from mcp_notebook import Server, connect

server = Server("demo")


@server.tool
def forecast(city: str, days: int = 3) -> dict[str, float]:
    '''Forecast the weather.'''
    return {f"day {d + 1}": 12.0 + d for d in range(days)}


c = connect(server)
print(c.call_tool("forecast", {"city": "Paris", "days": 2})["structuredContent"])
"""

STDIO_SERVER = """
from mcp_notebook import Server

server = Server("child")


@server.tool
def twice(x: int) -> int:
    '''Twice x.'''
    return 2 * x


server.run_stdio()
"""

OVER_STDIO = """
import sys
from mcp_notebook import connect

c = connect([sys.executable, sys.argv[1]])
print(c.call_tool("twice", {"x": 21})["structuredContent"])
"""


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_script_leaving_an_in_memory_client_open_exits_quietly(era: str) -> None:
    script = IN_MEMORY.replace("connect(server)", f"connect(server, era={era!r})")
    done = run(script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'day 1': 12.0, 'day 2': 13.0}"
    assert done.stderr == ""


def test_a_script_leaving_a_stdio_client_open_exits_quietly(tmp_path: Path) -> None:
    child = tmp_path / "child.py"
    child.write_text(STDIO_SERVER)
    done = run(OVER_STDIO, str(child))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'result': 42}"
    assert done.stderr == ""
