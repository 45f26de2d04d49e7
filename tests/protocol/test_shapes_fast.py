"""protocol/shapes.py's fast path for the usual tools/call result gives the full check's verdict."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mcp_notebook.protocol import shapes
from mcp_notebook.protocol import types as t

BLOCKS: list[Any] = [
    {"type": "text", "text": "x"},
    {"type": "text", "text": ""},
    {"type": "text", "text": 1},
    {"type": "text"},
    {"text": "x"},
    {"type": "text", "text": "x", "annotations": {"priority": 0.5}},
    {"type": "text", "text": "x", "annotations": "loud"},
    {"type": "image", "data": "AA==", "mimeType": "image/png"},
    {"type": "image", "text": "x"},
    {"type": "nope", "text": "x"},
    "text",
    None,
]
CONTENTS: list[Any] = [[], None, "x", {"type": "text", "text": "x"}] + [[b] for b in BLOCKS]
CONTENTS += [[BLOCKS[0], b] for b in BLOCKS]
EXTRAS: list[dict[str, Any]] = [
    {},
    {"isError": False},
    {"isError": True},
    {"isError": "no"},
    {"isError": 0},
    {"isError": None},
    {"structuredContent": {"result": 3}},
    {"structuredContent": [1]},
    {"structuredContent": None},
    {"_meta": {"a": 1}},
    {"_meta": "x"},
    {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}}},
    {"somethingElse": [1, 2]},
]


def results() -> list[Any]:
    made: list[Any] = [None, [], "x", {}]
    for content, extra in itertools.product(CONTENTS, EXTRAS):
        made.append({**extra, "content": content})
        made.append(dict(extra))  # no content at all
    return made


@pytest.mark.parametrize("result", results())
def test_the_fast_path_agrees_with_the_full_check(result: Any) -> None:
    full = shapes.problem(t.CallToolResult, result)
    if isinstance(result, dict) and shapes._surely_text_call_result(result):
        assert full is None  # never passes what the full check refuses
    try:
        shapes.check_result("tools/call", {"name": "x"}, result)
    except shapes.MalformedResult as exc:
        assert full is not None and exc.where == full
    else:
        assert full is None


def test_the_usual_results_take_the_fast_path() -> None:
    assert shapes._surely_text_call_result({"content": [{"type": "text", "text": "x"}]})
    assert shapes._surely_text_call_result({"content": [{"type": "text", "text": "x"}], "isError": True})
    modern = {"content": [], "resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {}}}
    assert shapes._surely_text_call_result(modern)
