"""Content blocks, to_jsonable and to_call_result: every kind of return value."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import json
import struct
import uuid
import zlib
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any, TypedDict

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_notebook.tools import (
    Audio,
    EmbeddedResource,
    Image,
    ResourceLink,
    ToolError,
    ToolResult,
    to_call_result,
    to_jsonable,
)


def tiny_png() -> bytes:
    """A real 1x1 red PNG, built by hand so no imaging library is needed."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte + one red pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


PNG = tiny_png()
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 24


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- blocks ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a...", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
def test_image_sniffs_mime_type(data: bytes, mime: str) -> None:
    assert Image(data).to_wire() == {"type": "image", "data": b64(data), "mimeType": mime}


def test_image_unknown_format_needs_mime_type() -> None:
    with pytest.raises(ValueError, match="mime_type"):
        Image(b"not an image")
    assert Image(b"<svg/>", mime_type="image/svg+xml").to_wire()["mimeType"] == "image/svg+xml"


def test_image_from_path_with_annotations_and_meta(tmp_path: Path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(PNG)
    block = Image(path=path, annotations={"audience": ["user"]}, meta={"k": 1}).to_wire()
    assert block == {
        "type": "image",
        "data": b64(PNG),
        "mimeType": "image/png",
        "annotations": {"audience": ["user"]},
        "_meta": {"k": 1},
    }


def test_image_needs_exactly_one_source(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Image()
    with pytest.raises(ValueError, match="exactly one"):
        Image(PNG, path=tmp_path / "x.png")


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (WAV, "audio/wav"),
        (b"ID3\x04\x00rest", "audio/mpeg"),
        (b"\xff\xfb\x90\x00", "audio/mpeg"),
        (b"OggS\x00rest", "audio/ogg"),
        (b"fLaC\x00rest", "audio/flac"),
    ],
)
def test_audio_sniffs_mime_type(data: bytes, mime: str) -> None:
    assert Audio(data).to_wire() == {"type": "audio", "data": b64(data), "mimeType": mime}


def test_audio_unknown_format_needs_mime_type() -> None:
    with pytest.raises(ValueError, match="mime_type"):
        Audio(b"\x00\x01")


def test_resource_link_only_present_keys() -> None:
    assert ResourceLink("file:///a.txt", "a.txt").to_wire() == {
        "type": "resource_link",
        "uri": "file:///a.txt",
        "name": "a.txt",
    }
    full = ResourceLink(
        "file:///a.txt", "a.txt", "A", "The a file", "text/plain", 3, {"priority": 1}, {"m": 2}
    )
    assert full.to_wire() == {
        "type": "resource_link",
        "uri": "file:///a.txt",
        "name": "a.txt",
        "title": "A",
        "description": "The a file",
        "mimeType": "text/plain",
        "size": 3,
        "annotations": {"priority": 1},
        "_meta": {"m": 2},
    }


def test_embedded_resource_text_and_blob() -> None:
    text = EmbeddedResource("mem://a", text="hi", mime_type="text/plain", annotations={"priority": 0.5})
    assert text.to_wire() == {
        "type": "resource",
        "resource": {"uri": "mem://a", "mimeType": "text/plain", "text": "hi"},
        "annotations": {"priority": 0.5},
    }
    blob = EmbeddedResource("mem://b", blob=b"\x00\x01", meta={"x": 1})
    assert blob.to_wire() == {
        "type": "resource",
        "resource": {"uri": "mem://b", "blob": "AAE="},
        "_meta": {"x": 1},
    }
    with pytest.raises(ValueError, match="exactly one"):
        EmbeddedResource("mem://c")


def test_tool_result_wire() -> None:
    result = ToolResult(["hi", Image(PNG), {"type": "text", "text": "raw"}], {"a": 1}, True, {"t": 1})
    assert result.to_wire() == {
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
            {"type": "text", "text": "raw"},
        ],
        "structuredContent": {"a": 1},
        "isError": True,
        "_meta": {"t": 1},
    }
    assert ToolResult().to_wire() == {"content": []}


# -- to_jsonable -----------------------------------------------------------------------------------------
class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    when: dt.date


class Model(pydantic.BaseModel):
    at: dt.datetime
    tags: set[str]


def test_to_jsonable_kinds() -> None:
    ident = uuid.UUID(int=1)
    value = {
        "enum": Color.RED,
        "dt": dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
        "date": dt.date(2025, 1, 2),
        "time": dt.time(3, 4),
        "uuid": ident,
        "path": PurePosixPath("/tmp/x"),
        "tuple": (1, 2),
        "set": {3, 1, 2},
        "dataclass": Point(1, dt.date(2025, 1, 1)),
        "model": Model(at=dt.datetime(2025, 1, 1), tags={"a"}),
        "decimal": Decimal("1.5"),
        "bytes": b"\x00",
        1: "int key",
    }
    assert to_jsonable(value) == {
        "enum": "red",
        "dt": "2025-01-02T03:04:05+00:00",
        "date": "2025-01-02",
        "time": "03:04:00",
        "uuid": str(ident),
        "path": "/tmp/x",
        "tuple": [1, 2],
        "set": [1, 2, 3],
        "dataclass": {"x": 1, "when": "2025-01-01"},
        "model": {"at": "2025-01-01T00:00:00", "tags": ["a"]},
        "decimal": 1.5,
        "bytes": "AA==",
        "1": "int key",
    }


def test_to_jsonable_rejects_unknown_objects() -> None:
    with pytest.raises(TypeError, match="object"):
        to_jsonable(object())


# -- to_call_result --------------------------------------------------------------------------------------
def call_result(value: Any, schema: dict[str, Any] | None = None, wrapped: bool = False) -> dict[str, Any]:
    return to_call_result(value, output_schema=schema, wrapped=wrapped)


def test_str_none_bytes_and_content_objects() -> None:
    assert call_result("hi") == {"content": [{"type": "text", "text": "hi"}]}
    assert call_result(None) == {"content": []}
    assert call_result(PNG) == {"content": [{"type": "image", "data": b64(PNG), "mimeType": "image/png"}]}
    link = ResourceLink("file:///a", "a")
    assert call_result(link) == {"content": [link.to_wire()]}
    assert call_result(Audio(WAV))["content"][0]["mimeType"] == "audio/wav"


def test_list_of_content_becomes_several_blocks() -> None:
    result = call_result(["a", Image(PNG), EmbeddedResource("mem://x", text="t")])
    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert "structuredContent" not in result


def test_tool_result_is_passed_through() -> None:
    assert call_result(ToolResult(["x"], is_error=True)) == {
        "content": [{"type": "text", "text": "x"}],
        "isError": True,
    }


@dataclasses.dataclass
class Forecast:
    city: str
    temps: list[float]


class Row(TypedDict):
    name: str


@pytest.mark.parametrize(
    ("value", "structured", "text"),
    [
        ({"a": 1, "é": "ü"}, {"a": 1, "é": "ü"}, '{"a": 1, "é": "ü"}'),
        (Forecast("Paris", [1.5]), {"city": "Paris", "temps": [1.5]}, '{"city": "Paris", "temps": [1.5]}'),
        (Row(name="x"), {"name": "x"}, '{"name": "x"}'),
        (Model(at=dt.datetime(2025, 1, 1), tags=set()), {"at": "2025-01-01T00:00:00", "tags": []}, None),
        # issue 10 audit 6: the text copy is the serialized structuredContent, the wrapper included
        ([1, 2], {"result": [1, 2]}, '{"result": [1, 2]}'),
        (3, {"result": 3}, '{"result": 3}'),
        (2.5, {"result": 2.5}, '{"result": 2.5}'),
        (True, {"result": True}, '{"result": true}'),
        (Color.RED, {"result": "red"}, '{"result": "red"}'),
        (dt.date(2025, 1, 2), {"result": "2025-01-02"}, '{"result": "2025-01-02"}'),
    ],
)
def test_structured_values(value: Any, structured: Any, text: str | None) -> None:
    result = call_result(value)
    assert result["structuredContent"] == structured
    assert len(result["content"]) == 1
    assert result["content"][0]["type"] == "text"
    if text is not None:
        assert result["content"][0]["text"] == text


def test_wrapped_values_under_declared_schema() -> None:
    schema = {"type": "object", "properties": {"result": {}}, "required": ["result"]}
    assert call_result({"a": 1}, schema, wrapped=True)["structuredContent"] == {"result": {"a": 1}}
    assert call_result("hi", schema, wrapped=True) == {
        "content": [{"type": "text", "text": '{"result": "hi"}'}],
        "structuredContent": {"result": "hi"},
    }
    assert call_result(None, schema, wrapped=True)["structuredContent"] == {"result": None}


def test_unserializable_value_is_a_tool_error_naming_where_it_sits() -> None:
    """Issue 9: a value JSON cannot represent is an isError result (ToolError) naming its JSON path."""
    with pytest.raises(ToolError, match="at 'result' is of type object"):
        call_result(object())
    with pytest.raises(ToolError, match=r"at 'rows\[1\]\.z' is of type complex"):
        call_result({"rows": [{"z": 1}, {"z": 1j}]})


# PIL images and matplotlib figures: tests/tools/test_tools_analysis.py, with the real libraries


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_text_block_parses_back_to_structured_content(value: Any) -> None:
    result = call_result(value)
    is_text_list = isinstance(value, list) and value and all(isinstance(v, str) for v in value)
    if value is None or isinstance(value, str) or is_text_list:
        return  # plain content blocks by design, not structured
    structured = result["structuredContent"]
    parsed = json.loads(result["content"][0]["text"])
    assert parsed == structured  # the text copy is the serialized structuredContent (audit 6)
