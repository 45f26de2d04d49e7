"""pandas, numpy, matplotlib and PIL stay optional and unimported (issue 9, DESIGN decision 15).

Checked in a fresh interpreter (this test session imports them elsewhere): ``import mcp_notebook``,
``%load_ext mcp_notebook``, building and calling a tool, and a client call over memory must leave every one
of them out of ``sys.modules``; the adapters find the libraries through ``sys.modules`` only once the user's
own code has imported them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ["pandas", "numpy", "matplotlib", "PIL"]
ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, json, sys
import mcp_notebook
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "mcp_notebook")
from mcp_notebook import Client, Server

server = Server("s")

@server.tool
def add(a: int, b: float = 1.5) -> dict[str, float]:
    return {"sum": a + b, "nan": float("nan")}

async def main():
    async with Client(server) as client:
        return await client.call_tool("add", {"a": 1})

result = asyncio.run(main())
assert result["structuredContent"] == {"sum": 2.5, "nan": None}, result
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in %r)))
"""


def test_import_load_ext_and_a_call_import_none_of_the_analysis_libraries() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT % (HEAVY,)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
