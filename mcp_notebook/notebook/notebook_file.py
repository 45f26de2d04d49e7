"""A notebook file as a standalone MCP server: ``mcp-notebook serve NOTEBOOK.ipynb [--http HOST:PORT]``.

:func:`load_notebook` runs the notebook's code cells, in order, in a fresh IPython ``InteractiveShell`` (no
Jupyter, no kernel), so magics work (``%load_ext mcp_notebook``, ``%%mcp_tool``), then returns the server
the cells registered their tools into: the ``mcp`` object's (``@mcp.tool``), or a ``Server`` the notebook
made itself (``nb.ipynb:NAME`` picks one by name). Markdown and raw cells are skipped, and so are code cells
tagged ``skip`` or ``mcp-skip`` (cell metadata ``tags``): demo calls, plots, ``%mcp serve``. A failing cell
stops start-up with its number and the error. While loading, ``%mcp serve`` does nothing: this command
serves the notebook.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.server import Server
from ..errors import TargetError
from .config import loading_notebook, marked_loading

__all__ = [
    "SKIP_TAGS",
    "NotebookCell",
    "NotebookCellError",
    "load_notebook",
    "loading_notebook",
    "read_cells",
    "unload_notebook",
]

SKIP_TAGS = frozenset({"skip", "mcp-skip"})
_shells: dict[int, Any] = {}  # id(server) -> the shell whose namespace its tools live in


class NotebookCellError(TargetError):
    """A cell raised while the notebook was loaded: start-up stops, naming the cell."""

    def __init__(self, path: Path, number: int, source: str, error: BaseException) -> None:
        first = next((line for line in source.splitlines() if line.strip()), "").strip()
        self.number, self.error = number, error
        super().__init__(
            f"{path}: cell {number} failed: {type(error).__name__}: {error}\n"
            f"  the cell begins: {first[:100]}\n"
            f"  (tag a cell 'mcp-skip' in its metadata to leave it out when serving)"
        )


@dataclass(frozen=True)
class NotebookCell:
    number: int  # 1-based position among all the notebook's cells, as a person counts them
    source: str
    tags: frozenset[str]


def read_cells(path: Path) -> list[NotebookCell]:
    """The code cells to run (nbformat 4 JSON), skip-tagged ones left out."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TargetError(f"{path} is not a readable notebook: {exc}") from exc
    if (
        not isinstance(notebook, dict)
        or notebook.get("nbformat") != 4
        or not isinstance(notebook.get("cells"), list)
    ):
        raise TargetError(f"{path} is not an nbformat 4 notebook")
    cells = []
    for number, cell in enumerate(notebook["cells"], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        metadata = cell.get("metadata")
        tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
        tagset = frozenset(str(t) for t in tags) if isinstance(tags, list) else frozenset()
        if tagset & SKIP_TAGS or not text.strip():
            continue
        cells.append(NotebookCell(number, text, tagset))
    return cells


def _fresh_shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    return InteractiveShell(config=config)  # type: ignore[no-untyped-call]


def load_notebook(path: Path | str, attribute: str | None = None, *, chdir: bool = False) -> Server:
    """Run ``path``'s code cells in a fresh IPython shell; return the Server holding the tools they define.

    ``chdir``: run (and keep running) in the notebook's folder, as Jupyter does; the command line does.
    """
    path = Path(path).resolve()
    cells = read_cells(path)
    shell = _fresh_shell()
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    if chdir:
        os.chdir(folder)
    shell.user_ns["__file__"] = str(path)
    with marked_loading():
        for cell in cells:
            result = shell.run_cell(cell.source, store_history=False)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                raise NotebookCellError(path, cell.number, cell.source, error)
    server = _find_server(shell.user_ns, attribute, path)
    _shells[id(server)] = shell
    return server


def _find_server(namespace: dict[str, Any], attribute: str | None, path: Path) -> Server:
    def as_server(value: Any) -> Server | None:
        if isinstance(value, Server):
            return value
        inner = getattr(value, "_server", None)  # the ``mcp`` object (NotebookMCP): its server, if made
        return inner if isinstance(inner, Server) else None

    if attribute is not None:
        if attribute not in namespace:
            raise TargetError(f"{path}: the notebook defines no {attribute!r}")
        found = as_server(namespace[attribute])
        if found is None:
            kind = type(namespace[attribute]).__name__
            raise TargetError(f"{path}:{attribute} is not an mcp_notebook.Server (it is a {kind} object)")
        return found
    mcp = as_server(namespace.get("mcp"))
    if mcp is not None:
        return mcp
    servers = {
        id(s): (name, s) for name, v in namespace.items() if not name.startswith("_") and (s := as_server(v))
    }
    if len(servers) == 1:
        return next(iter(servers.values()))[1]
    if servers:
        names = ", ".join(sorted(name for name, _ in servers.values()))
        raise TargetError(f"{path} defines several servers ({names}): name one with {path.name}:NAME")
    raise TargetError(
        f"{path} registers no tools: use '%load_ext mcp_notebook' and '@mcp.tool' (or a Server) in its cells"
    )


def unload_notebook(server: Server) -> None:
    """Forget the shell behind ``server`` (tests; the command line keeps it for the process's life)."""
    shell = _shells.pop(id(server), None)
    if shell is None:
        return
    with contextlib.suppress(Exception):
        from .magics import unload

        unload(shell)
    atexit.unregister(shell.atexit_operations)
    shell.cleanup()


def load_notebook_target(path: Path, attribute: str | None) -> Server:
    """The command line's ``.ipynb`` loader (see :func:`mcp_notebook.cli.register_loader`)."""
    return load_notebook(path, attribute, chdir=True)
