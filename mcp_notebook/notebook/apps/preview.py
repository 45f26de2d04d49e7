"""Previewing an app in the notebook, without a chat host (``%mcp app --preview FILE_OR_TOOL``,
``mcp.app(..., preview=True)``): the app in the notebook's own host, under a fake host context the person
changes (theme, container width), with buttons that send what a host would (partial input, input, result,
cancellation), and a live panel of every bridge message either way.

A file is served as the notebook's own app (server ``local``): its ``tools/call`` reach the notebook's tools,
through approval as always. A tool's app is read from its server, as ``%mcp app`` does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..rendering.base import esc, wrap
from . import APP_MIME
from .host import AppView

if TYPE_CHECKING:
    from .host import AppNotebook

__all__ = ["PreviewView", "open_preview", "preview_file"]

SHOWN = 60  # bridge messages in the panel, newest last


def preview_file(api: AppNotebook, path: str | Path) -> AppView:
    """An app view of the HTML file ``path``, as if the notebook's server served it."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no app file {str(file)!r}")
    uri = f"ui://preview/{file.name}"
    view = AppView(api, "local", {"name": file.stem}, uri)
    view.load({"contents": [{"uri": uri, "mimeType": APP_MIME, "text": file.read_text(encoding="utf-8")}]})
    return view


def open_preview(api: AppNotebook, name: str, open_tool: Callable[[], AppView]) -> PreviewView:
    """The preview of an HTML file (``name`` ends in .html/.htm) or of a tool's app (``open_tool()``)."""
    if name.lower().endswith((".html", ".htm")):
        return PreviewView(preview_file(api, name))
    return PreviewView(open_tool())


def _json(text: str, what: str) -> dict[str, Any]:
    value = json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError(f"{what} is a JSON object, not {type(value).__name__}")
    return value


class PreviewView:
    """The preview: controls above the app, the bridge's messages beside it."""

    def __init__(self, view: AppView) -> None:
        self.view = view
        self.theme = w.ToggleButtons(options=["follow JupyterLab", "light", "dark"], description="theme")
        self.width = w.IntSlider(value=0, min=0, max=1600, step=20, description="width (0: auto)")
        self.partial = w.Textarea(value='{"a": 1}', description="partial input", layout=w.Layout(width="48%"))
        self.input = w.Textarea(value="{}", description="tool input", layout=w.Layout(width="48%"))
        self.result = w.Textarea(
            value='{"content": [{"type": "text", "text": "done"}]}',
            description="tool result",
            layout=w.Layout(width="48%"),
        )
        buttons = {
            "send partial input": self._send_partial,
            "send input": self._send_input,
            "send result": self._send_result,
            "cancel the call": self._cancel,
        }
        row = []
        for text, action in buttons.items():
            button = w.Button(description=text, layout=w.Layout(width="auto"))
            button.add_class("mcpnb-preview-" + text.replace(" ", "-"))
            button.on_click(lambda _b, action=action: self._guarded(action))
            row.append(button)
        self.problem = w.HTML()
        self.panel = w.HTML(layout=w.Layout(max_height="320px", overflow="auto"))
        self.panel.add_class("mcpnb-preview-bridge")
        self.theme.observe(self._theme, "value")
        self.width.observe(self._width, "value")
        self._lock = threading.Lock()
        view.on_record.append(self._redraw)
        controls = w.VBox(
            [
                w.HTML(f'<div class="mcpnb-title">preview of {esc(view.uri)} (a fake host context)</div>'),
                w.HBox([self.theme, self.width]),
                w.HBox([self.partial, self.input]),
                w.HBox([self.result]),
                w.HBox(row),
                self.problem,
            ]
        )
        self.box = w.VBox([controls, view.box, w.HTML("<b>bridge messages</b> (newest last)"), self.panel])
        self._redraw()

    # ---- what a host would send ----------------------------------------------------------------------------
    def _guarded(self, action: Any) -> None:
        try:
            action()
            self.problem.value = ""
        except ValueError as exc:  # json.JSONDecodeError is one
            self.problem.value = f'<span style="color:var(--jp-error-color1, #c00)">{esc(str(exc))}</span>'

    def _send_partial(self) -> None:
        self.view.send_partial_input(_json(self.partial.value, "partial input"))

    def _send_input(self) -> None:
        self.view.tool_input = _json(self.input.value, "tool input")

    def _send_result(self) -> None:
        self.view.tool_result = _json(self.result.value, "tool result")

    def _cancel(self) -> None:
        self.view.tool_cancelled = "cancelled in the preview"

    def _theme(self, change: dict[str, Any]) -> None:
        self.view.theme_override = "" if change["new"] == "follow JupyterLab" else str(change["new"])

    def _width(self, change: dict[str, Any]) -> None:
        self.view.width_override = int(change["new"])

    # ---- the panel -----------------------------------------------------------------------------------------
    def _redraw(self) -> None:
        with self._lock:
            entries = list(self.view.messages)[-SHOWN:]
        rows = []
        for entry in entries:
            message = entry["message"] if isinstance(entry.get("message"), dict) else {}
            arrow = "app → host" if entry["direction"] == "out" else "host → app"
            what = message.get("method") or f"answer to {message.get('id')}"
            body = json.dumps(message.get("params", message.get("result", message.get("error"))))[:300]
            rows.append(
                f"<tr><td>{esc(arrow)}</td><td><code>{esc(str(what))}</code></td><td>{esc(body)}</td></tr>"
            )
        self.panel.value = wrap(f'<table class="mcpnb-table">{"".join(rows)}</table>')

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = self.box._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        head = f"preview of the MCP App {self.view.uri} (interactive in a live notebook)"
        return {**(bundle or {}), "text/plain": head, "text/html": wrap(f"<div>{esc(head)}</div>")}

    def __repr__(self) -> str:
        return f"<PreviewView {self.view.uri}: {len(self.view.messages)} bridge messages>"
