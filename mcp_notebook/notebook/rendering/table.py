"""Tabular structured content as a table in the result view: shape, column types, the first rows.

Pure and pandas-free (a result is drawn without importing pandas): the column "dtypes" are the JSON types
seen in each column. Which results are tabular is decided once, by :func:`~mcp_notebook.engine.tables.
table_shape` (records, columns-of-lists, or either under a single wrapper key such as ``result``); that is
also what ``handle.to_pandas()`` turns into a DataFrame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...engine.tables import table_shape
from ...protocol.jsonrpc import json_type
from .base import esc, json_text

__all__ = ["table_parts"]

MAX_ROWS = 10


def _rows(structured: Any) -> list[Mapping[str, Any]] | None:
    found = table_shape(structured)
    if found is None or found[0] not in ("records", "columns"):
        return None
    shape, data = found
    if shape == "records":
        return list(data)
    names = list(data)
    return [{name: data[name][i] for name in names} for i in range(len(data[names[0]]))]


_KINDS: dict[type, str] = {}  # a value's JSON type by its Python type (they are all built-in types above)


def _kind(value: object) -> str:
    kind = _KINDS.get(type(value))
    if kind is None:
        kind = _KINDS[type(value)] = json_type(value) or "object"
    return kind


def _columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    kinds: dict[str, dict[str, None]] = {}
    for row in rows:
        for key, value in row.items():
            kinds.setdefault(str(key), {})[_kind(value)] = None
    return {name: "|".join(seen) for name, seen in kinds.items()}


def _cell(value: object, width: int = 60) -> str:
    text = "" if value is None else value if isinstance(value, str) else json_text(value, indent=None)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def table_parts(structured: Any, *, max_rows: int = MAX_ROWS) -> tuple[str, str] | None:
    """``(html, text)`` of a table for tabular structured content, or None if it is not tabular."""
    rows = _rows(structured)
    if rows is None:
        return None
    columns = _columns(rows)
    names = list(columns)
    shown = rows[:max_rows]
    shape = f"{len(rows)} rows x {len(names)} columns"
    more = f" (first {len(shown)} shown; handle.to_pandas() has them all)" if len(rows) > len(shown) else ""
    head = "".join(f"<th>{esc(n)}<div class='mcpnb-note'>{esc(columns[n])}</div></th>" for n in names)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(_cell(row.get(n)))}</td>" for n in names) + "</tr>" for row in shown
    )
    html = (
        f'<div class="mcpnb-block"><div class="mcpnb-label">table: {esc(shape)}{esc(more)}</div>'
        f'<table class="mcpnb-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )
    lines = [[n for n in names], [columns[n] for n in names]] + [
        [_cell(r.get(n), 24) for n in names] for r in shown
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(names))]
    text_rows = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    text = f"table: {shape}{more}\n" + "\n".join(text_rows)
    return html, text
