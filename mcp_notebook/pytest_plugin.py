"""A pytest plugin for MCP servers and cassettes: connected clients as fixtures, cassettes as snapshot tests.

Opt-in: load it with ``-p mcp_notebook.pytest_plugin`` (command line or ``addopts``), or with the
``--mcp-notebook`` flag or the ``mcp_notebook = true`` ini option that the always-installed entry point
(``mcp_notebook._pytest_entry``, ``pytest11``) reads; otherwise it adds nothing to a test run.

Fixtures:

* ``mcp_client(target)``: a connected :class:`~mcp_notebook.SyncClient` (closed after the test). ``target``
  is a cassette (``x.jsonl``: replayed offline), a notebook (``NB.ipynb[:NAME]``: its tools served
  headless), a server module (``FILE.py[:NAME]`` or ``pkg.module[:NAME]``), a :class:`~mcp_notebook.Server`,
  a command list (stdio) or a URL. Relative paths are relative to the test file's folder.
* ``mcp_verify(cassette, target)``: verify a cassette against a server; fails the test with the readable
  diff when they differ; returns the :class:`~mcp_notebook.engine.verify.VerifyReport`.

Marker: ``@pytest.mark.mcp_verify(CASSETTE, TARGET)`` verifies before the test body runs and fails with
the diff; ``pytest --mcp-update`` accepts the differences (rewrites the cassettes) instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._pytest_entry import add_options

if TYPE_CHECKING:
    from .engine.sync import SyncClient
    from .engine.verify import VerifyReport

__all__ = ["mcp_client", "mcp_verify", "resolve_target"]

MARKER = "mcp_verify"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(cassette, target): verify the cassette against the server before the test runs"
    )


def resolve_target(target: Any, base: Path, opened: list[Callable[[], None]]) -> Any:
    """What a :class:`~mcp_notebook.Client` takes, from a fixture's ``target`` (see the module doc)."""
    if not isinstance(target, (str, Path)):
        return target
    text = str(target)
    if text.startswith(("http://", "https://")):
        return text
    from .cli import parse_target

    parsed = parse_target(text)
    path = Path(parsed.source)
    if not path.is_absolute() and (base / path).exists():
        path = base / path
    if path.suffix == ".jsonl":
        from .engine.replay import Cassette

        return Cassette(path)
    if path.suffix == ".ipynb":
        from .notebook.notebook_file import load_notebook, unload_notebook

        server = load_notebook(path, parsed.attribute)
        opened.append(lambda: unload_notebook(server))
        return server
    from .cli import Target, load_server

    source = str(path) if path.suffix == ".py" else parsed.source
    return load_server(Target(source, parsed.attribute))


def _base(request: pytest.FixtureRequest) -> Path:
    return Path(str(request.node.path)).parent


@pytest.fixture
def mcp_client(request: pytest.FixtureRequest) -> Iterator[Callable[..., SyncClient]]:
    """``mcp_client(target, **client_options)``: a connected SyncClient, closed after the test."""
    from .engine.sync import SyncClient

    clients: list[SyncClient] = []
    cleanups: list[Callable[[], None]] = []

    def connect(target: Any, **options: Any) -> SyncClient:
        client = SyncClient(resolve_target(target, _base(request), cleanups), **options)
        clients.append(client)
        return client

    yield connect
    for client in reversed(clients):
        client.close()
    for cleanup in reversed(cleanups):
        cleanup()


def _verify(request: pytest.FixtureRequest, cassette: Any, target: Any, **options: Any) -> VerifyReport:
    from .engine.runtime import get_runtime
    from .engine.verify import verify

    base = _base(request)
    path = Path(cassette)
    if not path.is_absolute():
        path = base / path
    cleanups: list[Callable[[], None]] = []
    update = bool(request.config.getoption("--mcp-update", default=False))
    try:
        resolved = resolve_target(target, base, cleanups)
        report = get_runtime().run(verify(path, resolved, update=update, target_name=str(target), **options))
    finally:
        for cleanup in reversed(cleanups):
            cleanup()
    if not report.ok and not update:
        pytest.fail(report.text(), pytrace=False)
    return report


@pytest.fixture
def mcp_verify(request: pytest.FixtureRequest) -> Callable[..., VerifyReport]:
    """``mcp_verify(cassette, target, timeout=30)``: fail with the diff unless the server answers as
    recorded (``--mcp-update``: rewrite the cassette instead)."""

    def run(cassette: Any, target: Any, **options: Any) -> VerifyReport:
        return _verify(request, cassette, target, **options)

    return run


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    if len(marker.args) != 2:
        pytest.fail(f"@pytest.mark.{MARKER} takes (cassette, target), got {marker.args!r}", pytrace=False)
    request = getattr(item, "_request", None)
    if request is None:  # not a function item: nothing to resolve paths against
        return
    _verify(request, *marker.args, **marker.kwargs)
