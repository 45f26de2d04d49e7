"""The one JSON Schema validation service: tools, forms and renderers all compile schemas here.

Follows spec notes §3.9: no ``$schema`` means 2020-12; a declared dialect is honoured; an unsupported dialect
is an error that says so (the one rule, whoever asks); ``$ref`` is resolved only inside the schema, never
over the network. Formats are checked, with RFC 3339 ``date-time`` and absolute ``uri`` checks even when
jsonschema's optional format packages are missing.

Compiling is the expensive part (checking a schema against the 2020-12 meta-schema costs about a
millisecond), so it is cached: :func:`schema_check` returns one shared :class:`SchemaCheck` per distinct
schema, and the meta-schema verdict is cached per schema *skeleton* (the schema with its titles,
descriptions, defaults and examples blanked), because those are the only parts tools usually differ in and
the meta-schema only asks them to be of the right type. 1,000 generated tools with the same parameter shapes
pay for one meta-schema check.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

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

__all__ = ["SchemaCheck", "SchemaProblem", "format_path", "schema_check"]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


class SchemaProblem(ValueError):
    """A schema that cannot be used as given: an unsupported dialect, or not valid for its meta-schema."""


#: Bounds on a schema before it is compiled: a server-supplied schema is untrusted input, and jsonschema's
#: cost (and its recursion) grows with the schema's size and depth.
MAX_SCHEMA_BYTES = 1024 * 1024
MAX_SCHEMA_DEPTH = 128  # JSON levels (a schema level is about two: "properties", then the name)


def _check_bounds(schema: Mapping[str, Any]) -> None:
    size = len(_key(schema))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaProblem(f"the schema is too large to use ({size} bytes; at most {MAX_SCHEMA_BYTES})")
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaProblem(f"the schema is nested too deeply (more than {MAX_SCHEMA_DEPTH} levels)")
        children = node.values() if isinstance(node, Mapping) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (Mapping, list)))


def _validator_class(schema: Mapping[str, Any]) -> type[Validator]:
    cls: type[Validator] = validator_for(schema, default=Draft202012Validator)
    declared = schema.get("$schema")
    # validator_for falls back to the default for a $schema it does not know; that must be an error instead
    if declared is not None and cls is Draft202012Validator and str(declared).rstrip("#") != _DRAFT_2020_12:
        raise SchemaProblem(f"Unsupported JSON Schema dialect {declared!r} ($schema)")
    return cls


class SchemaCheck:
    """A compiled validator for one schema; :meth:`problems` lists every violation, most relevant first.

    ``strict`` (the default, for schemas we publish) raises :class:`SchemaProblem` for an unusable schema.
    With ``strict=False`` (schemas a remote server sent, shown in forms and results) the problem is kept in
    :attr:`problem` instead: a meta-schema violation still validates as well as it can, an unsupported
    dialect does not validate at all (every check reports the problem). Prefer :func:`schema_check`, which
    shares compiled checks.
    """

    def __init__(self, schema: Mapping[str, Any], *, strict: bool = True) -> None:
        self.schema: dict[str, Any] = dict(schema)
        #: Why this schema cannot be fully trusted for validation; None when it can.
        self.problem: str | None = None
        self._validator: Validator | None = None
        self._surely_valid: Callable[[Any], bool] | None = None
        try:
            _check_bounds(self.schema)
            cls = _validator_class(schema)
        except SchemaProblem as exc:
            if strict:
                raise
            self.problem = str(exc)
            return
        meta_problem = _meta_problem(cls, self.schema)
        if meta_problem is not None:
            if strict:
                raise SchemaProblem(f"Invalid JSON Schema: {meta_problem}")
            self.problem = f"The schema is not valid JSON Schema ({meta_problem}); validation may be partial."
        # an explicit empty Registry: its default retrieve refuses every URI, whereas leaving registry out
        # would let jsonschema fetch remote $refs (a schema must not make us open connections)
        registry: referencing.Registry[Any] = referencing.Registry()
        self._validator = cls(self.schema, registry=registry, format_checker=_format_checker(cls))
        if cls is Draft202012Validator and meta_problem is None:
            self._surely_valid = _fast_check(self.schema)

    @property
    def validator_class(self) -> type[Validator] | None:
        return type(self._validator) if self._validator is not None else None

    def errors(self, instance: Any) -> list[ValidationError]:
        """The raw jsonschema errors (callers that place messages next to fields need them).

        Raises :class:`SchemaProblem` when the schema cannot be applied (unsupported dialect, a ``$ref``
        that does not resolve locally, an unknown type)."""
        if self._validator is None:
            raise SchemaProblem(self.problem or "the schema cannot be used")
        if self._surely_valid is not None and self._surely_valid(instance):
            return []  # the common flat case, proven valid without jsonschema's machinery
        try:
            return list(self._validator.iter_errors(instance))
        except referencing.exceptions.Unresolvable as exc:
            ref = exc.ref
            raise SchemaProblem(f"the schema refers to {ref!r}, which cannot be resolved locally") from exc
        except Exception as exc:  # a schema invalid for its meta-schema can make jsonschema raise anything
            raise SchemaProblem(f"the schema cannot be applied: {type(exc).__name__}: {exc}") from exc

    def problems(self, instance: Any) -> list[str]:
        if self._surely_valid is not None and self._surely_valid(instance):
            return []  # the common case, without errors()'s calls and an empty sort
        try:
            errors = self.errors(instance)
        except SchemaProblem as exc:
            return [str(exc)]
        return [_describe(error) for error in _best_first(errors)]


# ---- the shared cache --------------------------------------------------------------------------------

_CACHE_SIZE = 4096
_checks: OrderedDict[tuple[str, bool], SchemaCheck] = OrderedDict()
_meta_verdicts: OrderedDict[tuple[str, str], str | None] = OrderedDict()


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def schema_check(schema: Mapping[str, Any], *, strict: bool = True) -> SchemaCheck:
    """The shared compiled :class:`SchemaCheck` for ``schema`` (one per distinct schema, LRU-bounded)."""
    key = (_key(schema), strict)
    check = _checks.get(key)
    if check is None:
        check = SchemaCheck(schema, strict=strict)
        _remember(_checks, key, check)
    else:
        _checks.move_to_end(key)
    return check


def _meta_problem(cls: type[Validator], schema: dict[str, Any]) -> str | None:
    """Why ``schema`` fails its meta-schema (None if it passes), cached per skeleton: blanking annotations
    that already have the right type changes no verdict (ill-typed ones are kept as they are)."""
    skeleton = _skeleton(schema)
    key = (str(cls.META_SCHEMA.get("$id", cls.__name__)), _key(skeleton))
    if key in _meta_verdicts:
        return _meta_verdicts[key]
    try:
        cls.check_schema(skeleton)
        verdict = None
    except SchemaError as exc:
        verdict = exc.message
    _remember(_meta_verdicts, key, verdict)
    return verdict


# Keywords whose values are subschemas, by shape (2020-12, with draft-07/04 spellings).
_SUB_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SUB_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUB_ONE = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
# Annotation keywords the meta-schemas only type-check; blanked in the skeleton.
_BLANKS: dict[str, tuple[type, Any]] = {
    "title": (str, ""),
    "description": (str, ""),
    "default": (object, None),
    "examples": (list, []),
}


def _skeleton(schema: Any) -> Any:
    """``schema`` with well-typed annotation values blanked, walking only schema positions."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        blank = _BLANKS.get(key)
        if blank is not None and isinstance(value, blank[0]):
            out[key] = blank[1]
        elif key in _SUB_MAPS and isinstance(value, dict):
            out[key] = {name: _skeleton(sub) for name, sub in value.items()}
        elif key in _SUB_LISTS and isinstance(value, list):
            out[key] = [_skeleton(sub) for sub in value]
        elif key in _SUB_ONE:
            out[key] = [_skeleton(sub) for sub in value] if isinstance(value, list) else _skeleton(value)
        else:
            out[key] = value
    return out


# ---- formats --------------------------------------------------------------------------------

_DATE_TIME = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|[+-](\d\d):(\d\d))?\Z"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*\Z")


def _is_date_time(value: object) -> bool:
    """RFC 3339 date-time with the offset optional (ISO 8601's local date-time): a naive ``datetime`` or
    ``pd.Timestamp`` travels without one (README "Types across the boundary"), as pydantic-based servers
    send theirs, and must validate on both sides. Replaces jsonschema's check (strict, and only active when
    an optional extra package is installed)."""
    if not isinstance(value, str):
        return True
    match = _DATE_TIME.match(value)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        dt.datetime(year, month, day, hour, minute, min(second, 59))  # 60: a leap second
    except ValueError:
        return False
    return all(int(g) < 60 for g in match.groups()[6:] if g is not None)


def _is_uri(value: object) -> bool:
    """An absolute URI (a scheme, no whitespace); the RFC 3986 checker is an optional extra."""
    if not isinstance(value, str):
        return True
    return bool(_SCHEME.match(urlsplit(value).scheme)) and not any(c.isspace() for c in value)


def _is_time(value: object) -> bool:
    """RFC 3339 ``full-time`` with the offset optional: Python's ``time.isoformat()`` (a ``datetime.time``
    parameter's values) leaves it out, and a naive time is still a time."""
    if not isinstance(value, str):
        return True
    try:
        dt.time.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return len(value) >= 8  # hh:mm:ss at least, as RFC 3339 asks


_format_checkers: dict[type[Validator], FormatChecker] = {}


def _format_checker(cls: type[Validator]) -> FormatChecker:
    checker = _format_checkers.get(cls)
    if checker is None:
        checker = FormatChecker(())  # its own table (a copy of the dialect's): adding changes no global
        checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
        checker.checks("date-time")(_is_date_time)
        if "uri" not in checker.checkers:
            checker.checks("uri")(_is_uri)
        if cls is Draft202012Validator:
            checker.checks("time")(_is_time)
        _format_checkers[cls] = checker
    return checker


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


def _primitive_check(kind: Any) -> Callable[[Any], bool] | None:
    """A check for ``"type": "number"`` or a list like ``["number", "null"]`` (outputSchema floats)."""
    if isinstance(kind, str):
        return _PRIMITIVE.get(kind)
    if not isinstance(kind, list) or not all(isinstance(k, str) for k in kind):
        return None
    checks = [_PRIMITIVE.get(k) for k in kind if k != "null"]
    if not checks or None in checks:
        return None
    nullable = "null" in kind
    return lambda v: (nullable and v is None) or any(check(v) for check in checks)  # type: ignore[misc]


def _fast_check(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A checker that returns True only for instances the schema certainly accepts, or None if the schema
    is not of the simple shape (then every instance goes to jsonschema)."""
    if set(schema) - _ANNOTATIONS - {"type", "properties", "required", "additionalProperties", "$schema"}:
        return None
    additional = schema.get("additionalProperties", True)
    if schema.get("type") != "object" or (additional is not False and additional is not True):
        return None
    closed = additional is False  # open (absent or true): any other key, with any value, is allowed
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    checks: dict[str, Callable[[Any], bool]] = {}
    for name, prop in properties.items():
        if not isinstance(prop, dict) or set(prop) - _ANNOTATIONS - {"type"}:
            return None
        check = _primitive_check(prop.get("type"))
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
            if check is None:
                if closed:
                    return False
            elif not check(value):
                return False
        return True

    return surely_valid
