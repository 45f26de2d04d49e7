"""Lanes for the whole suite (issue 17): every test gets one marker by where it lives.

- ``unit``: in-process tests (protocol, tools, engine over memory and loopback, the notebook in an IPython
  shell); ``interaction``: client and server talking through every transport (``tests/interaction``).
  These two are the fast lane: ``bash scripts/test --fast``.
- ``kernel``: real ipykernels (``tests/kernel``, ``tests/serving``, ``tests/notebooks``); ``browser``:
  Chromium (``tests/browser``); ``interop``: third-party MCP software (``tests/interop``); ``slow``: fault
  injection, fuzzing, benchmarks and the few files listed in ``SLOW`` below.

Select with ``-m``: ``pytest -m "unit or interaction"``. A test outside the fast lane without its own
``pytest.mark.timeout`` gets ``LONG_TIMEOUT`` (a kernel or a browser may take a while to start on a busy
machine); the default (pyproject ``timeout``) is for the fast lane.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
LANES = ("unit", "interaction", "kernel", "browser", "interop", "slow")
BY_FOLDER = {
    "interaction": "interaction",
    "kernel": "kernel",
    "serving": "kernel",
    "notebooks": "kernel",
    "browser": "browser",
    "interop": "interop",
    "contracts": "interop",  # the type zoo against the official SDK's client over stdio
    "faults": "slow",
    "bench": "slow",
    "scale": "slow",  # redis-server and haproxy
}
# Folders whose tests are unit tests (a new folder must be placed here or in BY_FOLDER: tests/test_lanes.py).
UNIT_FOLDERS = {
    "apps",
    "auth",
    "cassette",
    "docs",
    "modern",
    "notebook",
    "protocol",
    "spec",
    "tasks",
    "tools",
    "transports",
}
# Files outside those folders that start subprocesses or kernels, or run long: not in the fast lane.
SLOW = {
    "auth/test_kernel_auth.py": "kernel",
    "auth/test_serve_cli.py": "slow",
    "tasks/test_workers.py": "slow",
    "notebook/test_notebook_tasks.py": "slow",
    "cassette/test_cassette_everything.py": "interop",
    "apps/test_served_app_interop.py": "interop",
}
LONG_TIMEOUT = 120.0  # seconds, for the lanes outside the fast one


def lane(path: Path) -> str:
    """The marker for a test file, by its place under ``tests/``."""
    relative = path.resolve().relative_to(TESTS)
    if relative.as_posix() in SLOW:
        return SLOW[relative.as_posix()]
    return BY_FOLDER.get(relative.parts[0], "unit") if len(relative.parts) > 1 else "unit"


def pytest_configure(config: pytest.Config) -> None:
    for name in LANES:
        config.addinivalue_line("markers", f"{name}: the {name} lane (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = lane(Path(str(item.fspath)))
        item.add_marker(getattr(pytest.mark, name))
        if name not in ("unit", "interaction") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))
