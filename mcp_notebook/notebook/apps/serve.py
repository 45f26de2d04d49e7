"""Apps served from the notebook: ``@mcp.tool(app=HTML_or_path_or_widget)`` registers the tool and its
``ui://`` resource (``text/html;profile=mcp-app``), so a notebook can prototype an app and serve it to any
host (``%mcp serve``, ``mcp-notebook serve``), this notebook's own included.

A path is read again at every ``resources/read``: edit the file, re-run the call, see the change. An
anywidget class or instance becomes a page of its own (``widget_app.py``: its module, state and a bridge
adapter, all inline).
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
    app: Any,
    *,
    uri: str | None = None,
    visibility: Sequence[str] | None = None,
    csp: Mapping[str, Any] | None = None,
    permissions: Mapping[str, Any] | None = None,
    prefers_border: bool | None = None,
    domain: str | None = None,
    save_tool: str | None = None,
    send_tool: str | None = None,
    **options: Any,
) -> Tool:
    """Register ``fn`` as a tool whose app is ``app``, and the app as the resource ``uri``.

    ``app`` is an HTML document, the path of a ``.html`` file, or an anywidget class or instance
    (``save_tool`` / ``send_tool``: the tools its ``model.save_changes()`` / ``model.send()`` call; the
    rules are in :mod:`.widget_app`)."""
    from .widget_app import is_widget, widget_source

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
    if is_widget(app):
        source: str | Callable[[], str] = widget_source(
            app, name=name, save_tool=save_tool, send_tool=send_tool
        )
    elif save_tool or send_tool:
        raise ValueError("save_tool= and send_tool= are for an anywidget served as an app (app=MyWidget)")
    else:
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
