"""The public API of mcp_notebook.tools is pinned here; changing it is a decision, not an accident."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_notebook.tools as tools


def test_exported_members() -> None:
    assert sorted(tools.__all__) == [
        "Audio",
        "Context",
        "EmbeddedResource",
        "Field",
        "Image",
        "ResourceLink",
        "Tool",
        "ToolCancelled",
        "ToolError",
        "ToolOutcome",
        "ToolRegistry",
        "ToolResult",
        "decode_cursor",
        "encode_cursor",
        "finite",
        "input_schema_for",
        "jsonable_arguments",
        "make_tool",
        "output_schema_for",
        "paginate",
        "parse_docstring",
        "to_call_result",
        "to_jsonable",
    ]
    for name in tools.__all__:
        assert getattr(tools, name) is not None


def test_no_dependency_on_upper_layers() -> None:
    # static, not sys.modules: other tests in the same session legitimately import the upper layers
    forbidden = ("server", "client", "transports", "notebook")
    package = Path(tools.__file__).parent
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            names = _imported(node)
            bad = [n for n in names if n.startswith(tuple(f"mcp_notebook.{f}" for f in forbidden))]
            assert not bad, f"{source.name} imports {bad}"


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        # relative imports inside tools/ are one level deep; "..server" would be level 2
        prefix = "mcp_notebook." if node.level >= 2 else ""
        return [prefix + (node.module or "")]
    return []
