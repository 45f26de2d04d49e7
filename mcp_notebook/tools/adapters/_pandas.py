"""pandas at the tool boundary: ``DataFrame``, ``Series``, ``Timestamp``, ``Timedelta``, ``NA``, categoricals.

Wire mapping (README "Data frames and arrays"): a DataFrame is *records*, an array of row objects, column
name -> value; a non-default index becomes leading column(s) first (``reset_index``), so ``describe()``
keeps its row labels. A Series is the records of its one-column frame. Column types come from the
annotation: ``Annotated[pd.DataFrame, Row]`` with ``Row`` a TypedDict, dataclass or pydantic model, or
``Annotated[pd.DataFrame, {"city": str, "temp": float}]``; a bare ``DataFrame`` is any array of objects.
Missing values (NaN, NaT, ``pd.NA``) are ``null``. pandas comes from ``sys.modules``, never imported here.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from .. import _jsonable
from .._typeschema import apply_metadata
from . import NOT_MINE

Schema = dict[str, Any]
_TABLE_ROWS = 60  # rows shown in a result's text table; the structured content has them all
_ROWS = "Table rows: one object per row, column name -> value (a pandas DataFrame)."


def _pd() -> Any:
    return sys.modules["pandas"]


def _is_row_type(item: object) -> bool:
    return isinstance(item, type) and (
        dataclasses.is_dataclass(item)
        or (issubclass(item, dict) and hasattr(item, "__total__"))  # TypedDict
        or _jsonable.is_pydantic_model_class(item)
    )


def _is_spec(item: object) -> bool:
    return _is_row_type(item) or (isinstance(item, Mapping) and all(isinstance(k, str) for k in item))


# -- schemas -----------------------------------------------------------------------------------------------
def _column_schema(builder: Any, pd: Any, tp: Any) -> Schema:
    if isinstance(tp, pd.CategoricalDtype):
        return {"enum": [_jsonable.to_jsonable(c) for c in tp.categories] + [None]}
    column: Schema = builder.schema(tp)
    return column


def _row_schema(builder: Any, pd: Any, spec: Any) -> Schema:
    """Float columns allow null in both directions: a missing value is NaN in the frame, null on the wire."""
    was, builder.output = builder.output, True
    try:
        if _is_row_type(spec):
            row: Schema = builder.schema(spec)
            return row
        properties = {name: _column_schema(builder, pd, tp) for name, tp in spec.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    finally:
        builder.output = was


def schema(builder: Any, tp: object) -> Schema | None:
    pd = _pd()
    if tp is pd.DataFrame:
        return {"type": "array", "items": {"type": "object"}, "description": _ROWS}
    if tp is pd.Series:
        return {"type": "array", "description": "A pandas Series: its values, or records with its index."}
    if tp is pd.Timestamp:
        return {"type": "string", "format": "date-time"}
    if tp is pd.Timedelta:
        return {"type": "string", "format": "duration"}
    return None


def annotated_schema(builder: Any, base: object, metadata: Sequence[object]) -> Schema | None:
    pd = _pd()
    specs = [m for m in metadata if _is_spec(m)]
    rest = [m for m in metadata if not _is_spec(m)]
    if base is pd.DataFrame and specs:
        table = {"type": "array", "items": _row_schema(builder, pd, specs[0]), "description": _ROWS}
        return apply_metadata(table, rest)
    if base is pd.Series and metadata and (isinstance(metadata[0], (type, pd.CategoricalDtype))):
        value = _row_schema(builder, pd, {"value": metadata[0]})["properties"]["value"]
        items = {"anyOf": [value, {"type": "object"}]}
        return apply_metadata({"type": "array", "items": items}, metadata[1:])
    return None


# -- JSON -> pandas -----------------------------------------------------------------------------------------
def _columns_of(spec: Any) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        return dict(spec)
    return typing.get_type_hints(spec, include_extras=True)


def _coerce(pd: Any, frame: Any, columns: dict[str, Any]) -> Any:
    """Declared columns get their dtype: float (null -> NaN), category (Literal, Enum, CategoricalDtype)."""
    for name, tp in columns.items():
        if name not in frame.columns:
            continue
        bare = typing.get_args(tp)[0] if typing.get_origin(tp) is typing.Annotated else tp
        if isinstance(bare, pd.CategoricalDtype):
            frame[name] = frame[name].astype(bare)
        elif typing.get_origin(bare) is typing.Literal:
            frame[name] = frame[name].astype(pd.CategoricalDtype(list(typing.get_args(bare))))
        elif isinstance(bare, type) and issubclass(bare, enum.Enum):
            frame[name] = frame[name].astype("category")
        elif bare is float:
            frame[name] = frame[name].astype("float64")
    return frame


def _frame_from_json(pd: Any, value: Any, spec: Any) -> Any:
    if isinstance(value, Mapping):  # columns of lists: not what the schema asks, but unambiguous
        return pd.DataFrame(dict(value))
    if not isinstance(value, list):
        raise TypeError(f"expected an array of row objects, got {type(value).__name__}")
    if spec is None:
        return pd.DataFrame.from_records(value) if value else pd.DataFrame()
    from ..convert import from_json

    columns = _columns_of(spec)
    # each declared cell becomes its Python value (a date-time string -> datetime...); null stays missing
    records = [
        {k: from_json(columns[k], v) if k in columns and v is not None else v for k, v in row.items()}
        for row in value
    ]
    frame = pd.DataFrame.from_records(records, columns=list(columns) if not records else None)
    return _coerce(pd, frame, columns)


def _series_from_json(pd: Any, value: Any) -> Any:
    if not isinstance(value, list):
        raise TypeError(f"expected an array, got {type(value).__name__}")
    if value and all(isinstance(v, Mapping) for v in value):
        frame = pd.DataFrame.from_records(value)
        if frame.shape[1] == 1:
            return frame.iloc[:, 0]
        if frame.shape[1] == 2:
            return frame.set_index(frame.columns[0]).iloc[:, 0]
        raise TypeError("a Series is an array of values, or records with one or two columns")
    return pd.Series([None if v is None else v for v in value])


def from_json(tp: object, value: Any, metadata: Sequence[object]) -> Any:
    pd = _pd()
    if tp is pd.DataFrame:
        specs = [m for m in metadata if _is_spec(m)]
        return _frame_from_json(pd, value, specs[0] if specs else None)
    if tp is pd.Series:
        return _series_from_json(pd, value)
    if tp is pd.Timestamp or tp is pd.Timedelta:
        build: Any = tp
        return build(value)  # both read ISO 8601 (a date-time, a duration)
    return NOT_MINE


# -- pandas -> JSON -----------------------------------------------------------------------------------------
def _records(pd: Any, frame: Any) -> list[Any]:
    if not _default_index(pd, frame.index):
        frame = frame.reset_index()
    if not all(isinstance(c, str) for c in frame.columns):
        frame = frame.set_axis([_column_name(c) for c in frame.columns], axis="columns")
    rows: list[Any] = _jsonable.to_jsonable(frame.to_dict("records"))
    return rows


def _column_name(column: Any) -> str:
    if isinstance(column, tuple):  # a MultiIndex column: ("temp", "mean") -> "temp.mean"
        return ".".join(str(part) for part in column if part != "")
    return str(column)


def _default_index(pd: Any, index: Any) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 and index.name is None


def _as_frame(series: Any) -> Any:
    return series.to_frame(name=series.name if series.name is not None else "value")


def to_jsonable(value: Any) -> Any:
    pd = _pd()
    if isinstance(value, pd.DataFrame):
        return _records(pd, value)
    if isinstance(value, pd.Series):
        return _records(pd, _as_frame(value))
    if value is pd.NA:
        return None
    if isinstance(value, (pd.Index, pd.Categorical)):
        return _jsonable.to_jsonable(value.tolist())
    if isinstance(value, (pd.Period, pd.Interval)):
        return str(value)
    return NOT_MINE


def table_text(value: Any) -> str | None:
    """The text content of a DataFrame/Series result: the table as pandas prints it (NaN and inf spelled
    out), with its dimensions; long tables show their first and last rows."""
    pd = _pd()
    if isinstance(value, pd.Series):
        value = _as_frame(value)
    if not isinstance(value, pd.DataFrame):
        return None
    text: str = value.to_string(max_rows=_TABLE_ROWS, max_cols=30, show_dimensions=True)
    return text
