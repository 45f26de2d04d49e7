"""Python functions -> MCP tools: schemas from type hints, results to content, a paginated registry.

Pure: no I/O beyond reading a file an ``Image(path=...)`` names, no servers. See ``DESIGN.md`` (``tools/``).
"""

from __future__ import annotations

from ._jsonable import finite, jsonable_arguments
from .content import (
    Audio,
    EmbeddedResource,
    Image,
    ResourceLink,
    ToolError,
    ToolResult,
    to_call_result,
    to_jsonable,
)
from .context import Context, ToolCancelled
from .docstrings import parse_docstring
from .registry import ToolRegistry, decode_cursor, encode_cursor, paginate
from .schema import Field, input_schema_for, output_schema_for
from .tool import Tool, ToolOutcome, make_tool

__all__ = [
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
