"""ToolRegistry and the generic cursor pagination."""

from __future__ import annotations

import base64

import pytest

from mcp_notebook.tools import ToolRegistry, decode_cursor, encode_cursor, make_tool, paginate


def make(name: str, doc: str = "") -> object:
    def fn() -> None: ...

    fn.__doc__ = doc or None
    return make_tool(fn, name=name)


def registry_with(*names: str) -> ToolRegistry:
    registry = ToolRegistry()
    for name in names:
        registry.add(make(name))  # type: ignore[arg-type]
    return registry


def test_add_get_contains_len_names() -> None:
    registry = registry_with("b", "a")
    assert len(registry) == 2
    assert "a" in registry and "c" not in registry
    assert registry.names() == ["a", "b"]
    tool = registry.get("a")
    assert tool is not None and tool.name == "a"
    assert registry.get("zzz") is None


def test_pages_in_name_order_across_pages() -> None:
    registry = registry_with(*[f"t{i:02d}" for i in range(7)][::-1])
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        tools, cursor = registry.page(cursor, page_size=3)
        seen += [t["name"] for t in tools]
        pages += 1
        if cursor is None:
            break
    assert pages == 3
    assert seen == [f"t{i:02d}" for i in range(7)]


def test_exact_multiple_has_no_empty_last_page() -> None:
    registry = registry_with("a", "b")
    tools, cursor = registry.page(None, page_size=2)
    assert [t["name"] for t in tools] == ["a", "b"]
    assert cursor is None


def test_cursor_survives_removal_of_the_last_seen_item() -> None:
    registry = registry_with("a", "b", "c")
    _, cursor = registry.page(None, page_size=2)
    registry.remove("b")
    tools, _ = registry.page(cursor, page_size=2)
    assert [t["name"] for t in tools] == ["c"]


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64!",
        "",
        "é",
        base64.urlsafe_b64encode(b"[1]").decode(),
        base64.urlsafe_b64encode(b'{"after": 3}').decode(),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ],
)
def test_invalid_cursor(cursor: str) -> None:
    with pytest.raises(ValueError, match="Invalid cursor"):
        registry_with("a").page(cursor)


def test_cursor_round_trip_and_paginate_helper() -> None:
    assert decode_cursor(encode_cursor("x.y")) == "x.y"
    items = [{"id": "c"}, {"id": "a"}, {"id": "b"}]
    page, cursor = paginate(items, lambda i: i["id"], None, 2)
    assert page == [{"id": "a"}, {"id": "b"}]
    assert cursor is not None
    assert paginate(items, lambda i: i["id"], cursor, 2) == ([{"id": "c"}], None)
    with pytest.raises(ValueError, match="page_size"):
        paginate(items, lambda i: i["id"], None, 0)


def test_replace_remove_and_on_change() -> None:
    registry = ToolRegistry()
    changes: list[int] = []
    registry.on_change(lambda: changes.append(len(registry)))
    registry.add(make("a", "First."))  # type: ignore[arg-type]
    registry.add(make("a", "Second."))  # type: ignore[arg-type]
    tool = registry.get("a")
    assert tool is not None and tool.definition["description"] == "Second."
    assert registry.remove("a") is True
    assert registry.remove("a") is False
    assert changes == [1, 1, 0]


def test_callback_errors_propagate() -> None:
    registry = ToolRegistry()

    def broken() -> None:
        raise RuntimeError("listener bug")

    registry.on_change(broken)
    with pytest.raises(RuntimeError, match="listener bug"):
        registry.add(make("a"))  # type: ignore[arg-type]
    assert "a" in registry  # the change itself happened
