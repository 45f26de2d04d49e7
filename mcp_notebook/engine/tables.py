"""Tool results back into analysis objects: ``to_pandas(result)`` (issue 9).

:func:`table_shape` is pure (no pandas): it recognises tabular structured content, which the notebook's
result view also uses to draw a table. :func:`to_pandas` imports pandas when called, because the caller
asked for a DataFrame; nothing else here imports it.

Recognised shapes, also under a single wrapper key such as ``{"result": ...}`` (how a non-object result is
wrapped, MCP-NOTES §5.4): *records* (an array of objects), *columns* (an object of equal-length arrays), an
array of scalars (a Series), an object of scalars (a Series indexed by its keys) and a lone scalar. A
leading ``index`` column (how a DataFrame with a non-default index travels) becomes the index again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

__all__ = ["NOT_RUN", "Shape", "outcomes_frame", "row_columns", "structured_of", "table_shape", "to_pandas"]

Shape = Literal["records", "columns", "values", "mapping", "scalar"]
_SCALARS = (str, int, float, bool, type(None))


def structured_of(result: Any) -> Any:
    """The structured content of a ``CallToolResult`` dict, or ``result`` itself if it is not one."""
    if isinstance(result, Mapping) and "content" in result and isinstance(result.get("content"), list):
        return result.get("structuredContent")
    return result


def _unwrapped(value: Any) -> Any:
    if isinstance(value, Mapping) and len(value) == 1:
        (inner,) = value.values()
        if isinstance(inner, (list, Mapping)):
            return inner
    return value


def _columns(value: Any) -> bool:
    if not isinstance(value, Mapping) or not value:
        return False
    lengths = {len(v) if isinstance(v, list) else -1 for v in value.values()}
    return len(lengths) == 1 and -1 not in lengths


def table_shape(structured: Any) -> tuple[Shape, Any] | None:
    """``(shape, data)`` for tabular structured content (after a wrapper key is looked through), or None."""
    if structured is None:
        return None
    data = _unwrapped(structured)
    if isinstance(data, list) and data and all(isinstance(row, Mapping) for row in data):
        return "records", data
    if _columns(data):
        return "columns", data
    if isinstance(data, list) and all(isinstance(v, _SCALARS) for v in data):
        return "values", data
    if isinstance(data, Mapping) and data and all(isinstance(v, _SCALARS) for v in data.values()):
        if len(data) == 1:
            return "scalar", next(iter(data.values()))
        return "mapping", data
    if isinstance(data, _SCALARS):
        return "scalar", data
    return None


def to_pandas(result: Any) -> Any:
    """A DataFrame (records, columns), a Series (values, an object of scalars) or a scalar, from a
    ``CallToolResult`` or its structured content; ``ValueError`` when it is not tabular."""
    import pandas as pd  # asked for by the caller

    found = table_shape(structured_of(result))
    if found is None:
        raise ValueError("the result has no tabular structured content (records, columns or values)")
    shape, data = found
    if shape == "records":
        frame = pd.DataFrame.from_records(data)
        if len(frame.columns) and frame.columns[0] == "index":
            frame = frame.set_index("index").rename_axis(None)
        return frame
    if shape == "columns":
        return pd.DataFrame(dict(data))
    if shape == "values":
        return pd.Series(data)
    if shape == "mapping":
        return pd.Series(dict(data))
    return data


def row_columns(result: Mapping[str, Any] | None) -> dict[str, Any]:
    """One call's result as the columns of one row: the structured object's keys (through a ``result``
    wrapper), ``result`` for a non-object value, or ``text`` when there is no structured content."""
    if result is None or result.get("isError") is True:
        return {}
    if "structuredContent" not in result:
        texts = [b.get("text") for b in result.get("content") or [] if isinstance(b, dict)]
        return {"text": "\n".join(t for t in texts if isinstance(t, str))}
    structured = result.get("structuredContent")
    found = _object(structured)
    if found is not None and set(found) == {"result"}:
        structured = found["result"]
        found = _object(structured)
    return dict(found) if found is not None else {"result": structured}


def _object(value: Any) -> Mapping[str, Any] | None:
    """``value`` if it is a JSON object, else None (a dict is checked first: a batch asks once per row)."""
    return value if type(value) is dict or isinstance(value, Mapping) else None


def outcomes_frame(
    outcomes: list[tuple[Any, Mapping[str, Any] | None, str | None]], columns: Sequence[str] = ()
) -> Any:
    """``(label, result, error)`` per row -> a DataFrame indexed by the labels: result columns (``columns``
    first, present even when no row produced them), then ``status`` ("ok", "failed", "not run") and
    ``error``. A row that never ran has ``error`` starting with :data:`NOT_RUN`."""
    import pandas as pd  # asked for by the caller

    records = [
        {**row_columns(result), "status": _status(result, error), "error": error}
        for _, result, error in outcomes
    ]
    frame = pd.DataFrame.from_records(records, index=[label for label, _, _ in outcomes])
    for name in [*columns, "status", "error"]:
        if name not in frame.columns:
            frame[name] = None
    first = [c for c in columns if c not in ("status", "error")]
    rest = [c for c in frame.columns if c not in (*first, "status", "error")]
    return frame[[*first, *rest, "status", "error"]]


NOT_RUN = "not run"


def _status(result: Mapping[str, Any] | None, error: str | None) -> str:
    if error is not None and error.startswith(NOT_RUN):
        return NOT_RUN
    return "ok" if error is None and result is not None else "failed"
