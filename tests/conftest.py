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

import os
import tempfile
from pathlib import Path

import pytest

# The notebook's durable task book (notebook/calls/task_file.py) defaults to Jupyter's data directory in the
# person's home: the suite, and every kernel and server it starts, keeps its own for this run instead, so a
# run never reads tasks an earlier run (or the person) left there, nor writes to their home.
TASK_BOOK = Path(tempfile.mkdtemp(prefix="mcp-taskbook-")) / "tasks.json"
os.environ.setdefault("MCP_NOTEBOOK_TASK_BOOK", str(TASK_BOOK))

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
# Files (or FILE::TEST) outside those folders that start subprocesses or kernels, fuzz, or wait on
# purpose for seconds: not in the fast lane.
SLOW = {
    "auth/test_kernel_auth.py": "kernel",
    "auth/test_serve_cli.py": "slow",
    "tasks/test_workers.py": "slow",
    "notebook/test_notebook_tasks.py": "slow",
    "cassette/test_cassette_everything.py": "interop",
    "apps/test_served_app_interop.py": "interop",
    # command-line subprocesses
    "cassette/test_cassette_cli.py": "slow",
    "cassette/test_notebook_test_cli.py": "slow",
    "cassette/test_notebook_cassette.py": "slow",
    "cassette/test_pytest_plugin.py": "slow",
    "transports/test_stdio.py": "slow",
    "tools/test_tools_lazy_imports.py": "slow",
    "tools/test_validation_service.py::"
    "test_optional_format_packages_are_imported_only_when_their_format_is_checked": "slow",
    # tasks polled to their end, masked errors served over HTTP: seconds each
    "tasks/test_tasks.py": "slow",
    "spec/test_contracts_task_input.py": "slow",
    "spec/test_audit_10_mask_errors.py": "slow",
    "modern/test_modern_client.py::test_http_requests_carry_the_2026_headers_and_no_session": "slow",
    # property-based fuzzing
    "protocol/test_jsonrpc.py::test_parse_never_raises_on_arbitrary_json": "slow",
    "protocol/test_jsonrpc.py::test_parse_never_raises_on_arbitrary_bytes": "slow",
    "protocol/test_jsonrpc.py::test_parse_never_raises_on_arbitrary_text": "slow",
    "protocol/test_jsonrpc.py::test_serialize_then_parse_round_trips": "slow",
    "tools/test_tools_fast_validation.py::test_fast_path_never_accepts_what_jsonschema_rejects": "slow",
}
# Parameters that start a subprocess (a stdio server) put a unit test in the slow lane; the interaction
# lane keeps them (it is there to run every test body over every transport).
SUBPROCESS_PARAMS = {"stdio"}
SERVICES = {"redis"}  # a parameter naming a service (redis-server) puts the test in the slow lane
LONG_TIMEOUT = 120.0  # seconds, for the lanes outside the fast one
FAST = "unit or interaction"  # the -m expression of scripts/test --fast


def lane(path: Path, test: str = "") -> str:
    """The marker for a test (``test``: its function name), by its place under ``tests/``."""
    relative = path.resolve().relative_to(TESTS).as_posix()
    for key in (f"{relative}::{test}", relative):
        if key in SLOW:
            return SLOW[key]
    parts = relative.split("/")
    return BY_FOLDER.get(parts[0], "unit") if len(parts) > 1 else "unit"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "unit or interaction"``, files wholly in other lanes are not even imported."""
    if config.getoption("markexpr") != FAST or not collection_path.is_relative_to(TESTS):
        return None
    relative = collection_path.relative_to(TESTS).as_posix()
    placed = SLOW.get(relative) or BY_FOLDER.get(relative.split("/")[0])
    return True if placed is not None and placed not in ("unit", "interaction") else None


def pytest_configure(config: pytest.Config) -> None:
    for name in LANES:
        config.addinivalue_line("markers", f"{name}: the {name} lane (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = lane(Path(str(item.fspath)), getattr(item, "originalname", item.name))
        callspec = getattr(item, "callspec", None)
        params = (
            {v for v in callspec.params.values() if isinstance(v, str)} if callspec is not None else set()
        )
        if SERVICES & params or (name == "unit" and SUBPROCESS_PARAMS & params):
            name = "slow"
        item.add_marker(getattr(pytest.mark, name))
        if name not in ("unit", "interaction") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))
