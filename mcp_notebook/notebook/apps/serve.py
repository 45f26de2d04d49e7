"""Apps served from the notebook: ``@mcp.tool(app=HTML_or_path)`` registers the tool and its ``ui://``
resource (``text/html;profile=mcp-app``), so a notebook can prototype an app and serve it to any host
(``%mcp serve``, ``mcp-notebook serve``), this notebook's own included.

A path is read again at every ``resources/read``: edit the file, re-run the call, see the change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import APP_MIME, EXTENSION

if TYPE_CHECKING:
    from ...engine.server import Server
    from ...tools.tool import Tool

__all__ = ["add_app_tool", "app_source"]


def app_source(app: str | Path) -> str | Callable[[], str]:
    """The resource's value: the HTML itself, or a function reading the file each time."""
    if isinstance(app, Path) or ("<" not in app and Path(app).suffix.lower() in (".html", ".htm")):
        path = Path(app)
        if not path.is_file():
            raise FileNotFoundError(f"app file {str(path)!r} does not exist")
        return lambda: path.read_text(encoding="utf-8")
    if "<" not in app:
        raise ValueError("app= takes an HTML document (a string with markup) or the path of a .html file")
    return app


def add_app_tool(
    server: Server,
    fn: Callable[..., Any],
    app: str | Path,
    *,
    uri: str | None = None,
    visibility: Sequence[str] | None = None,
    csp: Mapping[str, Any] | None = None,
    permissions: Mapping[str, Any] | None = None,
    prefers_border: bool | None = None,
    domain: str | None = None,
    **options: Any,
) -> Tool:
    """Register ``fn`` as a tool whose app is ``app``, and the app as the resource ``uri``."""
    name = options.get("name") or fn.__name__
    uri = uri or f"ui://notebook/{name}.html"
    if not uri.startswith("ui://"):
        raise ValueError(f"an app's URI uses the ui:// scheme, not {uri!r}")
    if visibility is not None and (not visibility or not set(visibility) <= {"model", "app"}):
        raise ValueError(f"visibility is a non-empty list of 'model' and 'app', not {list(visibility)!r}")
    resource_ui: dict[str, Any] = {}
    if csp:
        resource_ui["csp"] = dict(csp)
    if permissions:
        resource_ui["permissions"] = dict(permissions)
    if prefers_border is not None:
        resource_ui["prefersBorder"] = prefers_border
    if domain:
        resource_ui["domain"] = domain  # a host gives the view an origin of its own (here: apps/origin.py)
    source = app_source(app)
    meta = {"ui": resource_ui} if resource_ui else None

    def contents() -> dict[str, Any]:
        # wire-shaped, so the content item carries _meta.ui (csp, permissions): hosts read it there
        html = source() if callable(source) else source
        return {"uri": uri, "mimeType": APP_MIME, "text": html, **({"_meta": meta} if meta else {})}

    server.add_resource(uri, contents, name=f"{name} app", mime_type=APP_MIME, meta=meta)
    tool_ui: dict[str, Any] = {"resourceUri": uri}
    if visibility is not None:
        tool_ui["visibility"] = list(visibility)
    tool_meta = {**(options.pop("meta", None) or {}), "ui": tool_ui}
    server.extensions.setdefault(EXTENSION, {})  # the server says it speaks MCP Apps
    return server.add_tool(fn, meta=tool_meta, **options)
