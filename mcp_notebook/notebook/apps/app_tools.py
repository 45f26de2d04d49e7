"""Tools an app registers in its own view (ext-apps: ``appCapabilities.tools``; the host sends the view
``tools/list`` and ``tools/call``), as the notebook has them: listed under the app once it is initialized
(and again on ``notifications/tools/list_changed``), and callable from the notebook through an approval
card (``view.call_app_tool(name, arguments)``), each call written to the history (kind ``app-tool``) and its
answer shown under the app.

The kernel never waits for the view: a cell that blocks cannot receive the comm message carrying the answer
(DESIGN decision 4). Requests go out with an id of the kernel's own, and answers land in
:attr:`AppToolsMixin.app_tools` and :attr:`AppToolsMixin.app_tool_results` (read them from a later cell), or
in ``on_result`` callbacks.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..rendering.base import esc, json_pre, pre_html, wrap

if TYPE_CHECKING:
    from ..calls.policy import AuditEntry

__all__ = ["AppToolsMixin"]

_ids = itertools.count(1)
Answer = Callable[[Mapping[str, Any]], None]


class AppToolsMixin:
    """The app's own tools, for :class:`~.host.AppView` (which provides what is declared here)."""

    activity: w.Output
    label: str
    app_tools: list[dict[str, Any]] | None
    app_tool_results: list[dict[str, Any]]
    _waiting: dict[str, Answer]

    # provided by AppView
    _to_app: Callable[[dict[str, Any]], None]
    _show: Callable[[dict[str, Any]], None]
    _audit: Callable[[str, Mapping[str, Any], str], AuditEntry]

    def _init_app_tools(self) -> None:
        self.app_tools = None  # None until the app answered tools/list (or if it has no tools)
        self.app_tool_results = []  # {"name", "arguments", "result" | "error"}, oldest first
        self._waiting = {}

    # ---- requests to the view, answers from it ------------------------------------------------------------
    def _request_view(self, method: str, params: dict[str, Any], answer: Answer) -> None:
        request_id = f"kernel-{next(_ids)}"
        self._waiting[request_id] = answer
        self._to_app({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def _answered(self, message: Mapping[str, Any]) -> bool:
        """An answer to one of the kernel's requests (True), or not one of ours."""
        answer = self._waiting.pop(str(message.get("id")), None)
        if answer is None:
            return False
        answer(message)
        return True

    def _app_initialized(self, capabilities: Mapping[str, Any]) -> None:
        if isinstance(capabilities.get("tools"), Mapping):
            self.list_app_tools()

    # ---- listing -------------------------------------------------------------------------------------------
    def list_app_tools(self) -> None:
        """Ask the view for its tools (``tools/list``); they land in :attr:`app_tools` and under the app."""

        def listed(message: Mapping[str, Any]) -> None:
            result = message.get("result")
            tools = result.get("tools") if isinstance(result, Mapping) else None
            if not isinstance(tools, list):
                self._show(_line_bundle(f"the app's tools/list failed: {_error_text(message)}"))
                return
            self.app_tools = [
                dict(t) for t in tools if isinstance(t, Mapping) and isinstance(t.get("name"), str)
            ]
            self._show(_tools_bundle(self.label, self.app_tools))

        self._request_view("tools/list", {}, listed)

    # ---- calling -------------------------------------------------------------------------------------------
    def call_app_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        approved: bool = False,
        on_result: Answer | None = None,
    ) -> None:
        """Call a tool the app registered: an approval card under the app first (``approved=True``: the code
        decided), then ``tools/call`` to the view; the answer lands in :attr:`app_tool_results`."""
        known = [t["name"] for t in self.app_tools or []]
        if self.app_tools is not None and name not in known:
            raise ValueError(f"the app has no tool {name!r} (it lists: {', '.join(known) or 'none'})")
        args = dict(arguments or {})

        def send(decided_by: str) -> None:
            entry = self._audit("app-tool", {"name": name, "arguments": args}, "running")
            entry.decided_by = decided_by
            started = time.time()

            def answered(message: Mapping[str, Any]) -> None:
                entry.duration = time.time() - started
                record: dict[str, Any] = {"name": name, "arguments": args}
                if isinstance(message.get("result"), Mapping):
                    record["result"] = dict(message["result"])
                    entry.status, entry.response = "done", record["result"]
                else:
                    record["error"] = _error_text(message)
                    entry.status, entry.error = "failed", record["error"]
                self.app_tool_results.append(record)
                self._show(_result_bundle(name, record))
                if on_result is not None:
                    on_result(record)

            self._request_view("tools/call", {"name": name, "arguments": args}, answered)

        if approved:
            send("code")
            return
        question = w.HTML(
            f"<b>Call the app's tool?</b> <code>{esc(name)}</code> of {esc(self.label)} "
            f"with <code>{esc(json.dumps(args))}</code>"
        )
        approve = w.Button(description="Approve", button_style="success")
        deny = w.Button(description="Deny", button_style="danger")
        card = w.VBox([question, w.HBox([approve, deny])])

        def decide(ok: bool) -> None:
            card.children = (w.HTML(f"{'approved' if ok else 'denied'}: {esc(name)}"),)
            if ok:
                send("you")
            else:
                entry = self._audit("app-tool", {"name": name, "arguments": args}, "denied")
                entry.decision, entry.decided_by = "deny", "you"

        approve.on_click(lambda _b: decide(True))
        deny.on_click(lambda _b: decide(False))
        self.activity.append_display_data(card)


def _error_text(message: Mapping[str, Any]) -> str:
    error = message.get("error")
    if isinstance(error, Mapping):
        return str(error.get("message") or error)
    return "no result"


def _line_bundle(text: str) -> dict[str, str]:
    return {"text/html": wrap(f'<div class="mcpnb-label">{esc(text)}</div>'), "text/plain": text}


def _tools_bundle(label: str, tools: list[dict[str, Any]]) -> dict[str, str]:
    head = f"tools the app registered ({label}): {len(tools)}"
    rows = "".join(
        f"<li><code>{esc(t['name'])}</code> {esc(str(t.get('description') or ''))}</li>" for t in tools
    )
    plain = "\n".join(f"  {t['name']}: {t.get('description') or ''}" for t in tools)
    return {
        "text/html": wrap(f'<div class="mcpnb-label">{esc(head)}</div><ul>{rows}</ul>'),
        "text/plain": f"{head}\n{plain}",
    }


def _result_bundle(name: str, record: Mapping[str, Any]) -> dict[str, str]:
    if "error" in record:
        text = f"the app's tool {name} failed: {record['error']}"
        return _line_bundle(text)
    result = record["result"]
    blocks = result.get("content") if isinstance(result.get("content"), list) else []
    texts = "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )
    head = f"the app's tool {name} answered" + (" (isError)" if result.get("isError") else "")
    body = (pre_html(texts, 4000) if texts else "") + (
        json_pre(result.get("structuredContent")) if "structuredContent" in result else ""
    )
    return {
        "text/html": wrap(f'<div class="mcpnb-label">{esc(head)}</div>{body}'),
        "text/plain": f"{head}: {texts}",
    }
