"""Static rendering of MCP results: wire dicts (2025-11-25 shapes) in, IPython mimebundles out.

Mimebundle-first (DESIGN.md decision 10): every function returns ``{"text/html": ..., "text/plain": ...}``
so that saved notebooks, terminal IPython and headless runs all show something; widgets live elsewhere.

Content from remote servers is untrusted. Every string is escaped, no markup is passed through (an
embedded ``text/html`` resource is shown as escaped source), only http(s) URIs become links, and images
and audio are embedded only for ``image/*`` / ``audio/*`` mime types whose base64 data actually decodes.
Large payloads are cut (``max_text`` characters, ``max_image_bytes`` bytes of media) so that a 10 MB
tool result cannot turn into a 10 MB notebook output.

Content block shapes follow MCP-NOTES §5.5; ``tool_use``/``tool_result`` follow §7.4; resources §7.7;
prompts §7.8.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_notebook.notebook.rendering.base import (
    b64_size,
    code_block,
    cut_text,
    esc,
    format_size,
    json_pre,
    json_text,
    json_tree,
    label_html,
    media_html,
    media_text,
    note_html,
    one_line,
    pre_html,
    safe_link,
    schema_errors,
    table_bundle,
    wrap,
)
from mcp_notebook.notebook.rendering.table import table_parts
from mcp_notebook.notebook.rendering.trace import trace_bundle

__all__ = [
    "ResultView",
    "content_html",
    "content_text",
    "prompt_bundle",
    "resource_contents_bundle",
    "result_bundle",
    "table_bundle",
    "trace_bundle",
]

DEFAULT_MAX_TEXT = 20_000
DEFAULT_MAX_IMAGE_BYTES = 2_000_000

# tool_result blocks nest content blocks; an untrusted peer could nest them without end.
_MAX_NESTING = 4
# Above this size a text block is not parsed to see whether it duplicates structuredContent.
_MAX_DUPLICATE_CHECK = 5_000_000


@dataclass(frozen=True)
class _Limits:
    max_text: int = DEFAULT_MAX_TEXT
    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES
    depth: int = 0

    def nested(self) -> _Limits:
        return _Limits(self.max_text, self.max_image_bytes, self.depth + 1)


# ---------------------------------------------------------------------------------------------- text


# ----------------------------------------------------------------------------------- content blocks


def _text_html(block: Mapping[str, Any], lim: _Limits) -> str:
    text = block.get("text")
    return pre_html(text, lim.max_text) if isinstance(text, str) else _unknown_html(block, lim)


def _image_html(block: Mapping[str, Any], lim: _Limits) -> str:
    return media_html(block.get("mimeType"), block.get("data"), "image", lim.max_image_bytes)


def _audio_html(block: Mapping[str, Any], lim: _Limits) -> str:
    return media_html(block.get("mimeType"), block.get("data"), "audio", lim.max_image_bytes)


def _link_html(block: Mapping[str, Any], lim: _Limits) -> str:
    name, title, uri = block.get("name"), block.get("title"), block.get("uri")
    shown = title or name or uri or "(unnamed)"
    extra = f' <span class="mcpnb-note">{esc(name)}</span>' if title and name and title != name else ""
    facts = [esc(v) for v in (block.get("mimeType"),) if v]
    if isinstance(block.get("size"), int):
        facts.append(esc(format_size(block["size"])))
    desc = block.get("description")
    return (
        label_html("resource link")
        + f"<div><b>{esc(shown)}</b>{extra} — {safe_link(uri)}</div>"
        + (note_html(" · ".join(facts)) if facts else "")
        + (f"<div>{esc(one_line(desc, lim.max_text))}</div>" if desc else "")
    )


def _resource_body_html(res: Mapping[str, Any], lim: _Limits) -> str:
    """One TextResourceContents or BlobResourceContents (embedded, or from resources/read)."""
    mime = res.get("mimeType")
    head = label_html(f"resource {safe_link(res.get('uri'))}" + (f" · {esc(mime)}" if mime else ""))
    text, blob = res.get("text"), res.get("blob")
    if isinstance(text, str):
        note = ""
        if isinstance(mime, str) and "html" in mime.lower():
            note = note_html("HTML from the server is shown as source, not rendered")
        return head + note + pre_html(text, lim.max_text)
    if isinstance(blob, str):
        kind = mime.split("/", 1)[0].lower() if isinstance(mime, str) else ""
        if kind in ("image", "audio"):
            return head + media_html(mime, blob, kind, lim.max_image_bytes)
        return head + note_html(esc(f"binary content, {format_size(b64_size(blob))}, not shown"))
    return head + note_html("no text or blob") + json_pre(res, max_chars=lim.max_text)


def _resource_html(block: Mapping[str, Any], lim: _Limits) -> str:
    res = block.get("resource")
    return _resource_body_html(res, lim) if isinstance(res, Mapping) else _unknown_html(block, lim)


def _tool_use_html(block: Mapping[str, Any], lim: _Limits) -> str:
    head = f"tool_use <b>{esc(block.get('name'))}</b> <code>id {esc(block.get('id'))}</code>"
    return label_html(head) + json_pre(block.get("input"), max_chars=lim.max_text)


def _tool_result_html(block: Mapping[str, Any], lim: _Limits) -> str:
    err = ' <span class="mcpnb-error-header">Error</span>' if block.get("isError") is True else ""
    head = label_html(f"tool_result for <code>{esc(block.get('toolUseId'))}</code>{err}")
    if lim.depth >= _MAX_NESTING:
        return head + json_pre(block, max_chars=lim.max_text)
    content = block.get("content")
    blocks = content if isinstance(content, list) else []
    body = "".join(_block_html(b, lim.nested()) for b in blocks)
    if "structuredContent" in block:
        body += label_html("structuredContent") + json_tree(block["structuredContent"])
    return head + body


def _unknown_html(block: Mapping[str, Any], lim: _Limits) -> str:
    kind = block.get("type")
    return label_html(f"unknown content type {esc(one_line(kind, 80))}") + json_pre(
        block, max_chars=lim.max_text
    )


_HTML_RENDERERS: dict[str, Callable[[Mapping[str, Any], _Limits], str]] = {
    "text": _text_html,
    "image": _image_html,
    "audio": _audio_html,
    "resource_link": _link_html,
    "resource": _resource_html,
    "tool_use": _tool_use_html,
    "tool_result": _tool_result_html,
}


def _annotations_html(block: Mapping[str, Any]) -> str:
    ann = block.get("annotations")
    inner = block.get("resource")
    if not isinstance(ann, Mapping) and isinstance(inner, Mapping):
        # the spec's own examples put an embedded resource's annotations inside "resource" (schema.ts puts
        # them on the block): shown either way
        ann = inner.get("annotations")
    if not isinstance(ann, Mapping) or not ann:
        return ""
    parts = []
    audience = ann.get("audience")
    if isinstance(audience, list):
        parts.append("audience: " + ", ".join(one_line(a, 20) for a in audience))
    for key in ("priority", "lastModified"):
        if key in ann:
            parts.append(f"{key}: {one_line(ann[key], 40)}")
    return f'<span class="mcpnb-ann" title="annotations">{esc(" · ".join(parts))}</span>' if parts else ""


def _meta_html(meta: object, lim: _Limits) -> str:
    if meta is None:
        return ""
    body = json_pre(meta, max_chars=lim.max_text)
    return f'<details><summary class="mcpnb-note">_meta</summary>{body}</details>'


def _block_html(block: object, lim: _Limits) -> str:
    if not isinstance(block, Mapping):
        return f'<div class="mcpnb-block">{label_html("malformed content block")}{json_pre(block)}</div>'
    kind = block.get("type")
    render = _HTML_RENDERERS.get(kind, _unknown_html) if isinstance(kind, str) else _unknown_html
    inner = render(block, lim)
    meta = _meta_html(block.get("_meta"), lim)
    return f'<div class="mcpnb-block">{_annotations_html(block)}{inner}{meta}</div>'


def content_html(
    block: Mapping[str, Any],
    *,
    max_text: int = DEFAULT_MAX_TEXT,
    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
) -> str:
    """One content block as an HTML fragment (no wrapper or style; see :func:`result_bundle` for those)."""
    return _block_html(block, _Limits(max_text, max_image_bytes))


def content_text(block: Mapping[str, Any], *, max_text: int = DEFAULT_MAX_TEXT) -> str:
    """One content block as plain text, e.g. ``[image image/png, 1.2 KB]`` for an image."""
    return _block_text(block, max_text, 0)


def _block_text(block: object, max_text: int, depth: int) -> str:
    if not isinstance(block, Mapping):
        return cut_text(f"[malformed content block] {json_text(block, indent=None)}", max_text)
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return cut_text(block["text"], max_text)
    if kind in ("image", "audio"):
        return media_text(block.get("mimeType"), block.get("data"), str(kind), DEFAULT_MAX_IMAGE_BYTES)
    if kind == "resource_link":
        facts = [str(v) for v in (block.get("mimeType"),) if v]
        if isinstance(block.get("size"), int):
            facts.append(format_size(block["size"]))
        name = block.get("title") or block.get("name") or "(unnamed)"
        line = f"[resource_link {one_line(name)}: {one_line(block.get('uri'), 500)}"
        line += f" ({', '.join(facts)})]" if facts else "]"
        desc = block.get("description")
        return f"{line} {one_line(desc, max_text)}" if desc else line
    if kind == "resource" and isinstance(block.get("resource"), Mapping):
        return _resource_text(block["resource"], max_text)
    if kind == "tool_use":
        return f"[tool_use {block.get('name')} id={block.get('id')}] {one_line(block.get('input'), max_text)}"
    if kind == "tool_result" and depth < _MAX_NESTING:
        err = " ERROR" if block.get("isError") is True else ""
        content = block.get("content")
        inner = [_block_text(b, max_text, depth + 1) for b in (content if isinstance(content, list) else [])]
        return "\n".join([f"[tool_result for {block.get('toolUseId')}{err}]", *inner])
    return cut_text(f"[{one_line(kind, 80)}] {json_text(block, indent=None)}", max_text)


def _resource_text(res: Mapping[str, Any], max_text: int) -> str:
    mime = res.get("mimeType")
    head = f"[resource {one_line(res.get('uri'), 500)}" + (f" ({mime})]" if mime else "]")
    if isinstance(res.get("text"), str):
        return f"{head}\n{cut_text(res['text'], max_text)}"
    if isinstance(res.get("blob"), str):
        return f"{head} {format_size(b64_size(res['blob']))} of binary data"
    return f"{head} (no text or blob)"


# ------------------------------------------------------------------------------------ tool results


def _is_json_copy(block: object, structured: object) -> bool:
    """Is this the serialized-JSON text block servers add for older clients (MCP-NOTES §5.4)?"""
    if not isinstance(block, Mapping) or block.get("type") != "text":
        return False
    text = block.get("text")
    if not isinstance(text, str) or len(text) > _MAX_DUPLICATE_CHECK:
        return False
    try:
        return bool(json.loads(text) == structured)
    except (ValueError, RecursionError):
        return False


def _validation(result: Mapping[str, Any], output_schema: Mapping[str, Any] | None) -> tuple[str, str]:
    """The validation status line, as (html, text); empty when there is nothing to say."""
    if output_schema is None or result.get("isError") is True:
        return "", ""
    if "structuredContent" not in result:
        msg = "✗ no structuredContent, but the tool declares an outputSchema"
        return note_html(esc(msg), bad=True), msg
    errors = schema_errors(result["structuredContent"], output_schema)
    if not errors:
        msg = "✓ valid against outputSchema"
        return f'<div class="mcpnb-good">{esc(msg)}</div>', msg
    items = "".join(f"<li>{esc(e)}</li>" for e in errors)
    head = "✗ not valid against outputSchema"
    html = f'<div class="mcpnb-bad">{esc(head)}:<ul>{items}</ul></div>'
    return html, head + ":\n" + "\n".join(f"  - {e}" for e in errors)


def result_bundle(
    result: Mapping[str, Any],
    *,
    output_schema: Mapping[str, Any] | None = None,
    title: str | None = None,
    max_text: int = DEFAULT_MAX_TEXT,
    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
) -> dict[str, str]:
    """A ``CallToolResult`` as ``{"text/html": ..., "text/plain": ...}``.

    ``isError: true`` gets an error frame and an ``ERROR:`` prefix. ``structuredContent`` is shown as a
    tree, with a status line against ``output_schema`` when one is given; the text block that merely
    repeats it as JSON is collapsed.
    """
    lim = _Limits(max_text, max_image_bytes)
    is_error = result.get("isError") is True
    content = result.get("content")
    blocks: list[object] = content if isinstance(content, list) else []
    has_structured = "structuredContent" in result
    structured = result.get("structuredContent")

    html: list[str] = []
    text: list[str] = []
    if is_error:
        html.append(f'<div class="mcpnb-error-header">Error{esc(": " + title) if title else ""}</div>')
    elif title:
        html.append(f'<div class="mcpnb-title">{esc(title)}</div>')
        text.append(title)
    if not isinstance(content, list):
        html.append(note_html("malformed result: content is not a list", bad=True))
        text.append("[malformed result: content is not a list]")
    elif not blocks:
        html.append(note_html("(no content)"))
    for block in blocks:
        if has_structured and _is_json_copy(block, structured):
            summary = "text block: the JSON of structuredContent, for older clients"
            html.append(
                f'<details><summary class="mcpnb-note">{summary}</summary>{_block_html(block, lim)}</details>'
            )
            text.append("[text block: the JSON of structuredContent, shown below]")
        else:
            html.append(_block_html(block, lim))
            text.append(_block_text(block, max_text, 0))
    table = table_parts(structured) if has_structured else None
    if table is not None:  # records or columns: shape, column types and the first rows (rendering/table.py)
        html.append(table[0])
        text.append(table[1])
    if has_structured:
        html.append(
            f'<div class="mcpnb-block">{label_html("structuredContent")}{json_tree(structured)}</div>'
        )
        text.append("structuredContent: " + cut_text(json_text(structured), max_text))
    status_html, status_text = _validation(result, output_schema)
    html.append(status_html)
    text.append(status_text)
    html.append(_meta_html(result.get("_meta"), lim))
    html.append(raw_json_html(result))
    plain = "\n".join(t for t in text if t)
    if is_error:
        plain = f"ERROR: {title}\n{plain}" if title else f"ERROR: {plain}"
    return {"text/html": wrap("".join(html), error=is_error), "text/plain": plain}


_RAW_LIMIT = 5_000  # characters of a result's raw JSON shown under it
_RAW_LEAF = 200  # a longer string (base64, long text) is shortened in the raw view


def _elided(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _RAW_LEAF:
        return f"{value[:60]}… ({len(value):,} characters; all of it on the call handle)"
    if isinstance(value, Mapping):
        return {k: _elided(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_elided(v) for v in value]
    return value


def raw_json_html(message: object, label: str = "raw JSON") -> str:
    """A collapsed view of ``message`` as JSON with a Copy button, long strings shortened (the MCP
    Inspector's raw toggle; issue 11 item 13)."""
    block = code_block(label, json_text(_elided(message)), max_chars=_RAW_LIMIT)
    return f'<details class="mcpnb-raw"><summary class="mcpnb-note">{esc(label)}</summary>{block}</details>'


class ResultView:
    """A ``CallToolResult`` dict that displays itself richly in IPython (and as text in a terminal)."""

    def __init__(
        self,
        result: Mapping[str, Any],
        *,
        output_schema: Mapping[str, Any] | None = None,
        title: str | None = None,
    ) -> None:
        self.result = result
        self.output_schema = output_schema
        self.title = title

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        bundle = result_bundle(self.result, output_schema=self.output_schema, title=self.title)
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def __repr__(self) -> str:
        content = self.result.get("content")
        n = len(content) if isinstance(content, list) else 0
        return f"<ResultView isError={self.result.get('isError') is True} content={n} blocks>"


# -------------------------------------------------------------------------- resources and prompts


def resource_contents_bundle(
    read_result: Mapping[str, Any],
    *,
    max_text: int = DEFAULT_MAX_TEXT,
    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
) -> dict[str, str]:
    """A ``resources/read`` result (``{"contents": [...]}``) as a mimebundle."""
    lim = _Limits(max_text, max_image_bytes)
    contents = read_result.get("contents")
    items: list[object] = contents if isinstance(contents, list) else []
    html: list[str] = []
    text: list[str] = []
    for item in items:
        if isinstance(item, Mapping):
            meta = _meta_html(item.get("_meta"), lim)
            html.append(f'<div class="mcpnb-block">{_resource_body_html(item, lim)}{meta}</div>')
            text.append(_resource_text(item, max_text))
        else:
            html.append(_block_html(item, lim))
            text.append(_block_text(item, max_text, 0))
    if not items:
        html.append(note_html("(no contents)"))
        text.append("(no contents)")
    html.append(_meta_html(read_result.get("_meta"), lim))
    html.append(raw_json_html(read_result))
    return {"text/html": wrap("".join(html)), "text/plain": "\n".join(text)}


def prompt_bundle(
    get_prompt_result: Mapping[str, Any],
    *,
    max_text: int = DEFAULT_MAX_TEXT,
    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
) -> dict[str, str]:
    """A ``prompts/get`` result (``{"description"?, "messages": [{role, content}]}``) as a mimebundle."""
    lim = _Limits(max_text, max_image_bytes)
    html: list[str] = []
    text: list[str] = []
    desc = get_prompt_result.get("description")
    if desc:
        html.append(f'<div class="mcpnb-title">{esc(one_line(desc, max_text))}</div>')
        text.append(one_line(desc, max_text))
    messages = get_prompt_result.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            html.append(_block_html(message, lim))
            text.append(_block_text(message, max_text, 0))
            continue
        role = one_line(message.get("role"), 40)
        content = message.get("content")
        blocks: list[object] = content if isinstance(content, list) else [content]
        html.append(label_html(f"<b>{esc(role)}</b>") + "".join(_block_html(b, lim) for b in blocks))
        text.extend([f"[{role}]", *(_block_text(b, max_text, 0) for b in blocks)])
    if not isinstance(messages, list) or not messages:
        html.append(note_html("(no messages)"))
        text.append("(no messages)")
    html.append(raw_json_html(get_prompt_result))
    return {"text/html": wrap("".join(html)), "text/plain": "\n".join(text)}
