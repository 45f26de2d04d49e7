"""What a tool definition and a tool result look like to an older session (sans-IO).

Tools are defined once, in the newest shapes; a session that negotiated an older protocol version gets
them without what its version does not have (the feature gates of :mod:`.versions`): no ``title``,
``icons``, ``outputSchema`` or ``annotations`` before the version that brought them, no
``structuredContent`` before 2025-06-18, ``audio`` and ``resource_link`` blocks as text before their
versions. Up to 2025-11-25 ``structuredContent`` must be an object: any other value travels as
``{"result": value}``. A structured result always has a text copy for clients that read only content
(server/tools#structured-content: "SHOULD also return the serialized JSON in a TextContent block").
"""

from __future__ import annotations

import json
from typing import Any

from .versions import ProtocolVersion

__all__ = ["call_result_for", "tool_for"]

# Tool fields and the feature that brought them.
_TOOL_FIELDS = {
    "title": "titles",
    "icons": "icons",
    "outputSchema": "structured_output",
    "annotations": "tool_annotations",
}


def tool_for(version: ProtocolVersion | None, tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` as a session at ``version`` may see it (unchanged for None, the newest)."""
    if version is None:
        return tool
    gone = [key for key, feature in _TOOL_FIELDS.items() if key in tool and not version.supports(feature)]
    if not gone:
        return tool
    return {k: v for k, v in tool.items() if k not in gone}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _block_for(version: ProtocolVersion, block: Any) -> Any:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":  # every version has text blocks
        return block
    if kind == "audio" and not version.supports("audio_content"):
        size = len(block.get("data", "")) * 3 // 4
        return _text(f"[audio {block.get('mimeType', '')}, about {size} bytes: not shown in this version]")
    if kind == "resource_link" and not version.supports("resource_link"):
        name = block.get("title") or block.get("name") or ""
        return _text(f"{name}: {block.get('uri', '')}" if name else str(block.get("uri", "")))
    if kind == "resource_link" and not version.supports("icons") and "icons" in block:
        return {k: v for k, v in block.items() if k != "icons"}
    return block


def call_result_for(version: ProtocolVersion | None, result: dict[str, Any]) -> dict[str, Any]:
    """A ``CallToolResult`` as a session at ``version`` may receive it (None: the newest, modern)."""
    out = dict(result)
    content = out.get("content")
    if "structuredContent" in out:
        structured = out["structuredContent"]
        legacy = version is not None and version.era == "legacy"
        if legacy and not isinstance(structured, dict):
            structured = out["structuredContent"] = {"result": structured}  # an object up to 2025-11-25
        if isinstance(content, list) and not content:
            out["content"] = content = [_text(json.dumps(structured, ensure_ascii=False))]
        if version is not None and not version.supports("structured_output"):
            del out["structuredContent"]
    if version is not None and isinstance(content, list):
        out["content"] = [_block_for(version, block) for block in content]
    return out
