"""A server with DataFrame tools, for third-party clients (``test_sdk_analysis.py``).

Serve it with ``python -m mcp_notebook serve tests/interop/analysis_server.py`` (stdio).
"""

from __future__ import annotations

from typing import Annotated, TypedDict

import numpy as np
import pandas as pd

from mcp_notebook import Server

server = Server("mcp-notebook-analysis")


class CityStats(TypedDict):
    city: str
    mean: float
    days: int


@server.tool
def by_city(readings: pd.DataFrame) -> Annotated[pd.DataFrame, CityStats]:
    """Mean temperature and number of days per city (the mean is NaN for a city with no readings)."""
    grouped = readings.groupby("city", sort=True)["temp"]
    return pd.DataFrame({"mean": grouped.mean(), "days": grouped.size()}).reset_index()


@server.tool
def describe(readings: pd.DataFrame) -> pd.DataFrame:
    """pandas' describe() of the numeric columns, its row labels as a column."""
    return readings.describe()


@server.tool
def spread(values: list[float]) -> dict[str, float]:
    """Standard deviation and the ratio max/min (NaN and infinity are possible)."""
    arr = np.asarray(values, dtype=float)
    return {"std": float(np.std(arr, ddof=1)) if arr.size > 1 else np.nan, "ratio": arr.max() / arr.min()}
