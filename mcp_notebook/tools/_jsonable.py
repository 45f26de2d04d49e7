"""Python values -> JSON-compatible values (the one place that knows how each kind serializes).

Non-finite floats (NaN, +/-Infinity) stay floats here, so the text copy of a result can spell them out;
:func:`finite` turns them into ``None`` for structured content (README "NaN and Infinity"). A value that
JSON cannot represent raises :class:`NotJSONable`, which names where in the value it sits.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import math
import sys
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from .adapters import NOT_MINE
from .adapters import to_jsonable as adapter_to_jsonable

__all__ = [
    "NotJSONable",
    "finite",
    "has_non_finite",
    "is_pydantic_model_class",
    "iso_duration",
    "jsonable_arguments",
    "pydantic_base_model",
    "to_jsonable",
]


class NotJSONable(TypeError):
    """A value JSON cannot represent; ``path`` is where it sits (keys and indexes from the outside in)."""

    def __init__(self, kind: str, path: list[str | int] | None = None) -> None:
        self.kind = kind
        self.path: list[str | int] = path or []
        super().__init__(f"Object of type {kind} is not JSON serializable")

    def where(self, root: str = "") -> str:
        """``result[3].x``: the path in the style of validation errors (tools/validation.format_path)."""
        text = root
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        return text or "(the value itself)"


def pydantic_base_model() -> type[Any] | None:
    """pydantic's BaseModel if pydantic was imported by someone; we never import it ourselves just to look."""
    module = sys.modules.get("pydantic")
    return getattr(module, "BaseModel", None) if module is not None else None


def is_pydantic_model_class(tp: object) -> bool:
    base = pydantic_base_model()
    return base is not None and isinstance(tp, type) and issubclass(tp, base)


def _located(pairs: Iterable[tuple[str | int, Any]], exc: NotJSONable) -> NotJSONable:
    """Find which item failed (only on the error path, so the common path keeps its comprehension)."""
    for key, item in pairs:
        try:
            to_jsonable(item)
        except NotJSONable as inner:
            inner.path.insert(0, key)
            return inner
    return exc


def _sequence(value: Any) -> list[Any]:
    try:
        return [to_jsonable(v) for v in value]
    except NotJSONable as exc:
        raise _located(enumerate(value), exc) from None


def _set(value: Any) -> list[Any]:
    items = _sequence(value)
    try:  # sets have no order; sort when possible so the output is reproducible
        return sorted(items)
    except TypeError:
        return items


def _mapping(value: dict[Any, Any]) -> dict[str, Any]:
    try:
        return {_key(k): to_jsonable(v) for k, v in value.items()}
    except NotJSONable as exc:
        raise _located(((_key(k), v) for k, v in value.items()), exc) from None


def _key(key: Any) -> str:
    converted = to_jsonable(key)
    return converted if isinstance(converted, str) else str(converted)


def _dataclass(value: Any) -> dict[str, Any]:
    # not dataclasses.asdict: it deep-copies every leaf, and we convert the leaves ourselves anyway
    return _mapping({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})


def _bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _iso(value: dt.date | dt.time) -> str | None:
    text = value.isoformat()
    return None if text == "NaT" else text  # pandas' NaT is a datetime that is not a time


def iso_duration(value: dt.timedelta) -> str | None:
    """ISO 8601 duration (JSON Schema ``format: duration``): ``P1DT2H``, ``PT0.5S``, ``-PT3M``."""
    if value != value:  # pandas' NaT is a timedelta too, and unequal to itself
        return None
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign, micros = ("-", -micros) if micros < 0 else ("", micros)
    days, rest = divmod(micros, 86_400_000_000)
    hours, rest = divmod(rest, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds = f"{rest // 1_000_000}.{rest % 1_000_000:06d}".rstrip("0").rstrip(".")
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    time += f"{seconds}S" if rest or not (days or time) else ""
    return f"{sign}P{f'{days}D' if days else ''}{'T' + time if time else ''}"


def _decimal(value: Decimal) -> int | float:
    if not value.is_finite():
        return float(value)  # NaN/Infinity: finite() makes it null like any other non-finite float
    return int(value) if value == value.to_integral_value() else float(value)


_BY_TYPE: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (enum.Enum, lambda v: to_jsonable(v.value)),
    ((dt.datetime, dt.date, dt.time), _iso),
    (dt.timedelta, iso_duration),
    ((uuid.UUID, PurePath), str),
    (Decimal, _decimal),
    ((bytes, bytearray), _bytes),
    (dict, _mapping),
    ((list, tuple), _sequence),
    ((set, frozenset), _set),
)
_PLAIN = frozenset({str, int, bool, float, type(None)})


def to_jsonable(value: Any) -> Any:
    """Convert ``value`` into plain JSON types; raise :class:`NotJSONable` naming the type (and, from
    inside containers, the path) when that is impossible. Non-finite floats are kept (see :func:`finite`)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, (str, bool, int, float)) and not isinstance(value, enum.Enum):
        return float(value) if isinstance(value, float) else value  # numpy.float64 is a float subclass
    for kinds, convert in _BY_TYPE:
        if isinstance(value, kinds):
            return convert(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass(value)
    base = pydantic_base_model()
    if base is not None and isinstance(value, base):
        return value.model_dump(mode="json")
    adapted = adapter_to_jsonable(value)
    if adapted is not NOT_MINE:
        return adapted
    raise NotJSONable(type(value).__name__)


def finite(value: Any) -> Any:
    """``value`` (already JSON-able) with NaN/Infinity replaced by ``None``, as it goes on the wire."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is dict:
        return {k: finite(v) for k, v in value.items()}
    if type(value) is list:
        return [finite(v) for v in value]
    return value


def has_non_finite(text: str) -> bool:
    """Whether JSON text written with ``allow_nan`` holds a non-finite number (a cheap first look: a string
    that merely contains the word only costs a needless :func:`finite` walk)."""
    return "NaN" in text or "Infinity" in text


def jsonable_arguments(arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Tool arguments as JSON values (DataFrames, numpy values, datetimes...); plain ones stay as they are."""
    if not arguments:
        return {}
    for value in arguments.values():  # a loop, not all(...): no generator to make and resume per call
        if type(value) not in _PLAIN:
            converted: dict[str, Any] = to_jsonable(arguments)
            return converted
    return arguments
