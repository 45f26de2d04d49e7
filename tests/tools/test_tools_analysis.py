"""The analyst's objects at the tool boundary (issue 9, DESIGN decision 15): schemas, parameters, results.

Each kind is checked as a parameter (JSON in -> the Python object the annotation asks for) and as a return
value (structuredContent that validates against the generated outputSchema, and the text copy), with the
real libraries. Transports: tests/interaction/test_interaction_analysis.py.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import io
import json
import math
from decimal import Decimal
from typing import Annotated, Any, Literal, TypedDict

import jsonschema
import matplotlib
import numpy as np
import pandas as pd
import pytest
from numpy.typing import NDArray
from PIL import Image as PILImage

from mcp_notebook.tools import make_tool

matplotlib.use("Agg")
import matplotlib.pyplot as plt


class Reading(TypedDict):
    city: str
    temp: float
    kind: Literal["rain", "sun"]


@dataclasses.dataclass
class Point:
    x: float
    y: float


async def call(fn: Any, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """Call ``fn`` as a tool; check the result against the outputSchema the way a strict client would
    (after a JSON round trip, so NaN has become null)."""
    tool = make_tool(fn)
    outcome = await tool.call(arguments or {})
    result = json.loads(json.dumps(outcome.result))
    schema = tool.definition.get("outputSchema")
    if schema is not None and not result.get("isError"):
        jsonschema.Draft202012Validator(schema).validate(result["structuredContent"])
    return result


def text_of(result: dict[str, Any]) -> str:
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


# -- the issue's first example -----------------------------------------------------------------------------
async def test_a_dataframe_tool_builds_and_answers_records_with_a_table_in_the_text() -> None:
    """Before: TypeError "parameter 'df' has an unsupported type annotation DataFrame" at the decorator."""
    seen: list[pd.DataFrame] = []

    def describe(df: pd.DataFrame) -> pd.DataFrame:
        seen.append(df)
        return df.describe()

    tool = make_tool(describe)
    assert tool.input_schema["properties"]["df"]["type"] == "array"
    assert tool.input_schema["properties"]["df"]["items"] == {"type": "object"}
    result = await call(describe, {"df": [{"a": 1, "b": 2.5}, {"a": 3, "b": None}]})
    assert not result.get("isError")
    assert list(seen[0].columns) == ["a", "b"] and math.isnan(seen[0]["b"][1])
    rows = result["structuredContent"]["result"]
    assert rows[0] == {"index": "count", "a": 2.0, "b": 1.0}  # the index (describe's labels) is a column
    assert rows[2]["index"] == "std" and rows[2]["b"] is None  # NaN is null in structured content
    text = text_of(result)
    assert "count" in text and "NaN" in text and "[8 rows x 2 columns]" in text  # the table, NaN spelled


async def test_typed_rows_give_column_schemas_and_dtypes_both_ways() -> None:
    def warmer(df: Annotated[pd.DataFrame, Reading]) -> Annotated[pd.DataFrame, Reading]:
        assert df["temp"].dtype == "float64" and isinstance(df["kind"].dtype, pd.CategoricalDtype)
        return df.assign(temp=df["temp"] + 1)

    tool = make_tool(warmer)
    row = tool.input_schema["$defs"]["Reading"]
    assert row["properties"]["temp"] == {"type": ["number", "null"]}  # a missing value is NaN in a frame
    assert row["properties"]["kind"] == {"enum": ["rain", "sun"], "type": "string"}
    out = tool.output_schema
    assert out is not None and out["properties"]["result"]["items"] == {"$ref": "#/$defs/Reading"}
    rows = [{"city": "Oslo", "temp": 1.5, "kind": "rain"}, {"city": "Rome", "temp": None, "kind": "sun"}]
    result = await call(warmer, {"df": rows})
    assert result["structuredContent"]["result"] == [
        {"city": "Oslo", "temp": 2.5, "kind": "rain"},
        {"city": "Rome", "temp": None, "kind": "sun"},
    ]


async def test_dataclass_rows_and_a_dict_column_spec() -> None:
    def shift(points: Annotated[pd.DataFrame, Point]) -> Annotated[pd.DataFrame, {"x": float, "n": int}]:
        return pd.DataFrame({"x": points["x"] + 1, "n": range(len(points))})

    tool = make_tool(shift)
    assert tool.input_schema["$defs"]["Point"]["additionalProperties"] is False
    item = tool.output_schema["properties"]["result"]["items"]  # type: ignore[index]
    assert item == {
        "type": "object",
        "properties": {"x": {"type": ["number", "null"]}, "n": {"type": "integer"}},
        "required": ["x", "n"],
    }
    result = await call(shift, {"points": [{"x": 1.0, "y": 0.0}]})
    assert result["structuredContent"] == {"result": [{"x": 2.0, "n": 0}]}
    refused = await call(shift, {"points": [{"x": 1.0}]})
    assert refused["isError"] is True and "'y' is a required property" in text_of(refused)


async def test_a_series_goes_as_records_and_comes_back_as_a_series() -> None:
    def double(s: pd.Series) -> pd.Series:  # type: ignore[type-arg]
        assert isinstance(s, pd.Series)
        return (s * 2).rename("twice")

    result = await call(double, {"s": [1, 2, None]})
    assert result["structuredContent"] == {"result": [{"twice": 2.0}, {"twice": 4.0}, {"twice": None}]}
    indexed = await call(double, {"s": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]})
    assert indexed["structuredContent"] == {"result": [{"k": "a", "twice": 2}, {"k": "b", "twice": 4}]}


async def test_pandas_scalars_missing_values_and_categoricals_in_results() -> None:
    def odd_types() -> dict[str, Any]:
        frame = pd.DataFrame(
            {
                "when": [pd.Timestamp("2024-01-02T03:04:05"), pd.NaT],
                "took": [pd.Timedelta("1D2h"), pd.NaT],
                "n": pd.array([1, None], dtype="Int64"),
                "kind": pd.Categorical(["a", "b"]),
                "price": [Decimal("1.25"), Decimal("NaN")],
            }
        )
        return {"rows": frame, "missing": pd.NA, "at": pd.Timestamp("2024-05-06", tz="UTC")}

    result = await call(odd_types)
    assert result["structuredContent"] == {
        "rows": [
            {"when": "2024-01-02T03:04:05", "took": "P1DT2H", "n": 1, "kind": "a", "price": 1.25},
            {"when": None, "took": None, "n": None, "kind": "b", "price": None},
        ],
        "missing": None,
        "at": "2024-05-06T00:00:00+00:00",
    }


async def test_timestamp_timedelta_and_decimal_parameters() -> None:
    def shift(at: pd.Timestamp, by: pd.Timedelta, plain: dt.timedelta, price: Decimal) -> dict[str, Any]:
        assert isinstance(at, pd.Timestamp) and isinstance(by, pd.Timedelta)
        assert isinstance(plain, dt.timedelta) and price == Decimal("0.1")
        return {"at": at + by + plain}

    schema = make_tool(shift).input_schema["properties"]
    assert schema["by"] == schema["plain"] == {"type": "string", "format": "duration"}
    assert schema["price"]["type"] == ["number", "string"]  # a number, or a numeric string ("1.10")
    args = {"at": "2024-01-01T00:00:00Z", "by": "PT1H", "plain": "P1DT30M", "price": 0.1}
    result = await call(shift, args)
    assert not result.get("isError"), text_of(result)
    assert result["structuredContent"] == {"at": "2024-01-02T01:30:00+00:00"}


# -- numpy ------------------------------------------------------------------------------------------------
async def test_numpy_scalars_and_arrays_are_dtype_aware() -> None:
    def scale(x: NDArray[np.float64], k: np.int32, on: np.bool_) -> NDArray[np.float64]:
        assert x.dtype == np.float64 and x.shape == (2, 2) and math.isnan(x[1, 1])
        assert isinstance(k, np.int32) and isinstance(on, np.bool_)
        return x * k

    tool = make_tool(scale)
    props = tool.input_schema["properties"]
    assert props["k"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
    assert props["on"] == {"type": "boolean"}
    assert tool.input_schema["$defs"]["ndarray_float64"]["anyOf"][0] == {"type": ["number", "null"]}
    result = await call(scale, {"x": [[1, 2], [3, None]], "k": 2, "on": True})
    assert result["structuredContent"] == {"result": [[2.0, 4.0], [6.0, None]]}
    assert "NaN" in text_of(result)


async def test_numpy_values_in_any_result() -> None:
    def values() -> dict[str, Any]:
        return {
            "i": np.int64(7),
            "f": np.float32(0.5),
            "b": np.bool_(True),
            "s": np.str_("x"),
            "when": np.datetime64("2024-01-02T03:04"),
            "dates": np.array(["2024-01-01", "NaT"], dtype="datetime64[D]"),
            "m": np.arange(6).reshape(2, 3),
            "inf": np.float64("inf"),
        }

    result = await call(values)
    assert result["structuredContent"] == {
        "i": 7,
        "f": 0.5,
        "b": True,
        "s": "x",
        "when": "2024-01-02T03:04:00",
        "dates": ["2024-01-01T00:00:00", None],
        "m": [[0, 1, 2], [3, 4, 5]],
        "inf": None,
    }
    assert '"inf": Infinity' in text_of(result)


async def test_a_value_json_cannot_hold_is_an_error_naming_its_path() -> None:
    def complex_result() -> dict[str, Any]:
        return {"ok": [1, 2], "z": {"roots": [np.complex128(1 + 2j)]}}

    result = await call(complex_result)
    assert result["isError"] is True
    assert "at 'z.roots[0]'" in text_of(result) and "complex128" in text_of(result)


# -- NaN and infinities: never a protocol error ------------------------------------------------------------
async def test_nan_and_infinities_are_null_in_structured_content_and_spelled_out_in_text() -> None:
    """Before: serialize raised ValueError, the client got -32603 Internal error."""

    def stats() -> dict[str, float]:
        return {"mean": math.nan, "max": math.inf, "min": -math.inf, "n": 3.0}

    tool = make_tool(stats)
    assert tool.output_schema == {"type": "object", "additionalProperties": {"type": ["number", "null"]}}
    result = await call(stats)
    assert result["structuredContent"] == {"mean": None, "max": None, "min": None, "n": 3.0}
    assert text_of(result) == '{"mean": NaN, "max": Infinity, "min": -Infinity, "n": 3.0}'


async def test_a_plain_float_result_may_be_nan() -> None:
    def ratio() -> float:
        return math.nan

    assert make_tool(ratio).output_schema == {
        "type": "object",
        "properties": {"result": {"type": ["number", "null"]}},
        "required": ["result"],
    }
    assert (await call(ratio))["structuredContent"] == {"result": None}


# -- figures, images, display objects ----------------------------------------------------------------------
def png_size(block: dict[str, Any]) -> tuple[int, int]:
    return PILImage.open(io.BytesIO(base64.b64decode(block["data"]))).size


async def test_a_matplotlib_figure_becomes_a_png_and_is_closed() -> None:
    def plot() -> plt.Figure:
        fig, ax = plt.subplots(figsize=(2, 1), dpi=50)
        ax.plot([1, 2, 3])
        return fig

    assert make_tool(plot).output_schema is None  # content, not structured data
    before = len(plt.get_fignums())
    result = await call(plot)
    (block,) = result["content"]
    assert block["type"] == "image" and block["mimeType"] == "image/png" and png_size(block)[0] > 0
    assert len(plt.get_fignums()) == before  # closed after rendering: nothing piles up


async def test_axes_and_a_figure_with_a_caption() -> None:
    def plot() -> Any:
        _, ax = plt.subplots(figsize=(2, 1), dpi=50)
        ax.bar(["a", "b"], [1, 2])
        return [ax, "two bars"]

    result = await call(plot)
    assert [b["type"] for b in result["content"]] == ["image", "text"]
    assert plt.get_fignums() == []


async def test_a_pil_image_as_parameter_and_result() -> None:
    def thumbnail(image: PILImage.Image) -> PILImage.Image:
        return image.resize((4, 2))

    buffer = io.BytesIO()
    PILImage.new("RGB", (16, 8), "red").save(buffer, format="jpeg")
    schema = make_tool(thumbnail).input_schema["properties"]["image"]
    assert schema["contentEncoding"] == "base64" and schema["type"] == "string"
    result = await call(thumbnail, {"image": base64.b64encode(buffer.getvalue()).decode()})
    (block,) = result["content"]
    assert block["mimeType"] == "image/png" and png_size(block) == (4, 2)
    bad = await call(thumbnail, {"image": "not base64!"})
    assert bad["isError"] is True


async def test_ipython_display_objects_become_matching_blocks() -> None:
    from IPython.display import HTML, SVG, Audio, Image, Markdown

    png = io.BytesIO()
    PILImage.new("RGB", (2, 2)).save(png, format="png")
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'

    def show() -> Any:
        wav = Audio(np.zeros(80), rate=8000, normalize=False)
        return [Image(data=png.getvalue()), SVG(svg), wav, HTML("<b>hi</b>"), Markdown("# Title")]

    blocks = (await call(show))["content"]
    assert [(b["type"], b.get("mimeType")) for b in blocks] == [
        ("image", "image/png"),
        ("image", "image/svg+xml"),
        ("audio", "audio/wav"),
        ("resource", None),
        ("text", None),
    ]
    assert base64.b64decode(blocks[1]["data"]).decode() == svg
    assert blocks[3]["resource"]["mimeType"] == "text/html" and blocks[3]["resource"]["text"] == "<b>hi</b>"
    assert blocks[4]["text"] == "# Title"


def test_figures_are_not_parameters() -> None:
    def takes(fig: plt.Figure) -> None:
        raise NotImplementedError

    with pytest.raises(TypeError, match="parameter 'fig' has an unsupported type annotation Figure"):
        make_tool(takes)


KINDS = pd.CategoricalDtype(["low", "high"])  # module level: the annotations below are strings


async def test_categorical_columns_and_a_dtype_given_as_metadata() -> None:
    kinds = KINDS

    def levels(
        df: Annotated[pd.DataFrame, {"kind": KINDS, "n": int}], x: Annotated[np.ndarray, np.float32]
    ) -> dict[str, Any]:
        assert df["kind"].dtype == kinds and x.dtype == np.float32
        return {"kinds": df["kind"].cat.codes.tolist(), "x": x, "counts": df["kind"].value_counts(sort=False)}

    tool = make_tool(levels)
    props = tool.input_schema["properties"]
    assert props["df"]["items"]["properties"]["kind"] == {"enum": ["low", "high", None]}
    assert props["x"]["items"] == {"$ref": "#/$defs/ndarray_float32"}
    result = await call(levels, {"df": [{"kind": "high", "n": 1}, {"kind": "low", "n": 2}], "x": [0.5, None]})
    assert result["structuredContent"] == {
        "kinds": [1, 0],
        "x": [0.5, None],
        "counts": [{"kind": "low", "count": 1}, {"kind": "high", "count": 1}],
    }
    refused = await call(levels, {"df": [{"kind": "medium", "n": 1}], "x": []})
    assert refused["isError"] is True and "medium" in text_of(refused)


def test_a_dataframe_parameter_keeps_its_own_description() -> None:
    """Issue 19: the docstring's words for a DataFrame parameter were replaced by the type's generic
    "Table rows: ..." (failed before); an explicit Annotated description still wins over the docstring."""

    class Reading(TypedDict):
        city: str
        temp: float

    def summarize(
        readings: Annotated[pd.DataFrame, Reading],
        extra: pd.DataFrame,
        labelled: Annotated[pd.DataFrame, "Rows chosen by hand."],
    ) -> int:
        """Summarize.

        Args:
            readings: One row per reading: city, temp (°C).
            extra: More rows.
            labelled: The docstring's words, overridden.
        """
        return 0

    properties = make_tool(summarize).input_schema["properties"]
    assert properties["readings"]["description"] == "One row per reading: city, temp (°C)."
    assert properties["readings"]["items"] == {"$ref": "#/$defs/Reading"}  # the row type stays
    assert properties["extra"]["description"] == "More rows."
    assert properties["labelled"]["description"] == "Rows chosen by hand."
