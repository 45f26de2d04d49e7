"""Form fields, part 2: the containers (object, array, map, union, nullable) and the ``BUILDERS`` table.

DESIGN decision 9 / STYLE rule 9: schema kind (``schema.classify``) -> one small builder. The
scalar fields and the field base classes are in ``fields``.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import ipywidgets as widgets

from .fields import (
    EMPTY,
    Field,
    Key,
    Kit,
    Spec,
    build_boolean,
    build_const,
    build_date,
    build_enum,
    build_json,
    build_multi_enum,
    build_null,
    build_number,
    build_string,
    build_textarea,
    with_default,
)
from .probe import LAZY_KINDS, NO_PROBE, probe
from .schema import Schema, branch_label, prepare, split_nullable, union_branches

__all__ = [
    "BUILDERS",
    "LAZY_AFTER",
    "PAGE",
    "ArrayField",
    "LazyField",
    "MapField",
    "NullableField",
    "ObjectField",
    "Page",
    "UnionField",
    "build",
    "build_root",
]


class ObjectField(Field):
    """A fieldset: one field per property, in schema order (nested objects framed).

    An object of more than ``PAGE`` properties (at any depth) builds the first ``PAGE``; the others wait
    in pages of ``PAGE``, each a button until opened (:class:`Page`)."""

    def __init__(self, kit: Kit, spec: Spec, root: bool = False) -> None:
        self.root = root
        required = set(spec.schema.get("required", ()))
        specs: dict[str, Spec] = {}
        for name, sub in spec.schema["properties"].items():
            label = sub.get("title") if isinstance(sub, Mapping) else None
            prepared = prepare(kit.root, sub, spec.prepared.refs)
            specs[name] = Spec(prepared, str(label or name), name in required)
        #: every property, in schema order
        self.names = list(specs)
        paged = len(specs) > PAGE
        #: the properties built so far (all but those of unopened pages)
        self.fields = {name: build(kit, specs[name]) for name in self.names[: PAGE if paged else None]}
        self.pages = [
            Page(kit, {n: specs[n] for n in self.names[at : at + PAGE]}, at, len(specs))
            for at in range(PAGE, len(specs) if paged else 0, PAGE)
        ]
        self._page_of = {name: page for page in self.pages for name in page.specs}
        parts = [part for f in self.fields.values() for part in f.parts]
        body = widgets.VBox(parts + [p.button for p in self.pages], layout=kit.plain if root else kit.boxed)
        for field in self.fields.values():
            if isinstance(field, LazyField):
                field.holder = body  # opening it swaps its button for the section, in this box
        for page in self.pages:
            page.owner, page.holder = self, body
        super().__init__(kit, spec, body)

    def field(self, name: str) -> Field:
        """The field of property ``name``, its page opened (built and shown) first."""
        if name in self._page_of:
            self._page_of[name].open()
        return self.fields[name]

    def reveal(self, name: Key) -> None:
        """Open the page holding property ``name``, if any (to show a message next to it)."""
        page = self._page_of.get(name) if isinstance(name, str) else None
        if page is not None:
            page.open()

    def _get(self, name: str) -> Any:
        if name in self.fields:
            return self.fields[name].get()
        return self._page_of[name].get(name)

    def _is_const(self, name: str) -> bool:
        if name in self.fields:
            return self.fields[name].is_const
        return self._page_of[name].specs[name].prepared.kind in ("const", "null")

    def get(self) -> Any:
        out = {name: self._get(name) for name in self.names}
        out = {name: v for name, v in out.items() if v is not EMPTY}
        meaningful = any(not self._is_const(name) for name in out)
        if not meaningful and not (self.spec.required or self.root):
            return EMPTY
        return out

    def set(self, value: Any) -> None:
        """Properties ``value`` names take its values; the others go back to their defaults (or empty)."""
        value = value if isinstance(value, Mapping) else {}
        self.update(value)
        for name, f in list(self.fields.items()):
            if name not in value:
                f.reset()  # an unbuilt field is as built: at its default

    def update(self, value: Mapping[str, Any]) -> None:
        """Properties ``value`` names take its values; the others keep theirs (unbuilt ones stay unbuilt)."""
        for name in self.names:
            if name in value:
                if name not in self.fields:
                    self._page_of[name].built(name)
                self.fields[name].set(value[name])

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(name, self.fields[name]) for name in self.names if name in self.fields]


class Page:
    """Properties ``at``.. of a long object: a button until opened, then their fields in its place.

    Until then its fields' values are their first values (``probe``), and a field is built alone, unseen,
    when its value cannot be probed or is set (``update``); opening places every field in schema order."""

    def __init__(self, kit: Kit, specs: dict[str, Spec], at: int, total: int) -> None:
        self.kit, self.specs = kit, specs
        self.owner: ObjectField | None = None
        self.holder: Any = None  # the object's box, where the fields replace the button
        self.opened = False
        self._first: dict[str, Any] = {}
        required = sum(1 for s in specs.values() if s.required)
        marks = f", {required} required" if required else ""
        names = list(specs)
        where = f"{at + 1:,}-{at + len(specs):,} of {total:,}: {names[0]} … {names[-1]}{marks}"
        self.button = kit.button(f"\N{BLACK RIGHT-POINTING SMALL TRIANGLE} Show fields {where}")
        self.button.on_click(lambda _b: self.open())

    def built(self, name: str) -> Field:
        """The field of ``name``, built now if it was not (and recorded in the object's fields)."""
        assert self.owner is not None
        fields = self.owner.fields
        if name not in fields:
            field = fields[name] = build(self.kit, self.specs[name])
            if isinstance(field, LazyField):
                field.holder = self.holder
        return fields[name]

    def get(self, name: str) -> Any:
        if name not in self._first:
            self._first[name] = probe(self.kit, self.specs[name])
        first = self._first[name]
        if first is NO_PROBE:
            return self.built(name).get()
        return copy.deepcopy(first) if isinstance(first, (list, dict)) else first  # the caller's own

    def open(self) -> None:
        """Build the page's fields (those not built yet) and show them in place of the button."""
        if self.opened:
            return
        self.opened = True
        parts = [part for name in self.specs for part in self.built(name).parts]
        self.holder.children = tuple(
            part for child in self.holder.children for part in (parts if child is self.button else [child])
        )


#: An object of more properties than this shows this many; the others wait in pages of as many.
PAGE = 100


class _Rows(Field):
    """Rows of item fields, each with a Remove button, and "+ Add" under them (arrays and maps)."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self._rows = widgets.VBox(layout=kit.plain)
        self._add = kit.button("+ Add")
        self._add.on_click(lambda _b: self.append(EMPTY))
        self._removers: list[Any] = []
        self._boxes: dict[int, Any] = {}  # row HBoxes by remover id: reused, not rebuilt, on refresh
        super().__init__(kit, spec, widgets.VBox([self._rows, self._add], layout=kit.plain))

    def append(self, value: Any) -> Field:
        """Add a row showing ``value`` (EMPTY: an empty row)."""
        field = self._add_item(value)
        self._refresh()
        return field

    @abc.abstractmethod
    def _add_item(self, value: Any) -> Field:
        """Make the field of a new row showing ``value``."""

    @abc.abstractmethod
    def _row(self, index: int) -> list[Any]:
        """The widgets of row ``index`` (its field and its Remove button)."""

    def _bounds(self) -> tuple[int, int | None]:
        return 0, None

    def _count(self) -> int:
        return len(self._removers)

    def _remover(self, item: Any) -> Any:
        remove = self.kit.button("\N{MINUS SIGN} Remove")
        remove.on_click(lambda _b: self.remove(item))
        self._removers.append(remove)
        return remove

    def remove(self, item: Any) -> None:
        """Remove the row of ``item``."""
        self._drop_item(item)
        self._refresh()

    @abc.abstractmethod
    def _drop_item(self, item: Any) -> None:
        """Forget the row of ``item``."""

    def _refresh(self) -> None:
        boxes = {}
        for i, remover in enumerate(self._removers):
            box = self._boxes.get(id(remover))
            if box is None:
                box = widgets.HBox([*self._row(i), remover], layout=self.kit.plain)
            boxes[id(remover)] = box
        self._boxes = boxes
        self._rows.children = list(boxes.values())
        low, high = self._bounds()
        self._add.disabled = high is not None and self._count() >= high
        for remover in self._removers:
            remover.disabled = self._count() <= low


class ArrayField(_Rows):
    """A list of item fields, respecting minItems/maxItems."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self.items: list[Field] = []
        self.min_items = int(spec.schema.get("minItems", 0))
        self.max_items = spec.schema.get("maxItems")
        super().__init__(kit, spec)
        self.set(EMPTY)

    def _add_item(self, value: Any) -> Field:
        prepared = prepare(self.kit.root, self.spec.schema["items"], self.spec.prepared.refs)
        item = build(self.kit, Spec(prepared, f"item {len(self.items) + 1}", required=True, bare=True))
        if value is not EMPTY:
            item.set(value)
        self._remover(item)
        self.items.append(item)
        return item

    def _bounds(self) -> tuple[int, int | None]:
        return self.min_items, self.max_items

    def _row(self, index: int) -> list[Any]:
        return self.items[index].parts

    def _drop_item(self, item: Any) -> None:
        index = self.items.index(item)
        del self.items[index], self._removers[index]

    def get(self) -> Any:
        if not self.items and not self.spec.required:
            return EMPTY
        values = [f.get() for f in self.items]
        return [None if v is EMPTY else v for v in values]  # kept in place so error paths line up

    def set(self, value: Any) -> None:
        self.items, self._removers = [], []
        values = list(value) if isinstance(value, list) else []
        values += [EMPTY] * (self.min_items - len(values))
        for item in values:
            self._add_item(item)
        self._refresh()

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(index, item) for index, item in enumerate(self.items)]


class MapField(_Rows):
    """``additionalProperties: {schema}`` (``dict[str, X]``): key/value rows, each value its own field
    (issue 11 item 14; it used to be a raw JSON box)."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self.keys: list[Any] = []
        self.values: list[Field] = []
        super().__init__(kit, spec)

    def _add_item(self, value: Any, key: str = "") -> Field:
        prepared = prepare(self.kit.root, self.spec.schema["additionalProperties"], self.spec.prepared.refs)
        field = build(self.kit, Spec(prepared, "value", required=True, bare=True))
        if value is not EMPTY:
            field.set(value)
        self.keys.append(widgets.Text(value=key, placeholder="key", layout=self.kit.auto))
        self._remover(field)
        self.values.append(field)
        return field

    def _row(self, index: int) -> list[Any]:
        return [self.keys[index], *self.values[index].parts]

    def _drop_item(self, item: Any) -> None:
        index = self.values.index(item)
        del self.keys[index], self.values[index], self._removers[index]

    def get(self) -> Any:
        if not self.values and not self.spec.required:
            return EMPTY
        out: dict[str, Any] = {}
        for key, field in zip(self.keys, self.values, strict=True):
            value = field.get()
            out[key.value] = None if value is EMPTY else value
        return out

    def set(self, value: Any) -> None:
        self.keys, self.values, self._removers = [], [], []
        for key, item in (value if isinstance(value, Mapping) else {}).items():
            self._add_item(item, str(key))
        self._refresh()

    def local_errors(self) -> list[str]:
        names = [k.value for k in self.keys]
        if any(not name for name in names):
            return ["every row needs a key"]
        twice = sorted({n for n in names if names.count(n) > 1})
        return [f"the key {twice[0]!r} is given twice"] if twice else []

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(key.value, field) for key, field in zip(self.keys, self.values, strict=True)]


class UnionField(Field):
    """``oneOf``/``anyOf``: a Dropdown choosing the branch, and that branch's field below it."""

    def __init__(self, kit: Kit, spec: Spec, branches: Sequence[Schema]) -> None:
        self.branches = [prepare(kit.root, b, spec.prepared.refs) for b in branches]
        self.raw = list(spec.schema.get("oneOf") or spec.schema.get("anyOf") or [])
        labels = [branch_label(p.schema, i) for i, p in enumerate(self.branches)]
        options = [(lab, i) for i, lab in enumerate(labels)]
        self.chooser = widgets.Dropdown(options=options, value=0, layout=kit.plain, style=kit.desc_style)
        self._slot = widgets.VBox(layout=kit.plain)
        super().__init__(kit, spec, widgets.VBox([self.chooser, self._slot], layout=kit.plain))
        self.current = self._build(0)
        self.chooser.observe(lambda change: self._switch(int(change["new"])), names="value")

    def _build(self, index: int) -> Field:
        # the branch is as required as the union: an optional union's number branch may stay unset
        field = build(self.kit, Spec(self.branches[index], self.spec.label, self.spec.required, bare=True))
        self._slot.children = tuple(field.parts)
        return field

    def _switch(self, index: int) -> None:
        self.current = self._build(index)

    def get(self) -> Any:
        return self.current.get()

    def set(self, value: Any) -> None:
        if value is EMPTY:
            self.current.set(EMPTY)
            return
        for index, branch in enumerate(self.branches):
            if self.kit.matches(branch.schema, value):
                self.chooser.value = index  # rebuilds the branch field through the observer
                break
        self.current.set(value)

    def children(self) -> list[tuple[Key | None, Field]]:
        return [(None, self.current)]

    def selected_raw(self) -> Any:
        """The schema's own ``oneOf``/``anyOf`` entry now chosen (to pick its validation errors)."""
        return self.raw[self.chooser.value] if len(self.raw) == len(self.branches) else None


class NullableField(Field):
    """``type: [X, "null"]`` / ``X | None``: the X field. A required one also gets a "send null"
    checkbox; an optional one left empty is simply omitted (so no checkbox labelled "null", item 8)."""

    def __init__(self, kit: Kit, spec: Spec, inner: Field) -> None:
        self.inner = inner
        inner.errors_to = self  # its messages show in this field's head (it has no box of its own)
        self.null: Any = None
        if spec.required:
            self.null = kit.checkbox("send null (no value)")
            self._holder = widgets.Box(inner.parts, layout=widgets.Layout())  # its own layout: hidden alone
            self.null.observe(lambda change: self._show_inner(not change["new"]), names="value")
            body = widgets.VBox([self.null, self._holder], layout=kit.plain)
        else:
            body = inner.parts[0] if len(inner.parts) == 1 else widgets.VBox(inner.parts, layout=kit.plain)
        super().__init__(kit, spec, body)

    def _show_inner(self, show: bool) -> None:
        self._holder.layout.display = None if show else "none"

    def _is_null(self) -> bool:
        return self.null is not None and bool(self.null.value)

    def get(self) -> Any:
        return None if self._is_null() else self.inner.get()

    def set(self, value: Any) -> None:
        if self.null is not None:
            self.null.value = value is None
        if value is not None:
            self.inner.set(value)
        else:
            self.inner.set(EMPTY)

    def children(self) -> list[tuple[Key | None, Field]]:
        return [] if self._is_null() else [(None, self.inner)]

    def selected_raw(self) -> Any:
        """The ``anyOf``/``oneOf`` entry now chosen: the null one, or the other."""
        branches = self.spec.schema.get("oneOf") or self.spec.schema.get("anyOf") or []
        chosen = [b for b in branches if _is_null_branch(b) == self._is_null()]
        if len(chosen) == 1:
            return chosen[0]
        return self.inner.selected_raw() if isinstance(self.inner, UnionField) else None


class LazyField(Field):
    """An optional nested object, array or map of a large form, built when first opened: until then it
    holds its value as data (its default, or what ``set`` gave). A 100-property form opens no comms for
    sections the person never looks at (issue 11: form build time in a live kernel)."""

    def __init__(self, kit: Kit, spec: Spec) -> None:
        self._value: Any = spec.schema.get("default", EMPTY)
        self.real: Field | None = None
        #: the box laid out with the button (the ObjectField's), where the real field replaces it; the
        #: button is the whole body (no box of its own: one comm fewer per section, issue 19)
        self.holder: Any = None
        self.open_button = kit.button(self._text(spec, self._value))  # labelled now: no update message
        self.open_button.on_click(lambda _b: self.open())
        super().__init__(kit, spec, self.open_button)

    @staticmethod
    def _text(spec: Spec, value: Any) -> str:
        kind = spec.prepared.kind
        if kind == "object":
            what = f"{len(spec.schema.get('properties') or {})} fields"
        else:
            what = "the list" if kind == "array" else "the entries"
        count = len(value) if isinstance(value, (list, dict)) else 0
        held = f" ({count} {'item' if count == 1 else 'items'})" if kind != "object" and count else ""
        return f"\N{BLACK RIGHT-POINTING SMALL TRIANGLE} Edit {what}{held}"

    def _label(self) -> None:
        self.open_button.description = self._text(self.spec, self._value)

    def open(self) -> Field:
        """Build the real field (once) in place of the button."""
        if self.real is None:
            self.real = BUILDERS[self.spec.prepared.kind](self.kit, replace(self.spec, bare=True))
            self.real.set(self._value)
            parts = list(self.real.parts)
            if self.holder is not None:
                self.holder.children = tuple(
                    part
                    for child in self.holder.children
                    for part in (parts if child is self.body else [child])
                )
            self.body = self.widget = (
                parts[0] if len(parts) == 1 else widgets.VBox(parts, layout=self.kit.plain)
            )
            self.parts = [self.head, self.body]
        return self.real

    def get(self) -> Any:
        return self.real.get() if self.real is not None else self._value

    def set(self, value: Any) -> None:
        if self.real is not None:
            self.real.set(value)
        else:
            self._value = value
            self._label()

    def children(self) -> list[tuple[Key | None, Field]]:
        return self.real.children() if self.real is not None else []

    def local_errors(self) -> list[str]:
        return self.real.local_errors() if self.real is not None else []


#: A form whose top level has more properties than this builds optional nested sections lazily.
LAZY_AFTER = 20


def _is_null_branch(branch: Any) -> bool:
    return isinstance(branch, Mapping) and branch.get("type") == "null"


# -- container builders ---------------------------------------------------------------------------


def build_object(kit: Kit, spec: Spec) -> Field:
    return with_default(ObjectField(kit, spec))


def build_array(kit: Kit, spec: Spec) -> Field:
    """Rows of flat objects (a DataFrame's records) are a grid (``table``); other arrays a list of rows."""
    from .table import build_table, table_columns

    columns = table_columns(kit.root, spec.schema["items"], spec.prepared.refs)
    if columns is not None:
        return build_table(kit, spec, columns)
    return with_default(ArrayField(kit, spec))


def build_map(kit: Kit, spec: Spec) -> Field:
    return with_default(MapField(kit, spec))


def build_union(kit: Kit, spec: Spec) -> Field:
    return with_default(UnionField(kit, spec, union_branches(spec.schema)))


def build_nullable(kit: Kit, spec: Spec) -> Field:
    inner_schema = split_nullable(spec.schema)
    prepared = prepare(kit.root, inner_schema, spec.prepared.refs)
    inner = build(kit, Spec(prepared, spec.label, spec.required, bare=True, wrapped=False))
    field = NullableField(kit, spec, inner)
    field.set(spec.schema.get("default", EMPTY))
    return field


Builder = Callable[[Kit, Spec], Field]

#: Schema kind (from ``schema.classify``) -> field builder.
BUILDERS: dict[str, Builder] = {
    "string": build_string,
    "textarea": build_textarea,
    "date": build_date,
    "integer": build_number,
    "number": build_number,
    "boolean": build_boolean,
    "null": build_null,
    "const": build_const,
    "enum": build_enum,
    "titled_enum": build_enum,
    "multi_enum": build_multi_enum,
    "object": build_object,
    "array": build_array,
    "map": build_map,
    "union": build_union,
    "nullable": build_nullable,
    "json": build_json,
}


def build(kit: Kit, spec: Spec) -> Field:
    """Build the field for ``spec`` through the dispatch table (lazily: see :class:`LazyField`)."""
    kind = spec.prepared.kind
    if kit.lazy and kind in LAZY_KINDS and not spec.bare and not spec.required:
        return with_default(LazyField(kit, spec))
    return BUILDERS[kind](kit, spec)


def build_root(kit: Kit, schema: Schema) -> Field:
    """The form's top field: a bare object (no header, no frame) when the schema is an object."""
    prepared = prepare(kit.root, schema)
    spec = Spec(prepared, str(schema.get("title", "")), required=True, bare=True)
    if prepared.kind == "object":
        kit.lazy = len(prepared.schema.get("properties") or {}) > LAZY_AFTER
        return with_default(ObjectField(kit, spec, root=True))
    return build(kit, replace(spec, bare=False))
