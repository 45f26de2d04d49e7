"""Content blocks a tool can return, and the conversion of any return value into a ``CallToolResult``.

Wire shapes follow MCP 2025-11-25 ``ContentBlock`` and ``CallToolResult`` (spec notes §5.4, §5.5). A
structured value goes into ``structuredContent`` and, for clients that predate it, also into a text block
holding its JSON (§5.4: "SHOULD also return the serialized JSON in a TextContent block").
"""

from __future__ import annotations

import base64
import dataclasses
import json
import mimetypes
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from ._jsonable import NotJSONable, finite, has_non_finite, to_jsonable
from .adapters import content_block as adapter_content_block
from .adapters import is_content_type as adapter_is_content_type
from .adapters import table_text as adapter_table_text
from .annotations import check_annotations, check_icons

__all__ = [
    "Audio",
    "EmbeddedResource",
    "Image",
    "ResourceLink",
    "ToolError",
    "ToolResult",
    "to_call_result",
    "to_jsonable",
]

Wire = dict[str, Any]

_IMAGE_MAGIC: tuple[tuple[Callable[[bytes], bool], str], ...] = (
    (lambda b: b.startswith(b"\x89PNG\r\n\x1a\n"), "image/png"),
    (lambda b: b.startswith(b"\xff\xd8\xff"), "image/jpeg"),
    (lambda b: b[:6] in (b"GIF87a", b"GIF89a"), "image/gif"),
    (lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP", "image/webp"),
)
_AUDIO_MAGIC: tuple[tuple[Callable[[bytes], bool], str], ...] = (
    (lambda b: b[:4] == b"RIFF" and b[8:12] == b"WAVE", "audio/wav"),
    # an ID3 tag, or a bare MPEG audio frame (11 sync bits set)
    (lambda b: b.startswith(b"ID3") or (len(b) > 1 and b[0] == 0xFF and b[1] & 0xE0 == 0xE0), "audio/mpeg"),
    (lambda b: b.startswith(b"OggS"), "audio/ogg"),
    (lambda b: b.startswith(b"fLaC"), "audio/flac"),
)


def sniff(data: bytes, table: tuple[tuple[Callable[[bytes], bool], str], ...]) -> str | None:
    return next((mime for matches, mime in table if matches(data)), None)


def _is_image_bytes(value: Any) -> bool:
    return isinstance(value, (bytes, bytearray)) and sniff(bytes(value), _IMAGE_MAGIC) is not None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _extras(block: Wire, annotations: dict[str, Any] | None, meta: dict[str, Any] | None) -> Wire:
    check_annotations(annotations)
    if annotations is not None:
        block["annotations"] = annotations
    if meta is not None:
        block["_meta"] = meta
    return block


def _load_binary(
    kind: str, data: bytes | None, path: str | Path | None, mime_type: str | None, table: Any
) -> tuple[bytes, str]:
    """Read ``path`` if given, then settle the MIME type: explicit, sniffed, from the file name, or fail."""
    if (data is None) == (path is None):
        raise ValueError(f"{kind}: give exactly one of data= or path=")
    if path is not None:
        data = Path(path).read_bytes()
    assert data is not None
    mime = mime_type or sniff(data, table) or (mimetypes.guess_type(str(path))[0] if path else None)
    if mime is None:
        raise ValueError(f"{kind}: cannot tell the format from the data; pass mime_type=")
    return data, mime


@dataclasses.dataclass
class _Media:
    """Binary content (image, audio): bytes or a file; the MIME type is sniffed unless given."""

    _KIND: ClassVar[str]
    _MAGIC: ClassVar[tuple[tuple[Callable[[bytes], bool], str], ...]]

    data: bytes | None = None
    _: dataclasses.KW_ONLY
    path: str | Path | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        kind = type(self).__name__
        self.data, self.mime_type = _load_binary(kind, self.data, self.path, self.mime_type, self._MAGIC)

    def to_wire(self) -> Wire:
        block = {"type": self._KIND, "data": _b64(self.data or b""), "mimeType": self.mime_type}
        return _extras(block, self.annotations, self.meta)


class Image(_Media):
    """An image content block; the MIME type is sniffed (png, jpeg, gif, webp) unless given."""

    _KIND = "image"
    _MAGIC = _IMAGE_MAGIC


class Audio(_Media):
    """An audio content block; the MIME type is sniffed (wav, mp3, ogg, flac) unless given."""

    _KIND = "audio"
    _MAGIC = _AUDIO_MAGIC


@dataclasses.dataclass
class ResourceLink:
    """A link to a resource the client may read (``resource_link``); not necessarily in resources/list."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None

    def to_wire(self) -> Wire:
        check_icons(self.icons)
        block: Wire = {"type": "resource_link", "uri": self.uri, "name": self.name}
        optional: Wire = {"title": self.title, "description": self.description}
        optional |= {"mimeType": self.mime_type, "size": self.size, "icons": self.icons}
        block.update({k: v for k, v in optional.items() if v is not None})
        return _extras(block, self.annotations, self.meta)


@dataclasses.dataclass
class EmbeddedResource:
    """A resource's contents inline (``resource``): ``text`` or binary ``blob``, exactly one."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("EmbeddedResource: give exactly one of text= or blob=")

    def to_wire(self) -> Wire:
        contents: Wire = {"uri": self.uri}
        if self.mime_type is not None:
            contents["mimeType"] = self.mime_type
        if self.text is not None:
            contents["text"] = self.text
        else:
            contents["blob"] = _b64(self.blob or b"")
        # schema.ts puts annotations on EmbeddedResource, not inside the contents (spec notes §5.5)
        return _extras({"type": "resource", "resource": contents}, self.annotations, self.meta)


ContentObject = Image | Audio | ResourceLink | EmbeddedResource
_CONTENT_CLASSES = (Image, Audio, ResourceLink, EmbeddedResource)


@dataclasses.dataclass
class ToolResult:
    """Full control over the result: blocks (content objects, str or wire dicts), structured data, error."""

    content: list[Any] = dataclasses.field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None

    def to_wire(self) -> Wire:
        result: Wire = {"content": [_block(item) for item in self.content]}
        if self.structured is not None:
            structured = finite(to_jsonable(self.structured))
            # one shape in every era, as for a function returning a list: 2025-11-25 requires an object
            # (issue 20: an array went bare to 2026-07-28 sessions and wrapped to older ones)
            result["structuredContent"] = (
                structured if isinstance(structured, dict) else {"result": structured}
            )
        if self.is_error:
            result["isError"] = True
        if self.meta is not None:
            result["_meta"] = self.meta
        return result


class ToolError(Exception):
    """Raise inside a tool to report a failure to the caller: the result has ``isError`` and this message."""


def text_block(text: str) -> Wire:
    return {"type": "text", "text": text}


def _block(item: Any) -> Wire:
    if isinstance(item, str):
        return text_block(item)
    if isinstance(item, dict):  # already a wire block
        return item
    converted = _single_block(item)
    if converted is None:
        raise TypeError(f"cannot turn a {type(item).__name__} into a content block")
    return converted


_SINGLE_BLOCKS: tuple[tuple[Callable[[Any], bool], Callable[[Any], Wire]], ...] = (
    (lambda v: isinstance(v, _CONTENT_CLASSES), lambda v: v.to_wire()),
    (lambda v: isinstance(v, str), text_block),
    # bytes are an image only when they look like one; other bytes are structured base64 (README "Types
    # across the boundary")
    (_is_image_bytes, lambda v: Image(bytes(v)).to_wire()),
)


def _single_block(value: Any) -> Wire | None:
    """The one content block ``value`` stands for, or None if it is not content. Figures, PIL images and
    IPython display objects come from the adapters (tools/adapters/_media.py)."""
    block = next((convert(value) for matches, convert in _SINGLE_BLOCKS if matches(value)), None)
    return block if block is not None else adapter_content_block(value)


def _is_block_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_single_block_kind(v) for v in value)


def _single_block_kind(value: Any) -> bool:
    return any(matches(value) for matches, _ in _SINGLE_BLOCKS) or adapter_is_content_type(type(value))


def _structured(value: Any, wrap: bool) -> Wire:
    """structuredContent plus its text copy (README "NaN and Infinity"): non-finite numbers are ``null`` in
    the structured value and spelled out (``NaN``, ``Infinity``, ``-Infinity``) in the text; a DataFrame's
    text is its table. A value JSON cannot hold at all is a tool error naming where it sits."""
    try:
        data = to_jsonable(value)
    except NotJSONable as exc:
        whole = isinstance(value, dict) or dataclasses.is_dataclass(value)  # structured as it is, unwrapped
        where = exc.where("" if whole and not wrap else "result")
        message = f"The result cannot be sent as JSON: the value at {where!r} is of type {exc.kind}"
        raise ToolError(message) from exc
    if wrap or not isinstance(data, dict):
        data = {"result": data}
    # The text copy is the serialized structuredContent (server/tools#structured-content: "SHOULD also
    # return the serialized JSON in a TextContent block"), the wrapper included; a table's is the table.
    table = adapter_table_text(value) if type(value).__module__ != "builtins" else None
    text = table if table is not None else json.dumps(data, ensure_ascii=False)
    if table is not None or has_non_finite(text):
        data = finite(data)
    # bytes that sniff as an image are shown as one; the structured copy stays the base64 string
    block = Image(bytes(value)).to_wire() if _is_image_bytes(value) else text_block(text)
    return {"content": [block], "structuredContent": data}


def to_call_result(value: Any, *, output_schema: dict[str, Any] | None, wrapped: bool) -> dict[str, Any]:
    """Turn a tool's return value into a ``CallToolResult`` wire dict.

    With a declared output (``output_schema`` set), every non-content value is structured so that it can
    be checked against the schema; without one, strings, bytes and images become plain content blocks.
    """
    if type(value) is str and output_schema is None:  # the commonest result, straight to its block
        return {"content": [text_block(value)]}
    if isinstance(value, ToolResult):
        return value.to_wire()
    single = _single_block(value) if not _wants_structure(value, output_schema, wrapped) else None
    if single is not None:
        return {"content": [single]}
    if value is None and not wrapped:
        return {"content": []}
    if _is_block_list(value) and output_schema is None:
        return {"content": [_block(v) for v in value]}
    return _structured(value, wrapped)


def _wants_structure(value: Any, output_schema: dict[str, Any] | None, wrapped: bool) -> bool:
    # content objects are always content; plain str/bytes become structured only under a declared schema
    return output_schema is not None and wrapped and not isinstance(value, _CONTENT_CLASSES)
