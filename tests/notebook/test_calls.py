"""The call pipeline (``notebook/calls/pipeline.py``, issue 17 item 1): one ``%mcp call SERVER.TOOL`` reads
its target once, and the ``mcp`` object's collaborators reach it through public names only."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.engine.sync import SyncClient
from mcp_notebook.notebook.calls.connections import Connections
from tests.notebook.ipyshell import remote_server

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_notebook"


def _count(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], cls: type, name: str) -> None:
    real = getattr(cls, name)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)


def test_one_mcp_call_resolves_its_target_once(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The name is split once and the tool list read once (one blocking hop to the runtime thread); it
    was split three times (tool_def, prepare, decide) and the list read twice."""
    mcp = shell.user_ns["mcp"]
    mcp.connect("remote", remote_server())
    mcp.policy.set("remote.peek", "allow")
    mcp.tools("remote")  # the list is cached now, as in a notebook that listed its tools
    counts: Counter[str] = Counter()
    _count(monkeypatch, counts, Connections, "split")
    _count(monkeypatch, counts, SyncClient, "tools_by_name")
    handle = shell.run_line_magic("mcp", "call remote.peek key=k")
    assert handle.state == "done" and handle.structured == {"key": "k"}
    assert counts == {"split": 1, "tools_by_name": 1}


def _protocols(tree: ast.Module) -> list[ast.ClassDef]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base) in ("Protocol", "typing.Protocol") for base in node.bases)
    ]


def _members(cls: ast.ClassDef) -> list[str]:
    names = []
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


def private_protocol_members(root: Path) -> list[str]:
    """``module:Protocol.member`` for every Protocol member whose name starts with one ``_``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for cls in _protocols(ast.parse(path.read_text(encoding="utf-8"))):
            for name in _members(cls):
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    found.append(f"{path.relative_to(root.parent)}:{cls.name}.{name}")
    return found


def test_no_protocol_names_a_private_member() -> None:
    """A Protocol is a public contract: one naming ``_x`` couples to one concrete class's insides."""
    assert private_protocol_members(PACKAGE) == []


def test_the_protocol_check_finds_a_private_member(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "m.py").write_text(
        "from typing import Protocol\n"
        "class Needs(Protocol):\n    x: int\n    _y: int\n    def _z(self) -> None: ...\n"
        "    def __call__(self) -> None: ...\n"
    )
    assert private_protocol_members(root) == ["pkg/m.py:Needs._y", "pkg/m.py:Needs._z"]
