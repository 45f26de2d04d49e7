"""Issue 19: `bash scripts/lab` opened the quickstart already "modified" (a dot on its tab) before the
person did anything: JupyterLab wrote the kernel's whole ``language_info`` into a notebook that had only
its name. ``notebooks/src/_build.py`` now writes ipykernel's, with the building Python's version."""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from pathlib import Path

from tests.browser.conftest import Notebook

OpenNotebook = Callable[..., Notebook]
ROOT = Path(__file__).resolve().parents[2]


def test_the_quickstart_opens_unmodified(open_notebook: OpenNotebook, tmp_path: Path) -> None:
    quickstart = json.loads((ROOT / "notebooks" / "quickstart.ipynb").read_text())
    # as _build.py writes it on this Python (the committed copy holds scripts/setup.sh's version)
    quickstart["metadata"]["language_info"]["version"] = platform.python_version()
    copy = tmp_path / "quickstart.ipynb"
    copy.write_text(json.dumps(quickstart, indent=1))
    notebook = open_notebook(copy)
    notebook.wait_kernel_idle()
    dirty = notebook.page.evaluate("() => document.querySelectorAll('.jp-mod-dirty').length")
    assert dirty == 0  # failed before: the notebook's tab was marked modified
