"""``%mcp tools`` in a live notebook: the tools table with a button per row that opens the tool's form
under the table, in the same cell (issue 19: tool rows clickable into a form).

The table stays :class:`~mcp_notebook.notebook.rendering.views.ToolsView` (its rows, ``.schema(name)``
and its static HTML, which a saved or exported notebook shows); this adds the live face. The form a row
opens is the one ``%mcp form SERVER.TOOL`` or ``mcp.form(...)`` gives, published under the cell that
listed the tools, whichever thread the click arrives on.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Container, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..rendering.base import esc
from ..rendering.views import ToolsView, filter_bundle
from .widgets import WIDGET_MIME, guarded

if TYPE_CHECKING:
    from .surface import Surface
    from .widgets import ToolForm

__all__ = ["ToolList"]

OpenForm = Callable[[str], "ToolForm"]
_CELL = "padding:2px 6px;line-height:1.35;overflow-wrap:anywhere"
#: A listing with more tools than this is the static table (a few widgets per row: thousands would take
#: seconds to make and to draw); ``.open(name)`` and ``%mcp form NAME`` still open any tool's form.
MAX_LIVE_TOOLS = 500


class ToolList(ToolsView):
    """The tools table; in a live notebook each row's name is a button opening that tool's form."""

    def __init__(
        self,
        tools: list[tuple[str, dict[str, Any]]],
        notes: Sequence[str] = (),
        *,
        open_form: OpenForm,
        surface: Surface,
        live: bool = True,
    ) -> None:
        many = len(tools) > MAX_LIVE_TOOLS
        if many and live:
            notes = [
                *notes,
                f"{len(tools)} tools: more than {MAX_LIVE_TOOLS}, so no buttons; open a form with "
                "%mcp form NAME (or .open(name) on this list)",
            ]
        super().__init__(tools, notes)
        self._open_form = open_form
        self._surface = surface
        # False without a frontend that renders widgets (headless), or with too many tools: the table only
        self.live = live and not many
        self.forms: list[ToolForm] = []  # opened from this list, oldest first
        self.buttons: dict[str, Any] = {}  # "call as" -> its row's button
        self.display_id = f"mcp-tools-{uuid.uuid4().hex}"
        self._widget: Any = None
        self.output = w.Output()  # a click's traceback, if opening a form fails (STYLE rule 7)

    def open(self, name: str) -> ToolForm:
        """Open the form of tool ``name`` (as listed under "call as") under this list, as a click does (from
        code in a later cell: in that cell)."""
        if name not in [row["call as"] for row in self.rows]:
            raise KeyError(f"no tool {name!r} in this list")
        form = self._open_form(name)
        self.forms.append(form)
        form._surface = self._surface  # its outputs go under the list's cell, not the clicking context's
        form._ipython_display_()
        return form

    @property
    def widget(self) -> Any:
        """The live table: a grid whose first column holds one button per tool."""
        if self._widget is None:
            self._widget = self._build()
        return self._widget

    def _build(self) -> Any:
        from ipywidgets.widgets.widget_button import ButtonStyle
        from ipywidgets.widgets.widget_string import HTMLStyle

        # one layout and one style shared by every cell (each is a widget of its own: a server with 300
        # tools made ~3,600 widgets instead of ~1,200, and took seconds to list)
        plain, style = w.Layout(), HTMLStyle()
        button_layout, button_style = w.Layout(width="auto", align_self="flex-start"), ButtonStyle()

        def cell(markup: str) -> Any:
            return w.HTML(f'<div style="{_CELL}">{markup}</div>', layout=plain, style=style)

        columns = [c for c in (self.columns or []) if c != "call as"]
        cells: list[Any] = [cell("<b>call as</b>")]
        cells += [cell(f"<b>{esc(c)}</b>") for c in columns]
        for row in self.rows:
            name = str(row["call as"])
            button = w.Button(
                description=name, tooltip=f"Open the form of {name}", layout=button_layout, style=button_style
            )
            button.on_click(guarded(self.output, partial(self.open, name)))
            self.buttons[name] = button
            cells.append(button)
            cells += [cell(esc(str(row.get(c) or ""))) for c in columns]
        grid = w.GridBox(
            cells,
            layout=w.Layout(
                grid_template_columns=f"max-content repeat({len(columns)}, minmax(6em, auto))",
                grid_gap="2px 4px",
                width="auto",
            ),
        )
        notes = "".join(f'<div class="mcpnb-note">{esc(n)}</div>' for n in self.notes)
        head = w.HTML(  # the widget's own styles: the page's mcpnb-* rules may not reach into a widget
            '<div class="mcpnb-title" style="font-weight:bold">MCP tools</div>'
            '<div class="mcpnb-note" style="font-size:12px;color:var(--jp-ui-font-color2,inherit)">'
            "Click a tool to open its form here.</div>"
        )
        return w.VBox([head, grid, *([w.HTML(notes)] if notes else []), self.output])

    # ---- display -------------------------------------------------------------------------------------------
    def static_bundle(self) -> dict[str, Any]:
        """The table as static HTML/text (what a saved notebook and a headless run show)."""
        bundle: dict[str, Any] = super()._repr_mimebundle_()
        return bundle

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        bundle = self.static_bundle()
        if self.live:
            bundle[WIDGET_MIME] = self.widget._repr_mimebundle_()[WIDGET_MIME]
        return filter_bundle(bundle, include, exclude)

    def _ipython_display_(self) -> None:
        from ..rendering.snapshots import remember

        # shown again by a later cell (``t = mcp.tools()``, then ``t``): in that cell, and so are its forms
        self._surface = self._surface.here()
        self._surface.publish(self._repr_mimebundle_(), self.display_id)
        if self.live:
            remember(self._surface.shell, self.display_id, self, self._surface.publish)
