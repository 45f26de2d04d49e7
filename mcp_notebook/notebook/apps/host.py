"""An MCP App in a notebook output: :class:`AppView`, one anywidget (DESIGN decision 17) whose ES module
front end (``host.js``) runs the app in a sandboxed iframe and speaks the postMessage bridge.

The kernel side kept here: the app's document (read from the server, CSP applied: ``sandbox.py``), what
the view is told (tool input, partial input, result, cancellation), and the app's requests that need the
notebook: ``tools/call`` and ``resources/read`` on the app's own server (through the same approval policy
and audit log as any call; app-only tools included, other servers never), ``ui/message`` and
``ui/update-model-context`` (a notebook has no model: they are kept, shown under the app and written to
the history), and logs. Every bridge message either way is recorded in :attr:`AppView.messages`, in the
trace's shape, so ``view.trace()`` shows (and draws) the conversation.

A saved notebook keeps a static fallback beside the widget: the tool's text content.
"""

from __future__ import annotations

import base64
import binascii
import threading
import time
from collections.abc import Callable, Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

import anywidget
import ipywidgets as w
import traitlets as t

from ..._version import __version__
from ..calls.policy import AuditEntry
from ..rendering.base import esc, json_pre, note_html, pre_html, wrap
from ..rendering.views import TraceView, filter_bundle
from . import APP_MIME, ui_meta
from .app_tools import AppToolsMixin
from .sandbox import SANDBOX, allow_attribute, csp_policy, prepare_document, proxy_document

if TYPE_CHECKING:
    from ...engine.runtime import Runtime
    from ..calls.asking import Asking
    from ..calls.handle import CallHandle
    from ..calls.pipeline import Calls
    from ..calls.policy import AuditLog


class AppNotebook(Protocol):
    """What an app view needs from the notebook's ``mcp`` object (``api.NotebookMCP``), declared here so
    that the import runs one way (api -> apps.host)."""

    audit: AuditLog
    calls: Calls

    @property
    def answering(self) -> Asking: ...

    @property
    def headless(self) -> bool: ...

    @property
    def runtime(self) -> Runtime: ...

    def prepare(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call_timeout: float | None = None,
        **kwargs: Any,
    ) -> CallHandle: ...


__all__ = ["AppView", "open_app", "show_for_call"]

# one ES module (anywidget's loader takes no imports of our own): the focus order, the frames' layer, the
# courier, the guard document, the host
_ESM = "\n".join(
    resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    for name in ("focus.js", "layer.js", "courier.js", "guard.js", "host.js")
)
HOST_INFO = {"name": "mcp-notebook", "version": __version__}
HOST_CAPABILITIES: dict[str, Any] = {
    "openLinks": {},
    "downloadFile": {},
    "serverTools": {},
    "serverResources": {},
    "logging": {},
    "message": {"text": {}, "structuredContent": {}},
    "updateModelContext": {"text": {}, "structuredContent": {}},
    "sampling": {},  # answered as a server's sampling is: the mcp.on_sampling callback, or a card
}


def _first_item(contents: Mapping[str, Any]) -> Mapping[str, Any] | None:
    items = contents.get("contents")
    if not isinstance(items, list):
        return None
    return next((c for c in items if isinstance(c, Mapping)), None)


def _text_of(result: Mapping[str, Any] | None) -> str:
    content = (result or {}).get("content")
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


class AppView(AppToolsMixin, anywidget.AnyWidget):
    """One app's view: the iframe and the bridge. Made by ``mcp.call`` (an app tool) or ``mcp.app(...)``."""

    _esm = t.Unicode(_ESM).tag(sync=True)
    html = t.Unicode("").tag(sync=True)
    status = t.Unicode("").tag(sync=True)
    title = t.Unicode("MCP App").tag(sync=True)
    label = t.Unicode("").tag(sync=True)  # shown above the frame: whose app this is
    # inline (in the output), fullscreen (a full-window overlay) or pip (a small window in a corner); set by
    # the person (the buttons above the frame), the app (ui/request-display-mode) or code
    display_mode = t.Enum(["inline", "fullscreen", "pip"], "inline").tag(sync=True)
    # a fake host context (the preview): "" follows JupyterLab's theme; 0 lets the output decide the width
    theme_override = t.Unicode("").tag(sync=True)
    width_override = t.Int(0).tag(sync=True)
    sandbox = t.Unicode(SANDBOX).tag(sync=True)
    policy = t.Unicode(csp_policy(None)).tag(sync=True)  # the proxy frame's CSP: the view inherits it
    origin = t.Unicode("").tag(sync=True)  # "PORT/TOKEN" of the kernel's proxy origin (apps/origin.py), or ""
    proxy_html = t.Unicode(proxy_document(csp_policy(None))).tag(sync=True)  # the proxy frame's document
    allow = t.Unicode("").tag(sync=True)
    prefers_border = t.Bool(False).tag(sync=True)
    height = t.Int(150).tag(sync=True)
    max_height = t.Int(1600).tag(sync=True)
    host_info = t.Dict(HOST_INFO).tag(sync=True)
    host_capabilities = t.Dict(HOST_CAPABILITIES).tag(sync=True)
    tool_info = t.Dict().tag(sync=True)
    tool_input = t.Dict(allow_none=True, default_value=None).tag(sync=True)
    tool_input_partial = t.Dict(allow_none=True, default_value=None).tag(sync=True)
    tool_result = t.Dict(allow_none=True, default_value=None).tag(sync=True)
    tool_cancelled = t.Unicode(allow_none=True, default_value=None).tag(sync=True)
    # the widget's comm id: the host's way to the kernel once the notebook's tab is closed (courier.js)
    comm_id = t.Unicode("").tag(sync=True)

    def __init__(
        self, api: AppNotebook, server: str, tool: Mapping[str, Any], uri: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.comm_id = str(getattr(self.comm, "comm_id", "") or "")
        self.api, self.server, self.tool, self.uri = api, server, dict(tool), uri
        self.title = f"MCP App {uri}"
        tool_name = str(self.tool.get("name") or "")
        self.source = f"{server}.{tool_name}" if tool_name else server  # whose app: SERVER.TOOL
        self.label = f"sandboxed app · {server} · {tool_name or uri}"
        self.from_app = f" (from the app of {self.source})"  # what the history says of the app's calls
        self.messages: list[dict[str, Any]] = []  # the bridge's trace: {"direction", "time", "message"}
        self.on_record: list[Callable[[], None]] = []  # called after each bridge message is recorded
        self.app_messages: list[dict[str, Any]] = []  # ui/message params, oldest first
        self.model_context: dict[str, Any] | None = None  # the last ui/update-model-context params
        self.logs: list[dict[str, Any]] = []
        self.calls: list[CallHandle] = []  # tools/call from the app
        self.torn_down: bool | None = None
        self.resource_ui: dict[str, Any] = {}  # the resource's _meta.ui, as used (content item, or listing)
        self.closed: str | None = None  # why the front end closed the bridge (the view left its page)
        self.activity = w.Output()  # approvals and calls from the app, messages it sent
        self.box = w.VBox([self, self.activity])
        self._lock = threading.Lock()
        self._display_id: str | None = None
        self._app_capabilities: dict[str, Any] = {}  # what the app declared in ui/initialize
        self._init_app_tools()
        self.on_msg(self._on_front_end)

    # ---- the document ------------------------------------------------------------------------------------
    def load(self, contents: Mapping[str, Any], listing: Mapping[str, Any] | None = None) -> None:
        """Show a ``resources/read`` result: the first ``ui://`` HTML content, under its CSP.

        The resource's ``_meta.ui`` (csp, permissions, domain, prefersBorder) is read from the content item;
        when the item carries none, from ``listing``, the resource's entry in ``resources/list`` (the spec's
        metadata-location fallback)."""
        item = _first_item(contents)
        if item is None:
            self.status = f"{self.uri}: the server returned no contents"
            return
        mime = str(item.get("mimeType") or "")
        if mime.replace(" ", "").lower() != APP_MIME:
            self.status = f"{self.uri}: not an MCP App (mimeType {mime!r}, expected {APP_MIME!r})"
            return
        text = item.get("text")
        if not isinstance(text, str):
            try:
                text = base64.b64decode(str(item.get("blob", "")), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                self.status = f"{self.uri}: the contents are neither text nor UTF-8 base64"
                return
        ui = ui_meta({"_meta": item.get("_meta")}) or ui_meta({"_meta": (listing or {}).get("_meta")})
        self.resource_ui = ui
        csp = ui.get("csp") if isinstance(ui.get("csp"), Mapping) else None
        self.allow = allow_attribute(
            ui.get("permissions") if isinstance(ui.get("permissions"), Mapping) else None
        )
        self.prefers_border = ui.get("prefersBorder") is True
        self.policy = csp_policy(csp)
        self.proxy_html = proxy_document(self.policy)
        domain = ui.get("domain")
        if isinstance(domain, str) and domain.strip():  # a real origin of its own (the front end decides)
            from .origin import origin_for

            port, token = origin_for(domain.strip())
            self.origin = f"{port}/{token}"
        self.html = prepare_document(text, csp)
        self.status = ""

    def fetch(self) -> None:
        """Read the app's resource on the runtime loop (never blocking the cell), then load it; when the
        content item carries no ``_meta.ui``, its ``resources/list`` entry is read for it."""
        self.status = f"loading {self.uri} …"
        client = self.api.calls.client(self.server)
        uri = self.uri

        async def read() -> tuple[dict[str, Any], dict[str, Any] | None]:
            contents = await client.aio.read_resource(uri)
            item = _first_item(contents)
            if item is None or ui_meta({"_meta": item.get("_meta")}):
                return contents, None
            try:
                listed = await client.aio.list_resources()
            except Exception:  # a server without resources/list: the item's (absent) metadata stands
                return contents, None
            entry = next((r for r in listed if isinstance(r, Mapping) and r.get("uri") == uri), None)
            return contents, (dict(entry) if entry is not None else None)

        def done(future: Any) -> None:
            error = future.exception()
            if error is not None:
                self.status = f"{self.uri}: could not read the app ({type(error).__name__}: {error})"
            else:
                self.load(*future.result())

        self.api.runtime.submit(read()).add_done_callback(done)

    # ---- what the view is told ---------------------------------------------------------------------------
    def follow(self, handle: CallHandle) -> None:
        """Give the view the call's input now and its result (or cancellation) when it ends."""
        self.tool_input = dict(handle.arguments)
        handle.on_change(self._call_changed)
        self._call_changed(handle)

    def _call_changed(self, handle: CallHandle) -> None:
        if not handle.done() or self.tool_result is not None or self.tool_cancelled is not None:
            return
        if handle.state in ("done", "denied") and handle.result is not None:
            self.tool_result = dict(handle.result)
        else:
            self.tool_cancelled = f"the call {handle.state}"
        self._refresh_display()

    def send_partial_input(self, arguments: Mapping[str, Any]) -> None:
        """Stream arguments still being written (``ui/notifications/tool-input-partial``)."""
        self.tool_input_partial = dict(arguments)

    # ---- the bridge, kernel side -------------------------------------------------------------------------
    def _record(self, direction: str, message: Any) -> None:
        with self._lock:
            self.messages.append({"direction": direction, "time": time.time(), "message": message})
        for listener in list(self.on_record):
            listener()

    def _to_app(self, message: dict[str, Any]) -> None:
        self._record("in", message)  # recorded from the app's side: the app is the client of the bridge
        self.send({"kind": "to_app", "message": message})

    def _reply(self, request_id: Any, result: Any) -> None:
        self._to_app({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _fail(self, request_id: Any, code: int, message: str) -> None:
        self._to_app({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def _on_front_end(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, Mapping):
            return
        kind, message = content.get("kind"), content.get("message")
        if kind == "torn_down":
            self.torn_down = content.get("ok") is True
            return
        if kind == "closed":  # the view navigated: the front end relays nothing to or from it any more
            self.closed = str(content.get("reason") or "closed")
            self._audit("app-left", {"reason": self.closed}, "closed")
            return
        if kind == "out":  # the front end spoke to the app itself (initialize answer, notifications)
            self._record("in", message)
        elif kind == "decision" and isinstance(message, Mapping):
            # the person's answers to the app's asks (open a link, save files), for the history; a display
            # mode change is kept in display_mode (synced) and needs no entry
            audited = {"ui/open-link": "open-link", "ui/download-file": "app-download"}
            if message.get("method") in audited:
                self._audit(audited[str(message.get("method"))], message, "done")
        elif kind == "in" and isinstance(message, Mapping):
            self._record("out", message)
            method = message.get("method")
            if method == "ui/initialize" and isinstance(message.get("params"), Mapping):
                caps = message["params"].get("appCapabilities")
                self._app_capabilities = dict(caps) if isinstance(caps, Mapping) else {}
            elif method == "ui/notifications/initialized":
                self._app_initialized(self._app_capabilities)
            if content.get("handled"):
                return
            if method is None:
                self._answered(message)  # an answer to the kernel's own request (tools/list, tools/call)
            else:
                self._dispatch(message)

    def _dispatch(self, message: Mapping[str, Any]) -> None:
        method, request_id = str(message.get("method")), message.get("id")
        params = message.get("params") if isinstance(message.get("params"), Mapping) else {}
        assert isinstance(params, Mapping)
        handler = _HANDLERS.get(method)
        if handler is None:
            if request_id is not None:
                self._fail(request_id, -32601, f"the notebook host does not handle {method}")
            return
        try:
            handler(self, request_id, params)
        except Exception as exc:  # the app gets an answer, the notebook the traceback
            if request_id is not None:
                self._fail(request_id, -32603, f"{type(exc).__name__}: {exc}")
            self.activity.append_stderr(f"{method} from the app failed: {type(exc).__name__}: {exc}\n")

    def _audit(self, kind: str, arguments: Mapping[str, Any], status: str) -> AuditEntry:
        entry = AuditEntry(self.server, f"app {self.uri}", dict(arguments), "allow", "app", status, kind=kind)
        return self.api.audit.add(entry)

    def _show(self, bundle: dict[str, Any]) -> None:
        output = {"output_type": "display_data", "data": bundle, "metadata": {}}
        self.activity.outputs = (*self.activity.outputs, output)

    def _tools_call(self, request_id: Any, params: Mapping[str, Any]) -> None:
        name = params.get("name")
        if not isinstance(name, str):
            raise ValueError("tools/call needs a tool name")
        tool = self.api.calls.definition(self.server, name, self.api.calls.tools(self.server, name))
        if "app" not in (ui_meta(tool).get("visibility") or ["model", "app"]):
            self._fail(request_id, -32602, f"{name} is not callable from an app (visibility)")
            return
        arguments = params.get("arguments") if isinstance(params.get("arguments"), Mapping) else {}
        target = name if self.server == "local" and "." not in name else f"{self.server}.{name}"
        handle = self.api.prepare(target, dict(arguments or {}))
        handle._auto_show = False
        self.calls.append(handle)
        self._show(_said_bundle(f"the app ({self.label}) calls {name}"))
        index = len(self.activity.outputs)
        self._show(handle.live_bundle())
        answered = threading.Event()

        def changed(h: CallHandle) -> None:  # any thread: the runtime's, or the kernel's on a click
            if not h.entry.decided_by.endswith(self.from_app):  # the history says who asked
                h.entry.decided_by += self.from_app
            outputs = list(self.activity.outputs)
            if index < len(outputs):
                outputs[index] = {"output_type": "display_data", "data": h.live_bundle(), "metadata": {}}
                self.activity.outputs = tuple(outputs)
            if h.done() and not answered.is_set():
                answered.set()
                self._refresh_display()  # the saved/exported fallback lists the app's calls
                if h.result is not None:
                    self._reply(request_id, h.result)  # a denied call answers with its isError result
                else:
                    self._fail(request_id, -32603, f"{h.label} {h.state}")

        handle.entry.decided_by += self.from_app
        handle.on_change(changed)
        if handle.state == "running":
            handle._launch()
        elif handle.done():
            changed(handle)

    def _tools_list(self, request_id: Any, _params: Mapping[str, Any]) -> None:
        """The app's server's tools the app may call (visibility includes ``app``), app-only ones too."""
        tools = self.api.calls.tools(self.server)
        callable_here = [
            dict(t) for t in tools.values() if "app" in (ui_meta(t).get("visibility") or ["app"])
        ]
        self._reply(request_id, {"tools": callable_here})

    def _resources_read(self, request_id: Any, params: Mapping[str, Any]) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise ValueError("resources/read needs a uri")
        entry = self._audit("app-read", {"uri": uri}, "running")
        client = self.api.calls.client(self.server)
        started = time.time()

        def done(future: Any) -> None:
            entry.duration = time.time() - started
            error = future.exception()
            if error is not None:
                entry.status, entry.error = "failed", f"{type(error).__name__}: {error}"
                self._fail(request_id, getattr(error, "code", -32603), str(error))
            else:
                entry.status = "done"
                self._reply(request_id, future.result())

        self.api.runtime.submit(client.aio.read_resource(uri)).add_done_callback(done)

    def _sampling(self, request_id: Any, params: Mapping[str, Any]) -> None:
        """``sampling/createMessage`` from the app, only while the host declares ``sampling``: answered like a
        server's (the ``mcp.on_sampling`` callback; headless, rejected), or by the person on a card under
        the app. Each answer is in the history (kind ``sampling``, server ``SERVER.TOOL (app)``)."""
        if "sampling" not in self.host_capabilities:
            self._fail(request_id, -32601, "this host does not offer sampling to apps")
            return
        asking, who = self.api.answering, f"{self.source} (app)"
        if asking.sampling_callback is not None or self.api.headless:

            def done(future: Any) -> None:
                error = future.exception()
                if error is not None:
                    self._fail(request_id, getattr(error, "code", -32603), str(error))
                else:
                    self._reply(request_id, future.result())

            self.api.runtime.submit(asking.sampling(who, dict(params))).add_done_callback(done)
            return
        from ..calls.widgets import SamplingCard

        def answered(reply: dict[str, Any] | None) -> None:  # on the clicking thread
            entry = AuditEntry(who, "sampling", dict(params), "answered" if reply else "rejected", "you",
                               "answered" if reply else "rejected", kind="sampling")  # fmt: skip
            self.api.audit.add(entry)
            if reply is None:
                self._fail(request_id, -1, "User rejected sampling request")
            else:
                self._reply(request_id, reply)

        self.activity.append_display_data(SamplingCard(f"the app ({self.label})", params, answered).widget)

    def _message(self, request_id: Any, params: Mapping[str, Any]) -> None:
        self.app_messages.append(dict(params))
        self._audit("app-message", params, "kept")
        self._show(_kept_bundle("the app says (ui/message)", params))
        self._reply(request_id, {})

    def _model_context(self, request_id: Any, params: Mapping[str, Any]) -> None:
        self.model_context = dict(params)
        self._audit("app-context", params, "kept")
        self._show(_kept_bundle("the app's context for a model (ui/update-model-context)", params))
        self._reply(request_id, {})

    def _log(self, _request_id: Any, params: Mapping[str, Any]) -> None:
        self.logs.append(dict(params))

    def _teardown_asked(self, _request_id: Any, params: Mapping[str, Any]) -> None:
        self._audit("app-teardown-asked", params, "kept")

    # ---- ending --------------------------------------------------------------------------------------------
    def teardown(self, timeout: float = 3.0) -> None:
        """Send ``ui/resource-teardown``; the frame goes once the app answered (or after ``timeout``).

        The answer arrives as a comm message, which a cell that blocks cannot receive (DESIGN decision 4):
        read :attr:`torn_down` from a later cell (True: the app answered; False: it did not in time).
        """
        self.torn_down = None
        self.send({"kind": "teardown", "timeout_ms": int(timeout * 1000)})

    # ---- display -------------------------------------------------------------------------------------------
    def fallback_bundle(self) -> dict[str, str]:
        """What a saved or exported notebook shows: whose app it is, the tool's text content, and the calls
        the app made (each attributed to it)."""
        text = _text_of(self.tool_result)
        head = f"MCP App {self.uri}: {self.label} (interactive in a live notebook)"
        html = f'<div class="mcpnb-title">{esc(head)}</div>' + (pre_html(text, 20_000) if text else "")
        plain = head + (f"\n{text}" if text else "")
        for handle in list(self.calls):
            line = f"the app called {handle.entry.tool} {handle.entry.arguments}: {handle.state}"
            answer = _text_of(handle.result) if handle.result is not None else ""
            html += f'<div class="mcpnb-label">{esc(line)}</div>' + (pre_html(answer, 4000) if answer else "")
            plain += f"\n{line}" + (f"\n{answer}" if answer else "")
        return {"text/html": wrap(html), "text/plain": plain}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return filter_bundle(
            _with_widget(self.fallback_bundle(), self.box, **kwargs),
            kwargs.get("include"),
            kwargs.get("exclude"),
        )

    def show(self) -> None:
        """Publish the view in the current cell, as two outputs: the app (its frame; never replaced, so the
        app keeps its state) and under it the activity (approvals and calls from the app, messages it sent)
        whose saved fallback (the result's text, the calls the app made) is updated as they happen."""
        import uuid

        head = f"MCP App {self.uri}: {self.label} (interactive in a live notebook)"
        static = {"text/html": wrap(f'<div class="mcpnb-title">{esc(head)}</div>'), "text/plain": head}
        self.api.calls.surface.publish(_with_widget(static, self))
        self._display_id = f"mcp-app-{uuid.uuid4().hex}"
        self.api.calls.surface.publish(_with_widget(self.fallback_bundle(), self.activity), self._display_id)

    def _refresh_display(self) -> None:
        if self._display_id is not None:
            bundle = _with_widget(self.fallback_bundle(), self.activity)
            self.api.calls.surface.publish(bundle, self._display_id, update=True)

    def trace(self, *, diagram: bool = True) -> TraceView:
        """The bridge's messages (app = client, notebook = host), drawn as a sequence diagram by default."""
        with self._lock:
            entries = list(self.messages)
        return TraceView([(f"app {self.uri}", entries)], diagram=diagram)

    def __repr__(self) -> str:
        return f"<AppView {self.uri} of {self.server!r}: {len(self.messages)} bridge messages>"


def _with_widget(bundle: dict[str, str], widget: w.DOMWidget, **kwargs: Any) -> dict[str, Any]:
    """``bundle`` (the saved notebook's fallback) with ``widget``'s own view beside it (the widget's, not an
    override's: AppView's own repr is its box, the frame and the activity)."""
    widget_bundle = w.DOMWidget._repr_mimebundle_(widget, **kwargs)
    if isinstance(widget_bundle, tuple):
        widget_bundle = widget_bundle[0]
    return {**bundle, **{k: v for k, v in (widget_bundle or {}).items() if k != "text/plain"}}


def _said_bundle(text: str) -> dict[str, str]:
    return {"text/html": wrap(f'<div class="mcpnb-label">{esc(text)}</div>'), "text/plain": text}


def _kept_bundle(title: str, params: Mapping[str, Any]) -> dict[str, str]:
    texts = _text_of(params)
    body = (pre_html(texts, 4000) if texts else "") + (
        json_pre(params.get("structuredContent")) if "structuredContent" in params else ""
    )
    return {
        "text/html": wrap(f'<div class="mcpnb-label">{esc(title)}</div>{body}'
                          + note_html("kept in mcp.history() (a notebook has no model to send it to)")),
        "text/plain": f"{title}: {texts}",
    }  # fmt: skip


_HANDLERS: dict[str, Callable[[AppView, Any, Mapping[str, Any]], None]] = {
    "tools/call": AppView._tools_call,
    "tools/list": AppView._tools_list,
    "notifications/tools/list_changed": lambda view, _id, _params: view.list_app_tools(),
    "resources/read": AppView._resources_read,
    "sampling/createMessage": AppView._sampling,
    "ui/message": AppView._message,
    "ui/update-model-context": AppView._model_context,
    "notifications/message": AppView._log,
    "ui/notifications/request-teardown": AppView._teardown_asked,
}


def open_app(
    api: AppNotebook, server: str, tool: Mapping[str, Any], *, tool_id: Any = None
) -> AppView | None:
    """A view for ``tool``'s app (None if the tool names none), its document being fetched."""
    uri = ui_meta(tool).get("resourceUri")
    if not isinstance(uri, str):
        return None
    view = AppView(api, server, tool, uri)
    info: dict[str, Any] = {"tool": dict(tool)}
    if tool_id is not None:
        info["id"] = tool_id
    view.tool_info = info
    view.fetch()
    return view


def show_for_call(api: AppNotebook, handle: CallHandle) -> AppView | None:
    """Show the app of the tool ``handle`` calls, above the call: the input now, the result when it ends."""
    view = open_app(api, handle.server, handle.tool_def or {})
    if view is not None:
        handle.app = view
        view.follow(handle)
        view.show()
    return view
