"""Each workshop exercise's reference solution (notebooks/src/_exercises.py, workshops 02-06) passes its own
``%mcp check`` and its own ``%mcp lint``, run alone in a fresh shell (issue 19: workshop 08's solution
failed its own lint). Workshops 07 and 08 build their exercise on the notebook's earlier cells; their
checks and lint run in the headless notebook runs (tests/notebooks/test_workshops.py) and the Run All in
JupyterLab (tests/browser/test_workshops_run_all.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_notebook.notebook.check import CheckReport

SOURCES = Path(__file__).resolve().parents[2] / "notebooks" / "src"
EXERCISES = [
    "REMOTE_SERVERS",
    "FORMS_AND_APPROVALS",
    "TOOL_CONTRACTS",
    "TOOLS_RESOURCES_PROMPTS",
    "UNDER_THE_HOOD",
]


def _exercises() -> ModuleType:
    """notebooks/src/_exercises.py, which imports its sibling _cells.py."""
    import sys

    sys.path.insert(0, str(SOURCES))
    try:
        spec = importlib.util.spec_from_file_location("_exercises", SOURCES / "_exercises.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SOURCES))


@pytest.mark.parametrize("name", EXERCISES)
def test_the_reference_solution_passes_its_check_and_its_lint(shell: Any, name: str) -> None:
    cells = [source for kind, source in getattr(_exercises(), name) if kind == "code"]
    checks = [i for i, source in enumerate(cells) if source.lstrip().startswith("mcp.check(")]
    assert len(checks) == 1, cells
    shell.run_cell("from mcp_notebook import ToolError")  # workshop 04 imports it at the notebook's top
    for source in cells[: checks[0]]:
        shell.run_cell(source).raise_error()
    done = shell.run_cell(cells[checks[0]])
    done.raise_error()
    report = done.result
    assert isinstance(report, CheckReport)
    assert report.passed, report._repr_mimebundle_()["text/plain"]
    tool = re.match(r'\s*mcp\.check\(\s*"(\w+)"', cells[checks[0]])
    assert tool is not None
    lint = shell.user_ns["mcp"].lint(tool.group(1))
    assert lint.checked and lint.ok, lint._repr_mimebundle_()["text/plain"]
    assert not lint.findings, lint._repr_mimebundle_()["text/plain"]  # not even a note
