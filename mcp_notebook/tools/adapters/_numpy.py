"""numpy at the tool boundary: scalar types, ``ndarray`` and ``numpy.typing.NDArray[dtype]``.

Wire mapping: a scalar is its JSON value (integers keep their type's range in the schema); an array is
nested lists, dtype-aware (datetime64 -> ISO strings, NaT -> null; complex has no JSON form and is an
error naming where it sits). numpy is taken from ``sys.modules``: it is loaded if one of its objects exists.
"""

from __future__ import annotations

import datetime as dt
import sys
import typing
from collections.abc import Sequence
from typing import Any

from .. import _jsonable
from .._jsonable import NotJSONable
from . import NOT_MINE

Schema = dict[str, Any]


def _np() -> Any:
    return sys.modules["numpy"]


# -- schemas -----------------------------------------------------------------------------------------------
def _scalar_schema(builder: Any, np: Any, tp: type, *, in_array: bool = False) -> Schema | None:
    if issubclass(tp, np.bool_):
        return {"type": "boolean"}
    if issubclass(tp, np.integer):
        info = np.iinfo(tp)
        return {"type": "integer", "minimum": int(info.min), "maximum": int(info.max)}
    if issubclass(tp, np.floating):
        # null is NaN: always in an outputSchema, and inside arrays in both directions
        nullable = in_array or getattr(builder, "output", False)
        return {"type": ["number", "null"]} if nullable else {"type": "number"}
    if issubclass(tp, np.str_):
        return {"type": "string"}
    if issubclass(tp, np.datetime64):
        return {"type": "string", "format": "date-time"}
    if issubclass(tp, np.timedelta64):
        return {"type": "string", "format": "duration"}
    return None  # complex, void, object: no JSON Schema for them


def _dtype_of(np: Any, tp: object) -> type | None:
    """The scalar type of ``NDArray[np.float64]`` (``ndarray[shape, dtype[float64]]``), or None."""
    for arg in typing.get_args(tp):
        if typing.get_origin(arg) is np.dtype:
            (scalar,) = typing.get_args(arg) or (None,)
            return scalar if isinstance(scalar, type) and issubclass(scalar, np.generic) else None
    return None


def _array_schema(builder: Any, np: Any, scalar: type | None) -> Schema:
    """Nested lists of any depth whose leaves are ``scalar``: one recursive definition per dtype."""
    if scalar is None:
        return {"type": "array", "description": "An n-dimensional array, as nested lists."}
    leaf = _scalar_schema(builder, np, scalar, in_array=True)
    if leaf is None:
        raise TypeError(f"numpy arrays of {scalar.__name__} have no JSON form")
    name = f"ndarray_{scalar.__name__}"
    ref = {"$ref": f"#/$defs/{name}"}
    builder.defs.setdefault(name, {"anyOf": [leaf, {"type": "array", "items": ref}]})
    return {"type": "array", "items": ref, "description": f"An n-dimensional {scalar.__name__} array."}


def schema(builder: Any, tp: object) -> Schema | None:
    np = _np()
    if isinstance(tp, type) and issubclass(tp, np.generic):
        return _scalar_schema(builder, np, tp)
    if tp is np.ndarray or typing.get_origin(tp) is np.ndarray:
        return _array_schema(builder, np, _dtype_of(np, tp))
    return None


def annotated_schema(builder: Any, base: object, metadata: Sequence[object]) -> Schema | None:
    """``Annotated[np.ndarray, np.float32]``: the dtype given as metadata."""
    np = _np()
    dtypes = [m for m in metadata if isinstance(m, type) and issubclass(m, np.generic)]
    if base is not np.ndarray or not dtypes:
        return None
    return _array_schema(builder, np, dtypes[0])


# -- JSON -> numpy ------------------------------------------------------------------------------------------
def _datetime64(np: Any, value: Any) -> Any:
    text = value[:-1] + "+00:00" if isinstance(value, str) and value.endswith(("Z", "z")) else value
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is not None:  # numpy datetimes are naive UTC
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return np.datetime64(when, "us")


def _scalar_from_json(np: Any, tp: type, value: Any) -> Any:
    if issubclass(tp, np.datetime64):
        return _datetime64(np, value)
    if issubclass(tp, np.timedelta64):
        from ..convert import from_json

        return np.timedelta64(from_json(dt.timedelta, value), "us")
    if issubclass(tp, np.floating) and value is None:
        return tp("nan")  # null is how NaN travels (README "NaN and Infinity")
    return tp(value)


def _array_from_json(np: Any, scalar: type | None, value: Any) -> Any:
    if scalar is not None and issubclass(scalar, np.datetime64):
        nat = np.datetime64("NaT", "us")
        value = _leaves(value, lambda v: nat if v is None else _datetime64(np, v))
        return np.array(value, dtype="datetime64[us]")
    if scalar is not None and issubclass(scalar, np.floating):
        value = _leaves(value, _null_to_nan)
    array = np.array(value, dtype=scalar)
    if scalar is None and array.dtype == object:  # numbers with nulls: a float array with NaN
        try:
            return np.array(_leaves(value, _null_to_nan), dtype=float)
        except (TypeError, ValueError):
            return array
    return array


def _leaves(value: Any, convert: Any) -> Any:
    if isinstance(value, list):
        return [_leaves(v, convert) for v in value]
    return convert(value)


def _null_to_nan(value: Any) -> Any:
    return float("nan") if value is None else value


def from_json(tp: object, value: Any, metadata: Sequence[object]) -> Any:
    np = _np()
    if isinstance(tp, type) and issubclass(tp, np.generic):
        return _scalar_from_json(np, tp, value)
    if tp is np.ndarray or typing.get_origin(tp) is np.ndarray:
        dtypes = [m for m in metadata if isinstance(m, type) and issubclass(m, np.generic)]
        scalar = _dtype_of(np, tp) or (dtypes[0] if dtypes else None)
        if not isinstance(value, list):
            raise TypeError(f"expected an array, got {type(value).__name__}")
        return _array_from_json(np, scalar, value)
    return NOT_MINE


# -- numpy -> JSON ------------------------------------------------------------------------------------------
def _array_to_json(np: Any, value: Any) -> Any:
    kind = value.dtype.kind
    if kind in "biuf":
        return value.tolist()  # Python scalars, NaN kept for the text copy (finite() nulls it later)
    if kind == "M":
        return _jsonable.to_jsonable(value.astype("datetime64[us]").tolist())  # datetimes; NaT -> None
    if kind == "m":
        return _jsonable.to_jsonable(value.astype("timedelta64[us]").tolist())
    if kind == "c":
        raise NotJSONable(f"{value.dtype} ndarray (complex numbers have no JSON form)")
    return _jsonable.to_jsonable(value.tolist())


def to_jsonable(value: Any) -> Any:
    np = _np()
    if isinstance(value, np.ndarray):
        return _array_to_json(np, value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.datetime64):
        return _jsonable.to_jsonable(value.astype("datetime64[us]").item())
    if isinstance(value, np.timedelta64):
        return _jsonable.to_jsonable(value.astype("timedelta64[us]").item())
    if isinstance(value, np.complexfloating):
        raise NotJSONable(f"{type(value).__name__} (complex numbers have no JSON form)")
    return NOT_MINE
