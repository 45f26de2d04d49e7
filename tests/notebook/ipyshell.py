"""A fresh IPython shell per test (STYLE rule 13), and a small in-memory "remote" server.

``InteractiveShell()`` (not ``.instance()``, a process-wide singleton) builds an independent shell; its
displays are captured by a ``CapturingDisplayPublisher``. Building a shell writes ``__IPYTHON__`` and
``display`` into builtins and registers an atexit hook: both are undone afterwards.
"""

from __future__ import annotations

import atexit
import builtins
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from mcp_notebook import Server
from mcp_notebook.notebook.api import NotebookMCP
from mcp_notebook.notebook.magics import unload

_MISSING = object()
WAIT = 10.0  # seconds: every wait in these tests is bounded


def make_shell(config: Config | None = None) -> InteractiveShell:
    cfg = config if config is not None else Config()
    cfg.HistoryManager.enabled = False
    shell = InteractiveShell(config=cfg)
    shell.display_pub = CapturingDisplayPublisher(shell=shell)
    return shell


@pytest.fixture
def shell_factory(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``shell_factory(config=None)`` -> a fresh shell with the extension loaded; all torn down after."""
    for var in ("MCP_NOTEBOOK_HEADLESS", "MCP_NOTEBOOK_HEADLESS_POLICY"):
        monkeypatch.delenv(var, raising=False)
    saved = {k: builtins.__dict__.get(k, _MISSING) for k in ("__IPYTHON__", "display")}
    shells: list[InteractiveShell] = []

    def factory(config: Config | None = None, load: bool = True) -> InteractiveShell:
        shell = make_shell(config)
        shells.append(shell)
        if load:
            shell.run_line_magic("load_ext", "mcp_notebook")
        return shell

    yield factory
    for shell in shells:
        unload(shell)
        atexit.unregister(shell.atexit_operations)
        shell.cleanup()
    for key, value in saved.items():
        if value is _MISSING:
            builtins.__dict__.pop(key, None)
        else:
            builtins.__dict__[key] = value


@pytest.fixture
def shell(shell_factory: Any) -> InteractiveShell:
    """A fresh shell with ``%load_ext mcp_notebook`` done; headless unless the test sets the env."""
    result: InteractiveShell = shell_factory()
    return result


def api(shell: InteractiveShell) -> NotebookMCP:
    """The shell's ``mcp`` object."""
    mcp: NotebookMCP = shell.user_ns["mcp"]
    return mcp


def published(shell: InteractiveShell) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = shell.display_pub.outputs  # type: ignore[attr-defined]
    return outputs


def remote_server() -> Server:
    """A second server, connected in memory as if it were remote."""
    server = Server("remote-demo")

    @server.tool
    def echo(message: str) -> str:
        """Echo the message back."""
        return message

    @server.tool(annotations={"readOnlyHint": True})
    def peek(key: str = "x") -> dict[str, str]:
        """Read something."""
        return {"key": key}

    @server.tool(annotations={"destructiveHint": True})
    def wipe(table: str) -> str:
        """Delete everything in a table."""
        return f"wiped {table}"

    @server.resource("memo://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A greeting."""
        return "hello from the remote"

    @server.prompt
    def review(code: str) -> str:
        """Review some code."""
        return f"Please review:\n{code}"

    return server


def add_tools(mcp: NotebookMCP) -> None:
    """Two local tools: ``add`` and ``shout`` (a read-only one, named apart from its function)."""

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @mcp.tool(name="shout", annotations={"readOnlyHint": True})
    def loud(text: str) -> str:
        return text.upper()
