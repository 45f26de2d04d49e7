"""Resource links in a tool result, opened inline (issue 11 item 13, as the MCP Inspector does on click).

After a call returns ``resource_link`` blocks, the notebook reads up to :data:`MAX_LINKS` of them from the
same server (``resources/read``, bounded in time) and the result shows each one's contents under its link,
collapsed: one click opens it, in the live notebook and in a saved or exported one alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from .base import esc, one_line, wrap
from .results import resource_contents_bundle

__all__ = ["MAX_LINKS", "linked_bundle", "read_links"]

MAX_LINKS = 3
READ_TIMEOUT = 10.0  # seconds per link


class Reader(Protocol):
    @property
    def server_capabilities(self) -> dict[str, Any]: ...

    async def read_resource(self, uri: str) -> dict[str, Any]: ...


async def read_links(client: Reader, result: Mapping[str, Any]) -> dict[str, Any]:
    """``{uri: ReadResourceResult or {"error": ...}}`` for the result's first resource links."""
    if not client.server_capabilities.get("resources"):
        return {}
    found: dict[str, Any] = {}
    for block in result.get("content") or []:
        uri = (
            block.get("uri") if isinstance(block, Mapping) and block.get("type") == "resource_link" else None
        )
        if not isinstance(uri, str) or uri in found or len(found) >= MAX_LINKS:
            continue
        try:
            found[uri] = await asyncio.wait_for(client.read_resource(uri), READ_TIMEOUT)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # shown with the link: the call itself succeeded
            found[uri] = {"error": f"{type(exc).__name__}: {one_line(str(exc), 200)}"}
    return found


def linked_bundle(linked: Mapping[str, Any], *, max_text: int, max_image_bytes: int) -> dict[str, str]:
    html: list[str] = []
    text: list[str] = []
    for uri, read in linked.items():
        if isinstance(read, Mapping) and "error" in read:
            body = f'<div class="mcpnb-note mcpnb-bad">could not read it: {esc(read["error"])}</div>'
            text.append(f"[{uri}: could not read it: {read['error']}]")
        else:
            shown = resource_contents_bundle(read, max_text=max_text, max_image_bytes=max_image_bytes)
            body = shown["text/html"]
            text.append(f"[{uri}]: {one_line(shown['text/plain'], 200)}")
        html.append(
            f'<details><summary class="mcpnb-note">open the linked resource <code>{esc(uri)}</code>'
            f"</summary>{body}</details>"
        )
    return {"text/html": wrap("".join(html)) if html else "", "text/plain": "\n".join(text)}
