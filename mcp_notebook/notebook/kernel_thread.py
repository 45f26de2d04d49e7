"""Run notebook tools on the kernel's main thread, on the kernel's own loop (DESIGN decision 6).

Connections live on the runtime thread (decision 3), but a tool defined in a cell should behave as if a
cell ran it: globals, ``display``, matplotlib's inline backend and pandas' options are main-thread state.
:class:`KernelThread` is a ``run_sync`` hook for :class:`~mcp_notebook.Server`: each sync tool call
becomes a job scheduled on the kernel's asyncio loop (ipykernel 7 runs its shell there, on the main
thread), so calls wait their turn while a cell is busy while the runtime thread keeps answering pings and
lists. :meth:`KernelThread.run_async` does the same for coroutines.

What a tool prints or displays is captured (stdout, stderr, ``display`` bundles, inline figures) and handed
to output listeners (the server console) and, as ``notifications/message``, to the calling client: it never
lands in whatever cell happened to run last.

The self-call: a cell that synchronously calls a notebook tool (``mcp.call``, a ``SyncClient`` on the served
URL) blocks the main thread until the answer comes, so a job queued for the main thread would never run.
While the main thread is *parked* in one of the library's waits (``Runtime.run``, ``CallHandle.wait``;
marked cooperatively with :func:`parked`, or recognised on its stack), the cell's own code is not running:
the job runs on a stand-in thread instead, as the blocked main thread's proxy. A job is claimed once, by
whichever side gets there first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import io
import logging
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator
from dataclasses import dataclass, field
from functools import partial
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

from ..engine.runtime import Runtime, set_blocking_hook
from ..engine.workers import run_in_worker

if TYPE_CHECKING:
    from ..engine.server import Server

__all__ = [
    "CallInfo",
    "KernelThread",
    "ToolInterrupted",
    "ToolOutput",
    "parked",
    "register_parking",
]

log = logging.getLogger("mcp_notebook.notebook")

_POLL_FIRST = 0.005  # seconds between checks for a parked main thread while a job waits; doubles ...
_POLL_MAX = 0.1  # ... up to this
_STACK_DEPTH = 12  # frames searched for a parking function above the innermost wait


class ToolInterrupted(Exception):
    """The kernel was interrupted (KeyboardInterrupt) while the tool ran on the main thread."""


@dataclass
class ToolOutput:
    """What a tool printed and displayed while it ran."""

    stdout: str = ""
    stderr: str = ""
    displays: list[dict[str, Any]] = field(default_factory=list)  # mimebundles (mime type -> data)

    def __bool__(self) -> bool:
        return bool(self.stdout or self.stderr or self.displays)

    def text(self) -> str:
        """Everything as text: stdout, stderr, and the text/plain of each display."""
        parts = [self.stdout, self.stderr]
        parts += [str(d.get("text/plain", f"<{', '.join(d)}>")) + "\n" for d in self.displays]
        return "".join(p for p in parts if p)


@dataclass(frozen=True)
class CallInfo:
    """The ``tools/call`` being answered (set by :class:`KernelThread`'s server listener)."""

    session: Any  # ServerSession
    request: Any  # IncomingRequest
    tool: str


_current_call: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar(
    "mcp_notebook_current_call", default=None
)
OutputListener = Callable[[CallInfo | None, ToolOutput], None]


# ---- parking: the main thread blocked in the library, waiting for the runtime ---------------------------
_parked_depth = 0  # main thread only
_parking_codes: set[CodeType] = set()
_parking_loaded = False


@contextlib.contextmanager
def parked() -> Iterator[None]:
    """Mark the main thread as blocked waiting for the runtime (wrap a library wait in it)."""
    global _parked_depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _parked_depth += 1
    try:
        yield
    finally:
        _parked_depth -= 1


def register_parking(fn: Callable[..., Any]) -> None:
    """Recognise ``fn`` on the main thread's stack, blocked in a wait, as parked (see module docstring)."""
    code = getattr(fn, "__code__", None)
    if isinstance(code, CodeType):
        _parking_codes.add(code)


def _load_parking() -> None:
    global _parking_loaded
    if _parking_loaded:
        return
    _parking_loaded = True
    # CallHandle registers its own waits (calls/handle.py)

    register_parking(Runtime.run)


def _is_waiting(frame: FrameType) -> bool:
    # Blocked, not computing: the innermost Python frame is a threading wait (Condition/Event/Future).
    name = frame.f_code.co_filename.replace("\\", "/")
    return name.endswith(("/threading.py", "/concurrent/futures/_base.py"))


def main_is_parked(thread: threading.Thread | None = None) -> bool:
    """True while ``thread`` (the main thread) waits in the library for the runtime (cooperative mark or
    a registered parking function on its stack above a threading wait)."""
    thread = thread or threading.main_thread()
    if thread is threading.main_thread() and _parked_depth > 0:
        return True
    _load_parking()
    frame: FrameType | None = sys._current_frames().get(thread.ident or -1)
    if frame is None or not _is_waiting(frame):
        return False
    for _ in range(_STACK_DEPTH):
        if frame is None:
            return False
        if frame.f_code in _parking_codes:
            return True
        frame = frame.f_back
    return False


# ---- capturing output ------------------------------------------------------------------------------------
class _Capture:
    """Swap stdout, stderr and the shell's display publisher while tool code runs (re-entrant steps)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.stdout = io.StringIO()
        self.stderr = io.StringIO()
        self.displays: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        from IPython.core.displaypub import CapturingDisplayPublisher

        saved_out, saved_err = sys.stdout, sys.stderr
        shell = self.shell
        saved_pub = getattr(shell, "display_pub", None) if shell is not None else None
        publisher = None
        if shell is not None:
            # No shell= here: given a shell, IPython registers two pre/post_execute callbacks per publisher
            # that are never removed (one leak per tool call, slowing every later cell).
            publisher = CapturingDisplayPublisher()  # type: ignore[no-untyped-call]
            shell.display_pub = publisher
        sys.stdout, sys.stderr = self.stdout, self.stderr
        try:
            yield
            _flush_inline_figures()
        finally:
            sys.stdout, sys.stderr = saved_out, saved_err
            if shell is not None and publisher is not None:
                shell.display_pub = saved_pub
                for item in publisher.outputs:
                    data = item.get("data") if isinstance(item, dict) else None
                    if isinstance(data, dict):
                        self.displays.append(dict(data))

    def output(self) -> ToolOutput:
        return ToolOutput(self.stdout.getvalue(), self.stderr.getvalue(), list(self.displays))

    def returned(self, value: Any) -> Any:
        """Forget the inline display of a figure the tool *returned*: flushing the inline backend showed
        it as "<Figure size ...>", a stray log line under a result that is that figure (issue 19)."""
        figure = _figure_of(value)
        if figure is not None:
            shown = repr(figure)
            self.displays = [d for d in self.displays if d.get("text/plain") != shown]
        return value


def _figure_of(value: Any) -> Any:
    """The matplotlib Figure a value is (or an Axes belongs to), else None; matplotlib is never imported."""
    figure_module = sys.modules.get("matplotlib.figure")
    if figure_module is None:
        return None
    if isinstance(value, figure_module.Figure):
        return value
    figure = getattr(value, "figure", None) if type(value).__module__.startswith("matplotlib.axes") else None
    return figure if isinstance(figure, figure_module.Figure) else None


def _flush_inline_figures() -> None:
    # The inline backend shows pending figures after each *cell*; a tool is no cell, so flush them here,
    # into the capture, before they surface under the next unrelated cell.
    backend = sys.modules.get("matplotlib_inline.backend_inline")
    flush = getattr(backend, "flush_figures", None)
    if flush is not None:
        try:
            flush()
        except Exception:
            log.debug("flushing inline figures failed", exc_info=True)


class _CapturedCoroutine:
    """Await ``coro`` with output captured only while *its* code runs, not while other cells' tasks do."""

    def __init__(self, coro: Coroutine[Any, Any, Any], capture: _Capture) -> None:
        self._coro = coro
        self._capture = capture

    def __await__(self) -> Generator[Any, Any, Any]:
        steps = self._coro.__await__()
        send: Any = None
        error: BaseException | None = None
        while True:
            try:
                with self._capture.active():
                    yielded = steps.throw(error) if error is not None else steps.send(send)
            except StopIteration as stop:
                return self._capture.returned(stop.value)
            send, error = None, None
            try:
                send = yield yielded
            except BaseException as exc:  # cancellation and friends go into the coroutine
                error = exc


# ---- jobs --------------------------------------------------------------------------------------------------
class _Job:
    """One call for the main thread: claimed once, by the kernel loop or by a stand-in."""

    def __init__(self, fn: Callable[[], Any] | None, coro: Coroutine[Any, Any, Any] | None) -> None:
        self.fn = fn
        self.coro = coro
        self.future: concurrent.futures.Future[tuple[Any, ToolOutput]] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._claimed = False

    def claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    def abandon(self) -> bool:
        """The caller gave up (cancelled): True if the job never started (and now never will)."""
        if self.claim():
            self.future.cancel()
            if self.coro is not None:
                self.coro.close()
            return True
        return False


class KernelThread:
    """The kernel's main thread and loop, as a place to run tool calls. Create in a cell:
    ``KernelThread.current()`` (captures the running loop), then ``install(server)``."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        thread: threading.Thread | None = None,
        shell: Any = None,
        capture: bool = True,
        log_output: bool = True,
    ) -> None:
        self.loop = loop
        self.thread = thread or threading.main_thread()
        self.shell = shell
        self.capture = capture
        self.log_output = log_output
        self._queue: deque[_Job] = deque()
        self._output_listeners: list[OutputListener] = []
        self._servers: list[Server] = []

    @classmethod
    def current(cls, shell: Any = None, **options: Any) -> KernelThread:
        """The running loop of the calling thread (a cell in ipykernel 7); RuntimeError if none runs."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "no event loop is running here: run this in a Jupyter kernel cell (ipykernel >= 6), "
                "or pass the kernel's loop to KernelThread(loop)"
            ) from None
        if shell is None:
            from IPython.core.getipython import get_ipython

            shell = get_ipython()
        return cls(loop, thread=threading.current_thread(), shell=shell, **options)

    # ---- wiring ----------------------------------------------------------------------------------------
    def install(self, server: Server) -> None:
        """Run ``server``'s sync tools (and resources, prompts) here; idempotent."""
        server.run_sync = self.run_sync
        server.run_async = self.run_async
        set_blocking_hook(parked)  # Runtime.run marks the main thread parked while it waits
        if not any(s is server for s in self._servers):
            self._servers.append(server)
            server.add_listener(self._on_event)

    def uninstall(self, server: Server) -> None:
        """Back to the default (a worker thread per call). The listener stays, inert."""
        if server.run_sync == self.run_sync:
            server.run_sync = run_in_worker
        if server.run_async == self.run_async:
            server.run_async = None
        self._servers = [s for s in self._servers if s is not server]

    def add_output_listener(self, listener: OutputListener) -> None:
        """``listener(call_info_or_None, output)`` on the runtime thread after each call that printed."""
        self._output_listeners.append(listener)

    def remove_output_listener(self, listener: OutputListener) -> None:
        with contextlib.suppress(ValueError):
            self._output_listeners.remove(listener)

    def _on_event(self, event: str, data: dict[str, Any]) -> None:
        # Listeners run synchronously inside the tools/call handler's task, so this sets the variable in
        # that task's context: run_sync, awaited next by the same task, reads it back.
        if event == "call_started":
            session = data.get("session")
            server = getattr(session, "server", None)
            if any(s is server for s in self._servers):
                _current_call.set(CallInfo(session, data.get("request"), str(data.get("tool"))))

    # ---- running ---------------------------------------------------------------------------------------
    async def run_sync(self, fn: Callable[[], Any]) -> Any:
        """``Server.run_sync``: run ``fn`` on the main thread (see the module docstring)."""
        if threading.current_thread() is self.thread:
            value, output = self._execute(fn)
        else:
            value, output = await self._submit(_Job(fn, None))
        await self._route(output)
        return value

    async def run_async(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Await ``coro`` on the kernel's loop (for async tools), with its output captured."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            capture = _Capture(self.shell) if self.capture else None
            value = await (_CapturedCoroutine(coro, capture) if capture is not None else coro)
            output = capture.output() if capture is not None else ToolOutput()
        else:
            value, output = await self._submit(_Job(None, coro))
        await self._route(output)
        return value

    async def _submit(self, job: _Job) -> tuple[Any, ToolOutput]:
        self._queue.append(job)
        try:
            self.loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the kernel's loop is closed: the kernel is going away
            job.abandon()
            raise RuntimeError("the kernel's event loop is closed") from None
        waiter = asyncio.wrap_future(job.future)
        delay = _POLL_FIRST
        try:
            while not waiter.done():
                if main_is_parked(self.thread) and job.claim():
                    if job.coro is not None:  # the runtime loop stands in for the parked kernel loop
                        return await job.coro, ToolOutput()
                    self._stand_in(job)
                await asyncio.wait({waiter}, timeout=delay)
                delay = min(delay * 2, _POLL_MAX)
            return waiter.result()
        except asyncio.CancelledError:
            job.abandon()  # not started: it never will; started: it finishes and its result is dropped
            raise

    def _drain(self) -> None:
        """On the kernel loop: run every queued job this side claims."""
        while self._queue:
            job = self._queue.popleft()
            if not job.claim():
                continue
            if job.fn is not None:
                _settle(job, partial(self._execute, job.fn))
            else:
                self._start_coroutine(job)

    def _start_coroutine(self, job: _Job) -> None:
        assert job.coro is not None
        capture = _Capture(self.shell) if self.capture else None
        awaitable: Awaitable[Any] = _CapturedCoroutine(job.coro, capture) if capture else job.coro

        async def run() -> Any:
            return await awaitable

        task = self.loop.create_task(run())

        def done(t: asyncio.Task[Any]) -> None:
            if job.future.done():
                return
            if t.cancelled():
                job.future.cancel()
            elif (exc := t.exception()) is not None:
                job.future.set_exception(exc)
            else:
                job.future.set_result((t.result(), capture.output() if capture else ToolOutput()))

        task.add_done_callback(done)
        job.future.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)

    def _stand_in(self, job: _Job) -> None:
        """Run a claimed sync job for the parked main thread, on a thread of its own."""
        assert job.fn is not None
        run = partial(_settle, job, partial(self._execute, job.fn))
        threading.Thread(target=run, name="mcp-notebook main-thread stand-in", daemon=True).start()

    def _execute(self, fn: Callable[[], Any]) -> tuple[Any, ToolOutput]:
        if not self.capture:
            return fn(), ToolOutput()
        capture = _Capture(self.shell)
        with capture.active():
            value = fn()
        capture.returned(value)
        return value, capture.output()

    async def _route(self, output: ToolOutput) -> None:
        if not output:
            return
        info = _current_call.get()
        for listener in list(self._output_listeners):
            try:
                listener(info, output)
            except Exception:
                log.exception("output listener failed")
        if info is None or not self.log_output:
            return
        for level, logger, text in _log_items(output):
            if info.session is not None and not info.session.wants_log(level):
                continue
            params = {"level": level, "logger": logger, "data": text}
            try:
                await info.request.notify("notifications/message", params)
            except Exception as exc:  # a vanished client must not fail the call
                log.debug("tool output not delivered: %s", exc)


def _settle(job: _Job, run: Callable[[], tuple[Any, ToolOutput]]) -> None:
    if job.future.cancelled():
        return
    try:
        result = run()
    except KeyboardInterrupt:
        error: BaseException = ToolInterrupted("the kernel was interrupted while the tool ran")
    except BaseException as exc:  # SystemExit from a tool is the tool's error, not the kernel's exit
        error = exc if isinstance(exc, Exception) else RuntimeError(f"the tool raised {exc!r}")
    else:
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # abandoned meanwhile
            job.future.set_result(result)
        return
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        job.future.set_exception(error)


def _log_items(output: ToolOutput) -> list[tuple[str, str, str]]:
    items = []
    if output.stdout:
        items.append(("info", "stdout", output.stdout))
    if output.stderr:
        items.append(("warning", "stderr", output.stderr))
    for bundle in output.displays:
        items.append(("info", "display", str(bundle.get("text/plain", f"<{', '.join(bundle)}>"))))
    return items
