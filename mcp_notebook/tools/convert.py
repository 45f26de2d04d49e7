"""Validated JSON arguments -> the Python values a tool's annotations ask for.

Runs after JSON Schema validation, so it only has to build values (``"2025-01-02"`` -> ``date``, a dict ->
a dataclass); a ``ValueError``/``TypeError`` here still means the arguments were wrong, and the caller turns
it into an "Invalid arguments" tool error.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import re
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal, InvalidOperation
from pathlib import PurePath
from typing import Any

from ._jsonable import is_pydantic_model_class
from ._typeschema import is_namedtuple, is_typeddict, required_markers
from .adapters import NOT_MINE
from .adapters import from_json as adapter_from_json

__all__ = ["from_json"]

Converter = Callable[[Any, Any], Any]


def from_json(tp: Any, value: Any) -> Any:
    """Convert one JSON value to the Python type ``tp``; raise ValueError/TypeError if it does not fit."""
    origin = typing.get_origin(tp)
    if origin is not None:
        return _converter_for_origin(origin)(tp, value)
    for predicate, convert in _CLASS_CONVERTERS:
        if predicate(tp):
            return convert(tp, value)
    return _adapted(tp, value, ())  # pandas, numpy, PIL...; else Any, object: JSON Schema vouched for it


def _adapted(tp: Any, value: Any, metadata: Sequence[object]) -> Any:
    converted = adapter_from_json(tp, value, metadata)
    return value if converted is NOT_MINE else converted


def _annotated(tp: Any, value: Any) -> Any:
    base, *metadata = typing.get_args(tp)
    converted = adapter_from_json(base, value, metadata)  # Annotated[pd.DataFrame, Row]: the spec matters
    return from_json(base, value) if converted is NOT_MINE else converted


def _converter_for_origin(origin: Any) -> Converter:
    if origin in required_markers():
        return lambda tp, value: from_json(typing.get_args(tp)[0], value)
    return _ORIGIN_CONVERTERS.get(origin, lambda tp, value: _adapted(tp, value, ()))


def _expect(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise TypeError(f"expected {name}, got {type(value).__name__}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


# -- generic aliases -----------------------------------------------------------------------------------------
def _union(tp: Any, value: Any) -> Any:
    problems = []
    for arm in typing.get_args(tp):
        try:
            return from_json(arm, value)
        except (TypeError, ValueError) as exc:
            problems.append(str(exc))
    raise ValueError(f"{value!r} matches no member of {tp}: {'; '.join(problems)}")


def _literal(tp: Any, value: Any) -> Any:
    for allowed in typing.get_args(tp):
        # a Literal of Enum members receives the member's value on the wire
        wire = allowed.value if isinstance(allowed, enum.Enum) else allowed
        if wire == value and type(wire) is type(value):
            return allowed
    raise ValueError(f"{value!r} is not one of {typing.get_args(tp)}")


def _items(tp: Any, value: Any) -> list[Any]:
    (item,) = typing.get_args(tp) or (Any,)
    return [from_json(item, v) for v in _expect(value, list, "an array")]


def _tuple(tp: Any, value: Any) -> tuple[Any, ...]:
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_items(tuple[args[0]], value))  # type: ignore[valid-type]
    items = _expect(value, list, "an array")
    if args and args != ((),):
        return tuple(from_json(arg, v) for arg, v in zip(args, items, strict=True))
    return tuple(items)


def _dict(tp: Any, value: Any) -> dict[Any, Any]:
    args = typing.get_args(tp)
    key, item = args if args else (str, Any)
    make_key = int if key is int else (lambda k: k)  # dict[int, X]: the keys travel as decimal strings
    return {make_key(k): from_json(item, v) for k, v in _expect(value, dict, "an object").items()}


def _namedtuple(tp: Any, value: Any) -> Any:
    hints = typing.get_type_hints(tp, include_extras=True)
    items = _expect(value, list, "an array")
    if len(items) > len(tp._fields):
        raise ValueError(f"{tp.__name__} has {len(tp._fields)} fields, got {len(items)} values")
    return tp(*(from_json(hints.get(name, Any), v) for name, v in zip(tp._fields, items, strict=False)))


def _decimal(tp: Any, value: Any) -> Decimal:
    """From a number (as written: 1.1 is Decimal("1.1"), not the float's binary expansion) or a numeric
    string ("1.10" keeps its digits); NaN and infinities are not numbers JSON can send."""
    try:
        number = Decimal(str(_expect(value, (int, float, str), "a number or a numeric string")))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    return number


_ORIGIN_CONVERTERS: dict[Any, Converter] = {
    typing.Annotated: _annotated,
    typing.Union: _union,
    types.UnionType: _union,
    typing.Literal: _literal,
    list: _items,
    Sequence: _items,
    set: lambda tp, value: set(_items(tp, value)),
    AbstractSet: lambda tp, value: set(_items(tp, value)),
    frozenset: lambda tp, value: frozenset(_items(tp, value)),
    tuple: _tuple,
    dict: _dict,
    Mapping: _dict,
}


# -- classes -------------------------------------------------------------------------------------------------
def _datetime(tp: Any, value: Any) -> dt.datetime:
    text = _expect(value, str, "a date-time string")
    # Python 3.10's fromisoformat does not accept the "Z" suffix that RFC 3339 (JSON Schema date-time) uses
    parsed = dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    return parsed if tp is dt.datetime else tp(parsed)  # a subclass such as pandas.Timestamp


def _time(tp: Any, value: Any) -> dt.time:
    text = _expect(value, str, "a time string")
    return dt.time.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)


def _dataclass(tp: Any, value: Any) -> Any:
    hints = typing.get_type_hints(tp, include_extras=True)
    data = _expect(value, dict, "an object")
    fields = {f.name for f in dataclasses.fields(tp) if f.init}
    return tp(**{k: from_json(hints[k], v) for k, v in data.items() if k in fields})


def _typeddict(tp: Any, value: Any) -> dict[str, Any]:
    hints = typing.get_type_hints(tp, include_extras=True)
    data = _expect(value, dict, "an object")
    return {k: from_json(hints[k], v) if k in hints else v for k, v in data.items()}


_DURATION = re.compile(
    r"(-)?P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?"
)


def _timedelta(tp: Any, value: Any) -> dt.timedelta:
    """ISO 8601 durations without years or months (their length varies): ``P1DT2H``, ``-PT0.5S``."""
    match = _DURATION.fullmatch(_expect(value, str, "an ISO 8601 duration string"))
    if match is None or value in ("P", "-P") or value.endswith("T"):
        raise ValueError(f"{value!r} is not an ISO 8601 duration like P1DT2H30M")
    sign, weeks, days, hours, minutes, seconds = match.groups()
    amounts = (float(n) if n else 0.0 for n in (weeks, days, hours, minutes, seconds))
    delta = dt.timedelta(**dict(zip(("weeks", "days", "hours", "minutes", "seconds"), amounts, strict=True)))
    return -delta if sign else delta


def _float(tp: Any, value: Any) -> float:
    return float(_expect(value, (int, float), "a number"))


def _simple(kind: type, name: str) -> Converter:
    return lambda tp, value: _expect(value, kind, name)


def _is_class(kind: type) -> Callable[[Any], bool]:
    return lambda tp: isinstance(tp, type) and issubclass(tp, kind)


def _is_exactly(kind: object) -> Callable[[Any], bool]:
    return lambda tp: tp is kind


# order matters: bool before int (bool is an int), datetime before date (a datetime is a date)
_CLASS_CONVERTERS: tuple[tuple[Callable[[Any], bool], Converter], ...] = (
    (_is_exactly(type(None)), lambda tp, value: _expect(value, type(None), "null")),
    (_is_exactly(None), lambda tp, value: _expect(value, type(None), "null")),
    (_is_class(enum.Enum), lambda tp, value: tp(value)),
    (_is_exactly(bool), _simple(bool, "a boolean")),
    (_is_exactly(int), _simple(int, "an integer")),
    (_is_exactly(float), _float),
    (_is_class(dt.datetime), _datetime),
    (_is_class(dt.date), lambda tp, value: tp.fromisoformat(_expect(value, str, "a date string"))),
    (_is_class(dt.time), _time),
    (_is_exactly(dt.timedelta), _timedelta),
    (_is_exactly(Decimal), _decimal),
    (_is_class(uuid.UUID), lambda tp, value: tp(_expect(value, str, "a UUID string"))),
    (_is_class(PurePath), lambda tp, value: tp(_expect(value, str, "a path string"))),
    (_is_exactly(bytes), lambda tp, value: base64.b64decode(_expect(value, str, "a base64 string"))),
    (_is_class(str), lambda tp, value: tp(_expect(value, str, "a string"))),
    (is_typeddict, _typeddict),
    (is_namedtuple, _namedtuple),
    (lambda tp: isinstance(tp, type) and dataclasses.is_dataclass(tp), _dataclass),
    (is_pydantic_model_class, lambda tp, value: tp.model_validate(value)),
    (lambda tp: hasattr(tp, "__supertype__"), lambda tp, value: from_json(tp.__supertype__, value)),
)
