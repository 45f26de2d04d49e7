"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension) in the notebook: a host for apps that servers
offer (``host.py``, with its ES module front end: ``layer.js``, ``courier.js``, ``guard.js``, ``host.js``),
the sandbox and CSP they run under (``sandbox.py``), and apps served from the notebook (``serve.py``; an
anywidget as an app: ``widget_app.py``).

A tool names its app in ``_meta.ui.resourceUri`` (a ``ui://`` resource of type ``text/html;profile=mcp-app``);
``_meta.ui.visibility`` says who may call it: ``"model"`` (listed, callable from the notebook) and/or
``"app"`` (callable from the app's own view). Spec: ext-apps ``specification/2026-01-26/apps.mdx``.

May import ``calls`` (handles, the audit log), ``rendering``, ``config``, ``kernel_thread`` and the layers
below ``notebook``; never ``serving`` or the ``mcp`` object above it (tests/test_layers.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["APP_MIME", "EXTENSION", "UI_PROTOCOL", "app_only", "client_extension", "ui_meta", "visibility"]

EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"
UI_PROTOCOL = "2026-01-26"  # the Apps protocol version between host and view (ui/initialize)


def client_extension() -> dict[str, Any]:
    """What a client declares under ``capabilities.extensions``: it renders MCP Apps."""
    return {EXTENSION: {"mimeTypes": [APP_MIME]}}


def ui_meta(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's ``_meta.ui`` (also reading the older flat ``_meta["ui/resourceUri"]`` key)."""
    meta = tool.get("_meta")
    if not isinstance(meta, Mapping):
        return {}
    ui = meta.get("ui")
    found = dict(ui) if isinstance(ui, Mapping) else {}
    legacy = meta.get("ui/resourceUri")
    if "resourceUri" not in found and isinstance(legacy, str):
        found["resourceUri"] = legacy
    uri = found.get("resourceUri")
    if not (isinstance(uri, str) and uri.startswith("ui://")):
        found.pop("resourceUri", None)
    return found


def visibility(tool: Mapping[str, Any]) -> list[str]:
    seen = ui_meta(tool).get("visibility")
    if isinstance(seen, list) and all(isinstance(v, str) for v in seen):
        return list(seen)
    return ["model", "app"]  # the spec's default


def app_only(tool: Mapping[str, Any]) -> bool:
    """Hidden from listings: only the app's view may call it."""
    return "model" not in visibility(tool)
