"""The benchmark command still runs: ``bench/run.py --quick --only memory`` exits 0 and prints a ratio.

No timing is asserted here (DESIGN: performance is measured in bench/, never asserted in tests).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_memory_benchmark_runs_and_reports_a_ratio() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only", "memory"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^ratio memory .+: \d+\.\d+x ours vs SDK", done.stdout, re.MULTILINE), done.stdout
