"""A Python function's signature -> the tool's inputSchema and outputSchema.

Follows MCP 2025-11-25 "Tools" (spec notes §5.3): the inputSchema root is always ``type: object``; a
tool without parameters gets ``{"type": "object", "additionalProperties": false}``; the outputSchema root
must be an object, so other return types are wrapped as ``{"result": ...}``.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from collections.abc import Callable, Sequence
from typing import Any

from ._typeschema import SchemaBuilder, UnsupportedType, is_missing, json_default
from .adapters import annotated_schema as adapter_annotated_schema
from .adapters import is_content_type as adapter_is_content_type
from .context import Context
from .docstrings import parse_docstring

__all__ = ["Field", "input_schema_for", "output_schema_for", "resolve_hints"]

Schema = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Field:
    """Constraints and help for one parameter, used as ``Annotated[int, Field(ge=1, le=14)]``.

    Each attribute maps to the JSON Schema keyword of the same meaning (``ge`` -> ``minimum``,
    ``min_length`` -> ``minLength`` for strings or ``minItems`` for arrays, ...).
    """

    description: str | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    multiple_of: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    title: str | None = None
    examples: list[Any] | None = None
    format: str | None = None
    header: str | None = (
        None  # 2026-07-28 ``x-mcp-header``: HTTP clients mirror the value in Mcp-Param-{header}
    )


def resolve_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The function's annotations, evaluated; a string ``'Context'`` means ours even if not imported there."""
    globalns = getattr(fn, "__globals__", {})
    localns = {} if "Context" in globalns else {"Context": Context}
    try:
        return typing.get_type_hints(fn, localns=localns, include_extras=True)
    except Exception as exc:  # NameError, SyntaxError, TypeError from a bad forward reference
        raise TypeError(f"Cannot resolve the type annotations of {_fn_name(fn)}: {exc}") from exc


def input_schema_for(fn: Callable[..., Any]) -> tuple[dict[str, Any], str | None]:
    """Return ``(inputSchema, name of the Context parameter or None)`` for ``fn``."""
    hints = resolve_hints(fn)
    _, param_docs = parse_docstring(inspect.getdoc(fn))
    builder = SchemaBuilder()
    properties: Schema = {}
    required: list[str] = []
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        _reject_variadic(fn, param)
        hint = hints.get(param.name, Any)
        if _is_context(hint):
            context_param = param.name
            continue
        properties[param.name] = _param_schema(builder, fn, param, hint, param_docs.get(param.name))
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    return _root(properties, required, builder.defs), context_param


def _reject_variadic(fn: Callable[..., Any], param: inspect.Parameter) -> None:
    if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        star = "*" if param.kind is inspect.Parameter.VAR_POSITIONAL else "**"
        raise TypeError(
            f"{_fn_name(fn)} takes {star}{param.name}; a tool needs named parameters to describe "
            "in its inputSchema"
        )
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        raise TypeError(
            f"{_fn_name(fn)}: parameter {param.name!r} is positional-only; tools are called by name"
        )


def _explicit_description(hint: Any) -> bool:
    """``Annotated[T, "words"]`` or ``Annotated[T, Field(description=...)]``: the parameter's own words."""
    if typing.get_origin(hint) is not typing.Annotated:
        return False
    return any(
        isinstance(item, str)
        or (not isinstance(item, type) and isinstance(getattr(item, "description", None), str))
        for item in hint.__metadata__
    )


def _param_schema(
    builder: SchemaBuilder, fn: Callable[..., Any], param: inspect.Parameter, hint: Any, doc: str | None
) -> Schema:
    try:
        schema = builder.schema(hint)
    except UnsupportedType as exc:
        raise TypeError(f"{_fn_name(fn)}: parameter {param.name!r} has an {exc}") from exc
    # an explicit Annotated description wins over the docstring; the docstring wins over what a type says
    # of itself (a DataFrame's "Table rows: ..."), which replaced the parameter's own words (issue 19)
    if doc and ("description" not in schema or not _explicit_description(hint)):
        schema["description"] = doc
    if param.default is not inspect.Parameter.empty:
        default = json_default(param.default)
        if not is_missing(default):
            schema["default"] = default
    return schema


def _root(properties: Schema, required: list[str], defs: dict[str, Schema]) -> Schema:
    schema: Schema = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if defs:
        schema["$defs"] = defs
    return schema


def _is_context(hint: Any) -> bool:
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    return isinstance(hint, type) and issubclass(hint, Context)


def _fn_name(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__qualname__', repr(fn))}()"


# -- output ----------------------------------------------------------------------------------------------
def _content_classes() -> tuple[object, ...]:
    # imported here, not at the top: content.py sits above this module and is only needed for this check
    from .content import Audio, EmbeddedResource, Image, ResourceLink, ToolResult

    return (Image, Audio, ResourceLink, EmbeddedResource, ToolResult)


# bytes are not here: a bytes result is base64 under ``contentEncoding`` (an image block too when it is one)
_UNSTRUCTURED = (str, Any, None, type(None))


def output_schema_for(fn: Callable[..., Any]) -> tuple[dict[str, Any] | None, bool]:
    """Return ``(outputSchema or None, wrapped)``; non-object results are wrapped as ``{"result": ...}``."""
    hints = resolve_hints(fn)
    if "return" not in hints:
        return None, False
    hint = _strip_annotated(hints["return"])
    if _is_content_like(hint):
        return None, False
    builder = SchemaBuilder(output=True)
    try:
        schema = _adapted_annotated(builder, hints["return"]) or builder.schema(hint)
    except UnsupportedType as exc:
        raise TypeError(f"{_fn_name(fn)}: the return type has an {exc}") from exc
    schema = _inline_root_ref(schema, builder.defs)
    if schema.get("type") == "object":
        return _with_defs(schema, builder.defs), False
    wrapped: Schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return _with_defs(wrapped, builder.defs), True


def _adapted_annotated(builder: SchemaBuilder, hint: Any) -> Schema | None:
    """``-> Annotated[pd.DataFrame, Row]``: there the metadata is the column spec, so it is kept."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    base, *metadata = typing.get_args(hint)
    return adapter_annotated_schema(builder, base, metadata)


def _strip_annotated(hint: Any) -> Any:
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint


def _is_content_like(hint: Any) -> bool:
    """Return types that become content blocks, not structured data, so they get no outputSchema."""
    if typing.get_origin(hint) in (list, Sequence):  # list[Image]: several blocks; list[str] stays structured
        args = typing.get_args(hint)
        return bool(args) and _is_in(args[0], _content_classes())
    return _is_in(hint, _UNSTRUCTURED + _content_classes()) or adapter_is_content_type(hint)


def _is_in(hint: Any, kinds: tuple[object, ...]) -> bool:
    try:
        return hint in kinds
    except TypeError:  # unhashable exotic annotation
        return False


def _inline_root_ref(schema: Schema, defs: dict[str, Schema]) -> Schema:
    """A returned dataclass/model is a ``$ref``; the outputSchema root must itself say ``type: object``."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or set(schema) != {"$ref"}:
        return schema
    name = ref.removeprefix("#/$defs/")
    inlined = dict(defs[name])
    if ref not in json.dumps(defs):  # keep the definition only if something (recursion) still refers to it
        del defs[name]
    return inlined


def _with_defs(schema: Schema, defs: dict[str, Schema]) -> Schema:
    return {**schema, "$defs": defs} if defs else schema
