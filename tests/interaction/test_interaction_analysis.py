"""Analysis objects across a real connection, same body over memory, stdio and HTTP (issue 9).

A DataFrame, numpy arrays, NaN, a matplotlib figure and a PIL image travel as parameters (the client sends
its own DataFrame/ndarray values as JSON) and as results (structuredContent validated by our client against
the outputSchema, text copy, image blocks). Spec: server/tools#structured-content, #image-content.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import math
from decimal import Decimal
from typing import Annotated, TypedDict

import matplotlib
import numpy as np
import pandas as pd
from numpy.typing import NDArray
from PIL import Image as PILImage

from mcp_notebook.engine.server import Server
from tests.interaction._harness import WAIT, Connect

matplotlib.use("Agg")
import matplotlib.pyplot as plt


class Scored(TypedDict):
    name: str
    score: float


def analysis_server() -> Server:
    server = Server("analysis")

    @server.tool
    def score(df: pd.DataFrame) -> Annotated[pd.DataFrame, Scored]:
        """Score each row: the mean of its numeric columns (NaN where a row has none)."""
        numeric = df.select_dtypes("number")
        return pd.DataFrame({"name": df["name"], "score": numeric.mean(axis=1)})

    @server.tool
    def normalize(x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Divide by the maximum (nan-aware)."""
        return x / np.nanmax(x)

    @server.tool
    def summary(values: list[float]) -> dict[str, float]:
        """Statistics that can be NaN or infinite."""
        arr = np.asarray(values, dtype=float)
        return {"mean": float(np.mean(arr)) if len(arr) else math.nan, "ratio": math.inf}

    @server.tool
    def histogram(values: list[float]) -> plt.Figure:
        """A histogram of the values."""
        fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
        ax.hist(values)
        return fig

    @server.tool
    def size(image: PILImage.Image) -> tuple[int, int]:
        """The size of an image."""
        return image.size

    return server


async def test_a_dataframe_goes_out_as_an_argument_and_back_as_records(connect: Connect) -> None:
    frame = pd.DataFrame({"name": ["a", "b", "c"], "x": [1.0, np.nan, 3.0], "y": [3, np.nan, 5]})
    async with connect(analysis_server()) as client:
        # validate_output (the default) checks structuredContent against the outputSchema on our side
        result = await client.call_tool("score", {"df": frame}, timeout=WAIT)
    assert not result.get("isError"), result
    assert result["structuredContent"] == {
        "result": [{"name": "a", "score": 2.0}, {"name": "b", "score": None}, {"name": "c", "score": 4.0}]
    }
    text = result["content"][0]["text"]
    assert "NaN" in text and "[3 rows x 2 columns]" in text


async def test_an_ndarray_with_nan_round_trips(connect: Connect) -> None:
    async with connect(analysis_server()) as client:
        x = np.array([[1.0, 2.0], [np.nan, 4.0]])
        result = await client.call_tool("normalize", {"x": x}, timeout=WAIT)
    assert result["structuredContent"] == {"result": [[0.25, 0.5], [None, 1.0]]}


async def test_nan_and_infinity_are_a_result_not_a_protocol_error(connect: Connect) -> None:
    """Before: -32603 Internal error (serialize refused NaN) and a traceback on the server's stderr."""
    async with connect(analysis_server()) as client:
        result = await client.call_tool("summary", {"values": []}, timeout=WAIT)
    assert not result.get("isError")
    assert result["structuredContent"] == {"mean": None, "ratio": None}
    assert result["content"][0]["text"] == '{"mean": NaN, "ratio": Infinity}'


async def test_a_figure_arrives_as_a_png_and_an_image_goes_as_base64(connect: Connect) -> None:
    buffer = io.BytesIO()
    PILImage.new("L", (6, 3)).save(buffer, format="png")
    async with connect(analysis_server()) as client:
        plotted = await client.call_tool("histogram", {"values": [1, 2, 2, 3]}, timeout=WAIT)
        sized = await client.call_tool("size", {"image": base64.b64encode(buffer.getvalue()).decode()})
    (block,) = plotted["content"]
    assert block["type"] == "image" and block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]).startswith(b"\x89PNG")
    assert sized["structuredContent"] == {"result": [6, 3]}


async def test_scalars_of_the_analysis_stack_both_ways(connect: Connect) -> None:
    """numpy scalars, Timestamp, Timedelta and Decimal as arguments (sent as their JSON form) and as
    parameters (rebuilt from it), and in results."""

    server = Server("scalars")

    @server.tool
    def shift(at: pd.Timestamp, by: pd.Timedelta, n: np.int64, price: Decimal) -> dict[str, object]:
        """Move a time; multiply a price."""
        assert isinstance(at, pd.Timestamp) and isinstance(by, pd.Timedelta) and isinstance(n, np.int64)
        return {"at": at + by * int(n), "price": price * int(n), "n": np.int64(n) + 1, "by": by}

    arguments = {
        "at": pd.Timestamp("2024-03-01T12:00:00Z"),
        "by": dt.timedelta(minutes=30),
        "n": np.int64(3),
        "price": Decimal("1.25"),
    }
    async with connect(server) as client:
        result = await client.call_tool("shift", arguments, timeout=WAIT)
    assert result["structuredContent"] == {
        "at": "2024-03-01T13:30:00+00:00",
        "price": 3.75,
        "n": 4,
        "by": "PT30M",
    }
