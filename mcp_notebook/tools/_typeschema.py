"""Python type annotations -> JSON Schema 2020-12, as a dispatch table of small functions.

One :class:`SchemaBuilder` is used per tool signature so that every named type (dataclass, TypedDict, pydantic
model) lands once in the root ``$defs`` and is referenced with ``$ref`` wherever it appears.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import re
import sys
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from ..protocol.jsonrpc import json_type
from ._jsonable import is_pydantic_model_class, to_jsonable
from .adapters import annotated_schema as adapter_annotated_schema
from .adapters import schema as adapter_schema

__all__ = [
    "INT_KEY",
    "SchemaBuilder",
    "UnsupportedType",
    "apply_metadata",
    "is_missing",
    "is_namedtuple",
    "is_typeddict",
    "json_default",
]

Schema = dict[str, Any]
_MISSING = object()
#: ``propertyNames`` of a ``dict[int, X]``: JSON keys are strings, an int key is its decimal digits
INT_KEY = r"^-?\d+$"


class UnsupportedType(TypeError):
    """An annotation we cannot express in JSON Schema; the caller adds which parameter it came from."""

    def __init__(self, tp: object) -> None:
        super().__init__(f"unsupported type annotation {_type_name(tp)}")
        self.tp = tp


def _type_name(tp: object) -> str:
    return tp.__qualname__ if isinstance(tp, type) else repr(tp)


def json_default(value: Any) -> Any:
    """The JSON form of a default value, or ``_MISSING`` when it has none (then no ``default`` is emitted)."""
    try:
        converted = to_jsonable(value)
        json.dumps(converted, allow_nan=False)  # a NaN default would be null: better no default at all
    except (TypeError, ValueError):
        return _MISSING
    return converted


def is_missing(value: object) -> bool:
    return value is _MISSING


# -- Annotated metadata --------------------------------------------------------------------------------------
# attribute on a metadata object -> JSON Schema keyword; covers our Field, pydantic's FieldInfo (title,
# description, examples) and the annotated_types constraint objects (Ge, Le, Gt, Lt, MinLen, MaxLen, ...),
# which pydantic also stores in FieldInfo.metadata.
_ATTRIBUTE_KEYWORDS = {
    "title": "title",
    "description": "description",
    "examples": "examples",
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "pattern": "pattern",
    "format": "format",
    "header": "x-mcp-header",
    "min_items": "minItems",
    "max_items": "maxItems",
}
# length constraints mean characters for strings and items for arrays, as in pydantic and annotated_types
_LENGTH_KEYWORDS = {"min_length": ("minLength", "minItems"), "max_length": ("maxLength", "maxItems")}


def apply_metadata(schema: Schema, metadata: Sequence[object]) -> Schema:
    """Fold ``Annotated[...]`` extras into ``schema``: a str is the description, objects give keywords."""
    result = dict(schema)
    for item in metadata:
        if isinstance(item, str):
            result["description"] = item
            continue
        _apply_object(result, item)
    return result


def _apply_object(schema: Schema, item: object) -> None:
    for attribute, keyword in _ATTRIBUTE_KEYWORDS.items():
        value = getattr(item, attribute, None)
        if value is not None and not callable(value):
            schema[keyword] = value.pattern if isinstance(value, re.Pattern) else to_jsonable(value)
    is_array = schema.get("type") == "array"
    for attribute, (string_keyword, array_keyword) in _LENGTH_KEYWORDS.items():
        value = getattr(item, attribute, None)
        if isinstance(value, int):
            schema[array_keyword if is_array else string_keyword] = value
    nested = getattr(item, "metadata", None)
    if isinstance(nested, list):  # pydantic FieldInfo keeps its constraints here
        for inner in nested:
            _apply_object(schema, inner)


# -- the builder ---------------------------------------------------------------------------------------------
_SIMPLE: dict[object, Schema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    Any: {},
    object: {},
    bytes: {"type": "string", "contentEncoding": "base64"},
    dt.datetime: {"type": "string", "format": "date-time"},
    dt.date: {"type": "string", "format": "date"},
    dt.time: {"type": "string", "format": "time"},
    dt.timedelta: {"type": "string", "format": "duration"},
    # a number, or a numeric string ("1.10": a Decimal keeps the digits a float would lose)
    Decimal: {"type": ["number", "string"], "pattern": r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$"},
    uuid.UUID: {"type": "string", "format": "uuid"},
    dict: {"type": "object"},
    list: {"type": "array"},
    tuple: {"type": "array"},
    set: {"type": "array", "uniqueItems": True},
    frozenset: {"type": "array", "uniqueItems": True},
}


def _with_uniform_type(schema: Schema, values: Sequence[object]) -> Schema:
    kinds = {json_type(v) for v in values}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    return schema


# In an outputSchema a float may be null: NaN and infinities travel as null (README "NaN and Infinity").
_NULLABLE_NUMBER: Schema = {"type": ["number", "null"]}


class SchemaBuilder:
    """Builds schemas for one signature, collecting named types into :attr:`defs`.

    ``output=True`` builds an outputSchema: floats (and Decimals) also allow ``null``, the wire form of
    NaN and +/-Infinity, so a result with a missing value still validates on both sides.
    """

    def __init__(self, *, output: bool = False) -> None:
        self.defs: dict[str, Schema] = {}
        self._names: dict[object, str] = {}
        self.output = output

    def schema(self, tp: object) -> Schema:
        if _hashable(tp) and tp in _SIMPLE:
            if self.output and (tp is float or tp is Decimal):
                return dict(_NULLABLE_NUMBER)
            return dict(_SIMPLE[tp])
        origin = typing.get_origin(tp)
        handler = _origin_handler(origin) if origin is not None else None
        if handler is not None:
            return handler(self, tp)
        for predicate, class_handler in _CLASS_HANDLERS:
            if predicate(tp):
                return class_handler(self, tp)
        adapted = adapter_schema(self, tp)  # pandas, numpy, PIL... (only if the user's module loaded them)
        if adapted is not None:
            return adapted
        raise UnsupportedType(tp)

    # -- generic aliases ---------------------------------------------------------------------------------
    def _annotated(self, tp: object) -> Schema:
        base, *metadata = typing.get_args(tp)
        adapted = adapter_annotated_schema(self, base, metadata)  # Annotated[pd.DataFrame, Row], ...
        if adapted is not None:
            return adapted
        return apply_metadata(self.schema(base), metadata)

    def _union(self, tp: object) -> Schema:
        return {"anyOf": [self.schema(arm) for arm in typing.get_args(tp)]}

    def _literal(self, tp: object) -> Schema:
        values = [to_jsonable(v) for v in typing.get_args(tp)]
        schema: Schema = {"const": values[0]} if len(values) == 1 else {"enum": values}
        return _with_uniform_type(schema, values)

    def _list(self, tp: object) -> Schema:
        (item,) = typing.get_args(tp) or (Any,)
        return {"type": "array", "items": self.schema(item)}

    def _set(self, tp: object) -> Schema:
        return {**self._list(tp), "uniqueItems": True}

    def _tuple(self, tp: object) -> Schema:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.schema(args[0])}
        if args == ((),):  # tuple[()] is the empty tuple
            args = ()
        prefix = [self.schema(a) for a in args]
        return {"type": "array", "prefixItems": prefix, "items": False, "minItems": len(prefix)}

    def _dict(self, tp: object) -> Schema:
        args = typing.get_args(tp)
        if not args:
            return {"type": "object"}
        key, value = args
        schema: Schema = {"type": "object", "additionalProperties": self.schema(value)}
        if key is int:  # JSON object keys are strings: an int key travels as its decimal digits
            schema["propertyNames"] = {"pattern": INT_KEY}
        elif not (isinstance(key, type) and issubclass(key, str)):
            raise UnsupportedType(tp)
        return schema

    def _required_marker(self, tp: object) -> Schema:
        (inner,) = typing.get_args(tp)
        return self.schema(inner)

    # -- classes -----------------------------------------------------------------------------------------
    def _enum(self, tp: type[enum.Enum]) -> Schema:
        values = [to_jsonable(member.value) for member in tp]
        return _with_uniform_type({"title": tp.__name__, "enum": values}, values)

    def _namedtuple(self, tp: type[Any]) -> Schema:
        return self._named(tp, self._namedtuple_body)

    def _namedtuple_body(self, tp: type[Any]) -> Schema:
        """An array, as a tuple travels (and as pydantic writes it); each position titled with its field."""
        hints = typing.get_type_hints(tp, include_extras=True)
        prefix = [{**self.schema(hints.get(name, Any)), "title": name} for name in tp._fields]
        defaults: dict[str, Any] = getattr(tp, "_field_defaults", {})
        schema: Schema = {"type": "array", "title": tp.__name__, "prefixItems": prefix, "items": False}
        schema["minItems"] = len(prefix) - len(defaults)
        schema["maxItems"] = len(prefix)
        doc = _class_doc(tp)
        if doc:
            schema["description"] = doc
        return schema

    def _path(self, tp: object) -> Schema:
        return {"type": "string", "format": "path"}

    def _dataclass(self, tp: type[Any]) -> Schema:
        return self._named(tp, self._dataclass_body)

    def _typeddict(self, tp: type[Any]) -> Schema:
        return self._named(tp, self._typeddict_body)

    def _pydantic(self, tp: type[Any]) -> Schema:
        return self._named(tp, self._pydantic_body)

    def _named(self, tp: type[Any], body: Callable[[type[Any]], Schema]) -> Schema:
        """Put ``tp`` in ``$defs`` once (registering the name first so recursive types terminate)."""
        name = self._names.get(tp)
        if name is None:
            name = self._unique_name(tp.__name__)
            self._names[tp] = name
            self.defs[name] = {}
            self.defs[name] = body(tp)
        return {"$ref": f"#/$defs/{name}"}

    def _unique_name(self, base: str) -> str:
        name, n = base, 2
        while name in self.defs:  # two different classes called the same in different modules
            name, n = f"{base}{n}", n + 1
        return name

    def _dataclass_body(self, tp: type[Any]) -> Schema:
        hints = typing.get_type_hints(tp, include_extras=True)
        properties: Schema = {}
        required: list[str] = []
        for field in dataclasses.fields(tp):
            if not field.init:
                continue
            prop = self.schema(hints[field.name])
            default = _field_default(field)
            if default is dataclasses.MISSING:
                required.append(field.name)
            elif not is_missing(json_default(default)):
                prop["default"] = json_default(default)
            properties[field.name] = prop
        return _object(tp, properties, required, closed=True)

    def _typeddict_body(self, tp: type[Any]) -> Schema:
        hints = typing.get_type_hints(tp, include_extras=True)
        properties = {key: self.schema(hint) for key, hint in hints.items()}
        required = [key for key, hint in hints.items() if _is_required_key(tp, key, hint)]
        return _object(tp, properties, required, closed=False)

    def _pydantic_body(self, tp: type[Any]) -> Schema:
        schema: Schema = dict(tp.model_json_schema())
        renames = {
            name: self._hoist(name, definition) for name, definition in schema.pop("$defs", {}).items()
        }
        rewritten: Schema = _rewrite_refs(schema, renames)
        return rewritten

    def _hoist(self, name: str, definition: Schema) -> str:
        """Move one of pydantic's own ``$defs`` to our root, renaming it only if the name is taken."""
        if self.defs.get(name) == definition:
            return name
        new_name = self._unique_name(name)
        self.defs[new_name] = definition
        return new_name


def _is_required_key(tp: type[Any], key: str, hint: object) -> bool:
    # __required_keys__ misses Required/NotRequired written as strings (``from __future__ import
    # annotations``) before Python 3.14, so an explicit marker in the evaluated hint decides first
    marker: object = getattr(typing.get_origin(hint), "_name", None)
    if marker in ("Required", "NotRequired"):
        return marker == "Required"
    required_keys: frozenset[str] = getattr(tp, "__required_keys__", frozenset([key]))
    return key in required_keys


def _field_default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def _object(tp: type[Any], properties: Schema, required: list[str], *, closed: bool) -> Schema:
    schema: Schema = {"type": "object", "title": tp.__name__, "properties": properties}
    doc = _class_doc(tp)
    if doc:
        schema["description"] = doc
    if required:
        schema["required"] = required
    if closed:  # a dataclass constructor rejects unknown keywords, so the schema must too
        schema["additionalProperties"] = False
    return schema


def _class_doc(tp: type[Any]) -> str:
    doc = (tp.__doc__ or "").strip()
    # dataclasses and TypedDicts get a generated docstring (the signature); that is noise, not a description
    generated = doc.startswith(f"{tp.__name__}(") or doc in {dict.__doc__, "", None}
    return "" if generated else doc


def _rewrite_refs(node: Any, renames: dict[str, str]) -> Any:
    if isinstance(node, dict):
        out = {k: _rewrite_refs(v, renames) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            out["$ref"] = f"#/$defs/{renames.get(name, name)}"
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, renames) for v in node]
    return node


def _hashable(tp: object) -> bool:
    try:
        hash(tp)
    except TypeError:
        return False
    return True


def _is_class(kind: type) -> Callable[[object], bool]:
    return lambda tp: isinstance(tp, type) and issubclass(tp, kind)


_ORIGIN_HANDLERS: dict[object, Callable[[SchemaBuilder, object], Schema]] = {
    typing.Annotated: SchemaBuilder._annotated,
    typing.Union: SchemaBuilder._union,
    types.UnionType: SchemaBuilder._union,
    typing.Literal: SchemaBuilder._literal,
    list: SchemaBuilder._list,
    Sequence: SchemaBuilder._list,
    set: SchemaBuilder._set,
    frozenset: SchemaBuilder._set,
    AbstractSet: SchemaBuilder._set,
    tuple: SchemaBuilder._tuple,
    dict: SchemaBuilder._dict,
    Mapping: SchemaBuilder._dict,
}


def _origin_handler(origin: object) -> Callable[[SchemaBuilder, object], Schema] | None:
    handler = _ORIGIN_HANDLERS.get(origin)
    if handler is None and origin in required_markers():
        return SchemaBuilder._required_marker
    if handler is None:  # numpy.typing.NDArray[np.float64] and other generic aliases of library types
        return _adapted_alias
    return handler


def _adapted_alias(builder: SchemaBuilder, tp: object) -> Schema:
    adapted = adapter_schema(builder, tp)
    if adapted is None:
        raise UnsupportedType(tp)
    return adapted


def required_markers() -> set[object]:
    """``Required``/``NotRequired`` from typing (3.11+) and from typing_extensions if someone imported it."""
    sources = (typing, sys.modules.get("typing_extensions"))
    return {
        getattr(m, n) for m in sources if m is not None for n in ("Required", "NotRequired") if hasattr(m, n)
    }


def is_namedtuple(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, tuple) and isinstance(getattr(tp, "_fields", None), tuple)


def is_typeddict(tp: object) -> bool:
    # duck-typed so typing_extensions.TypedDict (what 3.10 users need for Required) counts too
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


_CLASS_HANDLERS: tuple[tuple[Callable[[object], bool], Callable[[SchemaBuilder, Any], Schema]], ...] = (
    (_is_class(enum.Enum), SchemaBuilder._enum),
    (_is_class(PurePath), SchemaBuilder._path),
    (lambda tp: is_namedtuple(tp), SchemaBuilder._namedtuple),
    (is_typeddict, SchemaBuilder._typeddict),
    (lambda tp: isinstance(tp, type) and dataclasses.is_dataclass(tp), SchemaBuilder._dataclass),
    (is_pydantic_model_class, SchemaBuilder._pydantic),
    (
        lambda tp: hasattr(tp, "__supertype__"),
        lambda builder, tp: builder.schema(tp.__supertype__),
    ),  # NewType
    (_is_class(str), lambda builder, tp: {"type": "string"}),
)
