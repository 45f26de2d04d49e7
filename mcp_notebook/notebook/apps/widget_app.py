"""An anywidget served as an MCP App: ``@mcp.tool(app=MyWidget)`` (``apps/serve.py`` registers it).

The ``ui://`` resource is one self-contained HTML document (``text/html;profile=mcp-app``): the widget's
``_esm`` and ``_css`` (the module runs unmodified), its synced traits as the initial state, and a small
adapter (``widget_app.js``) that speaks the view side of the MCP Apps bridge over ``postMessage`` and gives
the widget's ``render({model, el})`` (and ``initialize({model})``) an anywidget-compatible ``model``. Nothing
is fetched: no URL is in the page but the ones the widget's own code holds, so the default policy of any
host (no ``connect-src``, no remote scripts) is enough.

The rules, in the widget's terms:

* **Initial state**: the widget's own synced traits (those its class adds to ``anywidget.AnyWidget``'s):
  for a class, their defaults; for an instance, their current values when the resource is read. Bytes
  travel as base64 and reach the widget as a ``DataView``, as anywidget gives them.
* **The tool's input**: each argument that names one of those traits sets it
  (``ui/notifications/tool-input``), so ``counter(count=5)`` shows 5 before the result arrives; an input
  that comes after a result changes nothing.
* **The tool's result**: each key of ``structuredContent`` that names one of those traits sets it in the
  model (``change:NAME`` then ``change``, as in Jupyter); other keys are ignored, and so is a result with
  ``isError``. A tool returning a ``TypedDict`` or dataclass with the traits' names drives the widget.
* **``model.save_changes()``**: the traits set since the last save go to the tool named by ``save_tool=``
  (``tools/call``, the changed traits as its arguments, its result applied by the rule above); without
  ``save_tool``, the whole state goes to the host as ``ui/update-model-context`` (a text line and
  ``structuredContent``), so the model the person talks to sees what they did in the widget.
* **``model.send(content)``**: calls the tool named by ``send_tool=`` with ``{"content": content}`` and
  hands its ``structuredContent`` back to the widget as a ``msg:custom`` message (a round trip, as with a
  kernel's ``on_msg``); without ``send_tool``, ``content`` goes to the host's log (``notifications/message``).
* ``model.on`` / ``off`` / ``get`` / ``set`` behave as in anywidget; ``widget_manager`` and
  ``experimental.invoke`` are not available (they need a kernel).
* The host's theme and style variables are set on the page (also under JupyterLab's ``--jp-*`` names, which
  widgets use); the page reports its size; ``ui/resource-teardown`` runs the widget's cleanup functions.

The module is imported from a ``blob:`` URL made by the page (our host's policy admits ``blob:`` scripts:
they can only be code the page already holds). A host whose policy admits inline scripts only gets the
same module as an inline module script, whose top-level ``render`` / ``initialize`` functions are taken
as the widget (``function render(...) {...}; export default { render }`` works both ways).

A module that imports another one (``import x from "..."``) cannot work in an app page; it is refused
when the tool is registered: bundle it first (``esbuild --bundle --format=esm``).
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

from ...errors import JSONRPCError
from ...protocol.errors import INTERNAL_ERROR

__all__ = ["MAX_STATE_CHARS", "is_widget", "widget_document", "widget_source", "widget_state"]

#: The state written into the page (bytes as base64) is at most this many characters: the page travels
#: whole in one resources/read answer, to every host that opens the app.
MAX_STATE_CHARS = 8_000_000

_ADAPTER = resources.files(__package__).joinpath("widget_app.js").read_text(encoding="utf-8")
_SKIPPED = {"_esm", "_css", "_anywidget_id"}
# a static import or re-export: a module the page would have to fetch. Each part's reach is bounded and no two
# adjacent parts match the same characters, so the search is linear in the module's size (the first version
# took minutes on "import" followed by 20,000 spaces: nested whitespace runs backtracked)
_IMPORTS = re.compile(
    r"""^[ \t]*(?:import(?:[\s{*][^;"'()]{0,1000}?\bfrom)?"""
    r"""|export[ \t]*(?:\*[^;"'()]{0,1000}?\bfrom|\{[^}]{0,10000}\}[ \t]*from))"""
    r"""\s*(["'])([^"'\n]+)\1""",
    re.MULTILINE,
)


def is_widget(app: Any) -> bool:
    """An anywidget class or instance: a ``HasTraits`` with an ``_esm``."""
    import traitlets

    kind = app if isinstance(app, type) else type(app)
    return issubclass(kind, traitlets.HasTraits) and hasattr(app, "_esm")


def _base_traits() -> set[str]:
    import anywidget

    return set(anywidget.AnyWidget.class_traits(sync=True))


def _jsonable(name: str, value: Any) -> tuple[Any, bool]:
    """The value as JSON (bytes as base64, flagged), or a ValueError naming the trait."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii"), True
    try:
        return json.loads(json.dumps(value, allow_nan=False)), False
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"the widget's trait {name!r} ({type(value).__name__}) cannot be an app's state: {exc}"
        ) from None


def widget_state(widget: Any) -> tuple[dict[str, Any], list[str]]:
    """The widget's own synced traits as JSON: defaults for a class, current values for an instance; and the
    names of those sent as base64 (bytes)."""
    if isinstance(widget, type):
        kind: Any = widget
        holder = kind.__new__(kind)  # traits with their (dynamic) defaults, no comm opened
        traits = kind.class_traits(sync=True)
    else:
        holder, traits = widget, widget.traits(sync=True)
    base = _base_traits()
    state: dict[str, Any] = {}
    binary: list[str] = []
    for name, trait in traits.items():
        if name in base or name in _SKIPPED:
            continue
        value = getattr(holder, name)
        to_json = trait.metadata.get("to_json")
        if callable(to_json):
            value = to_json(value, holder)
        state[name], is_bytes = _jsonable(name, value)
        if is_bytes:
            binary.append(name)
    sizes = {name: len(json.dumps(value)) for name, value in state.items()}
    if sum(sizes.values()) > MAX_STATE_CHARS:
        biggest = max(sizes, key=sizes.__getitem__)
        raise ValueError(
            f"the widget's state is {sum(sizes.values()):,} characters as JSON (trait {biggest!r}: "
            f"{sizes[biggest]:,}); an app's page holds at most {MAX_STATE_CHARS:,}: keep large data out of "
            "its synced traits (a tool result can bring it when the app asks)"
        )
    return state, binary


def _esm_of(widget: Any) -> str:
    esm = getattr(widget, "_esm", None)
    text = "" if esm is None else str(esm)  # a class's FileContents reads its file
    if not text.strip():
        raise ValueError("the widget has no _esm")
    if re.fullmatch(r"\s*https?://\S+\s*", text):
        raise ValueError(f"the widget's _esm is a URL ({text.strip()}): an app page cannot fetch it")
    found = _IMPORTS.search(text)
    if found:
        raise ValueError(
            f"the widget's module imports {found.group(2)!r}, which an app page cannot fetch: "
            "bundle it into one module (e.g. esbuild --bundle --format=esm)"
        )
    return text


def widget_document(
    widget: Any, *, name: str = "widget", save_tool: str | None = None, send_tool: str | None = None
) -> str:
    """The app's HTML: the widget's module, style and state, and the bridge adapter, all inline."""
    state, binary = widget_state(widget)
    css = getattr(widget, "_css", None)
    config = {
        "name": name,
        "esm": _esm_of(widget),
        "css": "" if css is None else str(css),
        "state": state,
        "binary": binary,
        "saveTool": save_tool,
        "sendTool": send_tool,
    }
    # inside <script type="application/json">: no "<" at all, so nothing in the data can end the element
    data = json.dumps(config).replace("<", "\\u003c")
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(name)}</title>"
        "<style>html,body{margin:0;padding:0;background:transparent}"
        "body{color:var(--color-text-primary,inherit);font-family:var(--font-sans,system-ui,sans-serif)}"
        "#mcpnb-widget-root{padding:4px}</style>"
        f'<script type="application/json" id="mcpnb-widget">{data}</script>'
        '</head><body><div id="mcpnb-widget-root"></div>'
        f"<script>{_ADAPTER}</script></body></html>"
    )


def widget_source(
    widget: Any, *, name: str, save_tool: str | None = None, send_tool: str | None = None
) -> Callable[[], str]:
    """The resource's value, made at each read (an instance's current traits, a widget file's edits); made
    once now, so that a widget an app cannot serve is refused when the tool is registered."""

    def document() -> str:
        return widget_document(widget, name=name, save_tool=save_tool, send_tool=send_tool)

    def read() -> str:  # an instance changed since: the reader learns why its page cannot be made
        try:
            return document()
        except ValueError as exc:
            raise JSONRPCError(INTERNAL_ERROR, f"the app of {name!r} cannot be made: {exc}") from exc

    document()
    return read


assert "</script" not in _ADAPTER.lower(), "the adapter is inlined in a <script> element"
