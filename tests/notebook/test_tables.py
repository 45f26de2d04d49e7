"""Results back into analysis objects (``mcp_notebook.to_pandas``, ``handle.to_pandas()``) and the table
that the result view draws for tabular structured content (issue 9)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from mcp_notebook import to_pandas
from mcp_notebook.notebook.rendering.results import result_bundle


def result(structured: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "..."}], "structuredContent": structured}


def test_records_columns_and_a_wrapper_key_become_data_frames() -> None:
    records = [{"a": 1, "b": None}, {"a": 2, "b": 2.5}]
    for structured in (records, {"result": records}, {"rows": records}):
        frame = to_pandas(result(structured))
        assert frame.columns.tolist() == ["a", "b"] and math.isnan(frame.loc[0, "b"])  # null -> NaN
    columns = to_pandas(result({"result": {"a": [1, 2], "b": ["x", "y"]}}))
    assert columns.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}


def test_a_described_frame_gets_its_index_back() -> None:
    frame = to_pandas({"result": [{"index": "count", "x": 2.0}, {"index": "mean", "x": 1.5}]})
    assert frame.index.tolist() == ["count", "mean"] and frame.loc["mean", "x"] == 1.5


def test_series_and_scalars_where_they_fit() -> None:
    assert to_pandas(result({"result": [1, 2, 3]})).tolist() == [1, 2, 3]
    series = to_pandas(result({"mean": 1.5, "max": None}))
    assert isinstance(series, pd.Series) and series["mean"] == 1.5
    assert to_pandas(result({"result": 42})) == 42


def test_what_is_not_tabular_says_so() -> None:
    with pytest.raises(ValueError, match="no tabular structured content"):
        to_pandas(result({"rows": [1, 2], "total": {"n": 2}}))
    with pytest.raises(ValueError):
        to_pandas({"content": [{"type": "text", "text": "just text"}]})


def test_the_result_view_draws_a_table_with_shape_types_and_first_rows() -> None:
    rows = [{"city": f"c{i}", "temp": None if i == 3 else i * 1.5} for i in range(25)]
    bundle = result_bundle(result({"result": rows}))
    assert "table: 25 rows x 2 columns (first 10 shown" in bundle["text/plain"]
    html = bundle["text/html"].split("<table", 1)[1].split("</table>", 1)[0]
    assert html.count("<tr>") == 11 and "number|null" in html and "c9" in html and "c10" not in html
    assert "<table" not in result_bundle(result({"mean": 1.0}))["text/html"]  # not a table: the tree only


def test_a_row_s_columns_from_any_mapping_through_a_result_wrapper() -> None:
    """``row_columns`` (a batch's row): a dict is checked first, any other Mapping is read the same way."""
    from types import MappingProxyType

    from mcp_notebook.engine.tables import row_columns

    for wrap in (dict, MappingProxyType):
        assert row_columns(result(wrap({"a": 1, "b": "x"}))) == {"a": 1, "b": "x"}
        assert row_columns(result(wrap({"result": wrap({"a": 1})}))) == {"a": 1}
        assert row_columns(result(wrap({"result": 3}))) == {"result": 3}
    assert row_columns(result([1, 2])) == {"result": [1, 2]} and row_columns(None) == {}
    assert row_columns({"content": [{"type": "text", "text": "hi"}]}) == {"text": "hi"}
