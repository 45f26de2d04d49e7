"""From notebook to shipped server: ``mcp-notebook export NB.ipynb -o server.py`` and ``mcp-notebook test``.

:func:`export_notebook` writes one Python module holding the notebook's tools, resources and prompts
(``@mcp.tool``, ``@mcp.resource(...)``, ``@mcp.prompt``, ``%%mcp_tool`` cells) and what they need: the
imports and the top-level definitions (functions, classes, assignments) of other cells whose names they
use, directly or through each other, in notebook order. Everything else is left out: magics (``%...``,
``!...``), calls and expressions shown for display, ``mcp.connect``/``mcp.call``/``%mcp serve`` and other
uses of the ``mcp`` object, cells tagged ``skip``/``mcp-skip``. A tool defined twice (the cell re-run
with changes) is exported as its last definition. In the module ``mcp`` is a plain
:class:`~mcp_notebook.Server`, so the decorators read as they did in the notebook, and ``server`` names it
for ``mcp-notebook serve server.py``; run directly, it serves over stdio, or Streamable HTTP with
``--http HOST:PORT``. Nothing in it imports Jupyter or IPython.

:func:`run_notebook` runs a notebook headless in a fresh kernel (nbclient) and reports the first error and
every failed ``%mcp check``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .errors import TargetError

__all__ = ["NotebookRun", "export_notebook", "run_notebook"]

OBJECT = "mcp"
_DEFINING = ("tool", "resource", "prompt")
_NOT_EXPORTED_IMPORTS = ("IPython", "ipywidgets", "ipykernel", "jupyter", "nbformat", "nbclient")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.AugAssign)
_SKIP_TAGS = frozenset({"skip", "mcp-skip"})


@dataclass
class _Statement:
    cell: int
    source: str
    defines: set[str]
    uses: set[str]
    kind: str  # "import", "export" (a tool, resource or prompt), "definition", "other"
    exported_name: str = ""


def _code_cells(path: Path) -> list[tuple[int, str]]:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TargetError(f"{path} is not a readable notebook: {exc}") from exc
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise TargetError(f"{path} is not an nbformat 4 notebook")
    found = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        tags = (cell.get("metadata") or {}).get("tags") or []
        if set(map(str, tags)) & _SKIP_TAGS or not text.strip():
            continue
        found.append((number, text))
    return found


_TOOL_CELL = re.compile(r"^\s*%%mcp_tool\b(?P<line>.*)$")


def _python_of(text: str) -> str:
    """The cell's Python: ``%%mcp_tool`` turned into a decorator, other magics and shell lines dropped."""
    lines = text.splitlines()
    head = next((i for i, line in enumerate(lines) if line.strip()), None)
    if head is not None and (match := _TOOL_CELL.match(lines[head])):
        return _tool_cell(match.group("line"), "\n".join(lines[head + 1 :]))
    if head is not None and lines[head].lstrip().startswith("%%"):
        return ""  # another cell magic: not Python
    kept = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or re.match(r"^\s*\w+\s*=\s*[%!]", line):
            kept.append("")  # a magic, a shell line, or `x = %mcp ...`: a notebook action, not the server's
        else:
            kept.append(line)
    return "\n".join(kept)


def _tool_cell(line: str, body: str) -> str:
    """``%%mcp_tool [--name N] [--title T] [--destructive|--read-only]`` as ``@mcp.tool(...)``."""
    words = shlex.split(line)
    options: list[str] = []
    for i, word in enumerate(words):
        if word in ("--name", "--title") and i + 1 < len(words):
            options.append(f"{word[2:]}={words[i + 1]!r}")
        elif word == "--destructive":
            options.append('annotations={"readOnlyHint": False, "destructiveHint": True}')
        elif word == "--read-only":
            options.append('annotations={"readOnlyHint": True}')
    tree = ast.parse(body)
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return body
    last = functions[-1]
    lines = body.splitlines()
    start = (last.decorator_list[0].lineno if last.decorator_list else last.lineno) - 1
    decorator = f"@{OBJECT}.tool({', '.join(options)})" if options else f"@{OBJECT}.tool"
    lines.insert(start, decorator)
    return "\n".join(lines)


def _is_export(node: ast.stmt) -> str:
    """The kind (tool, resource, prompt) when ``node`` is a definition decorated by ``mcp.<kind>``."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == OBJECT
            and target.attr in _DEFINING
        ):
            return target.attr
    return ""


def _has_app(node: ast.stmt) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(isinstance(d, ast.Call) and any(k.arg == "app" for k in d.keywords) for d in decorators)


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _uses_mcp_otherwise(node: ast.stmt) -> bool:
    """True when the statement uses the notebook's ``mcp`` object other than as a defining decorator."""
    decorators: list[ast.expr] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        decorators = node.decorator_list
    inside = [n for d in decorators for n in ast.walk(d)]
    return any(
        isinstance(n, ast.Name) and n.id == OBJECT and not any(n is m for m in inside) for n in ast.walk(node)
    )


def _statements(path: Path) -> list[_Statement]:
    found = []
    for number, text in _code_cells(path):
        source = _python_of(text)
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise TargetError(f"{path}: cell {number} is not Python the export can read: {exc}") from exc
        lines = source.splitlines()
        for node in tree.body:
            decorators = getattr(node, "decorator_list", None)
            first = decorators[0].lineno if decorators else node.lineno
            end = node.end_lineno or node.lineno
            segment = "\n".join(lines[first - 1 : end])
            kind = _is_export(node)
            if kind:
                name = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
                if _has_app(node):
                    raise TargetError(
                        f"{path}: cell {number}: {kind} {name!r} has an MCP App (app=...), which a plain "
                        "Server module cannot serve yet; tag the cell mcp-skip to export the rest"
                    )
                uses = _names_used(node) - {OBJECT}
                found.append(_Statement(number, segment, {name}, uses, "export", f"{kind}:{name}"))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(_Statement(number, segment, _names_defined(node), set(), "import"))
            elif isinstance(node, _DEFINITIONS) and not _uses_mcp_otherwise(node):
                defined, used = _names_defined(node), _names_used(node)
                found.append(_Statement(number, segment, defined, used, "definition"))
    return found


def _is_notebook_only(statement: _Statement) -> bool:
    module = statement.source.split()[1] if statement.source.split()[:1] in (["import"], ["from"]) else ""
    return module.split(".")[0] in _NOT_EXPORTED_IMPORTS or statement.defines == {OBJECT}


def export_notebook(path: Path | str, *, name: str | None = None) -> str:
    """The text of a standalone server module made from notebook ``path``."""
    path = Path(path)
    statements = _statements(path)
    last_export: dict[str, int] = {}
    for i, statement in enumerate(statements):
        if statement.kind == "export":
            last_export[statement.exported_name] = i
    if not last_export:
        raise TargetError(f"{path} defines no @mcp.tool, @mcp.resource or @mcp.prompt to export")
    keep = set(last_export.values())
    wanted = set().union(*(statements[i].uses for i in keep))
    # Walk back from the end: the latest definition of a wanted name before its use is the one kept.
    changed = True
    while changed:
        changed = False
        for i in range(len(statements) - 1, -1, -1):
            statement = statements[i]
            if i in keep or statement.kind == "export" or not (statement.defines & wanted):
                continue
            if _is_notebook_only(statement):
                continue
            keep.add(i)
            new = statement.uses - wanted
            if new:
                wanted |= new
                changed = True
    title = name or _identifier(path.stem)
    future = [
        s.source for i, s in enumerate(statements) if i in keep and "__future__" in s.source.split()[:2]
    ]
    keep -= {i for i, s in enumerate(statements) if s.source in future}
    imports: dict[str, None] = {}  # hoisted to the top, in notebook order, once each
    body: list[str] = []
    cell = None
    for i, statement in enumerate(statements):
        if i not in keep:
            continue
        if statement.kind == "import":
            imports[statement.source] = None
            continue
        body.append(f"\n\n# cell {statement.cell}\n" if statement.cell != cell else "\n\n")
        cell = statement.cell
        body.append(statement.source + "\n")
    return _MODULE.format(
        notebook=path.name,
        name=json.dumps(title),
        body="".join(body).strip("\n"),
        imports="".join(f"{line}\n" for line in imports),
        obj=OBJECT,
        future="".join(f"{line}\n" for line in dict.fromkeys(future)),
    )


def _identifier(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-") or "notebook"


_MODULE = '''"""An MCP server exported from {notebook} by ``mcp-notebook export``.

Run it: ``python THIS_FILE`` (stdio), ``python THIS_FILE --http 127.0.0.1:8000`` (Streamable HTTP), or
``mcp-notebook serve THIS_FILE``. Edit the notebook and export again rather than this file.
"""

{future}{imports}from mcp_notebook import Server

{obj} = Server({name})


{body}


server = {obj}

if __name__ == "__main__":
    import sys

    from mcp_notebook.cli import main

    sys.exit(main(["serve", __file__, *sys.argv[1:]]))
'''


# ---- mcp-notebook test ------------------------------------------------------------------------------------
@dataclass
class NotebookRun:
    """What running a notebook headless found: the first error, and every failed ``%mcp check``."""

    path: Path
    cells: int = 0
    error: str | None = None
    failed_checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failed_checks

    def text(self) -> str:
        if self.ok:
            return f"{self.path}: {self.cells} code cells ran, no error, every check passed"
        lines = [f"{self.path}: FAILED"]
        if self.error:
            lines.append(self.error)
        lines += [f"  failed check: {line}" for line in self.failed_checks]
        return "\n".join(lines)


_FAILED_CHECK = re.compile(r"^check of .*: FAIL\b.*$", re.MULTILINE)


def run_notebook(path: Path | str, *, timeout: float = 600.0, kernel: str = "python3") -> NotebookRun:
    """Execute the notebook in a fresh kernel, in its own folder, headless (``MCP_NOTEBOOK_HEADLESS=1``
    unless set: approvals follow the headless policy); nothing is written back."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path).resolve()
    run = NotebookRun(path)
    os.environ.setdefault("MCP_NOTEBOOK_HEADLESS", "1")  # the kernel inherits it: nobody is there to click
    notebook = nbformat.read(str(path), as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook, timeout=int(timeout), kernel_name=kernel, resources={"metadata": {"path": str(path.parent)}}
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        run.error = str(exc).strip()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        run.cells += 1
        for output in cell.get("outputs", []):
            text = output.get("text", "") or (output.get("data") or {}).get("text/plain", "")
            run.failed_checks += _FAILED_CHECK.findall(text if isinstance(text, str) else "".join(text))
    return run
