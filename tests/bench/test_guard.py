"""The performance regression guard runs in CI (issue 21): ``bench/guard.py`` measures same-run ratios ours /
SDK with default settings and fails only when one falls below half of its recorded value (bench/guard.json).

No timing is asserted here: the guard's own rule (half of a conservatively recorded ratio, best of a few
windows, re-measured before failing) is what decides, and its output is shown when it fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(300)  # well under a minute on an idle machine; minutes when others load the cores
def test_the_regression_guard_passes() -> None:
    recorded = json.loads((ROOT / "bench" / "guard.json").read_text(encoding="utf-8"))["ratios"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "guard.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    for case in recorded:  # every recorded case was measured and printed with its ratio
        assert f"guard {case}: " in done.stdout, done.stdout
