"""Schema preparation for the form: local ``$ref`` resolution, ``allOf`` merging, and classification.

Pure functions over JSON Schema dicts, no widgets. The form (``form.py``) validates the *original*
schema with ``jsonschema``; what happens here only decides which widget shows each part.
Resolution is local only (DESIGN decision 8, MCP-NOTES §3.9: never dereference network ``$ref``s).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

Schema = Mapping[str, Any]

#: A ``$ref`` met this many times on one path stops being expanded (recursive schemas).
MAX_REF_REPEAT = 3

#: Keywords the widgets cannot represent faithfully: the part gets the JSON editor instead.
_UNSUPPORTED = (
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "prefixItems",
    "additionalItems",
    "dependentSchemas",
    "$dynamicRef",
    "$recursiveRef",
)
_ANNOTATIONS = ("title", "description", "default", "examples", "$comment", "deprecated", "readOnly")


@dataclass(frozen=True)
class Prepared:
    """A subschema ready to build: refs resolved, ``allOf`` merged, classified as ``kind``."""

    schema: Schema
    kind: str
    refs: tuple[str, ...] = ()
    reason: str = ""  # why the JSON editor was chosen, shown as help


class Unsupported(Exception):
    """This part of the schema is shown as a JSON editor; the message says why."""


def lookup(root: Schema, ref: str) -> Schema:
    """Resolve a local JSON-pointer ``$ref`` (``#``, ``#/$defs/X``, ``#/definitions/X``) in ``root``."""
    if not ref.startswith("#"):
        raise Unsupported(f"$ref {ref!r} is not local; it is never fetched")
    node: Any = root
    for raw in ref[1:].split("/")[1:]:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise Unsupported(f"$ref {ref!r} does not resolve in this schema")
    if node is True:
        return {}
    if not isinstance(node, Mapping):
        raise Unsupported(f"$ref {ref!r} points at a non-schema")
    return node


def resolve(root: Schema, schema: Schema, refs: tuple[str, ...]) -> tuple[Schema, tuple[str, ...]]:
    """Follow ``$ref`` (sibling keywords win over the target, as in 2020-12) and merge ``allOf``."""
    while "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str):
            raise Unsupported("$ref is not a string")
        if refs.count(ref) >= MAX_REF_REPEAT:
            raise Unsupported(f"recursive $ref {ref!r} nested more than {MAX_REF_REPEAT} deep")
        target = lookup(root, ref)
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        schema, refs = {**target, **siblings}, (*refs, ref)
    if "allOf" in schema:
        schema, refs = _merge_all_of(root, schema, refs)
    return schema, refs


def _merge_all_of(root: Schema, schema: Schema, refs: tuple[str, ...]) -> tuple[Schema, tuple[str, ...]]:
    parts = schema["allOf"]
    if not isinstance(parts, list):
        raise Unsupported("allOf is not a list")
    merged: dict[str, Any] = {}
    for part in parts:
        if not isinstance(part, Mapping):
            raise Unsupported("allOf with a boolean schema")
        resolved, refs = resolve(root, part, refs)
        _merge_into(merged, resolved)
    own = {k: v for k, v in schema.items() if k != "allOf"}
    annotations = {k: own.pop(k) for k in _ANNOTATIONS if k in own}
    _merge_into(merged, own)
    merged.update(annotations)  # the outer schema's title/description/default win
    return merged, refs


def _merge_into(into: dict[str, Any], part: Schema) -> None:
    for key, value in part.items():
        if key not in into or into[key] == value or key in _ANNOTATIONS:
            into.setdefault(key, value)
        elif key == "properties":
            props = dict(into[key])
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            into[key] = props
        elif key == "required":
            into[key] = [*into[key], *(r for r in value if r not in into[key])]
        else:
            raise Unsupported(f"allOf parts disagree on {key!r}")


def is_const_choice(branch: Any) -> bool:
    """A ``{const, title?}`` branch: the SEP-1330 titled-enum shape."""
    return (
        isinstance(branch, Mapping) and "const" in branch and set(branch) <= {"const", "title", "description"}
    )


def _is_null(branch: Any) -> bool:
    return isinstance(branch, Mapping) and branch.get("type") == "null" and len(branch) <= 3


def _union_key(schema: Schema) -> str | None:
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return key
    return None


def split_nullable(schema: Schema) -> Schema | None:
    """For ``type: [X, "null"]`` or ``anyOf: [X, {type: null}]`` return the X part, else None."""
    types = schema.get("type")
    if isinstance(types, list) and "null" in types and len(types) > 1:
        rest = [t for t in types if t != "null"]
        return _without(schema, "default", type=rest[0] if len(rest) == 1 else rest)
    key = _union_key(schema)
    if key is None:
        return None
    branches = schema[key]
    nulls = [b for b in branches if _is_null(b)]
    if len(nulls) != 1 or len(branches) < 2:
        return None
    rest = [b for b in branches if not _is_null(b)]
    base = _without(schema, key, "default")
    if schema.get("default") is not None:
        base["default"] = schema["default"]
    if len(rest) == 1:
        return {**base, "allOf": [rest[0]]} if base else rest[0]
    return {**base, key: rest}


def _without(schema: Schema, *keys: str, **extra: Any) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if k not in keys}
    out.update(extra)
    return out


def union_branches(schema: Schema) -> list[Schema]:
    """The branches of a general ``oneOf``/``anyOf``, or of a multi-type ``type: [..]`` list.

    Keywords beside the combinator (e.g. a shared ``type``) are merged into each branch.
    """
    key = _union_key(schema)
    if key is None:
        shared = _without(schema, "type", "default", "title", "description")
        return [{**shared, "type": t} for t in schema["type"]]
    shared = _without(schema, key, "default", "title", "description", "examples")
    out: list[Schema] = []
    for branch in schema[key]:
        if not isinstance(branch, Mapping):
            raise Unsupported(f"{key} with a boolean schema")
        out.append({**shared, "allOf": [branch]} if shared else branch)
    return out


def _multi_enum_items(schema: Schema) -> bool:
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return False
    if "enum" in items:
        return True
    key = _union_key(items)
    return key is not None and all(is_const_choice(b) for b in items[key])


def classify(schema: Schema) -> str:
    """The field kind for a resolved schema: a key of the builder dispatch table."""
    for keyword in _UNSUPPORTED:
        if keyword in schema:
            raise Unsupported(f"{keyword!r} is not shown as fields")
    if _is_map(schema):
        return "map"
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if isinstance(schema.get(keyword), Mapping) and schema[keyword]:
            raise Unsupported(f"{keyword} with a schema is not shown as fields")
    if "const" in schema:
        return "const"
    if "enum" in schema:
        return "enum"
    key = _union_key(schema)
    if key is not None and all(is_const_choice(b) for b in schema[key]):
        return "titled_enum"
    if schema.get("type") == "array" and _multi_enum_items(schema):
        return "multi_enum"
    if split_nullable(schema) is not None:
        return "nullable"
    if key is not None or isinstance(schema.get("type"), list):
        return "union"
    return _classify_type(schema)


def _is_map(schema: Schema) -> bool:
    """``dict[str, X]``: an object whose only shape is ``additionalProperties: {X}`` (key/value rows)."""
    values = schema.get("additionalProperties")
    return (
        isinstance(values, Mapping)
        and bool(values)
        and schema.get("type", "object") == "object"
        and not schema.get("properties")
        and not any(k in schema for k in ("const", "enum", "oneOf", "anyOf", "unevaluatedProperties"))
    )


def _classify_type(schema: Schema) -> str:
    kind = schema.get("type")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "string":
        if schema.get("format") == "date":
            return "date"
        long_text = isinstance(schema.get("maxLength"), int) and schema["maxLength"] > 200
        return "textarea" if long_text or "contentMediaType" in schema else "string"
    if kind in ("integer", "number", "boolean", "null"):
        return str(kind)
    if kind == "object":
        if not isinstance(schema.get("properties"), Mapping):
            raise Unsupported("an object without declared properties")
        return "object"
    if kind == "array":
        if isinstance(schema.get("items"), Mapping):
            return "array"
        raise Unsupported("an array without an items schema")
    raise Unsupported("a schema without a type")


def branch_label(schema: Schema, index: int) -> str:
    """A union branch's name in the chooser: its title, const or type."""
    if schema.get("title"):
        return str(schema["title"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "type" in schema:
        kind = schema["type"]
        return " | ".join(kind) if isinstance(kind, list) else str(kind)
    return f"option {index + 1}"


def number_bounds(schema: Schema, integer: bool) -> tuple[Any, Any]:
    """The widget bounds for a number: exclusive integer bounds become inclusive ones."""
    low, high = schema.get("minimum"), schema.get("maximum")
    step = 1 if integer else 0  # exclusive float bounds are enforced by validation, not the widget
    x_low, x_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(x_low, (int, float)) and not isinstance(x_low, bool):
        low = x_low + step if low is None else max(low, x_low + step)
    if isinstance(x_high, (int, float)) and not isinstance(x_high, bool):
        high = x_high - step if high is None else min(high, x_high - step)
    if integer:
        low = None if low is None else int(-(-low // 1))
        high = None if high is None else int(high // 1)
    return low, high


def prepare(root: Schema, schema: Any, refs: tuple[str, ...] = ()) -> Prepared:
    """Resolve and classify; anything the widgets cannot show becomes kind ``json`` with a reason."""
    if not isinstance(schema, Mapping):
        return Prepared({}, "json", refs, "a boolean schema")
    try:
        resolved, refs = resolve(root, schema, refs)
        return Prepared(resolved, classify(resolved), refs)
    except Unsupported as exc:
        return Prepared(schema, "json", refs, str(exc))
