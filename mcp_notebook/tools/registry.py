"""The set of tools a server offers, with cursor pagination and change callbacks.

Pagination follows spec notes §3.8: cursors are opaque to the client, an invalid one is an error (the server
maps ``ValueError("Invalid cursor")`` to JSON-RPC -32602), and the order is deterministic (§5.2, by name).
The cursor helpers are generic so the resources and prompts registries can page the same way.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
from collections.abc import Callable
from typing import Any, TypeVar

from .tool import Tool

__all__ = ["ToolRegistry", "decode_cursor", "encode_cursor", "paginate"]

T = TypeVar("T")


def encode_cursor(after: str) -> str:
    """An opaque cursor meaning "the items whose key sorts after ``after``"."""
    raw = json.dumps({"after": after}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_cursor(cursor: str) -> str:
    """The key a cursor points after; ``ValueError("Invalid cursor")`` for anything we did not issue."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (binascii.Error, UnicodeError, ValueError, AttributeError) as exc:
        raise ValueError("Invalid cursor") from exc
    if not isinstance(data, dict) or not isinstance(data.get("after"), str):
        raise ValueError("Invalid cursor")
    after: str = data["after"]
    return after


def paginate(
    items: list[T], key: Callable[[T], str], cursor: str | None, page_size: int
) -> tuple[list[T], str | None]:
    """One page of ``items`` in ``key`` order, and the cursor of the next page (None on the last page).

    The cursor names the last key served rather than an offset, so an item added or removed between two
    requests neither repeats nor skips the items around it.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    ordered = sorted(items, key=key)
    keys = [key(item) for item in ordered]
    start = 0 if cursor is None else bisect.bisect_right(keys, decode_cursor(cursor))
    page = ordered[start : start + page_size]
    more = start + page_size < len(ordered)
    return page, (encode_cursor(keys[start + page_size - 1]) if more else None)


class ToolRegistry:
    """Tools by name. ``on_change`` callbacks run after every add, replace and remove."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._callbacks: list[Callable[[], Any]] = []

    def add(self, tool: Tool) -> None:
        """Add ``tool``, replacing any tool of the same name (re-running a notebook cell updates it)."""
        self._tools[tool.name] = tool
        self._changed()

    def remove(self, name: str) -> bool:
        """Remove the tool called ``name``; False if there was none (and then nobody is notified)."""
        if self._tools.pop(name, None) is None:
            return False
        self._changed()
        return True

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def page(self, cursor: str | None, page_size: int = 100) -> tuple[list[dict[str, Any]], str | None]:
        """One ``tools/list`` page: the wire definitions and the ``nextCursor`` (None on the last page)."""
        tools, next_cursor = paginate(list(self._tools.values()), lambda t: t.name, cursor, page_size)
        return [tool.definition for tool in tools], next_cursor

    def on_change(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` after each change, e.g. to send ``notifications/tools/list_changed``."""
        self._callbacks.append(callback)

    def _changed(self) -> None:
        # deliberately no try/except: a failing callback is a bug the caller must see, not a silent drop
        for callback in list(self._callbacks):
            callback()
