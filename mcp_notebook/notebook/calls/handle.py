"""``CallHandle``: one tool call, returned at once, complete later (DESIGN decisions 4 and 10).

A handle moves through ``awaiting-approval -> running -> done | failed | cancelled``, or ends ``denied``.
It renders mimebundle-first: ``_repr_mimebundle_`` is static HTML/text of the current state (what saved
notebooks, exported HTML and terminal IPython show). When shown in a cell it publishes with a
``display_id`` and republishes that id on each change, from whichever thread the change happens on (the
runtime thread, a widget click). While something is interactive (an approval card, a progress bar with
Cancel, an elicitation form) and a frontend renders widgets, the published bundle also carries the widget
view, which such a frontend prefers; when the call ends the view is replaced by the static result.
The live display is ``handle_live.LiveDisplay`` (mixed in), where it shows is ``surface.Surface``.

``await handle`` works in an async cell (the kernel's loop keeps serving clicks meanwhile); ``wait()``
blocks, and refuses to block the kernel's main thread on a click it could never receive.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Container, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Literal

from ...auth.redact import redact
from ..kernel_thread import parked, register_parking
from ..rendering.results import DEFAULT_MAX_IMAGE_BYTES, DEFAULT_MAX_TEXT
from ..rendering.views import TraceView, filter_bundle
from .handle_live import LiveDisplay
from .policy import AuditEntry, Decision

if TYPE_CHECKING:
    from ...engine.connection import ProgressCallback
    from ...engine.runtime import Runtime
    from ...engine.trace import Trace
    from .surface import Surface

__all__ = ["TERMINAL", "TRANSITIONS", "CallCancelled", "CallHandle", "NotFinished", "State"]

State = Literal["awaiting-approval", "running", "done", "denied", "failed", "cancelled"]
Event = Literal["approve", "deny", "cancel", "succeed", "fail"]
TERMINAL: frozenset[str] = frozenset({"done", "denied", "failed", "cancelled"})

#: Every legal move of a call, as data (STYLE: h11's ``EVENT_TRIGGERED_TRANSITIONS``). A move that is not
#: here does not happen: an Approve that loses the race with a Cancel finds ``(cancelled, approve)``
#: missing and the call stays cancelled; a result arriving after a Cancel is dropped the same way.
TRANSITIONS: dict[tuple[State, Event], State] = {
    ("awaiting-approval", "approve"): "running",
    ("awaiting-approval", "deny"): "denied",
    ("awaiting-approval", "cancel"): "cancelled",
    ("running", "cancel"): "cancelled",
    ("running", "succeed"): "done",
    ("running", "fail"): "failed",
}
Runner = Callable[["ProgressCallback"], Coroutine[Any, Any, dict[str, Any]]]
CallView = Callable[["CallHandle", dict[str, Any]], Any]  # (handle, its widget parts) -> the live widget


class CallCancelled(Exception):
    """The call was cancelled (Cancel button, ``handle.cancel()``, a kernel interrupt)."""


class NotFinished(RuntimeError):
    """A result was read from a call that has not ended: it waits for a person (approval, a question),
    or it still ran when the wait for it ran out. Nothing is read as empty in the meantime."""


RESULT_WAIT = 60.0  # seconds reading a running call's result waits for it (``CallHandle.result_wait``)


class CallHandle(LiveDisplay):
    """A tool call in progress or finished. Create through ``mcp.call`` / ``mcp.call_async``."""

    def __init__(
        self,
        *,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        tool_def: dict[str, Any] | None,
        decision: Decision,
        entry: AuditEntry,
        runner: Runner,
        runtime: Runtime,
        surface: Surface,
        interactive: bool,
        trusted: bool,
        remember: Callable[[], None] | None = None,
        trace: Trace | None = None,
        max_text: int = DEFAULT_MAX_TEXT,
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        view: CallView | None = None,
    ) -> None:
        self.server, self.tool, self.arguments = server, tool, arguments
        self._view = view
        self.tool_def = tool_def
        self.decision = decision
        self.entry = entry
        self.interactive, self.trusted = interactive, trusted
        self.logs: list[dict[str, Any]] = []  # notifications/message received while running
        self.notes: list[dict[str, str]] = []  # what the person answered mid-call (elicitation, sampling)
        self.progress: tuple[float, float | None, str | None] | None = None
        #: The contents of the result's resource links (read after the call, shown under the result).
        self.linked: dict[str, Any] = {}
        self.task: dict[str, Any] | None = None  # the task the call runs as: taskId, status, statusMessage...
        self._runner, self._runtime, self._surface = runner, runtime, surface
        self._remember, self._trace = remember, trace
        self.max_text, self.max_image_bytes = max_text, max_image_bytes
        self._cond = threading.Condition()
        self._state: State = "awaiting-approval" if decision.verdict == "ask" else "running"
        self._result: dict[str, Any] | None = None
        self._error: BaseException | None = None
        self._done: concurrent.futures.Future[CallHandle] = concurrent.futures.Future()
        self._future: concurrent.futures.Future[None] | None = None
        self.created = time.time()
        self.started: float | None = None
        self.finished: float | None = None
        self._display_id: str | None = None
        self._shown_in: int | None = None
        self._listeners: list[Callable[[CallHandle], None]] = []
        self._waiting_widgets: list[Any] = []  # attached widgets waiting for a person (elicitation, ...)
        self._widgets: dict[str, Any] = {}  # "box", "approval", "progress"
        self._last_refresh = 0.0
        self._display_lock = threading.RLock()
        self._settled = False  # terminal *and* shown: what waiters wait for
        self.app: Any = None  # the MCP App view showing this call, if the tool has one
        if decision.verdict == "deny":
            self._state = "awaiting-approval"
            self._finish("deny", result=_denied(self.label, decision.by))

    # ---- facts -------------------------------------------------------------------------------------------
    @property
    def label(self) -> str:
        return self.entry.target

    @property
    def state(self) -> State:
        return self._state

    def done(self) -> bool:
        return self._state in TERMINAL

    @property
    def defaults(self) -> dict[str, Any]:
        """The inputSchema's top-level defaults for arguments not given: what the tool will use."""
        schema = (self.tool_def or {}).get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            return {}
        return {
            k: p["default"]
            for k, p in props.items()
            if isinstance(p, dict) and "default" in p and k not in self.arguments
        }

    result_wait: float = RESULT_WAIT  # seconds a read of a running call's result waits for its end

    def _finished_result(self) -> dict[str, Any] | None:
        """The result once the call has ended: a running call is waited for (``result_wait`` s, from any
        thread), a call waiting for a person raises :class:`NotFinished` at once (issue 19 item 4: an
        unfinished call is never read as an empty result)."""
        if not self.done():
            if self._needs_person():
                why = "awaiting approval" if self._state == "awaiting-approval" else "waiting for your answer"
                raise NotFinished(
                    f"{self.label} is not finished: {why}. Approve or answer it in its cell, then read "
                    "the result again (or 'await handle' in an async cell)."
                )
            try:
                self.wait(self.result_wait)
            except TimeoutError:
                raise NotFinished(
                    f"{self.label} is not finished: still {self._state} after {self.result_wait:g} s "
                    "(handle.wait(timeout) waits longer; handle.cancel() stops it)"
                ) from None
        return self._result

    @property
    def result(self) -> dict[str, Any] | None:
        """The ``CallToolResult`` (a denial is an ``isError`` result too); None if the call failed or was
        cancelled. Waits for a running call; raises :class:`NotFinished` while it awaits a person."""
        return self._finished_result()

    @property
    def error(self) -> BaseException | None:
        """Why the call failed or was cancelled (protocol, transport, timeout); None otherwise."""
        return self._error

    @property
    def content(self) -> list[Any]:
        content = (self._finished_result() or {}).get("content")
        return content if isinstance(content, list) else []

    @property
    def structured(self) -> Any:
        return (self._finished_result() or {}).get("structuredContent")

    @property
    def text(self) -> str:
        """The text blocks of the result, joined."""
        return "\n".join(
            b["text"] for b in self.content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )

    def save(self, path: str, index: int = 0) -> Any:
        """Write content block ``index`` to ``path`` — the way to get all of a result the notebook shows
        only in part (long text is truncated, large images are not embedded). Text and embedded text go
        out as UTF-8; image, audio and blob data decoded from base64. Returns a link to the file."""
        import base64
        from pathlib import Path

        from IPython.display import FileLink

        try:
            block = self.content[index]
        except IndexError:
            raise IndexError(
                f"{self.label} has {len(self.content)} content block(s), not {index + 1}"
            ) from None
        source = block.get("resource", block) if isinstance(block, dict) else {}
        binary = source.get("data") or source.get("blob")
        if isinstance(source.get("text"), str):
            Path(path).write_text(source["text"], encoding="utf-8")
        elif isinstance(binary, str):
            Path(path).write_bytes(base64.b64decode(binary))
        else:
            raise ValueError(f"content block {index} of {self.label} has no text or binary data to save")
        return FileLink(path)  # type: ignore[no-untyped-call]

    def to_pandas(self) -> Any:
        """The structured result as a DataFrame (records, columns-of-lists, or either under one wrapper key
        such as ``result``), a Series (an array or object of scalars) or a scalar; imports pandas."""
        from ...engine.tables import to_pandas

        result = self._finished_result()
        if result is None:
            raise RuntimeError(f"{self.label} has no result ({self._state})")
        return to_pandas(result)

    @property
    def is_error(self) -> bool:
        return self._state in ("denied", "failed", "cancelled") or (self._result or {}).get("isError") is True

    @property
    def duration(self) -> float | None:
        if self.started is None:
            return None
        return (self.finished or time.time()) - self.started

    def __repr__(self) -> str:
        return f"<CallHandle {self.label}: {self._state}>"

    # ---- decisions -----------------------------------------------------------------------------------------
    def _move(self, event: Event) -> State | None:
        """Take the transition for ``event`` (call with ``_cond`` held); the new state, or None if illegal."""
        new = TRANSITIONS.get((self._state, event))
        if new is not None:
            self._state = new
            self.entry.status = new
        return new

    def approve(self, always: bool = False, *, by: str = "code") -> CallHandle:
        """Run the call; ``always=True`` also allows this tool without asking for the rest of the session.

        ``by`` says who decided, for the history ("you" when the card's button was clicked)."""
        with self._cond:
            if self._move("approve") is None:
                raise RuntimeError(f"{self.label} is {self._state}, not awaiting approval")
            self.entry.decision = "allow"
            self.entry.decided_by = f"{by}: always allow this tool" if always else f"{by}: approved"
        if always and self._remember is not None:
            self._remember()
        self._launch()
        return self

    def deny(self, *, by: str = "code") -> CallHandle:
        """Do not run the call; the handle ends ``denied`` with an error result (not an exception)."""
        with self._cond:
            if self._state != "awaiting-approval":
                raise RuntimeError(f"{self.label} is {self._state}, not awaiting approval")
            self.entry.decision = "deny"
            self.entry.decided_by = f"{by}: denied"
        self._finish("deny", result=_denied(self.label, by))
        return self

    def cancel(self) -> bool:
        """Cancel: before approval nothing is sent; while running, ``notifications/cancelled`` goes out.

        A cancel is the person's choice, not a failure: the handle ends ``cancelled`` and keeps the progress
        it had reached. False if the call had already ended."""
        with self._cond:
            state, future = self._state, self._future
            if (state, "cancel") not in TRANSITIONS:
                return False
            if state == "awaiting-approval":
                self.entry.decision = "cancelled"
        when = "before it was approved" if state == "awaiting-approval" else "while it ran"
        ended = self._finish("cancel", error=CallCancelled(f"{self.label} was cancelled {when}"))
        if future is not None:
            future.cancel()  # the runtime task is cancelled; the connection sends notifications/cancelled
        return ended

    # ---- running -------------------------------------------------------------------------------------------
    def _launch(self) -> None:
        # under the lock: a cancel that won the race leaves nothing to start
        with self._cond:
            if self._state != "running" or self._future is not None:
                return
            self.started = time.time()
            self._future = self._runtime.submit(self._execute())
        self._future.add_done_callback(self._on_future_done)
        self._refresh(force=True)

    def _on_future_done(self, future: concurrent.futures.Future[None]) -> None:
        if future.cancelled():  # cancelled before the coroutine ever ran
            self._finish("cancel", error=CallCancelled(f"{self.label} was cancelled"))

    async def _execute(self) -> None:
        try:
            result = await self._runner(self._on_progress)
        except asyncio.CancelledError:
            self._finish("cancel", error=CallCancelled(f"{self.label} was cancelled"))
            raise
        except Exception as exc:
            self._finish("fail", error=exc)
        else:
            self._finish("succeed", result=result)

    def _on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        with self._display_lock:
            self.progress = (progress, total, message)
            view = self._widgets.get("progress")
            if view is not None:
                view.update(progress, total, message)
            if self._display_id is None and self.interactive and self._auto_show:
                self.show()
            else:
                self._refresh()

    def on_task(self, task: dict[str, Any]) -> None:
        """The call runs as a task: show its status live (working, input_required, completed...)."""
        with self._display_lock:
            self.task = dict(task)
        self._refresh(force=True)

    _auto_show = True  # api sets False for handles rendered elsewhere (a form's result area)

    def _finish(
        self, event: Event, *, result: dict[str, Any] | None = None, error: BaseException | None = None
    ) -> bool:
        """End the call through ``TRANSITIONS``; False (nothing changes) if it already ended."""
        with self._cond:
            state = self._move(event)
            if state is None:
                return False
            self._result, self._error = result, error
            self.finished = time.time()
            if result is not None:
                from .history import kept_response

                self.entry.response = kept_response(result)
            self.entry.duration = None if self.started is None else self.finished - self.started
            if error is not None:  # the audit log and its copy-as-code never hold a credential
                self.entry.error = redact(f"{type(error).__name__}: {error}")
            elif result is not None and result.get("isError") is True and state == "done":
                self.entry.error = "tool error (isError)"
        # the display shows the outcome before any waiter wakes, so a cell ends with its final output
        with self._display_lock:
            self._refresh(force=True)
            self._close_widgets()
        with self._cond:
            self._settled = True
            self._cond.notify_all()
        if not self._done.done():
            self._done.set_result(self)
        return True

    # ---- waiting -----------------------------------------------------------------------------------------
    def _needs_person(self) -> bool:
        return self._state == "awaiting-approval" or bool(self._waiting_widgets)

    def wait(self, timeout: float | None = None) -> CallHandle:
        """Block until the call ends (``TimeoutError`` after ``timeout`` s, the call goes on).

        On the kernel's main thread a click can never arrive while a cell blocks (DESIGN decision 4), so a
        call waiting for a person raises instead: use ``await handle`` in an async cell, or click and
        come back.
        """
        if (
            self.interactive
            and self._needs_person()
            and threading.current_thread() is threading.main_thread()
        ):
            raise RuntimeError(
                f"{self.label} is waiting for you in the notebook; a blocked cell cannot receive the click. "
                "Use 'await handle' in an async cell, or approve/answer it and read the handle afterwards."
            )
        with parked(), self._cond:
            if not self._cond.wait_for(lambda: self._settled, timeout):
                raise TimeoutError(f"{self.label} is still {self._state} after {timeout} s")
        return self

    def _settle(self, timeout: float | None = None) -> bool:
        """Block until done or until the call needs a person; True if done. Used by the sync API."""
        with parked(), self._cond:
            self._cond.wait_for(lambda: self._settled or (self.interactive and self._needs_person()), timeout)
            return self._settled

    def __await__(self) -> Generator[Any, None, CallHandle]:
        return self._await().__await__()

    async def _await(self) -> CallHandle:
        try:
            await asyncio.shield(asyncio.wrap_future(self._done))
        except asyncio.CancelledError:  # the cell was interrupted: the call goes too
            self.cancel()
            raise
        return self

    def static_bundle(self) -> dict[str, str]:
        """The call as static HTML/text in its current state (``handle_view.call_bundle``)."""
        from .handle_view import call_bundle

        return call_bundle(self)

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, Any]:
        return filter_bundle(dict(self.static_bundle()), include, exclude)

    def trace(self) -> TraceView:
        """The JSON-RPC messages of this call's connection while it ran (notifications in between too)."""
        if self._trace is None:
            return TraceView([])
        start, end = self.started or self.created, self.finished or time.time()
        entries = [e for e in self._trace.entries(since=start) if e["time"] <= end]
        return TraceView([(f"{self.label} ({self.server})", entries)])


def _denied(label: str, by: str) -> dict[str, Any]:
    text = f"The call to {label} was denied ({by}); it was not sent to the server."
    return {"content": [{"type": "text", "text": text}], "isError": True}


# A main thread blocked in these waits is parked: a notebook tool called meanwhile runs on a stand-in thread.
register_parking(CallHandle.wait)
register_parking(CallHandle._settle)
