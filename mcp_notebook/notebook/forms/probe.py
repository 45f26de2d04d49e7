"""The value a field shows when it is first built, computed from its schema without building it.

A large form's unopened page (``containers.Page``) answers ``get()`` for its fields with these values, so a
form of thousands of properties creates widgets only for what the person opens (issue 21 round 5). Each
value comes from the builders' own readers and writers (``fields``) applied to a stand-in control, as
``first_value`` makes a widget's first value; a kind without a stand-in (unions, multi-selects, tables,
objects with a default of their own, lists of those) answers ``NO_PROBE``: that field is built when its value
is needed.
"""

from __future__ import annotations

import enum
import json
from typing import Any

from .fields import (
    EMPTY,
    SCALAR_IO,
    Kit,
    Spec,
    _choice_reader,
    _Holder,
    choice_first,
    enum_choices,
    first_value,
)
from .schema import prepare, split_nullable


class _NoProbe(enum.Enum):
    NO_PROBE = "NO_PROBE"


#: ``probe``'s answer for a field whose first value needs the field itself.
NO_PROBE = _NoProbe.NO_PROBE
#: Kinds built lazily (a ``LazyField``: the default, held as data) in a large form when optional.
LAZY_KINDS = frozenset({"object", "array", "map"})


def probe(kit: Kit, spec: Spec) -> Any:
    """What ``build(kit, spec).get()`` returns on a field just built, or ``NO_PROBE``."""
    schema, kind = spec.schema, spec.prepared.kind
    if kind in SCALAR_IO:
        read, write, empty = SCALAR_IO[kind]
        return read(_Holder(first_value(write, schema, empty)))
    if kind in ("enum", "titled_enum"):
        values, labels = enum_choices(spec)
        return _choice_reader(values)(choice_first(spec, values, labels))
    if kind == "const":
        return schema["const"]
    if kind == "null":
        return None
    if kind == "json":  # JsonField.set: the default as indented JSON text, parsed back by get
        return json.loads(json.dumps(schema["default"], indent=2)) if "default" in schema else EMPTY
    if kit.lazy and kind in LAZY_KINDS and not spec.bare and not spec.required:
        return schema.get("default", EMPTY)  # a LazyField holds its default as data
    if kind == "nullable":
        if spec.required and "default" in schema and schema["default"] is None:
            return None  # "send null" ticked
        inner = prepare(kit.root, split_nullable(schema), spec.prepared.refs)
        return probe(kit, Spec(inner, spec.label, spec.required, bare=True, wrapped=False))
    if kind == "object" and "default" not in schema:
        return _object(kit, spec)
    if kind == "array":
        return _array(kit, spec)
    return NO_PROBE


def _object(kit: Kit, spec: Spec) -> Any:
    """``ObjectField.get``: the properties not empty; an optional object of constants only is empty."""
    required = set(spec.schema.get("required", ()))
    out, meaningful = {}, False
    for name, sub in spec.schema["properties"].items():
        prepared = prepare(kit.root, sub, spec.prepared.refs)
        value = probe(kit, Spec(prepared, name, name in required))
        if value is NO_PROBE:
            return NO_PROBE
        if value is not EMPTY:
            out[name] = value
            meaningful = meaningful or prepared.kind not in ("const", "null")
    return out if meaningful or spec.required else EMPTY


def _array(kit: Kit, spec: Spec) -> Any:
    """``ArrayField.get``: its default's items as set, ``minItems`` empty ones after; a table is built."""
    from .table import table_columns

    schema = spec.schema
    if table_columns(kit.root, schema["items"], spec.prepared.refs) is not None:
        return NO_PROBE
    given = schema.get("default")
    values = list(given) if isinstance(given, list) else []
    values += [EMPTY] * (int(schema.get("minItems", 0)) - len(values))
    if not values:
        return [] if spec.required else EMPTY
    item = Spec(prepare(kit.root, schema["items"], spec.prepared.refs), "item", required=True, bare=True)
    out = []
    for value in values:
        shown = probe(kit, item) if value is EMPTY else _shown(item, value)
        if shown is NO_PROBE:
            return NO_PROBE
        out.append(None if shown is EMPTY else shown)
    return out


def _shown(spec: Spec, value: Any) -> Any:
    """A scalar field's ``get()`` after ``set(value)``: its writer decides the control's state alone."""
    if spec.prepared.kind not in SCALAR_IO:
        return NO_PROBE
    read, write, empty = SCALAR_IO[spec.prepared.kind]
    control = _Holder(empty)
    write(control, value)
    return read(control)
