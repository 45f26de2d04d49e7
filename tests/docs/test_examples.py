"""The runnable examples run (a broken example teaches the wrong thing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_quickstart_example_prints_structured_result_error_and_trace() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "structured result: {'city': 'Paris', 'days': 2" in out
    assert "progress 2/2: day 2" in out
    assert "greater than the maximum of 14" in out
    assert '"method":"tools/call"' in out  # the trace shows the wire
