"""make_tool and Tool.call: definition, validation, conversion, execution, errors, output checking."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import enum
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pydantic
import pytest

from mcp_notebook.tools import Context, Field, ToolError, ToolOutcome, ToolResult, make_tool


def text(outcome: ToolOutcome) -> str:
    block = outcome.result["content"][0]
    assert block["type"] == "text"
    return str(block["text"])


def add(a: int, b: int = 0) -> int:
    """Add two numbers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


# -- definition ------------------------------------------------------------------------------------------
def test_definition_from_function() -> None:
    tool = make_tool(add)
    assert tool.name == "add"
    assert tool.fn is add
    assert tool.context_param is None
    assert tool.is_async is False
    assert tool.definition == {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "First."},
                "b": {"type": "integer", "description": "Second.", "default": 0},
            },
            "required": ["a"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        },
    }


def test_definition_with_every_option() -> None:
    tool = make_tool(
        add,
        name="math.add-v2",
        title="Adder",
        description="Adds.",
        annotations={"readOnlyHint": True},
        icons=[{"src": "https://example.org/i.png"}],
        meta={"x": 1},
        output_schema=None,
        execution={"taskSupport": "optional"},
    )
    assert tool.definition == {
        "name": "math.add-v2",
        "title": "Adder",
        "description": "Adds.",
        "inputSchema": tool.definition["inputSchema"],
        "annotations": {"readOnlyHint": True},
        "icons": [{"src": "https://example.org/i.png"}],
        "execution": {"taskSupport": "optional"},
        "_meta": {"x": 1},
    }


def test_no_docstring_no_description() -> None:
    def ping() -> str:
        return "pong"

    assert make_tool(ping).definition == {
        "name": "ping",
        "inputSchema": {"type": "object", "additionalProperties": False},
    }


@pytest.mark.parametrize("name", ["", "has space", "a,b", "x" * 129, "naïve", "line\n"])
def test_invalid_names(name: str) -> None:
    with pytest.raises(ValueError, match=r"Invalid tool name .*1-128 characters"):
        make_tool(add, name=name)


@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "x" * 128, "a-b"])
def test_valid_names(name: str) -> None:
    assert make_tool(add, name=name).name == name


def test_explicit_output_schema_and_bad_schemas() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert make_tool(add, output_schema=schema).definition["outputSchema"] == schema
    with pytest.raises(ValueError, match="Invalid JSON Schema"):
        make_tool(add, output_schema={"type": "object", "properties": 5})
    with pytest.raises(ValueError, match="Unsupported JSON Schema dialect"):
        make_tool(add, output_schema={"$schema": "https://example.org/dialect", "type": "object"})


async def test_declared_dialect_is_honoured() -> None:
    # draft-07 has no prefixItems, so it accepts ["x"]; under 2020-12 the same keywords reject it
    modern = {
        "type": "object",
        "properties": {"result": {"type": "array", "prefixItems": [{"type": "integer"}]}},
    }
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **modern}

    def pair() -> list[Any]:
        return ["x"]

    assert "isError" not in (await make_tool(pair, output_schema=draft7).call({})).result
    assert (await make_tool(pair, output_schema=modern).call({})).result["isError"] is True


# -- arguments -------------------------------------------------------------------------------------------
async def test_sync_call_runs_in_a_thread() -> None:
    seen: list[threading.Thread] = []

    def where(a: int) -> int:
        seen.append(threading.current_thread())
        return a

    outcome = await make_tool(where).call({"a": 2})
    assert outcome == ToolOutcome(
        {"content": [{"type": "text", "text": '{"result": 2}'}], "structuredContent": {"result": 2}}
    )
    assert seen == [seen[0]]
    assert seen[0] is not threading.current_thread()


async def test_custom_run_sync_is_used() -> None:
    calls: list[Callable[[], Any]] = []

    async def run_sync(fn: Callable[[], Any]) -> Any:
        calls.append(fn)
        return fn()

    outcome = await make_tool(add).call({"a": 1, "b": 2}, run_sync=run_sync)
    assert outcome.result["structuredContent"] == {"result": 3}
    assert len(calls) == 1


async def test_async_function_is_awaited() -> None:
    async def later(x: str) -> str:
        await asyncio.sleep(0)
        return x.upper()

    tool = make_tool(later)
    assert tool.is_async is True
    assert (await tool.call({"x": "hi"})).result == {"content": [{"type": "text", "text": "HI"}]}


async def test_missing_argument_message() -> None:
    outcome = await make_tool(add).call(None)
    assert outcome.result["isError"] is True
    assert text(outcome) == "Invalid arguments for tool 'add': 'a' is a required property"
    assert outcome.exception is None


async def test_all_errors_listed_with_paths() -> None:
    def forecast(city: str, days: Annotated[int, Field(ge=1, le=14)] = 3) -> str:
        return city

    outcome = await make_tool(forecast).call({"days": 20, "extra": 1})
    message = text(outcome)
    assert message.startswith("Invalid arguments for tool 'forecast': ")
    assert "at 'days': 20 is greater than the maximum of 14" in message
    assert "'city' is a required property" in message
    assert "'extra' was unexpected" in message


@dataclasses.dataclass
class Item:
    when: dt.date


async def test_nested_error_path_and_format_checking() -> None:
    def book(items: list[Item]) -> None: ...

    outcome = await make_tool(book).call({"items": [{"when": "2025-01-01"}, {"when": "yesterday"}]})
    assert (
        text(outcome) == "Invalid arguments for tool 'book': at 'items[1].when': 'yesterday' is not a 'date'"
    )


async def test_arguments_must_be_an_object() -> None:
    outcome = await make_tool(add).call([1, 2])  # type: ignore[arg-type]
    assert "arguments must be an object" in text(outcome)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Row(TypedDict):
    name: str
    when: dt.date


class Person(pydantic.BaseModel):
    name: str
    age: int


async def test_arguments_converted_per_annotation() -> None:
    received: dict[str, Any] = {}

    def everything(
        when: dt.datetime,
        day: dt.date,
        at: dt.time,
        color: Color,
        ident: uuid.UUID,
        path: Path,
        point: Point,
        points: tuple[Point, ...],
        pair: tuple[int, str],
        tags: set[str],
        row: Row,
        person: Person,
        ratio: float,
        maybe: Point | None = None,
        raw: bytes = b"",
    ) -> None:
        received.update(locals())

    arguments = {
        "when": "2025-01-02T03:04:05Z",
        "day": "2025-01-02",
        "at": "03:04:05",
        "color": "blue",
        "ident": "12345678-1234-5678-1234-567812345678",
        "path": "/tmp/x",
        "point": {"x": 1},
        "points": [{"x": 1, "y": 2}],
        "pair": [1, "a"],
        "tags": ["a", "a", "b"][1:],
        "row": {"name": "r", "when": "2025-01-01"},
        "person": {"name": "Ann", "age": 3},
        "ratio": 1,
        "maybe": {"x": 5},
        "raw": "AAE=",
    }
    outcome = await make_tool(everything).call(arguments)
    assert outcome.result == {"content": []}, outcome
    assert received["when"] == dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert received["day"] == dt.date(2025, 1, 2)
    assert received["at"] == dt.time(3, 4, 5)
    assert received["color"] is Color.BLUE
    assert received["ident"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert received["path"] == Path("/tmp/x")
    assert received["point"] == Point(1.0, 0.0)
    assert received["points"] == (Point(1, 2),)
    assert received["pair"] == (1, "a")
    assert received["tags"] == {"a", "b"}
    assert received["row"] == {"name": "r", "when": dt.date(2025, 1, 1)}
    assert received["person"] == Person(name="Ann", age=3)
    assert received["ratio"] == 1.0 and isinstance(received["ratio"], float)
    assert received["maybe"] == Point(5.0)
    assert received["raw"] == b"\x00\x01"


class Even(pydantic.BaseModel):
    n: int

    @pydantic.field_validator("n")
    @classmethod
    def must_be_even(cls, n: int) -> int:
        if n % 2:
            raise ValueError("n must be even")
        return n


async def test_conversion_failure_is_an_argument_error() -> None:
    # the JSON Schema passes; the model's own validator (run during conversion) rejects the value
    def model(even: Even) -> None: ...

    outcome = await make_tool(model).call({"even": {"n": 3}})
    assert text(outcome).startswith("Invalid arguments for tool 'model': ")
    assert "n must be even" in text(outcome)
    assert outcome.result["isError"] is True


# -- context -------------------------------------------------------------------------------------------
async def test_context_is_injected_and_required() -> None:
    got: list[Any] = []

    def with_ctx(ctx: Context, n: int) -> int:
        got.append(ctx)
        return n

    tool = make_tool(with_ctx)
    assert tool.context_param == "ctx"
    context = Context(backend=None)  # type: ignore[arg-type]
    await tool.call({"n": 1}, context)
    assert got == [context]
    with pytest.raises(ValueError, match="takes a Context"):
        await tool.call({"n": 1})
    assert "ctx" not in tool.definition["inputSchema"]["properties"]


# -- errors ----------------------------------------------------------------------------------------------
async def test_tool_error_message_is_the_result() -> None:
    def fails() -> None:
        raise ToolError("Departure date must be in the future")

    outcome = await make_tool(fails).call({})
    assert outcome.result == {
        "content": [{"type": "text", "text": "Departure date must be in the future"}],
        "isError": True,
    }
    assert isinstance(outcome.exception, ToolError)


async def test_unexpected_exception_keeps_traceback_out_of_result() -> None:
    async def broken() -> None:
        raise KeyError("boom")

    outcome = await make_tool(broken).call({})
    assert outcome.result == {
        "content": [{"type": "text", "text": "Error executing tool broken: KeyError: 'boom'"}],
        "isError": True,
    }
    assert isinstance(outcome.exception, KeyError)
    assert outcome.traceback is not None
    assert "Traceback" in outcome.traceback and "raise KeyError" in outcome.traceback
    assert "Traceback" not in str(outcome.result)


async def test_cancellation_propagates() -> None:
    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await make_tool(cancelled).call({})


async def test_unserializable_return_is_an_error() -> None:
    def odd() -> Any:
        return object()

    outcome = await make_tool(odd).call({})
    assert outcome.result["isError"] is True
    assert text(outcome) == "The result cannot be sent as JSON: the value at 'result' is of type object"


# -- output schema -----------------------------------------------------------------------------------------
async def test_output_violation_is_reported() -> None:
    def lies() -> int:
        return "not a number"  # type: ignore[return-value]

    outcome = await make_tool(lies).call({})
    assert outcome.result["isError"] is True
    assert text(outcome) == (
        "Output of tool 'lies' does not match its outputSchema: "
        "at 'result': 'not a number' is not of type 'integer'"
    )


async def test_declared_schema_without_structured_content() -> None:
    def plain() -> str:
        return "x"

    outcome = await make_tool(plain, output_schema={"type": "object"}).call({})
    assert "returned no structured content" in text(outcome)


async def test_dataclass_output_passes_validation() -> None:
    def where() -> Point:
        return Point(1, 2)

    outcome = await make_tool(where).call({})
    assert outcome.result["structuredContent"] == {"x": 1, "y": 2}
    assert "isError" not in outcome.result


async def test_user_error_result_skips_output_validation() -> None:
    def custom() -> Point:
        return ToolResult(["nope"], is_error=True)  # type: ignore[return-value]

    outcome = await make_tool(custom).call({})
    assert outcome.result == {"content": [{"type": "text", "text": "nope"}], "isError": True}


async def test_user_tool_result_is_validated_when_not_an_error() -> None:
    def custom() -> Point:
        return ToolResult(["ok"], structured={"x": "bad"})  # type: ignore[return-value]

    outcome = await make_tool(custom).call({})
    assert "at 'x': 'bad' is not of type 'number'" in text(outcome)


async def test_remote_refs_are_never_fetched() -> None:
    schema = {"type": "object", "properties": {"result": {"$ref": "https://example.org/schema.json"}}}
    outcome = await make_tool(add, output_schema=schema).call({"a": 1})
    assert "cannot be resolved locally" in text(outcome)
