"""Static rendering of MCP results (DESIGN.md decision 10; content blocks per MCP-NOTES §5.5).

Remote content is untrusted, so most tests parse the HTML and check which elements and attributes really
exist, rather than searching for substrings that escaping might hide or fake.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import wave
import zlib
from typing import Any

import pytest

from mcp_notebook.notebook.rendering.results import (
    ResultView,
    content_html,
    content_text,
    prompt_bundle,
    resource_contents_bundle,
    result_bundle,
)
from tests.notebook._html import Elements

# ------------------------------------------------------------------------------------------ helpers


def tiny_png() -> bytes:
    """A real 1x1 red PNG, built by hand."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then one red pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def tiny_wav() -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(b"\x80" * 80)
    return buf.getvalue()


PNG = tiny_png()
PNG_B64 = base64.b64encode(PNG).decode()


def block_html(block: dict[str, Any], **kw: int) -> Elements:
    return Elements(
        content_html(block, max_text=kw.get("max_text", 20_000), max_image_bytes=kw.get("cap", 2_000_000))
    )


def assert_no_active_content(markup: str) -> None:
    """Nothing a hostile server sent became a script, an event handler or a non-http link."""
    parsed = Elements(markup)
    tags = {t for t, _ in parsed.tags}
    assert "script" not in tags and "iframe" not in tags and "object" not in tags
    for _, attrs in parsed.tags:
        assert not any(name.startswith("on") for name in attrs), attrs
        href = attrs.get("href")
        assert href is None or href.startswith(("http://", "https://")), href
        src = attrs.get("src")
        assert src is None or src.startswith(("data:image/", "data:audio/")), src


# ----------------------------------------------------------------------------------- content blocks


def test_text_block_is_escaped_preformatted_text() -> None:
    block = {"type": "text", "text": "<script>alert('x')</script>\nline 2"}
    markup = content_html(block, max_text=100, max_image_bytes=100)
    parsed = Elements(markup)
    assert "script" not in {t for t, _ in parsed.tags}
    assert [t for t, _ in parsed.tags if t == "pre"]
    assert "<script>alert('x')</script>\nline 2" in parsed.all_text
    assert "&lt;script&gt;" in markup
    assert content_text(block) == "<script>alert('x')</script>\nline 2"


def test_pre_wraps_long_lines() -> None:
    css = result_bundle({"content": [{"type": "text", "text": "x"}]})["text/html"]
    assert "white-space:pre-wrap" in css


def test_image_block_embeds_valid_png() -> None:
    block = {"type": "image", "data": PNG_B64, "mimeType": "image/png"}
    imgs = block_html(block).named("img")
    assert len(imgs) == 1
    assert imgs[0]["src"] == f"data:image/png;base64,{PNG_B64}"
    assert content_text(block) == f"[image image/png, {len(PNG)} B]"


def test_image_text_fallback_uses_kilobytes() -> None:
    data = base64.b64encode(b"\0" * 1229).decode()
    assert (
        content_text({"type": "image", "data": data, "mimeType": "image/png"}) == "[image image/png, 1.2 KB]"
    )


@pytest.mark.parametrize("data", ["not base64!!", PNG_B64[:-3], "aGVsbG8=\u0000", ""])
def test_invalid_base64_image_shows_an_error_note_not_a_broken_img(data: str) -> None:
    parsed = block_html({"type": "image", "data": data, "mimeType": "image/png"})
    assert parsed.named("img") == []
    assert "not valid base64" in parsed.all_text or "no base64 data" in parsed.all_text


def test_invalid_base64_is_named_in_the_note() -> None:
    block = {"type": "image", "data": "%%%%", "mimeType": "image/png"}
    parsed = block_html(block)
    assert parsed.named("img") == []
    assert "not valid base64" in parsed.all_text
    assert "not valid base64" in content_text(block)


@pytest.mark.parametrize(
    "mime", ["text/html", 'image/png" onerror="alert(1)', "image/png;x=1", None, "audio/wav"]
)
def test_image_needs_a_bare_image_mime_type(mime: str | None) -> None:
    markup = content_html(
        {"type": "image", "data": PNG_B64, "mimeType": mime}, max_text=100, max_image_bytes=10**6
    )
    assert Elements(markup).named("img") == []
    assert_no_active_content(markup)


def test_image_over_the_size_cap_is_a_note() -> None:
    block = {"type": "image", "data": base64.b64encode(b"\0" * 5000).decode(), "mimeType": "image/png"}
    parsed = block_html(block, cap=1000)
    assert parsed.named("img") == []
    assert "larger than the 1000 B limit" in parsed.all_text
    bundle = result_bundle({"content": [block]}, max_image_bytes=1000)
    assert "base64," not in bundle["text/html"]


def test_audio_block_embeds_audio_player() -> None:
    wav = tiny_wav()
    block = {"type": "audio", "data": base64.b64encode(wav).decode(), "mimeType": "audio/wav"}
    audios = block_html(block).named("audio")
    assert len(audios) == 1
    assert "controls" in audios[0]
    assert audios[0]["src"] == "data:audio/wav;base64," + base64.b64encode(wav).decode()
    assert content_text(block) == f"[audio audio/wav, {len(wav)} B]"


def test_resource_link_with_https_uri_is_clickable() -> None:
    block = {
        "type": "resource_link",
        "uri": "https://example.org/a?b=1&c=2",
        "name": "a.txt",
        "title": "The A file",
        "mimeType": "text/plain",
        "size": 2048,
        "description": "Some file",
    }
    parsed = block_html(block)
    links = parsed.named("a")
    assert [link["href"] for link in links] == ["https://example.org/a?b=1&c=2"]
    assert "noopener" in (links[0]["rel"] or "")
    for fact in ("The A file", "a.txt", "text/plain", "2.0 KB", "Some file"):
        assert fact in parsed.all_text
    text = content_text(block)
    assert text.startswith("[resource_link The A file: https://example.org/a?b=1&c=2 (text/plain, 2.0 KB)]")
    assert text.endswith("Some file")


@pytest.mark.parametrize(
    "uri",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "https://ok.example/\njavascript:x",
        " https://example.org/",
        "java\tscript:alert(1)",
    ],
)
def test_non_http_uris_are_not_clickable(uri: str) -> None:
    markup = content_html({"type": "resource_link", "uri": uri, "name": "n"}, max_text=100, max_image_bytes=0)
    assert Elements(markup).named("a") == []
    assert_no_active_content(markup)


def test_attribute_breaking_quotes_in_link_fields_are_escaped() -> None:
    evil = 'x" onmouseover="alert(1)" a=\'<script>'
    block = {
        "type": "resource_link",
        "uri": f"https://example.org/{evil.replace(' ', '')}",  # no spaces, so it stays a link
        "name": evil,
        "title": evil,
        "mimeType": evil,
        "description": evil,
    }
    markup = content_html(block, max_text=1000, max_image_bytes=0)
    assert_no_active_content(markup)
    parsed = Elements(markup)
    (link,) = parsed.named("a")
    assert link["href"] == f"https://example.org/{evil.replace(' ', '')}"  # whole URI, inside the attribute
    assert set(link) == {"href", "target", "rel"}


def test_embedded_text_resource_shows_mime_label() -> None:
    block = {
        "type": "resource",
        "resource": {"uri": "file:///src/main.rs", "mimeType": "text/x-rust", "text": "fn main() {}"},
    }
    parsed = block_html(block)
    assert "text/x-rust" in parsed.all_text
    assert "file:///src/main.rs" in parsed.all_text
    assert "fn main() {}" in parsed.all_text
    assert parsed.named("a") == []  # file: is not a web link
    assert content_text(block) == "[resource file:///src/main.rs (text/x-rust)]\nfn main() {}"


def test_embedded_html_resource_is_shown_as_source_not_rendered() -> None:
    page = "<html><body onload=alert(1)><script>steal()</script><img src=x onerror=alert(2)></body></html>"
    block = {"type": "resource", "resource": {"uri": "ui://widget", "mimeType": "text/html", "text": page}}
    markup = content_html(block, max_text=10_000, max_image_bytes=0)
    assert_no_active_content(markup)
    parsed = Elements(markup)
    assert parsed.named("img") == [] and parsed.named("body") == []
    assert page in parsed.all_text
    assert "shown as source" in parsed.all_text


def test_embedded_blob_image_is_an_image_and_other_blobs_a_size_note() -> None:
    image = {
        "type": "resource",
        "resource": {"uri": "file:///a.png", "mimeType": "image/png", "blob": PNG_B64},
    }
    assert len(block_html(image).named("img")) == 1
    pdf = {
        "type": "resource",
        "resource": {
            "uri": "file:///a.pdf",
            "mimeType": "application/pdf",
            "blob": base64.b64encode(b"%" * 3000).decode(),
        },
    }
    parsed = block_html(pdf)
    assert parsed.named("img") == [] and parsed.named("embed") == []
    assert "binary content, 2.9 KB, not shown" in parsed.all_text
    assert content_text(pdf) == "[resource file:///a.pdf (application/pdf)] 2.9 KB of binary data"


def test_tool_use_and_tool_result_blocks() -> None:
    use = {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "<Paris>"}}
    parsed = block_html(use)
    assert "get_weather" in parsed.all_text and "call_1" in parsed.all_text and '"<Paris>"' in parsed.all_text
    assert content_text(use) == '[tool_use get_weather id=call_1] {"city":"<Paris>"}'
    result = {
        "type": "tool_result",
        "toolUseId": "call_1",
        "content": [{"type": "text", "text": "Sunny"}],
        "isError": True,
    }
    parsed = block_html(result)
    assert "call_1" in parsed.all_text and "Sunny" in parsed.all_text and "Error" in parsed.all_text
    assert content_text(result) == "[tool_result for call_1 ERROR]\nSunny"


def test_deeply_nested_tool_results_stop_recursing() -> None:
    block: dict[str, Any] = {"type": "text", "text": "leaf"}
    for i in range(200):
        block = {"type": "tool_result", "toolUseId": str(i), "content": [block]}
    assert "tool_result" in content_html(block, max_text=1000, max_image_bytes=0)
    assert content_text(block)


def test_unknown_block_type_is_json() -> None:
    block = {"type": "hologram<x>", "payload": {"a": [1, 2]}}
    parsed = block_html(block)
    assert "unknown content type hologram<x>" in parsed.all_text
    assert json.loads(parsed.all_text.split("hologram<x>", 1)[1]) == block
    assert content_text(block).startswith("[hologram<x>] {")


@pytest.mark.parametrize(
    "block", [{"type": "text", "text": 42}, {"type": "resource", "resource": "x"}, {"no": "type"}]
)
def test_malformed_blocks_render_as_json(block: dict[str, Any]) -> None:
    assert "<pre" in content_html(block, max_text=100, max_image_bytes=0)
    assert content_text(block)


def test_annotations_are_shown_beside_the_block() -> None:
    block = {
        "type": "text",
        "text": "hi",
        "annotations": {
            "audience": ["user", "<assistant>"],
            "priority": 0.8,
            "lastModified": "2025-01-12T15:00:58Z",
        },
    }
    markup = content_html(block, max_text=100, max_image_bytes=0)
    parsed = Elements(markup)
    assert (
        "audience: user, <assistant> · priority: 0.8 · lastModified: 2025-01-12T15:00:58Z" in parsed.all_text
    )
    assert "mcpnb-ann" in markup


def test_block_meta_is_collapsed() -> None:
    parsed = block_html({"type": "text", "text": "hi", "_meta": {"com.example/k": "<v>"}})
    details = parsed.named("details")
    assert details and all("open" not in d for d in details)
    assert '"<v>"' in parsed.all_text


# -------------------------------------------------------------------------------------- truncation


def test_ten_megabyte_text_is_truncated_and_the_bundle_stays_small() -> None:
    big = "a" * 10_000_000
    bundle = result_bundle({"content": [{"type": "text", "text": big}]}, max_text=20_000)
    assert len(bundle["text/html"]) < 30_000
    assert len(bundle["text/plain"]) < 21_000
    assert (
        "showing 20,000 of 10,000,000 characters (9,980,000 left out; all of it: .text on the call handle"
        in Elements(bundle["text/html"]).all_text
    )
    assert "showing 20,000 of 10,000,000 characters" in bundle["text/plain"]


def test_huge_structured_content_stays_bounded() -> None:
    structured = {"rows": [{"i": i, "s": "x" * 100} for i in range(50_000)]}
    bundle = result_bundle({"content": [], "structuredContent": structured}, max_text=20_000)
    assert len(bundle["text/html"]) < 1_000_000
    assert "more left out" in bundle["text/html"]
    assert len(bundle["text/plain"]) < 21_000


# ------------------------------------------------------------------------------------ tool results


def test_is_error_result_has_error_style_and_prefix() -> None:
    result = {"content": [{"type": "text", "text": "Invalid departure date"}], "isError": True}
    bundle = result_bundle(result)
    parsed = Elements(bundle["text/html"])
    wrapper = next(attrs for tag, attrs in parsed.tags if tag == "div")
    assert "mcpnb-error" in (wrapper["class"] or "").split()
    assert "Error" in parsed.all_text
    assert ".mcpnb.mcpnb-error{border:2px solid" in bundle["text/html"]
    assert bundle["text/plain"] == "ERROR: Invalid departure date"
    titled = result_bundle(result, title="forecast")
    assert titled["text/plain"] == "ERROR: forecast\nInvalid departure date"


def test_successful_result_has_no_error_style() -> None:
    bundle = result_bundle({"content": [{"type": "text", "text": "ok"}]}, title="<t>")
    parsed = Elements(bundle["text/html"])
    assert all("mcpnb-error" not in (a.get("class") or "") for _, a in parsed.tags)
    assert bundle["text/plain"] == "<t>\nok"
    assert "&lt;t&gt;" in bundle["text/html"]


def test_css_is_scoped_and_theme_neutral() -> None:
    markup = result_bundle({"content": []})["text/html"]
    style = markup.split("<style>", 1)[1].split("</style>", 1)[0]
    for rule in style.replace("\n", "").split("}"):
        if rule.strip():
            assert all(sel.strip().startswith(".mcpnb") for sel in rule.split("{")[0].split(","))
    assert "#000" not in style and "black" not in style


OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "day": {"type": "string", "format": "date"}},
    "required": ["temperature"],
}


def test_structured_content_tree_and_valid_status() -> None:
    structured = {"temperature": 21.5, "day": "2025-06-01", "hours": [{"h": 1, "note": "<b>"}]}
    result = {"content": [{"type": "text", "text": "see structured"}], "structuredContent": structured}
    bundle = result_bundle(result, output_schema=OUTPUT_SCHEMA)
    parsed = Elements(bundle["text/html"])
    assert len(parsed.named("details")) >= 3  # the object, the array, the nested object
    assert "temperature: 21.5" in parsed.all_text
    assert 'note: "<b>"' in parsed.all_text  # leaves are JSON scalars, escaped
    assert parsed.named("b") == []
    assert "✓ valid against outputSchema" in parsed.all_text
    assert "✓ valid against outputSchema" in bundle["text/plain"]
    assert '"temperature": 21.5' in bundle["text/plain"]


def test_invalid_structured_content_lists_errors() -> None:
    result = {"content": [], "structuredContent": {"temperature": "warm", "day": "not-a-date"}}
    bundle = result_bundle(result, output_schema=OUTPUT_SCHEMA)
    text = Elements(bundle["text/html"]).all_text
    assert "✗ not valid against outputSchema" in text
    assert "$.temperature: 'warm' is not of type 'number'" in text
    assert "$.day: 'not-a-date' is not a 'date'" in text  # FormatChecker is on
    assert "  - $.temperature: 'warm' is not of type 'number'" in bundle["text/plain"]


def test_missing_structured_content_with_schema_is_flagged() -> None:
    bundle = result_bundle({"content": [{"type": "text", "text": "x"}]}, output_schema=OUTPUT_SCHEMA)
    assert "✗ no structuredContent" in bundle["text/plain"]
    error = result_bundle(
        {"content": [{"type": "text", "text": "x"}], "isError": True}, output_schema=OUTPUT_SCHEMA
    )
    assert "structuredContent" not in error["text/plain"]


def test_remote_ref_in_output_schema_is_not_fetched() -> None:
    schema = {"$ref": "https://example.invalid/schema.json"}
    bundle = result_bundle({"content": [], "structuredContent": {}}, output_schema=schema)
    assert "could not be applied" in bundle["text/plain"]


def test_invalid_output_schema_is_reported() -> None:
    bundle = result_bundle({"content": [], "structuredContent": {}}, output_schema={"type": 12})
    assert "outputSchema is not a valid schema" in bundle["text/plain"]


def test_json_copy_text_block_is_collapsed() -> None:
    structured = {"temperature": 21.5}
    result = {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
    bundle = result_bundle(result)
    parsed = Elements(bundle["text/html"])
    summaries = [s for s in parsed.text if "JSON of structuredContent" in s]
    assert summaries
    assert "[text block: the JSON of structuredContent, shown below]" in bundle["text/plain"]
    assert bundle["text/plain"].count("21.5") == 1
    other = result_bundle(
        {"content": [{"type": "text", "text": '{"temperature": 3}'}], "structuredContent": structured}
    )
    assert "JSON of structuredContent" not in other["text/plain"]


def test_result_meta_on_demand() -> None:
    bundle = result_bundle(
        {"content": [], "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}
    )
    parsed = Elements(bundle["text/html"])
    assert "_meta" in parsed.all_text and "t1" in parsed.all_text
    assert all("open" not in d for d in parsed.named("details"))


def test_malformed_result_does_not_raise() -> None:
    bundle = result_bundle({"content": "nope", "isError": "yes"})
    assert "content is not a list" in bundle["text/plain"]
    assert not bundle["text/plain"].startswith("ERROR")  # isError must be the boolean true


def test_result_view_mimebundle() -> None:
    view = ResultView({"content": [{"type": "text", "text": "hi"}]}, title="t")
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/plain"] == "t\nhi"
    assert set(view._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
    assert set(view._repr_mimebundle_(exclude={"text/plain"})) == {"text/html"}
    assert "ResultView" in repr(view)


def test_result_view_through_ipython_formatter() -> None:
    from IPython.core.formatters import DisplayFormatter

    formatter: Any = DisplayFormatter()
    data, _ = formatter.format(ResultView({"content": [{"type": "text", "text": "hi"}]}))
    assert data["text/plain"] == "hi"
    assert "<pre" in data["text/html"]


# -------------------------------------------------------------------------- resources and prompts


def test_resource_contents_bundle() -> None:
    read = {
        "contents": [
            {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello <world>"},
            {"uri": "file:///b.png", "mimeType": "image/png", "blob": PNG_B64},
        ]
    }
    bundle = resource_contents_bundle(read)
    parsed = Elements(bundle["text/html"])
    assert "hello <world>" in parsed.all_text
    assert len(parsed.named("img")) == 1
    assert bundle["text/plain"].startswith("[resource file:///a.txt (text/plain)]\nhello <world>")
    assert f"{len(PNG)} B of binary data" in bundle["text/plain"]
    assert "(no contents)" in resource_contents_bundle({"contents": []})["text/plain"]


def test_prompt_bundle() -> None:
    prompt = {
        "description": "Review <code>",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please review"}},
            {"role": "assistant", "content": {"type": "image", "data": PNG_B64, "mimeType": "image/png"}},
        ],
    }
    bundle = prompt_bundle(prompt)
    parsed = Elements(bundle["text/html"])
    assert "Review <code>" in parsed.all_text and parsed.named("code") == []
    assert "user" in parsed.all_text and "assistant" in parsed.all_text
    assert len(parsed.named("img")) == 1
    assert bundle["text/plain"].splitlines() == [
        "Review <code>",
        "[user]",
        "Please review",
        "[assistant]",
        f"[image image/png, {len(PNG)} B]",
    ]
