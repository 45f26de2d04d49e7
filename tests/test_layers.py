"""The package's layers, checked from its import graph (issue 8; README "Layout", docs/architecture.md).

Every ``import`` in ``mcp_notebook`` counts: at module level, inside functions (lazy) and under
``TYPE_CHECKING`` (a type-only import is still a dependency). The graph must have no cycle, and imports
between layers may only go down:

    errors, _jsonschema  <  protocol  <  tools, transports, auth  <  engine  <  notebook  <  cli
        <  demo_server, __main__, the package's __init__

Layers of the same rank (tools, transports, auth) do not import each other. A new top-level module or
package must be given a layer here, on purpose.

Inside ``notebook`` the same rules hold between its families (``NOTEBOOK_RANKS``, see
``mcp_notebook/notebook/__init__.py``): forms, rendering, config, kernel_thread < calls < serving, apps < the
``mcp`` object (api, magics, ...) and notebook_file.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_notebook"

RANKS: dict[str, int] = {
    "errors": 0,
    "_jsonschema": 0,
    "_version": 0,
    "protocol": 1,
    "tools": 2,
    "transports": 2,
    "auth": 2,
    "engine": 3,
    "notebook": 4,
    "cli": 5,
    "demo_server": 6,
    "__main__": 6,
    "": 6,  # mcp_notebook/__init__.py: the facade, importing lazily from below
}
# Top-level modules that are part of another layer (split off for size).
PART_OF = {
    "cli_scale": "cli",
    "cli_cassette": "cli",
    "export": "cli",
    "pytest_plugin": "cli",
    "_pytest_entry": "cli",
    "jupyter_hooks": "cli",  # the Jupyter server extension (imports nothing of the package)
}

# The families inside ``notebook`` (sub-packages, or flat modules); "" is notebook/__init__.py.
NOTEBOOK_RANKS: dict[str, int] = {
    "forms": 0,
    "rendering": 0,
    "config": 0,
    "kernel_thread": 0,
    "calls": 1,
    "serving": 2,
    "apps": 2,
    "recording": 2,
    "api": 3,
    "browse": 3,
    "magics": 3,
    "lint": 3,
    "check": 3,
    "live": 3,
    "authorizing": 3,
    "notebook_file": 3,
    "": 3,
}
# The ``mcp`` object and its helpers are one family: they may import each other (no cycle, checked above).
NOTEBOOK_SAME = {name: "mcp object" for name, rank in NOTEBOOK_RANKS.items() if rank == 3}


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root`` (a package directory)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in the file)."""
    known = modules(root)
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node, package, name, known):
                while target and target not in known:  # `from .x import name`: name may be an attribute
                    target = target.rpartition(".")[0]
                if target and target not in (name, root.name):
                    edges[name].add(target)
    return edges


def _targets(node: ast.AST, package: str, importer: str, known: dict[str, Path]) -> Iterable[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        stem = ".".join([*base, *([node.module] if node.module else [])])
    else:
        stem = node.module or ""
    names = [f"{stem}.{alias.name}" for alias in node.names]
    if importer.startswith(stem + ".") and all(n in known for n in names):
        return names  # `from . import sibling`: our own package is already imported, only the module counts
    return [stem, *names]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    return PART_OF.get(name, name)


def family(module: str) -> str:
    """The family inside ``notebook`` (``mcp_notebook.notebook.calls.handle`` -> ``calls``)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def wrong_way(
    edges: dict[str, set[str]], ranks: dict[str, int], level: Callable[[str], str] = layer
) -> list[str]:
    """Imports from one layer into another that is not below it."""
    found = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            here, there = level(source), level(target)
            if here != there and ranks[there] >= ranks[here]:
                found.append(f"{source} -> {target} ({here or 'mcp_notebook'} may not import {there})")
    return found


EDGES = imports(PACKAGE)


def test_every_module_has_a_layer() -> None:
    unknown = sorted({layer(m) for m in EDGES} - set(RANKS))
    assert not unknown, f"give these a layer in tests/test_layers.py RANKS: {unknown}"


def test_no_import_cycles() -> None:
    assert cycles(EDGES) == []


@pytest.mark.parametrize("name", sorted(RANKS, key=lambda n: (RANKS[n], n)))
def test_a_layer_imports_only_layers_below_it(name: str) -> None:
    mine = {m: targets for m, targets in EDGES.items() if layer(m) == name}
    assert wrong_way(mine, RANKS) == []


NOTEBOOK_EDGES = {
    m: {t for t in targets if layer(t) == "notebook"}
    for m, targets in EDGES.items()
    if layer(m) == "notebook"
}


def notebook_family(module: str) -> str:
    name = family(module)
    return NOTEBOOK_SAME.get(name, name)


def test_every_notebook_module_has_a_family() -> None:
    unknown = sorted({family(m) for m in NOTEBOOK_EDGES} - set(NOTEBOOK_RANKS))
    assert not unknown, f"give these a family in tests/test_layers.py NOTEBOOK_RANKS: {unknown}"


@pytest.mark.parametrize("name", sorted({notebook_family(m) for m in NOTEBOOK_EDGES}))
def test_a_notebook_family_imports_only_families_below_it(name: str) -> None:
    ranks = {notebook_family(m): NOTEBOOK_RANKS[family(m)] for m in NOTEBOOK_EDGES}
    mine = {m: targets for m, targets in NOTEBOOK_EDGES.items() if notebook_family(m) == name}
    assert wrong_way(mine, ranks, notebook_family) == []


def private_across(edges: dict[str, set[str]]) -> list[str]:
    """Imports of another layer's private module (``tools._x``): a service used across layers is public."""
    return [
        f"{source} -> {target}"
        for source, targets in sorted(edges.items())
        for target in sorted(targets)
        if layer(source) != layer(target) and any(part.startswith("_") for part in target.split(".")[2:])
    ]


def test_no_layer_imports_another_layers_private_module() -> None:
    assert private_across(EDGES) == []


def test_the_checks_catch_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: a made-up package with a type-only cycle and a lazy upward import."""
    root = tmp_path / "mcp_notebook"
    for folder in ("protocol", "engine"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "protocol" / "a.py").write_text("def f():\n    from ..engine import b\n")
    (root / "engine" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mcp_notebook.engine.c import C\n"
    )
    (root / "engine" / "c.py").write_text("from . import b\nclass C: ...\n")
    edges = imports(root)
    assert edges["mcp_notebook.engine.c"] == {"mcp_notebook.engine.b"}  # not its own package's __init__
    assert cycles(edges) == [["mcp_notebook.engine.b", "mcp_notebook.engine.c"]]
    assert wrong_way(edges, RANKS) == [
        "mcp_notebook.protocol.a -> mcp_notebook.engine (protocol may not import engine)",
        "mcp_notebook.protocol.a -> mcp_notebook.engine.b (protocol may not import engine)",
    ]
