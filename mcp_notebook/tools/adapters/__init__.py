"""The analyst's objects at the tool boundary (DESIGN decision 15): pandas, numpy, matplotlib, PIL and
IPython display objects, as schemas, JSON values, Python values and content blocks.

Consulted only after the built-in kinds did not match, and only for types whose defining module belongs to
one of those libraries. Nothing here imports a library: an object (or annotation) of a library's type
exists only if the user imported it, and the adapters then take the module from ``sys.modules``. The
adapter modules themselves (ours, light) load on first use, so ``import mcp_notebook`` pays nothing.

Each adapter module may define (all optional): ``to_jsonable(value)``, ``schema(builder, tp)``,
``annotated_schema(builder, base, metadata)``, ``from_json(tp, value, metadata)``, ``content_block(value)``,
``is_content_type(tp)`` and ``table_text(value)``; a function that does not handle its argument returns
``NOT_MINE`` (or ``None`` where ``None`` is never a real answer).
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = [
    "NOT_MINE",
    "annotated_schema",
    "content_block",
    "from_json",
    "is_content_type",
    "schema",
    "table_text",
    "to_jsonable",
]

NOT_MINE: Any = type("NotMine", (), {"__repr__": lambda self: "NOT_MINE"})()

# top-level package of a type's module -> our adapter module for it
_ADAPTERS = {
    "numpy": "._numpy",
    "pandas": "._pandas",
    "matplotlib": "._media",
    "PIL": "._media",
    "IPython": "._media",
}


def _adapter_for_class(cls: type) -> ModuleType | None:
    if cls.__module__ == "builtins":
        return None
    for klass in cls.__mro__:
        name = _ADAPTERS.get(klass.__module__.partition(".")[0])
        if name is not None:
            return importlib.import_module(name, __name__)
    return None


def _adapter_for_annotation(tp: object) -> ModuleType | None:
    if not isinstance(tp, type):
        tp = typing.get_origin(tp)  # numpy.typing.NDArray[...] is a generic alias of numpy.ndarray
    return _adapter_for_class(tp) if isinstance(tp, type) else None


def _call(adapter: ModuleType | None, function: str, *args: Any) -> Any:
    handler = getattr(adapter, function, None) if adapter is not None else None
    return NOT_MINE if handler is None else handler(*args)


def to_jsonable(value: Any) -> Any:
    return _call(_adapter_for_class(type(value)), "to_jsonable", value)


def schema(builder: Any, tp: object) -> dict[str, Any] | None:
    result = _call(_adapter_for_annotation(tp), "schema", builder, tp)
    return None if result is NOT_MINE else result


def annotated_schema(builder: Any, base: object, metadata: Sequence[object]) -> dict[str, Any] | None:
    """``Annotated[pd.DataFrame, Row]`` and friends: metadata that is a column spec, not keywords."""
    result = _call(_adapter_for_annotation(base), "annotated_schema", builder, base, metadata)
    return None if result is NOT_MINE else result


def from_json(tp: object, value: Any, metadata: Sequence[object] = ()) -> Any:
    return _call(_adapter_for_annotation(tp), "from_json", tp, value, metadata)


def content_block(value: Any) -> dict[str, Any] | None:
    """The content block a figure, image or display object stands for, or None."""
    result = _call(_adapter_for_class(type(value)), "content_block", value)
    return None if result is NOT_MINE else result


def is_content_type(tp: object) -> bool:
    """Return annotations that make content blocks (a Figure, a PIL image...), so no outputSchema."""
    return _call(_adapter_for_annotation(tp), "is_content_type", tp) is True


def table_text(value: Any) -> str | None:
    """A DataFrame/Series as a plain-text table for the text content of a result, or None."""
    result = _call(_adapter_for_class(type(value)), "table_text", value)
    return None if result is NOT_MINE else result
