"""Compile a JSON Schema once and report every violation as one readable sentence.

Follows spec notes §3.9: no ``$schema`` means 2020-12; a declared dialect is honoured; an unknown dialect is
an error that says so; ``$ref`` is resolved only inside the schema, never over the network.
"""

from __future__ import annotations

from collections.abc import Iterable
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

    def problems(self, instance: Any) -> list[str]:
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
