"""Fixtures shared by the notebook tests: a fresh IPython shell with the extension loaded (``shell``,
``shell_factory``; see ``ipyshell.py``) and ``interactive`` (a frontend that renders widgets)."""

from __future__ import annotations

import pytest

from tests.notebook.ipyshell import shell, shell_factory

__all__ = ["interactive", "shell", "shell_factory"]


@pytest.fixture
def interactive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frontend that renders widgets (declared, as a kernel would be by default)."""
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
