"""``mcp-notebook test NB.ipynb`` (issue 23): a notebook run headless in a fresh kernel; exit 0 when every
cell ran and every ``%mcp check`` passed, 1 on an error or a failed check (named in the output)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.interop._peers import ROOT

pytestmark = pytest.mark.timeout(300)

TOOL = "%load_ext mcp_notebook\n@mcp.tool\ndef half(x: int) -> float:\n    '''Half of x.'''\n    return x / 2"


def notebook(path: Path, *cells: str) -> Path:
    made = nbformat.v4.new_notebook()
    made.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(made, str(path))
    return path


def mcp_notebook_test(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "test", str(path), "--timeout", "120"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        stdin=subprocess.DEVNULL,
    )


def test_a_passing_notebook_exits_zero(tmp_path: Path) -> None:
    path = notebook(tmp_path / "ok.ipynb", TOOL, "%mcp check half --sample '{\"x\": 4}'")
    run = mcp_notebook_test(path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 code cells ran, no error, every check passed" in run.stdout


def test_a_failed_check_and_an_error_exit_one(tmp_path: Path) -> None:
    failing = '%mcp check half --sample \'{"x": "four"}\''
    path = notebook(tmp_path / "bad.ipynb", TOOL, failing, "1 / 0", "print('never')")
    run = mcp_notebook_test(path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "failed check: check of half: FAIL" in run.stdout
    assert "ZeroDivisionError" in run.stdout
