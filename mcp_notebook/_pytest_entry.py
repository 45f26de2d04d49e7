"""The ``pytest11`` entry point: inert unless asked. ``pytest --mcp-notebook`` or the ini option
``mcp_notebook = true`` loads :mod:`mcp_notebook.pytest_plugin` (fixtures ``mcp_client``, ``mcp_verify``,
marker ``mcp_verify``); so does ``-p mcp_notebook.pytest_plugin``. Nothing else is imported here."""

from __future__ import annotations

import contextlib

import pytest

PLUGIN = "mcp_notebook.pytest_plugin"


def add_options(parser: pytest.Parser) -> None:
    """The plugin's options, in one group; either module may add them first (both are loaded when the
    entry point is installed and ``-p mcp_notebook.pytest_plugin`` is given)."""
    group = parser.getgroup("mcp_notebook", "mcp_notebook (MCP servers and cassettes)")
    with contextlib.suppress(ValueError):
        group.addoption(
            "--mcp-notebook",
            action="store_true",
            default=False,
            help="load mcp_notebook's pytest plugin (MCP client fixtures, cassette verification)",
        )
    with contextlib.suppress(ValueError):
        group.addoption(
            "--mcp-update",
            action="store_true",
            default=False,
            help="mcp_verify: write the live answers over the cassettes instead of failing",
        )
    with contextlib.suppress(ValueError):
        parser.addini("mcp_notebook", "load mcp_notebook's pytest plugin", type="bool", default=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--mcp-notebook") or config.getini("mcp_notebook"):
        config.pluginmanager.import_plugin(PLUGIN)
