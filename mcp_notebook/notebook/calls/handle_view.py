"""How a call looks when no widget runs: the static HTML/text of a :class:`CallHandle` in each state.

Split from ``handle.py`` (the states and their transitions); this is what a saved notebook, an nbconvert
export, GitHub's viewer and a terminal show, and it is also the fallback inside every live display.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ...auth.redact import redact
from ..rendering.base import code_block, esc, json_text, label_html, note_html, pre_html, wrap
from ..rendering.results import result_bundle
from .tasks import task_line

if TYPE_CHECKING:
    from .policy import Decision


class ShownCall(Protocol):
    """What the static view reads of a :class:`~.handle.CallHandle`, declared here so that the import
    runs one way (handle -> handle_view; tests/test_layers.py)."""

    arguments: dict[str, Any]
    tool_def: dict[str, Any] | None
    decision: Decision
    logs: list[dict[str, Any]]
    notes: list[dict[str, str]]
    progress: tuple[float, float | None, str | None] | None
    linked: dict[str, Any]
    task: dict[str, Any] | None
    started: float | None
    max_text: int
    max_image_bytes: int

    @property
    def label(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def defaults(self) -> dict[str, Any]: ...

    @property
    def result(self) -> dict[str, Any] | None: ...

    @property
    def error(self) -> BaseException | None: ...


__all__ = ["call_bundle"]


def call_bundle(handle: ShownCall) -> dict[str, str]:
    """What a saved notebook, an export or a terminal shows of a call, in each state."""
    state = handle.state
    if state == "denied":
        # a person's (or a rule's) choice, shown as one: not in the red frame of a failure (issue 19)
        said = _text_of(handle.result) or f"The call to {handle.label} was denied."
        return {
            "text/html": wrap(label_html(f"denied: <b>{esc(handle.label)}</b>") + f"<div>{esc(said)}</div>"),
            "text/plain": f"denied: {handle.label}\n{said}",
        }
    if state == "done" and handle.result is not None:
        out_schema = (handle.tool_def or {}).get("outputSchema")
        bundle = result_bundle(
            handle.result,
            output_schema=out_schema if state == "done" else None,
            title=handle.label,
            max_text=handle.max_text,
            max_image_bytes=handle.max_image_bytes,
        )
        if handle.linked:
            from ..rendering.links import linked_bundle

            links = linked_bundle(
                handle.linked, max_text=handle.max_text, max_image_bytes=handle.max_image_bytes
            )
            bundle["text/html"] += links["text/html"]
            bundle["text/plain"] += "\n" + links["text/plain"]
    elif state == "cancelled":
        bundle = _cancelled_bundle(handle)
    elif state == "failed":
        word = "Failed"
        err = handle.error
        detail = redact(f"{type(err).__name__}: {err}") if err is not None else state
        bundle = {
            "text/html": wrap(
                f'<div class="mcpnb-error-header">{word}: {esc(handle.label)}</div>'
                + pre_html(detail, handle.max_text),
                error=True,
            ),
            "text/plain": f"{word.upper()}: {handle.label}\n{detail}",
        }
    elif state == "awaiting-approval":
        args = json_text(handle.arguments)
        defaults = handle.defaults
        shown_defaults = f"\ndefaults the tool applies: {json_text(defaults)}" if defaults else ""
        bundle = {
            "text/html": wrap(
                label_html(f"awaiting approval: <b>{esc(handle.label)}</b> ({esc(handle.decision.by)})")
                + code_block("arguments (JSON)", json_text(handle.arguments), max_chars=handle.max_text)
                + (
                    note_html("defaults the tool applies: " + esc(json_text(defaults, indent=None)))
                    if defaults
                    else ""
                )
                + note_html(
                    "Approve or deny it in the live notebook, or with handle.approve() / handle.deny()."
                )
            ),
            "text/plain": f"awaiting approval: {handle.label} ({handle.decision.by})\narguments: {args}"
            + shown_defaults,
        }
    else:
        line = f"running {handle.label}…"
        if handle.progress is not None:
            done, total, message = handle.progress
            line += f" {done:g}" + (f"/{total:g}" if total else "") + (f" {message}" if message else "")
        bundle = {"text/html": wrap(label_html(esc(line))), "text/plain": line}
    if handle.task is not None:
        line = task_line(handle.task)
        bundle["text/html"] += wrap(note_html(esc(line)))
        bundle["text/plain"] += "\n" + line
    for note in handle.notes:
        bundle["text/html"] += wrap(note["text/html"])
        bundle["text/plain"] += "\n" + note["text/plain"]
    if handle.logs:
        lines = [f"[{m.get('level')}] {json_text(m.get('data'), indent=None)}" for m in handle.logs]
        bundle["text/html"] += wrap(
            f'<details><summary class="mcpnb-note">server log ({len(lines)})</summary>'
            f"{pre_html(chr(10).join(lines), handle.max_text)}</details>"
        )
        bundle["text/plain"] += "\nserver log:\n" + "\n".join(lines)
    return bundle


def _cancelled_bundle(handle: ShownCall) -> dict[str, str]:
    """A cancel is a choice, not an error: a plain note, with the progress the call had reached."""
    when = "before it was approved" if handle.started is None else "while it ran"
    line = f"Cancelled {handle.label} {when}."
    if handle.progress is not None:
        done, total, message = handle.progress
        line += f" Progress reached: {done:g}" + (f" of {total:g}" if total else "")
        line += f" ({message})." if message else "."
    if handle.started is not None:
        sent = "tasks/cancel" if handle.task is not None else "notifications/cancelled"
        line += f" {sent} was sent; the server may have done part of the work."
    return {"text/html": wrap(label_html(esc(line))), "text/plain": line}


def _text_of(result: Mapping[str, Any] | None) -> str:
    content = (result or {}).get("content")
    blocks = content if isinstance(content, list) else []
    return " ".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )
