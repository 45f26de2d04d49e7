"""input_schema_for / output_schema_for: every supported annotation, constraints, defaults, errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import annotated_types
import pydantic
import pytest
from jsonschema import Draft202012Validator
from typing_extensions import NotRequired, Required, TypedDict  # typing's lacks Required on 3.10

from mcp_notebook.tools import Context, Field, ToolResult, input_schema_for, output_schema_for
from mcp_notebook.tools.content import Image


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


@dataclasses.dataclass
class Shape:
    """A polygon."""

    points: list[Point]
    color: Color = Color.RED
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Tree:
    value: int
    children: list[Tree] = dataclasses.field(default_factory=list)


class Movie(TypedDict, total=False):
    title: Required[str]
    year: int


class Person(TypedDict):
    name: str
    nickname: NotRequired[str]


class User(pydantic.BaseModel):
    name: str
    home: Point
    age: Annotated[int, pydantic.Field(ge=0)] = 0


def schema_of(annotation: Any) -> dict[str, Any]:
    """The property schema for one parameter ``x`` of the given annotation."""

    def fn(x): ...  # type: ignore[no-untyped-def]

    fn.__annotations__ = {"x": annotation}
    schema, _ = input_schema_for(fn)
    Draft202012Validator.check_schema(schema)
    prop: dict[str, Any] = schema["properties"]["x"]
    if "$defs" in schema:
        prop = {**prop, "$defs": schema["$defs"]}
    return prop


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (bytes, {"type": "string", "contentEncoding": "base64"}),
        (dt.datetime, {"type": "string", "format": "date-time"}),
        (dt.date, {"type": "string", "format": "date"}),
        (dt.time, {"type": "string", "format": "time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (Path, {"type": "string", "format": "path"}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}),
        (Literal["only"], {"const": "only", "type": "string"}),
        (Literal[1, "x"], {"enum": [1, "x"]}),
        (Color, {"title": "Color", "enum": ["red", "green"], "type": "string"}),
        (Level, {"title": "Level", "enum": [1, 2], "type": "integer"}),
        (list, {"type": "array"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
            },
        ),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (frozenset[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
        (dict, {"type": "object"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
    ],
)
def test_type_mapping(annotation: Any, expected: dict[str, Any]) -> None:
    assert schema_of(annotation) == expected


def test_dataclass_goes_to_defs_with_nested_ref_and_defaults() -> None:
    schema = schema_of(Shape)
    assert schema["$ref"] == "#/$defs/Shape"
    shape = schema["$defs"]["Shape"]
    assert shape["description"] == "A polygon."
    assert shape["required"] == ["points"]
    assert shape["additionalProperties"] is False
    assert shape["properties"]["points"] == {"type": "array", "items": {"$ref": "#/$defs/Point"}}
    assert shape["properties"]["color"]["default"] == "red"
    assert shape["properties"]["tags"]["default"] == []
    point = schema["$defs"]["Point"]
    assert point["required"] == ["x"]
    assert "description" not in point  # the generated "Point(x: float, ...)" docstring is not a description
    assert point["properties"]["y"] == {"type": "number", "default": 0.0}


def test_recursive_dataclass() -> None:
    schema = schema_of(Tree)
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}


def test_typeddict_required_and_optional_keys() -> None:
    movie = schema_of(Movie)["$defs"]["Movie"]
    assert movie["required"] == ["title"]
    assert movie["properties"] == {"title": {"type": "string"}, "year": {"type": "integer"}}
    person = schema_of(Person)["$defs"]["Person"]
    assert person["required"] == ["name"]


def test_pydantic_model_defs_hoisted_to_root() -> None:
    schema = schema_of(User)
    assert schema["$ref"] == "#/$defs/User"
    user = schema["$defs"]["User"]
    assert "$defs" not in user
    assert user["properties"]["home"] == {"$ref": "#/$defs/Point"}
    assert user["properties"]["age"]["minimum"] == 0
    assert schema["$defs"]["Point"]["required"] == ["x"]


def test_annotated_string_is_description() -> None:
    assert schema_of(Annotated[str, "City name"]) == {"type": "string", "description": "City name"}


def test_our_field_constraints() -> None:
    field = Field(description="d", ge=1, le=14, multiple_of=1, title="Days", examples=[3], format="custom")
    assert schema_of(Annotated[int, field]) == {
        "type": "integer",
        "description": "d",
        "minimum": 1,
        "maximum": 14,
        "multipleOf": 1,
        "title": "Days",
        "examples": [3],
        "format": "custom",
    }
    assert schema_of(Annotated[float, Field(gt=0, lt=1)]) == {
        "type": "number",
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 1,
    }
    assert schema_of(Annotated[str, Field(min_length=2, max_length=5, pattern="^[a-z]+$")]) == {
        "type": "string",
        "minLength": 2,
        "maxLength": 5,
        "pattern": "^[a-z]+$",
    }
    assert schema_of(Annotated[list[int], Field(min_items=1, max_items=3)]) == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 1,
        "maxItems": 3,
    }


def test_length_on_arrays_means_items() -> None:
    assert schema_of(Annotated[list[str], Field(min_length=1)])["minItems"] == 1


def test_pydantic_field_in_annotated() -> None:
    annotation = Annotated[str, pydantic.Field(description="A name", min_length=1, pattern=r"^\w+$")]
    assert schema_of(annotation) == {
        "type": "string",
        "description": "A name",
        "minLength": 1,
        "pattern": r"^\w+$",
    }


def test_annotated_types_constraints() -> None:
    annotation = Annotated[int, annotated_types.Ge(1), annotated_types.Lt(10)]
    assert schema_of(annotation) == {"type": "integer", "minimum": 1, "exclusiveMaximum": 10}
    text = Annotated[str, annotated_types.MinLen(1), annotated_types.MaxLen(3)]
    assert schema_of(text) == {"type": "string", "minLength": 1, "maxLength": 3}
    assert schema_of(Annotated[int, annotated_types.Gt(0), annotated_types.Le(5)]) == {
        "type": "integer",
        "exclusiveMinimum": 0,
        "maximum": 5,
    }


def forecast(
    ctx: Context, city: str, days: Annotated[int, Field(ge=1, le=14, description="Days.")] = 3
) -> None:
    """Forecast the weather.

    Args:
        city: City name.
        days: Ignored, the Annotated description wins.
    """


def test_full_signature_with_context_defaults_and_docstring() -> None:
    schema, context_param = input_schema_for(forecast)
    assert context_param == "ctx"
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "days": {"type": "integer", "minimum": 1, "maximum": 14, "description": "Days.", "default": 3},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_string_context_annotation_without_import() -> None:
    def tool(ctx: Context, x: int) -> None: ...

    tool.__annotations__ = {"ctx": "Context", "x": "int", "return": "None"}
    schema, context_param = input_schema_for(tool)
    assert context_param == "ctx"
    assert list(schema["properties"]) == ["x"]


def test_zero_parameter_tool() -> None:
    def ping() -> None: ...

    assert input_schema_for(ping) == ({"type": "object", "additionalProperties": False}, None)


def test_enum_default_and_unserializable_default() -> None:
    sentinel = object()

    def fn(color: Color = Color.GREEN, other: Any = sentinel) -> None: ...

    schema, _ = input_schema_for(fn)
    assert schema["properties"]["color"]["default"] == "green"
    assert "default" not in schema["properties"]["other"]
    assert "required" not in schema


def test_variadic_parameters_rejected() -> None:
    def star(*args: int) -> None: ...

    def double_star(**kwargs: int) -> None: ...

    with pytest.raises(TypeError, match=r"\*args"):
        input_schema_for(star)
    with pytest.raises(TypeError, match=r"\*\*kwargs"):
        input_schema_for(double_star)


class Opaque:
    pass


def test_unsupported_annotation_names_parameter_and_type() -> None:
    def fn(thing: Opaque) -> None: ...

    with pytest.raises(TypeError, match=r"parameter 'thing'.*Opaque"):
        input_schema_for(fn)

    def keyed(m: dict[float, str]) -> None: ...  # dict[int, X] is supported: its keys are digit strings

    with pytest.raises(TypeError, match="parameter 'm'"):
        input_schema_for(keyed)


def test_unresolvable_annotation() -> None:
    def fn(x: int) -> None: ...

    fn.__annotations__ = {"x": "NoSuchName"}
    with pytest.raises(TypeError, match="NoSuchName"):
        input_schema_for(fn)


# -- output ----------------------------------------------------------------------------------------------
def returning(annotation: Any) -> Any:
    def fn(): ...  # type: ignore[no-untyped-def]

    fn.__annotations__ = {"return": annotation}
    return fn


@pytest.mark.parametrize("annotation", [str, None, Any, Image, ToolResult, list[Image]])
def test_content_returns_have_no_output_schema(annotation: Any) -> None:
    assert output_schema_for(returning(annotation)) == (None, False)


def test_bytes_return_is_base64_under_content_encoding() -> None:
    # issue 20: a bytes result was an image block, and failed for bytes that are no image
    result = {"type": "string", "contentEncoding": "base64"}
    expected = {"type": "object", "properties": {"result": result}, "required": ["result"]}
    assert output_schema_for(returning(bytes)) == (expected, True)


def test_no_return_annotation() -> None:
    def fn(): ...  # type: ignore[no-untyped-def]

    assert output_schema_for(fn) == (None, False)


@pytest.mark.parametrize(
    ("annotation", "inner"),
    [
        (int, {"type": "integer"}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ],
)
def test_non_object_returns_are_wrapped(annotation: Any, inner: dict[str, Any]) -> None:
    schema, wrapped = output_schema_for(returning(annotation))
    assert wrapped is True
    assert schema == {"type": "object", "properties": {"result": inner}, "required": ["result"]}


def test_dataclass_return_is_inlined_at_root() -> None:
    schema, wrapped = output_schema_for(returning(Shape))
    assert wrapped is False
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["title"] == "Shape"
    assert set(schema["$defs"]) == {"Point"}
    Draft202012Validator.check_schema(schema)


def test_recursive_return_keeps_its_definition() -> None:
    schema, _ = output_schema_for(returning(Tree))
    assert schema is not None
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert "Tree" in schema["$defs"]


def test_dict_and_typeddict_and_model_returns_are_objects() -> None:
    assert output_schema_for(returning(dict[str, int])) == (
        {"type": "object", "additionalProperties": {"type": "integer"}},
        False,
    )
    movie, wrapped = output_schema_for(returning(Movie))
    assert movie is not None
    assert (movie["title"], wrapped) == ("Movie", False)
    user, wrapped = output_schema_for(returning(User))
    assert user is not None
    assert (user["type"], wrapped, set(user["$defs"])) == ("object", False, {"Point"})


def test_optional_dataclass_return_is_wrapped() -> None:
    schema, wrapped = output_schema_for(returning(Point | None))
    assert wrapped is True
    assert schema is not None
    assert schema["properties"]["result"] == {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}
    assert "Point" in schema["$defs"]
