"""The type zoo: ordinary Python annotations, each a tool that takes one and returns it (issue 20).

Each case is an annotation, a Python value of it and that value's JSON form on the wire (written out here,
not computed by the code under test; README "Types across the boundary" is the same table in prose). The
tool named ``t_<id>`` checks that the argument it received is the Python value (type, offset and all) and
returns it, so one call checks both directions. This file is also a server module
(``mcp-notebook serve tests/contracts/zoo.py``) for the official SDK's client.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, NamedTuple, NewType, Optional, TypedDict

import numpy as np
import numpy.typing as npt
import pandas as pd
import pydantic

from mcp_notebook import Server, ToolError
from mcp_notebook.tools import to_jsonable
from mcp_notebook.tools._jsonable import finite

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)
UTC2 = dt.timezone(dt.timedelta(hours=2))


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(NamedTuple):
    x: int
    y: float = 0.0


class Movie(TypedDict):
    title: str
    year: int


class Partial(TypedDict, total=False):
    title: str
    rating: float


@dataclass
class Inner:
    value: int
    when: dt.date


@dataclass
class Outer:
    name: str
    inner: Inner
    tags: list[str]


class Reading(pydantic.BaseModel):
    when: dt.datetime | None = None
    value: float


class Station(pydantic.BaseModel):
    name: str
    readings: list[Reading]


UserId = NewType("UserId", int)


@dataclass(frozen=True)
class Case:
    id: str
    annotation: Any
    value: Any
    wire: Any  # the JSON form, as it travels both ways
    unwrapped: bool = False  # an object result is structuredContent itself, not {"result": ...}
    text_only: bool = False  # no outputSchema (str): the result is one text block
    sent: Any = None  # a different (accepted) JSON form to send, when the case is about accepting one


_naive = dt.datetime(2026, 1, 1, 9, 30)
_frame = pd.DataFrame({"a": [1.5, float("nan")], "t": ["2026-01-01T00:00:00", None]})

CASES: list[Case] = [
    Case("datetime_naive", dt.datetime, _naive, "2026-01-01T09:30:00"),
    Case("datetime_aware", dt.datetime, _naive.replace(tzinfo=UTC2), "2026-01-01T09:30:00+02:00"),
    Case("datetime_utc", dt.datetime, _naive.replace(tzinfo=dt.timezone.utc), "2026-01-01T09:30:00+00:00"),
    Case("date", dt.date, dt.date(2026, 1, 2), "2026-01-02"),
    Case("time_naive", dt.time, dt.time(12, 30, 5), "12:30:05"),
    Case("time_aware", dt.time, dt.time(12, 30, 5, tzinfo=UTC2), "12:30:05+02:00"),
    Case("timedelta", dt.timedelta, dt.timedelta(days=1, hours=2, seconds=3), "P1DT2H3S"),
    Case("uuid", uuid.UUID, uuid.UUID(int=7), "00000000-0000-0000-0000-000000000007"),
    Case("path", Path, Path("/tmp/data.csv"), "/tmp/data.csv"),
    Case("decimal_number", Decimal, Decimal("2.5"), 2.5),
    Case("decimal_string", Decimal, Decimal("1.1"), 1.1, sent="1.10"),
    Case("bytes", bytes, b"\x00\x01hi", "AAFoaQ=="),
    Case("bytes_png", bytes, PNG, base64.b64encode(PNG).decode()),
    Case("enum", Color, Color.BLUE, "blue"),
    Case("int_enum", Level, Level.HIGH, 2),
    Case("literal", Literal["a", "b"], "b", "b"),
    Case("literal_int", Literal[1, 2], 2, 2),
    Case("union", int | str, "x", "x"),
    Case("optional", Optional[int], None, None),  # noqa: UP045 (the spelling is the point)
    Case("optional_datetime", dt.datetime | None, _naive, "2026-01-01T09:30:00"),
    Case("set", set[int], {1, 2}, [1, 2]),
    Case("frozenset", frozenset[str], frozenset({"a"}), ["a"]),
    Case("tuple", tuple[int, str], (1, "a"), [1, "a"]),
    Case("tuple_variadic", tuple[float, ...], (1.0, 2.5), [1.0, 2.5]),
    Case("namedtuple", Point, Point(1, 2.5), [1, 2.5]),
    Case("typeddict", Movie, {"title": "Up", "year": 2009}, {"title": "Up", "year": 2009}, unwrapped=True),
    Case("typeddict_partial", Partial, {"title": "Up"}, {"title": "Up"}, unwrapped=True),
    Case(
        "dataclass_nested",
        Outer,
        Outer("n", Inner(3, dt.date(2026, 2, 3)), ["x"]),
        {"name": "n", "inner": {"value": 3, "when": "2026-02-03"}, "tags": ["x"]},
        unwrapped=True,
    ),
    Case(
        "list_dataclass", list[Inner], [Inner(1, dt.date(2026, 1, 1))], [{"value": 1, "when": "2026-01-01"}]
    ),
    Case(
        "pydantic_datetime",
        Reading,
        Reading(when=_naive, value=1.5),
        {"when": "2026-01-01T09:30:00", "value": 1.5},
        unwrapped=True,
    ),
    Case("pydantic_none", Reading, Reading(value=2.0), {"when": None, "value": 2.0}, unwrapped=True),
    Case(
        "pydantic_nested",
        Station,
        Station(name="Oslo", readings=[Reading(when=_naive.replace(tzinfo=UTC2), value=1.0)]),
        {"name": "Oslo", "readings": [{"when": "2026-01-01T09:30:00+02:00", "value": 1.0}]},
        unwrapped=True,
    ),
    Case("dict_str_int", dict[str, int], {"a": 1}, {"a": 1}, unwrapped=True),
    Case("dict_int_str", dict[int, str], {1: "a", -20: "b"}, {"1": "a", "-20": "b"}, unwrapped=True),
    Case("list_float", list[float], [1.0, 2.5], [1.0, 2.5]),
    Case("list_list_int", list[list[int]], [[1], [2, 3]], [[1], [2, 3]]),
    Case("bool", bool, True, True),
    Case("int", int, 2**53 + 1, 2**53 + 1),
    Case("float", float, 0.1, 0.1),
    Case("str", str, "héllo", "héllo", text_only=True),
    Case("newtype", UserId, UserId(5), 5),
    Case("any", Any, {"k": [1, None]}, {"k": [1, None]}, unwrapped=True),
    Case("np_int64", np.int64, np.int64(5), 5),
    Case("np_float64", np.float64, np.float64(2.5), 2.5),
    Case("np_bool", np.bool_, np.bool_(True), True),
    Case("ndarray", np.ndarray, np.array([1.0, 2.0]), [1.0, 2.0]),
    Case("ndarray_typed", npt.NDArray[np.int64], np.array([[1, 2], [3, 4]]), [[1, 2], [3, 4]]),
    Case("series", pd.Series, pd.Series([1.0, 2.0]), [{"value": 1.0}, {"value": 2.0}], sent=[1.0, 2.0]),
    Case(
        "dataframe_nan_nat",
        pd.DataFrame,
        _frame,
        [{"a": 1.5, "t": "2026-01-01T00:00:00"}, {"a": None, "t": None}],
    ),
    Case("timestamp_naive", pd.Timestamp, pd.Timestamp("2026-01-01 10:00"), "2026-01-01T10:00:00"),
    Case(
        "timestamp_aware",
        pd.Timestamp,
        pd.Timestamp("2026-01-01 10:00", tz="Europe/Oslo"),
        "2026-01-01T10:00:00+01:00",
    ),
    Case("pd_timedelta", pd.Timedelta, pd.Timedelta(hours=3), "PT3H"),
    Case("datetime64", np.datetime64, np.datetime64("2026-01-01T10:00:00"), "2026-01-01T10:00:00"),
]


def _json(value: Any) -> Any:
    return finite(to_jsonable(value))


def same(got: Any, want: Any) -> str | None:
    """None when ``got`` is the value the tool was meant to receive, else what differs."""
    if type(got) is not type(want) and not (isinstance(want, Path) and isinstance(got, Path)):
        return f"got a {type(got).__name__}, expected a {type(want).__name__}"
    if isinstance(want, (pd.DataFrame, pd.Series, np.ndarray)):
        return None if _json(got) == _json(want) else f"got {_json(got)!r}, expected {_json(want)!r}"
    if isinstance(want, (dt.datetime, dt.time)) and got.utcoffset() != want.utcoffset():
        return f"got offset {got.utcoffset()}, expected {want.utcoffset()}"
    if isinstance(want, dt.datetime) and str(got.tzinfo) != str(want.tzinfo) and want.tzinfo is None:
        return "a naive value came back aware"
    return None if got == want else f"got {got!r}, expected {want!r}"


def _echo(case: Case) -> Callable[..., Any]:
    def tool(x: Any) -> Any:
        problem = same(x, case.value)
        if problem is not None:
            raise ToolError(f"{case.id}: {problem}")
        return x

    tool.__annotations__ = {"x": case.annotation, "return": case.annotation}
    tool.__name__ = tool.__qualname__ = f"t_{case.id}"
    tool.__doc__ = f"Echo a {case.id}."
    return tool


def make_server() -> Server:
    server = Server("zoo")
    for case in CASES:
        server.tool(_echo(case))
    return server


def expected_structured(case: Case) -> Any:
    if case.text_only:
        return None
    return case.wire if case.unwrapped else {"result": case.wire}


def argument(case: Case) -> Any:
    return case.wire if case.sent is None else case.sent


# `mcp-notebook serve tests/contracts/zoo.py` serves this one
server = make_server()
