"""One page of a list result, from the request's ``cursor`` (server/utilities/pagination)."""

from __future__ import annotations

from typing import Any

from ..protocol.errors import INVALID_PARAMS, JSONRPCError
from ..tools.registry import paginate

__all__ = ["page_of"]


def page_of(
    items: list[dict[str, Any]], key: str, params: dict[str, Any], page_size: int
) -> tuple[list[Any], str | None]:
    """The page ``params["cursor"]`` asks for, and the next cursor; a bad cursor is invalid params."""
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: 'cursor' must be a string")
    try:
        return paginate(items, lambda item: str(item[key]), cursor, page_size)
    except ValueError as exc:
        raise JSONRPCError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from exc
