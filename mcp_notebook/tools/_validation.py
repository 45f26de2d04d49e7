"""Compile a JSON Schema once and report every violation as one readable sentence.

Follows spec notes §3.9: no ``$schema`` means 2020-12; a declared dialect is honoured; an unknown dialect is
an error that says so; ``$ref`` is resolved only inside the schema, never over the network.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import referencing
import referencing.exceptions

from .._jsonschema import (
    Draft202012Validator,
    FormatChecker,
    SchemaError,
    ValidationError,
    Validator,
    relevance,
    validator_for,
)

__all__ = ["SchemaCheck", "format_path"]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _validator_class(schema: dict[str, Any]) -> type[Validator]:
    cls: type[Validator] = validator_for(schema, default=Draft202012Validator)
    declared = schema.get("$schema")
    # validator_for falls back to the default for a $schema it does not know; that must be an error instead
    if isinstance(declared, str) and cls is Draft202012Validator and declared.rstrip("#") != _DRAFT_2020_12:
        raise ValueError(f"Unsupported JSON Schema dialect {declared!r} ($schema)")
    return cls


class SchemaCheck:
    """A compiled validator for one schema; :meth:`problems` lists every violation, most relevant first."""

    def __init__(self, schema: dict[str, Any]) -> None:
        cls = _validator_class(schema)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"Invalid JSON Schema: {exc.message}") from exc
        # an explicit empty Registry: its default retrieve refuses every URI, whereas leaving registry out
        # would let jsonschema fetch remote $refs (a schema must not make us open connections)
        registry: referencing.Registry[Any] = referencing.Registry()
        self.schema = schema
        self._validator = cls(schema, registry=registry, format_checker=FormatChecker())
        self._surely_valid = _fast_check(schema) if cls is Draft202012Validator else None

    def problems(self, instance: Any) -> list[str]:
        if self._surely_valid is not None and self._surely_valid(instance):
            return []  # the common flat case, proven valid without jsonschema's machinery
        try:
            errors = list(self._validator.iter_errors(instance))
        except referencing.exceptions.Unresolvable as exc:
            return [f"the schema refers to {exc.ref!r}, which cannot be resolved locally"]
        return [_describe(error) for error in _best_first(errors)]


def _best_first(errors: Iterable[ValidationError]) -> list[ValidationError]:
    ordered = sorted(errors, key=relevance, reverse=True)
    return [_deepest(error) for error in ordered]


def _deepest(error: ValidationError) -> ValidationError:
    """For anyOf/oneOf failures, the branch error that explains most (as jsonschema's best_match does)."""
    while error.context:
        error = max(error.context, key=relevance)
    return error


def format_path(path: Iterable[str | int]) -> str:
    """``['items', 0, 'name']`` -> ``items[0].name``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: ValidationError) -> str:
    where = format_path(error.absolute_path)
    return f"at {where!r}: {error.message}" if where else error.message


# ---- a fast path for the schemas most tools have ----------------------------------------------------------
# Generated inputSchemas are usually a flat object of primitive properties. For exactly that shape a few
# isinstance checks decide *validity*; anything they cannot vouch for (a float for "integer", a keyword they
# do not know) falls through to jsonschema, which stays the only source of error messages.
_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
_PRIMITIVE: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
}


def _fast_check(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A checker that returns True only for instances the schema certainly accepts, or None if the schema
    is not of the simple shape (then every instance goes to jsonschema)."""
    if set(schema) - _ANNOTATIONS - {"type", "properties", "required", "additionalProperties", "$schema"}:
        return None
    if schema.get("type") != "object" or schema.get("additionalProperties", True) is not False:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    checks: dict[str, Callable[[Any], bool]] = {}
    for name, prop in properties.items():
        if not isinstance(prop, dict) or set(prop) - _ANNOTATIONS - {"type"}:
            return None
        check = _PRIMITIVE.get(prop.get("type"))  # type: ignore[arg-type]
        if check is None:
            return None
        checks[name] = check
    needed = frozenset(required)
    if not needed <= checks.keys():
        return None

    def surely_valid(instance: Any) -> bool:
        if type(instance) is not dict or not needed <= instance.keys():
            return False
        for key, value in instance.items():
            check = checks.get(key)
            if check is None or not check(value):
                return False
        return True

    return surely_valid
