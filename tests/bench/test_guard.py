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


GUARD_TIMEOUT = 540  # seconds: 14 s at load 3, 46 s at load 8, 123 s at load 11-18 (12 busy loops, 2 cores)


@pytest.mark.timeout(GUARD_TIMEOUT + 60)  # the guard's own bound comes first, so its output is shown
def test_the_regression_guard_passes() -> None:
    recorded = json.loads((ROOT / "bench" / "guard.json").read_text(encoding="utf-8"))["ratios"]
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "guard.py")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=GUARD_TIMEOUT,
        )
    except subprocess.TimeoutExpired as late:  # say how far it got, not only that it was stopped
        pytest.fail(f"bench/guard.py ran over {GUARD_TIMEOUT} s; it had printed:\n{late.stdout!r}")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    for case in recorded:  # every recorded case was measured and printed with its ratio
        assert f"guard {case}: " in done.stdout, done.stdout
