"""Live views: an output that keeps itself current as messages arrive (issue 11 items 7 and 13).

``%mcp log NAME`` (the server's log messages and notifications, as the MCP Inspector's notifications
pane) and ``%mcp trace --live`` are static HTML outputs with a ``display_id``: each new message on the
connection republishes them, coalesced (at most every ``REFRESH`` seconds), so the saved notebook keeps
the last state it showed and no widget is needed.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Any

from .rendering.base import esc, json_text, one_line, wrap
from .rendering.views import filter_bundle

if TYPE_CHECKING:
    from ..engine.trace import Trace, TraceEntry
    from .calls.surface import Surface

__all__ = ["LivePane", "notifications_bundle"]

REFRESH = 0.3  # seconds between two republications of one pane


class LivePane:
    """A static output that follows one or more connections' traces."""

    def __init__(self, traces: list[Trace], render: Callable[[], dict[str, str]], surface: Surface) -> None:
        self._render, self._surface = render, surface
        self.display_id = f"mcp-live-{uuid.uuid4().hex}"
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._last = 0.0
        self.shown = False
        for trace in traces:
            trace.listen(self._on_entry)

    def _on_entry(self, _entry: TraceEntry) -> None:
        if not self.shown:
            return
        with self._lock:
            if self._timer is not None:
                return
            wait = max(0.0, self._last + REFRESH - time.monotonic())
            self._timer = threading.Timer(wait, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            self._last = time.monotonic()
        self._surface.publish(self._render(), self.display_id, update=True)

    def _ipython_display_(self) -> None:
        self.shown = True
        self._surface.publish(self._render(), self.display_id)

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        return filter_bundle(dict(self._render()), include, exclude)


def notifications_bundle(server: str, entries: list[dict[str, Any]], last: int = 200) -> dict[str, str]:
    """The server's notifications to us (log messages first among them), newest last."""
    found = [
        e
        for e in entries
        if e["direction"] == "in" and str(e["message"].get("method", "")).startswith("notifications/")
    ][-last:]
    title = f"{server}: log and notifications (live; newest last)"
    if not found:
        note = "nothing yet: this updates as the server sends log messages or notifications"
        return {
            "text/html": wrap(
                f'<div class="mcpnb-title">{esc(title)}</div><div class="mcpnb-note">{note}</div>'
            ),
            "text/plain": f"{title}\n({note})",
        }
    rows, lines = [], []
    start = found[0]["time"]
    for e in found:
        message = e["message"]
        method = str(message.get("method"))
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method == "notifications/message":
            what = f"[{params.get('level', '?')}] " + (
                f"{params['logger']}: " if params.get("logger") else ""
            )
            what += one_line(params.get("data"), 300)
        else:
            what = one_line(json_text(params, indent=None), 300)
        when = f"{(e['time'] - start):.3f} s"
        rows.append(f"<tr><td>{esc(when)}</td><td><code>{esc(method)}</code></td><td>{esc(what)}</td></tr>")
        lines.append(f"{when:>10}  {method}  {what}")
    table = (
        '<table class="mcpnb-table"><thead><tr><th>t</th><th>method</th><th>what</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    return {
        "text/html": wrap(f'<div class="mcpnb-title">{esc(title)}</div>{table}'),
        "text/plain": "\n".join([title, *lines]),
    }
