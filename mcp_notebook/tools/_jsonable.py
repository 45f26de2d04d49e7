"""Python values -> JSON-compatible values (the one place that knows how each kind serializes)."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import sys
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import PurePath
from typing import Any

__all__ = ["is_pydantic_model_class", "pydantic_base_model", "to_jsonable"]


def pydantic_base_model() -> type[Any] | None:
    """pydantic's BaseModel if pydantic was imported by someone; we never import it ourselves just to look."""
    module = sys.modules.get("pydantic")
    return getattr(module, "BaseModel", None) if module is not None else None


def is_pydantic_model_class(tp: object) -> bool:
    base = pydantic_base_model()
    return base is not None and isinstance(tp, type) and issubclass(tp, base)


def _sequence(value: Any) -> list[Any]:
    return [to_jsonable(v) for v in value]


def _set(value: Any) -> list[Any]:
    items = _sequence(value)
    try:  # sets have no order; sort when possible so the output is reproducible
        return sorted(items)
    except TypeError:
        return items


def _mapping(value: dict[Any, Any]) -> dict[str, Any]:
    return {_key(k): to_jsonable(v) for k, v in value.items()}


def _key(key: Any) -> str:
    converted = to_jsonable(key)
    return converted if isinstance(converted, str) else str(converted)


def _dataclass(value: Any) -> dict[str, Any]:
    # not dataclasses.asdict: it deep-copies every leaf, and we convert the leaves ourselves anyway
    return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


_BY_TYPE: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (enum.Enum, lambda v: to_jsonable(v.value)),
    ((dt.datetime, dt.date, dt.time), lambda v: v.isoformat()),
    ((uuid.UUID, PurePath), str),
    (Decimal, lambda v: int(v) if v == v.to_integral_value() else float(v)),
    ((bytes, bytearray), _bytes),
    (dict, _mapping),
    ((list, tuple), _sequence),
    ((set, frozenset), _set),
)


def to_jsonable(value: Any) -> Any:
    """Convert ``value`` into plain JSON types; raise TypeError naming the type when that is impossible."""
    if value is None or (isinstance(value, (str, bool, int, float)) and not isinstance(value, enum.Enum)):
        return value
    for kinds, convert in _BY_TYPE:
        if isinstance(value, kinds):
            return convert(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass(value)
    base = pydantic_base_model()
    if base is not None and isinstance(value, base):
        return value.model_dump(mode="json")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
