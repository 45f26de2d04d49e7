"""Results checked against the shape their method promises, before they reach the user.

The shapes are the TypedDicts of :mod:`mcp_notebook.protocol.types` (the 2025-11-25 schema, which the
tests hold against the normative ``schema.json``): one definition, read by mypy for our signatures and
compiled here, once per type, into small checking functions for the wire. Objects stay open (keys the
types do not name are legal, as ``Result``'s index signature says); required keys, value types, literals
and the kind of every content block are checked. A failure names the method and the JSON path:
``tools/call result is malformed at $.content: expected an array, got a string``.
"""

from __future__ import annotations

import types as pytypes
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union

from . import types as t
from .errors import RemoteProtocolError

__all__ = ["RESULT_TYPES", "MalformedResult", "check_result", "problem", "tool_problem"]

Check = Callable[[Any, str], "str | None"]  # (value, path) -> a problem, or None

RESULT_TYPES: Mapping[str, Any] = {
    "initialize": t.InitializeResult,
    "ping": t.Result,
    "logging/setLevel": t.Result,
    "tools/list": t.ListToolsResult,
    "tools/call": t.CallToolResult,
    "resources/list": t.ListResourcesResult,
    "resources/templates/list": t.ListResourceTemplatesResult,
    "resources/read": t.ReadResourceResult,
    "resources/subscribe": t.Result,
    "resources/unsubscribe": t.Result,
    "prompts/list": t.ListPromptsResult,
    "prompts/get": t.GetPromptResult,
    "completion/complete": t.CompleteResult,
}


class MalformedResult(RemoteProtocolError):
    """The server answered with a result that does not have its method's shape."""

    def __init__(self, method: str, where: str) -> None:
        super().__init__(f"{method} result is malformed at {where}")
        self.method = method
        self.where = where


def check_result(method: str, params: Mapping[str, Any] | None, result: Any) -> None:
    """Raise :class:`MalformedResult` when ``result`` is not what ``method`` returns; unknown methods pass.

    A task-augmented request (``params.task``) is answered with a task, not the method's result; so is a
    request a 2026 server chose to run as a task (``resultType: "task"``, the Tasks extension)."""
    shape = RESULT_TYPES.get(method)
    if shape is None or (params is not None and "task" in params):
        return
    if isinstance(result, dict) and result.get("resultType") == "task":
        return
    if method == "tools/call" and type(result) is dict and _surely_text_call_result(result):
        return
    if method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
        # each tool is checked on its own (tool_problem): one malformed tool is left out, never the list
        result = {**result, "tools": []}
    found = problem(shape, result)
    if found is not None:
        raise MalformedResult(method, found)


def _surely_text_call_result(result: dict[str, Any]) -> bool:
    """The usual ``tools/call`` result, proven a CallToolResult without the compiled check's dozen calls
    (tests/protocol/test_shapes_fast.py holds the two to the same verdicts): ``content`` text blocks of
    exactly ``type`` and ``text``, ``isError`` a boolean, ``structuredContent`` and ``_meta`` objects, when
    there. False sends the result to the full check."""
    content = result.get("content")
    if type(content) is not list:
        return False
    for block in content:
        if type(block) is not dict or len(block) != 2 or block.get("type") != "text":
            return False
        if type(block.get("text")) is not str:
            return False
    return (
        type(result.get("isError", False)) is bool
        and type(result.get("structuredContent", _EMPTY)) is dict
        and type(result.get("_meta", _EMPTY)) is dict
    )


_EMPTY: dict[str, Any] = {}


def tool_problem(tool: Any, index: int) -> str | None:
    """What is wrong with one entry of a ``tools/list`` result (a client leaves such a tool out), or None."""
    return problem(t.Tool, tool, f"$.tools[{index}]")


def problem(shape: Any, value: Any, path: str = "$") -> str | None:
    """Where and how ``value`` departs from ``shape`` (a type from :mod:`.types`), or None."""
    return _checker(shape)(value, path)


# ---- compiling a type into a check ----------------------------------------------------------------------
_compiled: dict[Any, Check] = {}
_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _checker(shape: Any) -> Check:
    check = _compiled.get(shape)
    if check is None:
        slot: list[Check] = []
        _compiled[shape] = lambda value, path: slot[0](value, path)  # a type that refers to itself
        check = _compiled[shape] = _compile(shape)
        slot.append(check)
    return check


def _compile(shape: Any) -> Check:
    if shape is Any or shape is object:
        return lambda value, path: None
    if typing.is_typeddict(shape):
        return _object(shape)
    origin = typing.get_origin(shape)
    if origin is Literal:
        return _literal(typing.get_args(shape))
    if origin in (Union, pytypes.UnionType):
        return _union(typing.get_args(shape))
    if origin is list:
        return _array(_checker(typing.get_args(shape)[0]))
    if origin in (dict, Mapping) or shape is dict:
        args = typing.get_args(shape)
        return _mapping(_checker(args[1]) if args and args[1] is not Any else None)
    if shape in (str, bool, type(None)):
        return _scalar(shape)
    if shape is int:
        return _scalar(int, "an integer")
    if shape is float:
        return _scalar((int, float), "a number")
    raise TypeError(f"no wire check for {shape!r}")


def _scalar(kind: type | tuple[type, ...], name: str | None = None) -> Check:
    expected = name or _JSON_NAMES[kind]  # type: ignore[index]

    def check(value: Any, path: str) -> str | None:
        if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
            return None
        return f"{path}: expected {expected}, got {_kind(value)}"

    return check


def _literal(allowed: tuple[Any, ...]) -> Check:
    def check(value: Any, path: str) -> str | None:
        if value in allowed and not isinstance(value, bool):
            return None
        return f"{path}: expected one of {', '.join(map(repr, allowed))}, got {value!r:.60}"

    return check


def _array(item: Check) -> Check:
    def check(value: Any, path: str) -> str | None:
        if not isinstance(value, list):
            return f"{path}: expected an array, got {_kind(value)}"
        for index, element in enumerate(value):
            found = item(element, f"{path}[{index}]")
            if found is not None:
                return found
        return None

    return check


def _mapping(values: Check | None) -> Check:
    def check(value: Any, path: str) -> str | None:
        if not isinstance(value, dict):
            return f"{path}: expected an object, got {_kind(value)}"
        if values is not None:
            for key, element in value.items():
                found = values(element, f"{path}.{key}")
                if found is not None:
                    return found
        return None

    return check


def _object(shape: Any) -> Check:
    hints = typing.get_type_hints(shape)
    required = frozenset(shape.__required_keys__)
    fields = [(key, _checker(hint), key in required) for key, hint in hints.items()]

    def check(value: Any, path: str) -> str | None:
        if not isinstance(value, dict):
            return f"{path}: expected an object, got {_kind(value)}"
        for key, field, needed in fields:
            if key in value:
                found = field(value[key], f"{path}.{key}")
                if found is not None:
                    return found
            elif needed:
                return f"{path}: the required member {key!r} is missing"
        return None

    return check


def _union(members: tuple[Any, ...]) -> Check:
    checks = [_checker(member) for member in members]
    by_type = _discriminated(members)
    names = " or ".join(getattr(m, "__name__", repr(m)) for m in members)

    def check(value: Any, path: str) -> str | None:
        if by_type is not None and isinstance(value, dict):  # content blocks: "type" says which one
            kind = value.get("type")
            chosen = by_type.get(kind) if isinstance(kind, str) else None
            if chosen is None:
                return f"{path}.type: expected one of {', '.join(map(repr, by_type))}, got {kind!r:.60}"
            return chosen(value, path)
        problems = [c(value, path) for c in checks]
        if None in problems:
            return None
        return problems[0] if len(checks) == 1 else f"{path}: matches none of {names} ({problems[0]})"

    return check


def _discriminated(members: tuple[Any, ...]) -> dict[str, Check] | None:
    """TypedDicts told apart by a required ``type`` literal (content blocks): member by that literal."""
    table: dict[str, Check] = {}
    for member in members:
        if not typing.is_typeddict(member) or "type" not in member.__required_keys__:
            return None
        literal = typing.get_type_hints(member)["type"]
        if typing.get_origin(literal) is not Literal:
            return None
        for value in typing.get_args(literal):
            table[value] = _checker(member)
    return table
