"""Annotation and icon values checked where they are made (audit item 11).

``ToolAnnotations`` hints are booleans (``title`` a string); content ``Annotations`` have ``audience`` of
``"user"``/``"assistant"``, ``priority`` in 0..1 and ``lastModified`` an ISO 8601 string; an ``Icon`` has a
``src`` (schema.ts, 2025-11-25). A wrong value is a ValueError when the tool, resource or block is built,
not a surprise in some client later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["check_annotations", "check_icons", "check_tool_annotations"]

_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_AUDIENCE = ("user", "assistant")


def check_tool_annotations(annotations: Mapping[str, Any] | None) -> None:
    if annotations is None:
        return
    if not isinstance(annotations, Mapping):
        raise ValueError(f"tool annotations must be a dict, not {type(annotations).__name__}")
    for hint in _HINTS:
        if hint in annotations and not isinstance(annotations[hint], bool):
            raise ValueError(f"tool annotation {hint} must be true or false, not {annotations[hint]!r}")
    if "title" in annotations and not isinstance(annotations["title"], str):
        raise ValueError(f"tool annotation title must be a string, not {annotations['title']!r}")


def check_annotations(annotations: Mapping[str, Any] | None) -> None:
    """Annotations of a content block, resource or template."""
    if annotations is None:
        return
    if not isinstance(annotations, Mapping):
        raise ValueError(f"annotations must be a dict, not {type(annotations).__name__}")
    audience = annotations.get("audience")
    if "audience" in annotations and not (
        isinstance(audience, list) and all(a in _AUDIENCE for a in audience)
    ):
        raise ValueError(f"annotation audience must be a list of 'user'/'assistant', not {audience!r}")
    priority = annotations.get("priority")
    if "priority" in annotations and (
        isinstance(priority, bool) or not isinstance(priority, int | float) or not 0 <= priority <= 1
    ):
        raise ValueError(f"annotation priority must be a number from 0 to 1, not {priority!r}")
    if "lastModified" in annotations and not isinstance(annotations["lastModified"], str):
        raise ValueError(
            f"annotation lastModified must be an ISO 8601 string, not {annotations['lastModified']!r}"
        )


def check_icons(icons: Any) -> None:
    if icons is None:
        return
    if not isinstance(icons, list):
        raise ValueError(f"icons must be a list, not {type(icons).__name__}")
    for icon in icons:
        if not isinstance(icon, Mapping) or not isinstance(icon.get("src"), str) or not icon["src"]:
            raise ValueError(f"an icon needs a 'src' (a URL or data: URI): {icon!r}")
        scheme = icon["src"].partition(":")[0].strip().lower() if ":" in icon["src"] else ""
        if scheme not in ("http", "https", "data"):
            # basic/index#icons: consumers MUST accept only https: and data: URIs (http: for local use);
            # a javascript: or file: src is refused here rather than by each client
            raise ValueError(f"an icon's src must be an https:, http: or data: URI, not {icon['src'][:40]!r}")
        sizes = icon.get("sizes")
        if sizes is not None and not (isinstance(sizes, list) and all(isinstance(s, str) for s in sizes)):
            raise ValueError(f"icon sizes must be a list of strings like '48x48': {sizes!r}")
        if icon.get("theme") not in (None, "light", "dark"):
            raise ValueError(f"icon theme must be 'light' or 'dark': {icon.get('theme')!r}")
