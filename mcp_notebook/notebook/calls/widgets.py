"""The interactive parts, and only those (DESIGN decision 10): approval card, progress with Cancel,
elicitation (form and URL modes), sampling, and the tool form with its result area.

Every button callback goes through :func:`guarded`: an exception is shown as a traceback in an ``Output``
inside the widget and logged, never swallowed (STYLE rule 7). Widgets may be created and updated from the
runtime thread (trait changes are comm messages, which ipykernel sends from any thread); clicks arrive on
the kernel's main thread and hand their answer to the runtime loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import html
import logging
import traceback
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import ipywidgets as w

from ..rendering.base import code_block, esc, json_text, note_html, one_line, wrap

if TYPE_CHECKING:
    from ..forms.form import SchemaForm
    from .handle import CallHandle
    from .surface import Surface

__all__ = [
    "ApprovalCard",
    "ElicitationCard",
    "ProgressView",
    "SamplingCard",
    "ToolForm",
    "guarded",
    "new_box",
    "resolve_soon",
]

log = logging.getLogger("mcp_notebook.notebook")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def new_box() -> Any:
    return w.VBox()


def call_view(handle: CallHandle, parts: dict[str, Any]) -> Any:
    """A call's live widget: its approval card or its progress, then the widgets attached to it (an
    elicitation...). ``parts`` is the handle's own cache of them, so each is built once."""
    children: list[Any] = []
    if handle.done():
        # The call ended. A page reloaded while it waited or ran shows this box (the page fetched its model
        # again) and no display update reaches that page: the box ends as the call's final snapshot, so
        # the result shows where the card was (issue 19 item 2).
        final = handle.static_bundle().get("text/html", "")
        if "final" not in parts:
            parts["final"] = w.HTML(final)
        parts["final"].value = final
        children.append(parts["final"])
    elif handle.state == "awaiting-approval":
        if "approval" not in parts:
            parts["approval"] = ApprovalCard(handle)
        children.append(parts["approval"].widget)
    elif handle.state == "running":
        if "progress" not in parts:
            parts["progress"] = ProgressView(handle)
        children.append(parts["progress"].widget)
    children.extend(parts.setdefault("extra", []))
    if "box" not in parts:
        parts["box"] = new_box()
    parts["box"].children = tuple(children)
    return parts["box"]


def guarded(output: Any, fn: Callable[[], Any]) -> Callable[[Any], None]:
    """A click handler that runs ``fn`` and shows its traceback in ``output`` if it raises."""

    def handler(_button: Any = None) -> None:
        try:
            fn()
        except Exception:
            output.append_stderr(traceback.format_exc())
            log.exception("widget callback failed")

    return handler


def resolve_soon(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any) -> None:
    """Resolve ``future`` (owned by ``loop``, maybe in another thread) unless it is already done."""

    def settle() -> None:
        if not future.done():
            future.set_result(value)

    loop.call_soon_threadsafe(settle)


def _button(label: str, style: str = "", tooltip: str = "") -> Any:
    return w.Button(description=label, button_style=style, tooltip=tooltip, layout=w.Layout(width="auto"))


# ------------------------------------------------------------------------------------------------ approval


def _annotations_html(tool_def: Mapping[str, Any] | None, trusted: bool) -> str:
    ann = (tool_def or {}).get("annotations")
    if not isinstance(ann, Mapping) or not ann:
        return (
            '<div class="mcpnb-note">No annotations: by the spec\'s defaults the tool may modify things '
            "(readOnlyHint false, destructiveHint true).</div>"
        )
    facts = ", ".join(f"{esc(k)}={esc(v)}" for k, v in ann.items())
    if trusted:
        return f"<div>Annotations: {facts}</div>"
    note = '<span class="mcpnb-note">(not verified: server not trusted)</span>'
    return f"<div>The server <i>claims</i>: {facts} {note}</div>"


def _cut(text: str, limit: int = 1_000) -> str:
    """An argument's JSON in the card's table, cut (a table of many rows); the "as JSON" block shows more."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters in all)"


def _arguments_table(arguments: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """Given arguments, then the schema defaults the tool applies to the rest (the effective call)."""
    rows = [(k, v, "") for k, v in arguments.items()] + [(k, v, "default") for k, v in defaults.items()]
    if not rows:
        return '<div class="mcpnb-note">(no arguments)</div>'
    # the note column only when a default is in it (else an empty column trails every row)
    body = "".join(
        f"<tr><td><code>{esc(k)}</code></td><td><code>{esc(_cut(json_text(v, indent=None)))}</code></td>"
        + (f'<td class="mcpnb-note">{esc(note)}</td>' if defaults else "")
        + "</tr>"
        for k, v, note in rows
    )
    return f'<table class="mcpnb-table">{body}</table>'


class ApprovalCard:
    """Server, tool, title, annotations (claims unless trusted), arguments; Approve / Deny / Always allow."""

    def __init__(self, handle: CallHandle) -> None:
        tool_def = handle.tool_def or {}
        ann = tool_def.get("annotations") if isinstance(tool_def.get("annotations"), Mapping) else {}
        title = tool_def.get("title") or (ann or {}).get("title") or handle.tool
        desc = tool_def.get("description") or ""
        destructive = _destructive(ann or {})
        warning = (
            '<div class="mcpnb-bad"><b>⚠ This tool says it may destroy or overwrite data.</b> Check the '
            'arguments; there is no "Always allow" for it.</div>'
            if destructive
            else ""
        )
        marked = "; defaults marked" if handle.defaults else ""
        head = (
            warning + f"<b>Approve a tool call?</b> <code>{esc(handle.label)}</code>"
            f" on server <b>{esc(handle.server)}</b>"
            f"<div><b>{esc(title)}</b> — {esc(desc)}</div>"
            + _annotations_html(tool_def, handle.trusted)
            + f'<div class="mcpnb-note">Asked because: {esc(handle.decision.by)}</div>'
            + f"<div>Arguments (the values the tool will use{marked}):</div>"
            + _arguments_table(handle.arguments, handle.defaults)
            + '<details><summary class="mcpnb-note">as JSON</summary>'
            + code_block("arguments (JSON)", json_text(handle.arguments))
            + "</details>"
            + _sample_html(getattr(handle, "sample", None))
        )
        self.output = w.Output()
        self.approve = _button("Approve", "success")
        self.deny = _button("Deny", "danger")
        self.always = _button("Always allow this tool", tooltip="for the rest of this session")
        self.approve.on_click(guarded(self.output, lambda: handle.approve(by="you")))
        self.deny.on_click(guarded(self.output, lambda: handle.deny(by="you")))
        self.always.on_click(guarded(self.output, lambda: handle.approve(always=True, by="you")))
        buttons = [self.approve, self.deny] if destructive else [self.approve, self.deny, self.always]
        self.widget = w.VBox([w.HTML(wrap(head)), w.HBox(buttons), self.output])
        if destructive:  # styled as a warning: the frame of the whole card, not only its first line
            self.widget.layout = w.Layout(border="2px solid var(--jp-warn-color0, #e65100)", padding="4px")

    def close(self) -> None:
        self.widget.close()


def _destructive(annotations: Mapping[str, Any]) -> bool:
    """The tool declares it may destroy data (destructiveHint true, and not read-only)."""
    return annotations.get("destructiveHint") is True and annotations.get("readOnlyHint") is not True


def _sample_html(sample: Any) -> str:
    """A batch's first rows going out (their columns are the arguments of each call)."""
    if not sample:
        return ""
    from ..rendering.table import table_parts

    table = table_parts(list(sample))
    if table is None:
        return ""
    columns = sorted({key for row in sample for key in row if key != "row"})
    return f"<div>The first rows going out (arguments: {esc(', '.join(columns))}):</div>" + table[0]


# ------------------------------------------------------------------------------------------------ progress


class ProgressView:
    """Status line, a progress bar driven by notifications/progress, and Cancel."""

    def __init__(self, handle: CallHandle) -> None:
        self.output = w.Output()
        self.label = w.HTML(f"running <code>{esc(handle.label)}</code>…")
        self.bar = w.FloatProgress(value=0.0, min=0.0, max=1.0, layout=w.Layout(visibility="hidden"))
        words = str(getattr(handle, "cancel_label", "Cancel call"))  # a batch: "Cancel 50 calls"
        self.cancel = _button(words, "warning", "stop the call: sends notifications/cancelled")
        self.cancel.on_click(guarded(self.output, handle.cancel))
        self._label = handle.label
        self.widget = w.VBox([w.HBox([self.label, self.cancel]), self.bar, self.output])
        if handle.progress is not None:
            self.update(*handle.progress)

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        if total:
            self.bar.max = float(total)
            self.bar.value = min(float(progress), float(total))
            self.bar.bar_style = ""
        else:  # no total: an indeterminate bar that still moves
            self.bar.max = float(progress) + 1.0
            self.bar.value = float(progress)
            self.bar.bar_style = "info"
        self.bar.layout.visibility = "visible"
        amount = f"{progress:g}" + (f" / {total:g}" if total else "")
        text = f"running <code>{esc(self._label)}</code>… {esc(amount)}"
        self.label.value = text + (f" — {esc(message)}" if message else "")

    def close(self) -> None:
        self.widget.close()


# --------------------------------------------------------------------------------------------- elicitation


def _domain_warning(host: str) -> str:
    if any(part.startswith("xn--") for part in host.split(".")) or any(ord(c) > 127 for c in host):
        return " ⚠ internationalized domain: check it is the one you expect"
    return ""


class ElicitationCard:
    """``elicitation/create``: form mode is a SchemaForm with Accept / Decline / Cancel; URL mode shows the
    full URL and its domain and asks before opening (the URL is never fetched; after consent it becomes a
    link the person opens in their own browser). ``on_answer(result)`` receives the ElicitResult."""

    def __init__(
        self, server: str, params: Mapping[str, Any], on_answer: Callable[[dict[str, Any]], None]
    ) -> None:
        self.output = w.Output()
        self.kind, self.server, self.params = "elicitation", server, params
        self.answered: str | None = None
        self.answered_html = ""
        self._on_answer = on_answer
        self.form: SchemaForm | None = None
        message = str(params.get("message") or "")
        head = w.HTML(f"<b>{esc(server)}</b> asks: {esc(message)}")
        if params.get("mode") == "url":
            body = self._url_body(str(params.get("url") or ""))
        else:
            from ..forms.form import SchemaForm

            schema = params.get("requestedSchema")
            self.form = SchemaForm(
                schema if isinstance(schema, Mapping) else {"type": "object"},
                submit_label="Accept",
                on_submit=lambda value: self.answer({"action": "accept", "content": value}),
                extra_buttons=[
                    ("Decline", lambda _v: self.answer({"action": "decline"})),
                    # MCP's "cancel" action: the question is dismissed undecided. Not labelled "Cancel",
                    # which is the call's own button next to it (issue 11 item 9).
                    ("Dismiss", lambda _v: self.answer({"action": "cancel"})),
                ],
            )
            body = self.form.widget
        self.widget = w.VBox([head, body, self.output])

    def _url_body(self, url: str) -> Any:
        parts = urlsplit(url)
        host = parts.hostname or ""
        shown = (
            f"<div>Open this address? <code>{esc(url)}</code></div>"
            f"<div>Domain: <b>{esc(host)}</b>{esc(_domain_warning(host))}</div>"
        )
        self.link = w.HTML()
        ok = parts.scheme in ("https", "http") and bool(host)
        self.open_button = _button("Open", "primary", "consent; the link is then shown for you to open")
        self.open_button.disabled = not ok
        decline, cancel = _button("Decline"), _button("Dismiss", tooltip="answer 'cancel': undecided")

        def consent() -> None:
            href = html.escape(url, quote=True)
            self.link.value = (
                f'<a href="{href}" target="_blank" rel="noopener noreferrer">open {esc(host)}</a>'
            )
            self.answered_html = f"{esc(url)}: {self.link.value}"
            self.answer({"action": "accept"})

        self.open_button.on_click(guarded(self.output, consent))
        decline.on_click(guarded(self.output, lambda: self.answer({"action": "decline"})))
        cancel.on_click(guarded(self.output, lambda: self.answer({"action": "cancel"})))
        note = "" if ok else '<div class="mcpnb-bad">Not an http(s) URL: it cannot be opened from here.</div>'
        return w.VBox([w.HTML(shown + note), w.HBox([self.open_button, decline, cancel]), self.link])

    def answer(self, result: dict[str, Any]) -> None:
        self.answered = str(result.get("action"))
        self.content = result.get("content")
        self._on_answer(result)

    content: Any = None

    def summary(self) -> dict[str, str]:
        """What stays in the output once answered: the values sent (or the link, after consent to a URL)."""
        message = str(self.params.get("message") or "")
        words = {"accept": "accepted", "decline": "declined", "cancel": "dismissed it"}
        answer = words.get(self.answered or "", "did not answer")
        if self.answered == "accept" and isinstance(self.content, Mapping):
            values = ", ".join(f"{k}={json_text(v, indent=None)}" for k, v in self.content.items())
            answer += f", sending {values}" if values else ""
        text = f"{self.server} asked: {message} — you {answer}"
        extra = f"<div>{self.answered_html}</div>" if self.answered_html else ""
        return {"text/html": f'<div class="mcpnb-note">{esc(text)}</div>{extra}', "text/plain": text}

    def close(self) -> None:
        self.widget.close()


# ------------------------------------------------------------------------------------------------ sampling


def _sampling_summary(params: Mapping[str, Any]) -> str:
    from ..rendering.results import prompt_bundle

    parts = []
    if params.get("systemPrompt"):
        parts.append(f"<div><b>system:</b> {esc(params['systemPrompt'])}</div>")
    messages = {"messages": params.get("messages") or []}
    parts.append(prompt_bundle(messages)["text/html"])
    facts = {
        k: params[k] for k in ("maxTokens", "temperature", "modelPreferences", "stopSequences") if k in params
    }
    if facts:
        parts.append(f'<div class="mcpnb-note">{esc(facts)}</div>')
    return "".join(parts)


def _printable(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) != "Cc" or c in "\n\t")


class SamplingCard:
    """``sampling/createMessage`` answered by a person: the request, a textarea, Send / Reject."""

    def __init__(
        self, server: str, params: Mapping[str, Any], on_answer: Callable[[dict[str, Any] | None], None]
    ) -> None:
        self.output = w.Output()
        head = w.HTML(
            f"<b>{esc(server)}</b> asks for a model reply (you are the model):" + _sampling_summary(params)
        )
        self.reply = w.Textarea(
            placeholder="Write the assistant's reply", layout=w.Layout(width="100%", height="6em")
        )
        self.kind, self.server, self.params = "sampling", server, params
        self.answered: str | None = None
        self._on_answer = on_answer
        self.send, self.reject = _button("Send", "primary"), _button("Reject", "danger")
        self.send.on_click(guarded(self.output, lambda: self.answer(self.reply.value)))
        self.reject.on_click(guarded(self.output, lambda: self.answer(None)))
        self.widget = w.VBox([head, self.reply, w.HBox([self.send, self.reject]), self.output])

    def summary(self) -> dict[str, str]:
        text = f"{self.server} asked for a model reply — {self.answered or 'no answer'}"
        return {"text/html": f'<div class="mcpnb-note">{esc(text)}</div>', "text/plain": text}

    def answer(self, text: str | None) -> None:
        """Reply with ``text`` as the assistant message, or reject (None)."""
        self.answered = "rejected" if text is None else "replied"
        if text is None:
            self._on_answer(None)
            return
        self._on_answer(
            {
                "role": "assistant",
                "content": {"type": "text", "text": _printable(text)},
                "model": "human-in-the-notebook",
                "stopReason": "endTurn",
            }
        )

    def close(self) -> None:
        self.widget.close()


# ------------------------------------------------------------------------------------------- serving token


class TokenView:
    """How to connect to ``%mcp serve``, with Reveal / Hide for the token: it is put on the page (a widget
    value, never a saved output) only while revealed, with a Copy button beside it."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.output = w.Output()
        self.info = w.HTML(handle._html())
        self.secret = w.HTML()
        self.reveal = _button("Reveal token", tooltip="show the bearer token (hidden again by Hide)")
        self.reveal.on_click(guarded(self.output, self.toggle))
        self.widget = w.VBox([self.info, w.HBox([self.reveal, self.secret]), self.output])

    def toggle(self) -> None:
        if self.secret.value:
            self.secret.value, self.reveal.description = "", "Reveal token"
            return
        from ..rendering.base import copy_button

        token = esc(self.handle.reveal())
        self.secret.value = (
            f'<span class="mcpnb-copyable"><pre style="display:inline">{token}</pre> {copy_button()}</span>'
        )
        self.reveal.description = "Hide token"


# ------------------------------------------------------------------------------------------------ tool form


class ToolForm:
    """A SchemaForm for a tool; Call calls it. Shown as two outputs (issue 11 item 1): the form, whose
    display also carries a static HTML snapshot of its fields and values (what a saved notebook, an
    nbconvert export and GitHub show), and under it the call's own output (approval, progress, then the
    plain-HTML result), which stays in the notebook whatever becomes of the widget."""

    def __init__(
        self,
        label: str,
        tool_def: Mapping[str, Any],
        call: Callable[[dict[str, Any]], CallHandle],
        surface: Surface | None = None,
        namespace: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        """``namespace``: the notebook's variables (a DataFrame parameter's "Use a variable")."""
        from ..forms.form import SchemaForm
        from .surface import Surface

        self.label = label
        self.handles: list[CallHandle] = []
        self._call = call
        self._surface = surface if surface is not None else Surface()
        self.display_id = f"mcp-form-{uuid.uuid4().hex}"
        self.result_display_id = f"{self.display_id}-result"
        self.title = str(tool_def.get("title") or label)
        self.form = SchemaForm(
            tool_def.get("inputSchema") or {"type": "object"},
            title=self.title,
            description=tool_def.get("description") or None,  # under the title (issue 11 item 8)
            submit_label="Call",
            on_submit=self._submit,
            namespace=namespace,
        )
        self.widget = self.form.widget

    @property
    def handle(self) -> CallHandle | None:
        """The latest call made from this form."""
        return self.handles[-1] if self.handles else None

    def submit(self, values: Mapping[str, Any] | None = None) -> CallHandle:
        """Fill ``values`` (if given), validate and call, as the Call button does; the new handle.

        Invalid input raises :class:`~mcp_notebook.notebook.forms.form.FormInvalid` (nothing is sent; the
        messages also show next to their fields)."""
        if values is not None:
            self.form.set_value(values)
        before = len(self.handles)
        self.form.submit()
        if len(self.handles) == before:  # pragma: no cover - submit either raised or called
            raise RuntimeError(f"the form of {self.label} did not make a call")
        return self.handles[-1]

    def _submit(self, value: dict[str, Any]) -> None:
        handle = self._call(value)
        self.handles.append(handle)
        handle._display_id = self.result_display_id  # the call updates its own output under the form
        handle._refresh(force=True)
        from ..rendering.snapshots import remember

        remember(self._surface.shell, self.result_display_id, handle, self._surface.publish)
        handle.on_change(self._call_changed)
        self._surface.publish(self.bundle(), self.display_id, update=True)  # the snapshot: values sent

    def _call_changed(self, handle: CallHandle) -> None:
        if handle is self.handle and handle.done():  # the snapshot names how the last call ended
            self._surface.publish(self.bundle(), self.display_id, update=True)

    # ---- display -------------------------------------------------------------------------------------------
    def static_bundle(self) -> dict[str, str]:
        """The form as static HTML/text: title, fields and their current values, the last call."""
        snapshot = self.form.snapshot()
        last = self.handle
        note = "no call made yet"
        if last is not None:
            # each argument cut at 200 characters: a table of many rows is not written out with every call
            args = ", ".join(f"{k}={one_line(v, 200)}" for k, v in last.arguments.items())
            note = f"last call: {last.label}({args}) — {last.state}"
        text = f"form {self.label}\n" + "\n".join(f"  {k}: {v}" for k, v in snapshot["rows"]) + f"\n({note})"
        return {
            "text/html": wrap(
                snapshot["html"]
                + note_html(esc(f"A form (live in a running notebook). {note[0].upper()}{note[1:]}."))
            ),
            "text/plain": text,
        }

    def bundle(self) -> dict[str, Any]:
        return {**self.static_bundle(), WIDGET_MIME: self.widget._repr_mimebundle_()[WIDGET_MIME]}

    def _result_placeholder(self) -> dict[str, Any]:
        if self.handle is not None:
            return self.handle.live_bundle()
        text = f"Calls made with the form of {self.label} show here."
        return {"text/html": wrap(note_html(esc(text))), "text/plain": text}

    def _ipython_display_(self) -> None:
        from ..rendering.snapshots import remember

        self._surface = self._surface.here()  # shown by a later cell (``f`` after ``f = mcp.form(...)``)
        self._surface.publish(self.bundle(), self.display_id)
        self._surface.publish(self._result_placeholder(), self.result_display_id)
        remember(self._surface.shell, self.display_id, self, self._surface.publish)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.bundle()

    def __repr__(self) -> str:
        return f"<ToolForm {self.label}>"
