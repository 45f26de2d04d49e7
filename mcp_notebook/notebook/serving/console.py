"""The server console: incoming requests, live, where the server was started (issue 5, DESIGN decision 11).

One row per call: client, tool, arguments, status, timing, a result summary, what the tool printed or
displayed, and for failures the traceback (kept here; the client got a clean message). Approval cards for
incoming calls the policy asks about appear on top; a click answers the waiting call.

Updates come from the runtime thread. They go to widget traits (comm messages, which ipykernel sends from
any thread) or, headless, to a ``display_id`` update of the static HTML: an update only replaces the
console's own output, wherever it is, so nothing ever lands in an unrelated cell, and a re-run cell that
cleared the output simply stops receiving them. Rendering is coalesced (at most every ``refresh`` seconds).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..rendering.base import wrap

if TYPE_CHECKING:
    from ...engine.approval import IncomingCall
    from ...engine.server import Server
    from ..calls.policy import Decision, IncomingPolicy
    from ..kernel_thread import CallInfo, KernelThread, ToolOutput

__all__ = ["ConsoleRecord", "ServerConsole", "show_console"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_MAX_CELL = 300  # characters of arguments / results shown per row
_MAX_OUTPUT = 5_000


@dataclass
class ConsoleRecord:
    client: str
    tool: str
    arguments: dict[str, Any]
    status: str = "running"  # running, done, error, denied, cancelled, awaiting approval
    started: float = field(default_factory=time.time)
    duration: float | None = None
    summary: str = ""
    output: str = ""
    images: list[str] = field(default_factory=list)  # base64 PNGs the tool displayed
    traceback: str | None = None
    decided_by: str = ""

    def row(self) -> dict[str, Any]:
        return {
            "time": dt.datetime.fromtimestamp(self.started).strftime("%H:%M:%S"),
            "client": self.client,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "duration (s)": None if self.duration is None else round(self.duration, 3),
            "result": self.summary,
            "output": self.output,
            "error": self.traceback,
        }


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summary(result: dict[str, Any]) -> str:
    parts = []
    for block in result.get("content") or []:
        if isinstance(block, dict):
            parts.append(str(block.get("text")) if block.get("type") == "text" else f"[{block.get('type')}]")
    if not parts and "structuredContent" in result:
        parts.append(json.dumps(result["structuredContent"], default=str))
    return _clip(" ".join(parts), _MAX_CELL)


def _caller(data: dict[str, Any]) -> str:
    """Who called, for people: the connection's principal, and the name the client declared (a claim)."""
    call = data.get("call")
    if call is None:
        return "unknown"
    return _shown(call)


def _shown(call: IncomingCall) -> str:
    return f"{call.peer.principal} ({call.declared_name!r})"


class _Card:
    """Approve / Deny / Always allow for one waiting incoming call."""

    def __init__(self, call: IncomingCall, why: str, answer: Any) -> None:
        import ipywidgets as w

        from ..calls.widgets import guarded

        session = call.session_id[:8]
        head = (
            f"<b>Incoming call:</b> <code>{html.escape(call.tool)}</code> over "
            f"<b>{html.escape(call.peer.principal)}</b>"
            + (f" (session {html.escape(session)}…)" if session else "")
            + f", from a client calling itself <i>{html.escape(call.declared_name)}</i>"
            f"<div class='mcpnb-note'>Asked because: {html.escape(why)}</div>"
            f"<pre>{html.escape(json.dumps(call.arguments, indent=1, default=str)[:2000])}</pre>"
        )
        self.output = w.Output()
        # the buttons of the notebook's own approval card (calls/widgets.py): sized to their labels
        approve = w.Button(description="Approve", button_style="success", layout=w.Layout(width="auto"))
        deny = w.Button(description="Deny", button_style="danger", layout=w.Layout(width="auto"))
        always = w.Button(
            description=f"Always allow {call.tool} in this session", layout=w.Layout(width="auto")
        )
        approve.on_click(guarded(self.output, lambda: answer("allow")))
        deny.on_click(guarded(self.output, lambda: answer("deny")))
        always.on_click(guarded(self.output, lambda: answer("always")))
        self.buttons = (approve, deny, always)
        self.widget = w.VBox([w.HTML(_scoped(head)), w.HBox([approve, deny, always]), self.output])


class ServerConsole:
    """Live list of incoming requests; ``ask(call)`` shows an approval card and awaits the click."""

    def __init__(
        self,
        *,
        interactive: bool = True,
        max_records: int = 200,
        refresh: float = 0.25,
        approval_timeout: float | None = 600.0,
    ) -> None:
        self.interactive = interactive
        self.records: deque[ConsoleRecord] = deque(maxlen=max_records)
        self.refresh = refresh
        self.approval_timeout = approval_timeout
        self.status = "starting"
        self.display_id = f"mcp-console-{uuid.uuid4().hex}"
        self.shell: Any = None
        self.closed = False
        self.pending: dict[int, tuple[IncomingCall, _Card | None, Any]] = {}
        self.policy: IncomingPolicy | None = None  # where "always allow" choices go
        self.questions: dict[int, Any] = {}  # elicitation cards waiting for the notebook's user
        self._live: dict[tuple[int, Any], ConsoleRecord] = {}
        self._lock = threading.RLock()
        self._scheduled = False
        self._kernel: KernelThread | None = None
        self._widget: Any = None
        self._html: Any = None
        self._cards: Any = None
        self._header: Any = None

    # ---- wiring ------------------------------------------------------------------------------------------
    def attach(
        self, server: Server, kernel: KernelThread | None, url: str, policy: IncomingPolicy | None = None
    ) -> None:
        self._kernel, self.policy = kernel, policy
        self.status = f"serving at {url}"
        server.add_listener(self._on_event)
        if kernel is not None:
            kernel.add_output_listener(self._on_output)
        self._changed()

    def set_status(self, text: str) -> None:
        """Final words (the server stopped): the console goes quiet after showing them."""
        with self._lock:
            self.status = text
            self.closed = True
            pending, self.pending = list(self.pending.values()), {}
        for _call, _card, resolve in pending:
            resolve("deny")
        if self._kernel is not None:
            self._kernel.remove_output_listener(self._on_output)
        self._render(final=True)

    # ---- events (runtime thread) ---------------------------------------------------------------------------
    def _on_event(self, event: str, data: dict[str, Any]) -> None:
        if self.closed or event not in ("call_started", "call_finished"):
            return
        request = data.get("request")
        key = (id(data.get("session")), getattr(request, "id", None))
        with self._lock:
            if event == "call_started":
                record = ConsoleRecord(_caller(data), str(data.get("tool")), data.get("arguments") or {})
                self.records.append(record)
                self._live[key] = record
            else:
                record_or_none = self._live.pop(key, None)
                if record_or_none is None:
                    return
                self._finish(record_or_none, data.get("outcome"), str(data.get("status") or ""))
        self._changed()

    @staticmethod
    def _finish(record: ConsoleRecord, outcome: Any, status: str) -> None:
        record.duration = time.time() - record.started
        result = getattr(outcome, "result", None) or {}
        record.summary = _summary(result)
        failed = result.get("isError") is True
        record.status = "error" if failed else ("cancelled" if status == "cancelled" else "done")
        exception = getattr(outcome, "exception", None)
        if exception is not None:
            record.traceback = (
                getattr(outcome, "traceback", None) or f"{type(exception).__name__}: {exception}"
            )

    def _on_output(self, info: CallInfo | None, output: ToolOutput) -> None:
        if self.closed:
            return
        with self._lock:
            record = None
            if info is not None:
                record = self._live.get((id(info.session), getattr(info.request, "id", None)))
            if record is None:
                record = ConsoleRecord("?", info.tool if info else "?", {}, status="output")
                self.records.append(record)
            record.output = _clip(record.output + output.text(), _MAX_OUTPUT)
            record.images += [str(d["image/png"]) for d in output.displays if "image/png" in d][:4]
        self._changed()

    # ---- approval ------------------------------------------------------------------------------------------
    async def ask(self, call: IncomingCall, decision: Decision) -> bool:
        """Show an approval card for ``call`` and wait for the click (or the timeout: denied)."""
        from ..calls.widgets import resolve_soon

        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        key = id(call)

        def resolve(value: str) -> None:
            resolve_soon(loop, answer, value)

        card = _Card(call, decision.by, resolve) if self.interactive else None
        with self._lock:
            if self.closed:
                return False
            self.pending[key] = (call, card, resolve)
        self._changed(now=True)
        try:
            verdict = await asyncio.wait_for(answer, self.approval_timeout)
        except asyncio.TimeoutError:
            verdict = "deny"
        finally:
            with self._lock:
                self.pending.pop(key, None)
            if card is not None:
                card.widget.close()
        if verdict == "always" and self.policy is not None:
            self.policy.always_allow_call(call)
        approved = verdict in ("allow", "always")
        if not approved:
            with self._lock:
                self.records.append(
                    ConsoleRecord(_shown(call), call.tool, call.arguments, status="denied", decided_by="you")
                )
        self._changed(now=True)
        return approved

    # ---- questions from tools ----------------------------------------------------------------------------
    async def elicit(self, params: dict[str, Any], client_info: dict[str, Any]) -> dict[str, Any]:
        """A served tool asks for input its calling client cannot give (it has no elicitation): ask the
        notebook's user here, with the same card a notebook client shows. Headless, or when nobody answers
        within ``approval_timeout``, the answer is decline / cancel (ElicitResult)."""
        from ..calls.widgets import ElicitationCard, resolve_soon

        if not self.interactive or self.closed:
            return {"action": "decline"}
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()
        client = str(client_info.get("name") or "a client")
        card = ElicitationCard(f"a tool called by {client}", params, lambda r: resolve_soon(loop, answer, r))
        with self._lock:
            self.questions[id(card)] = card
        self._changed(now=True)
        try:
            return await asyncio.wait_for(answer, self.approval_timeout)
        except asyncio.TimeoutError:
            return {"action": "cancel"}
        finally:
            with self._lock:
                self.questions.pop(id(card), None)
            card.close()
            self._changed(now=True)

    def denied(self, call: IncomingCall, decision: Decision) -> None:
        """A call the policy denied without asking: shown, so the person sees who tried what."""
        with self._lock:
            self.records.append(
                ConsoleRecord(
                    _shown(call), call.tool, call.arguments, status="denied", decided_by=decision.by
                )
            )
        self._changed()

    def answer(self, verdict: str = "allow") -> int:
        """Answer every waiting approval from code (``allow``, ``deny`` or ``always``); returns how many."""
        with self._lock:
            waiting = list(self.pending.values())
        for _call, _card, resolve in waiting:
            resolve(verdict)
        return len(waiting)

    # ---- rendering -----------------------------------------------------------------------------------------
    def _changed(self, now: bool = False) -> None:
        if now:
            self._render()
            return
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
        try:
            asyncio.get_running_loop().call_later(self.refresh, self._flush)
        except RuntimeError:  # not on a loop (a test, a script): render at once
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            self._scheduled = False
        self._render()

    def widget(self) -> Any:
        """The ipywidgets view (created on first use)."""
        if self._widget is None:
            import ipywidgets as w

            self._header, self._cards, self._html = w.HTML(), w.VBox(), w.HTML()
            self._widget = w.VBox([self._header, self._cards, self._html])
            self._update_widget()
        return self._widget

    def _update_widget(self) -> None:
        with self._lock:
            cards = [card.widget for _call, card, _r in self.pending.values() if card is not None]
            cards += [question.widget for question in self.questions.values()]
        self._header.value = self._header_html()
        self._cards.children = tuple(cards)
        self._html.value = _scoped(self._table_html())

    def _render(self, final: bool = False) -> None:
        if self._widget is not None:
            self._update_widget()
        if self.shell is not None:
            # the static HTML beside the widget view is kept current too (coalesced like the widget), so
            # a saved notebook or an export shows the calls served so far (issue 11 item 1)
            self.publish(update=True)

    def publish(self, update: bool = False) -> None:
        bundle = self._repr_mimebundle_()
        if self._widget is not None and not self.closed:
            bundle[WIDGET_MIME] = {"version_major": 2, "version_minor": 0, "model_id": self._widget.model_id}
        self.shell.display_pub.publish(
            data=bundle, metadata={}, transient={"display_id": self.display_id}, update=update
        )

    def _header_html(self) -> str:
        with self._lock:
            waiting = len(self.pending)
        note = f" — <b>{waiting} call(s) waiting for your approval</b>" if waiting else ""
        return f"<div class='mcpnb'><b>MCP server console</b>: {html.escape(self.status)}{note}</div>"

    def _table_html(self) -> str:
        with self._lock:
            records = list(self.records)
        if not records:
            return "<div class='mcpnb-note'>No requests yet.</div>"
        rows = []
        for r in reversed(records):
            extra = ""
            if r.output:
                extra += f"<details><summary>output</summary><pre>{html.escape(r.output)}</pre></details>"
            extra += "".join(
                f"<img src='data:image/png;base64,{html.escape(png)}' style='max-width:240px'>"
                for png in r.images
            )
            if r.traceback:
                extra += (
                    f"<details><summary>traceback</summary><pre>{html.escape(r.traceback)}</pre></details>"
                )
            d = r.row()
            args = html.escape(_clip(json.dumps(r.arguments, default=str), _MAX_CELL))
            cells = [
                d["time"],
                html.escape(r.client),
                f"<code>{html.escape(r.tool)}</code>",
                f"<code>{args}</code>",
                html.escape(r.status),
                d["duration (s)"] or "",
                html.escape(r.summary) + extra,
            ]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        head = "".join(
            f"<th>{h}</th>" for h in ("time", "client", "tool", "arguments", "status", "s", "result")
        )
        return f"<table class='mcpnb-table'><tr>{head}</tr>{''.join(rows)}</table>"

    def text(self) -> str:
        with self._lock:
            records, waiting = list(self.records), list(self.pending.values())
        lines = [f"MCP server console: {self.status}"]
        lines += [
            f"  waiting for approval: {_shown(c)} -> {c.tool} {json.dumps(c.arguments, default=str)}"
            for c, _, _ in waiting
        ]
        for r in records:
            took = f" {r.duration:.3f}s" if r.duration is not None else ""
            args = json.dumps(r.arguments, default=str)[:80]
            lines.append(f"  {r.row()['time']} {r.client} -> {r.tool} {args}: {r.status}{took} {r.summary}")
            if r.output:
                lines += ["    | " + line for line in r.output.rstrip().splitlines()[:20]]
            if r.traceback:
                lines += ["    ! " + line for line in r.traceback.rstrip().splitlines()[-6:]]
        return "\n".join(lines)

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": _scoped(self._header_html() + self._table_html())}


def _scoped(body: str) -> str:
    """In the package's scoped wrapper, so the console's table looks like every other table of ours."""
    return wrap(body)


def show_console(console: ServerConsole, shell: Any, intro: dict[str, str] | None = None) -> None:
    """Show ``intro`` (how to connect, a mimebundle) and the console in the current cell (the console keeps
    its display id)."""
    if shell is None or getattr(shell, "display_pub", None) is None:
        return
    console.shell = shell
    if intro is not None:
        shell.display_pub.publish(data=intro, metadata={})
    if console.interactive:
        console.widget()
    console.publish()
