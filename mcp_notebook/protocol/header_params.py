"""``x-mcp-header`` over a whole ``inputSchema`` (SEP-2243; 2026-07-28 basic/transports/streamable-http
"Custom Headers from Tool Parameters"), for both roles.

An annotation is valid only on a property *statically reachable* from the root through ``properties`` keys
alone; one anywhere else (under ``items``, ``anyOf``/``oneOf``/``allOf``/``not``, ``if``/``then``/``else``,
``$defs`` behind a ``$ref``...) makes the whole tool invalid, and an HTTP client MUST leave such a tool out
of its list. The header's value is read at the property's exact path in the arguments, so nested object
properties are mirrored too. Integers travel only within JavaScript's safe range (±(2**53 - 1)).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_SAFE_INTEGER", "HeaderParam", "header_params", "mirrored_value", "value_at"]

MAX_SAFE_INTEGER = 2**53 - 1
_MAX_DEPTH = 64  # a server-supplied schema deeper than this is not walked further (a bound, not a rule)

# JSON Schema 2020-12 keywords whose values are subschemas (one, a list, or a map of them)
_ONE = (
    "items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties",
    "contains", "propertyNames", "not", "if", "then", "else",
)  # fmt: skip
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP = ("$defs", "definitions", "patternProperties", "dependentSchemas")


@dataclass(frozen=True)
class HeaderParam:
    """An annotated property: its path through ``properties``, the header name and the property schema."""

    path: tuple[str, ...]
    name: Any  # what the schema says; validity is the caller's question
    schema: Mapping[str, Any]

    @property
    def where(self) -> str:
        return ".".join(self.path)


def header_params(input_schema: Any) -> tuple[list[HeaderParam], str | None]:
    """The reachable annotated properties, and the first misplaced annotation (or None)."""
    found: list[HeaderParam] = []
    misplaced: list[str] = []
    for node, path, pointer in _walk(input_schema, (), "", 0):
        if "x-mcp-header" not in node:
            continue
        if path:
            found.append(HeaderParam(path, node["x-mcp-header"], node))
        else:
            misplaced.append(
                f"x-mcp-header at {pointer or '/'} is not on a property reached through 'properties' alone "
                "(not under items, anyOf/oneOf/allOf/not, if/then/else or $ref)"
            )
    return found, (misplaced[0] if misplaced else None)


def _walk(
    node: Any, path: tuple[str, ...] | None, pointer: str, depth: int
) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...] | None, str]]:
    """Every subschema with its ``properties`` path (None once the chain passed any other keyword)."""
    if not isinstance(node, Mapping) or depth > _MAX_DEPTH:
        return
    yield node, path, pointer
    for key, value in node.items():
        here = f"{pointer}/{key}"
        if key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                sub_path = (*path, str(prop)) if path is not None else None
                yield from _walk(sub, sub_path, f"{here}/{prop}", depth + 1)
        elif key in _MAP and isinstance(value, Mapping):
            for name, sub in value.items():
                yield from _walk(sub, None, f"{here}/{name}", depth + 1)
        elif key in _LIST and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _walk(sub, None, f"{here}/{index}", depth + 1)
        elif key in _ONE:
            yield from _walk(value, None, here, depth + 1)


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at ``path`` (None when any step is missing or not an object)."""
    value = arguments
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value


def mirrored_value(value: Any) -> str | None:
    """The header text of an argument (transports#value-encoding, before base64), or None when it is not
    mirrored: absent, null, not a string/integer/boolean, or an integer outside JavaScript's safe range."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    return value if isinstance(value, str) else None
