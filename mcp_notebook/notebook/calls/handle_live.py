"""``LiveDisplay``: a call handle's live display and the widgets attached to it (DESIGN decision 10).

Split from ``handle.py`` (issue 21 round 6, a pure move): publishing the handle under its ``display_id``,
republishing on each change from whichever thread it happens on (at most every 0.25 s unless forced), the
listeners told of each change, the live widget view while something is interactive, and the widgets the
notebook attaches mid-call (elicitation, sampling). :class:`~.handle.CallHandle` is the one class that
mixes it in; the members of the handle it reads are declared below.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .surface import Surface

__all__ = ["WIDGET_MIME", "LiveDisplay"]

log = logging.getLogger("mcp_notebook.notebook")

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class LiveDisplay:
    """The live display of a call handle (mixed into :class:`~.handle.CallHandle`)."""

    # what the display reads of the handle (set in CallHandle.__init__)
    interactive: bool
    _surface: Surface
    _view: Callable[[Any, dict[str, Any]], Any] | None
    _cond: threading.Condition
    _display_id: str | None
    _shown_in: int | None
    _listeners: list[Callable[[Any], None]]
    _waiting_widgets: list[Any]
    _widgets: dict[str, Any]
    _last_refresh: float
    _display_lock: threading.RLock
    _auto_show: bool

    if TYPE_CHECKING:

        @property
        def label(self) -> str: ...

        def done(self) -> bool: ...

        def static_bundle(self) -> dict[str, str]: ...

    # ---- widgets attached by the notebook (elicitation, sampling) ------------------------------------------
    def attach(self, widget: Any, *, waiting: bool = True) -> None:
        """Show ``widget`` with this call; ``waiting`` marks it as needing a person (a sync caller stops
        blocking so the cell can end and the click can arrive)."""
        self._extra().append(widget)
        if self._display_id is None and self.interactive and self._auto_show:
            self.show()
        else:
            self._refresh(force=True)
        with self._cond:  # only now: a sync caller that stops waiting finds the widget already shown
            if waiting:
                self._waiting_widgets.append(widget)
            self._cond.notify_all()

    def answered(self, widget: Any) -> None:
        """The person answered ``widget``: the call no longer waits for them (it may still run)."""
        with self._cond:
            if widget in self._waiting_widgets:
                self._waiting_widgets.remove(widget)

    def detach(self, widget: Any) -> None:
        with self._cond:
            if widget in self._waiting_widgets:
                self._waiting_widgets.remove(widget)
        if widget in self._extra():
            self._extra().remove(widget)
        self._refresh(force=True)

    def _extra(self) -> list[Any]:
        extra: list[Any] = self._widgets.setdefault("extra", [])
        return extra

    # ---- display -------------------------------------------------------------------------------------------
    def on_change(self, listener: Callable[[Any], None]) -> None:
        """``listener(handle)`` after every change of state, progress or attached widgets (any thread)."""
        self._listeners.append(listener)

    def show(self) -> None:
        """Publish the live view in the current cell; it updates in place as the call goes on."""
        with self._display_lock:
            if self._display_id is None:
                self._display_id = f"mcp-call-{uuid.uuid4().hex}"
            self._shown_in = self._surface.execution_count()
            self._surface.publish(self.live_bundle(), self._display_id)
        if not self.done():  # a live card or progress bar: left as its static state if the kernel stops
            from ..rendering.snapshots import remember

            remember(self._surface.shell, self._display_id, self, self._surface.publish)

    def _ipython_display_(self) -> None:
        if self._shown_in is not None and self._shown_in == self._surface.execution_count():
            return  # already showing (and updating) in this cell's output
        self.show()

    def _refresh(self, force: bool = False) -> None:
        # Changes come from two threads (runtime, clicks); publishing under one lock, from the state as it
        # is *then*, means the last update published always shows the latest state.
        with self._display_lock:
            if not force and time.monotonic() - self._last_refresh < 0.25:
                return
            self._last_refresh = time.monotonic()
            if self._display_id is not None:
                try:
                    self._surface.publish(self.live_bundle(), self._display_id, update=True)
                except Exception:  # a display failure must not break the call; logged, never hidden
                    log.exception("could not update the display of %s", self.label)
            for listener in list(self._listeners):
                try:
                    listener(self)
                except Exception:
                    log.exception("a listener of %s failed", self.label)

    def live_bundle(self) -> dict[str, Any]:
        """The static bundle, plus the widget view while something is interactive."""
        with self._display_lock:
            bundle: dict[str, Any] = self.static_bundle()
            box = self._box() if self.interactive and not self.done() else None
            if box is not None:
                bundle[WIDGET_MIME] = box._repr_mimebundle_()[WIDGET_MIME]
                from ..rendering.snapshots import register_view

                register_view(box.model_id, self)  # a save asks for this call's snapshot then
            return bundle

    def _box(self) -> Any:
        """The live widget (approval card or progress, then attached widgets), built by the ``view``
        the handle's maker gave (``widgets.call_view``); it keeps its parts in ``_widgets``."""
        return self._view(self, self._widgets) if self._view is not None else None

    def _close_widgets(self) -> None:
        if "box" in self._widgets:
            self._box()  # the box stays, showing the final snapshot (a reloaded page shows only the box)
        for key in ("approval", "progress"):
            view = self._widgets.pop(key, None)
            if view is not None:
                view.close()
