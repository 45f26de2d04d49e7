"""Tool arguments as typed in a magic line, and back: ``k=v ...`` or one JSON object.

``%mcp call weather.forecast city=Paris days=2`` gives ``{"city": "Paris", "days": 2}``: each value is
parsed as JSON when it parses, else kept as the string typed; then the tool's inputSchema settles the cases
that are unambiguous (``zip=01234`` or ``name=123`` for a string property stay strings, ``flag=True`` for a
boolean becomes ``true``). Anything else is left to the server's validation, which answers with a tool
error naming the field (DESIGN decision 8). The reverse direction writes the ``%mcp call`` line and the
Python call of an audit-log entry ("copy as code").
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ...protocol.jsonrpc import json_type

__all__ = [
    "format_magic",
    "format_python",
    "parse_call_args",
    "parse_kv",
    "parse_value",
    "schema_types",
    "split_json",
]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_BARE = re.compile(r"[\w./:@+,\-]+")  # \w: letters of any script too (José)


def schema_types(schema: object) -> set[str]:
    """The JSON types a (sub)schema allows, looking one level into anyOf/oneOf; empty if unknown."""
    if not isinstance(schema, Mapping):
        return set()
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                if isinstance(branch, Mapping) and isinstance(branch.get("type"), str):
                    found.add(branch["type"])
                elif isinstance(branch, Mapping) and "const" in branch:
                    found.add(_json_type(branch["const"]))
    if "enum" in schema and isinstance(schema["enum"], list):
        found.update(_json_type(v) for v in schema["enum"])
    return found


def _json_type(value: object) -> str:
    return json_type(value) or ("array" if isinstance(value, list) else "object")


def parse_value(raw: str, schema: object = None) -> Any:
    """One ``v`` of ``k=v``: JSON if it parses, else the string; the schema decides the unambiguous cases."""
    try:
        parsed, ok = json.loads(raw), True
    except ValueError:
        parsed, ok = raw, False
    types = schema_types(schema)
    if not types:
        return parsed
    kind = _json_type(parsed) if ok else "string"
    if kind in types or (kind == "integer" and "number" in types):
        return parsed
    if "string" in types:
        return raw
    if "boolean" in types and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return parsed


def parse_call_args(text: str, input_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``k=v k2=v2`` (shell-quoted) or a JSON object; ``ValueError`` with a readable message otherwise."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"the arguments look like JSON but do not parse: {exc}") from exc
        if not isinstance(value, dict):
            raise ValueError("the JSON arguments must be an object")
        return value
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot split the arguments: {exc}") from exc
    return parse_kv(tokens, input_schema)


def parse_kv(tokens: Sequence[str], input_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Already split ``k=v`` tokens (see :func:`parse_call_args`)."""
    properties = (input_schema or {}).get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    arguments: dict[str, Any] = {}
    for token in tokens:
        key, eq, raw = token.partition("=")
        if not eq or not _KEY.fullmatch(key):
            raise ValueError(f"expected key=value or one JSON object, got {token!r}")
        if key in arguments:
            raise ValueError(f"argument {key!r} is given twice")
        arguments[key] = parse_value(raw, props.get(key))
    return arguments


def split_json(text: str) -> tuple[str, str]:
    """``"--opt x tool {...}"`` -> ``("--opt x tool", "{...}")``: a JSON object argument is kept whole,
    since shell-style splitting would eat its quotes."""
    for i, ch in enumerate(text):
        if ch == "{" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip(), text[i:].strip()
    return text, ""


def _magic_value(value: Any) -> str:
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            # not JSON, so it comes back as this same string: quoted only as the shell needs (José, not
            # '"José"')
            return value if _BARE.fullmatch(value) else shlex.quote(value)
        return shlex.quote(json.dumps(value, ensure_ascii=False))
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if _BARE.fullmatch(text) else shlex.quote(text)


def format_magic(target: str, arguments: Mapping[str, Any]) -> str:
    """The ``%mcp call`` line that makes this call again (k=v when every key allows it, else JSON)."""
    if all(isinstance(k, str) and _KEY.fullmatch(k) for k in arguments):
        parts = [f"{k}={_magic_value(v)}" for k, v in arguments.items()]
        return " ".join(["%mcp call", target, *parts])
    return f"%mcp call {target} {json.dumps(dict(arguments), ensure_ascii=False)}"


def format_python(target: str, arguments: Mapping[str, Any]) -> str:
    """The equivalent Python API call."""
    return f"mcp.call({target!r}, {_py_literal(dict(arguments))})"


def _py_literal(value: Any) -> str:
    # JSON values as Python literals: true/false/null become True/False/None.
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py_literal(k)}: {_py_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_py_literal(v) for v in value) + "]"
    return repr(value)
