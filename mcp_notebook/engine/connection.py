"""The async engine: runs a sans-IO :class:`~.protocol.session.Session` over a transport.

Shared by both roles. One reader task turns incoming text into session events; each incoming request runs
as its own task (so a slow handler never blocks pings, progress or other calls); each outgoing request waits
on a future with a timeout that progress may extend (engine/outgoing.py, a base of Connection). When the
transport ends, every pending request fails at once with the transport's reason and every running handler is
cancelled: nothing hangs.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Coroutine
from types import CoroutineType
from typing import Any

from ..protocol.errors import INTERNAL_ERROR, ConnectionClosedError, JSONRPCError
from ..protocol.jsonrpc import RequestId, valid_id
from ..protocol.session import (
    ErrorReceived,
    Event,
    NotificationReceived,
    ProtocolViolation,
    RequestReceived,
    ResultReceived,
    Session,
)
from ..transports.base import PostsInline, TakesAnswers, Transport, TransportClosed
from . import otel
from .incoming import IncomingRequest
from .outgoing import Outgoing
from .pending import INLINE, Pending, ProgressCallback, Timers, cancelling, uncancelled
from .trace import Trace

__all__ = ["Connection", "IncomingRequest", "ProgressCallback"]

log = logging.getLogger("mcp_notebook")


RequestHandler = Callable[[IncomingRequest], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


async def _closed(request: IncomingRequest) -> dict[str, Any]:
    raise ConnectionClosedError("the connection ended")


class Connection(Outgoing):
    """Drives one session over one transport. Start with :meth:`start`; end with :meth:`aclose`."""

    def __init__(  # (no keyword-only arguments: a class called with keywords pays for a dict of them)
        self,
        session: Session,
        transport: Transport,
        request_handler: RequestHandler,
        notification_handler: NotificationHandler | None = None,
        trace: Trace | None = None,
        name: str = "connection",
    ) -> None:
        self.session = session
        self.transport = transport
        self.trace = trace if trace is not None else Trace()
        self.name = name
        self._request_handler = request_handler
        self._notification_handler = notification_handler
        self._pending: dict[RequestId, Pending] = {}
        self._timers = Timers()
        self._progress: dict[int, Pending] = {}
        self._last_token = 0
        self._running: dict[RequestId, tuple[asyncio.Task[None], IncomingRequest]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._reader_idle = False  # the reader waits for the transport, with nothing received in hand
        self._reader_context = contextvars.Context()  # start(): the context the reader task runs in
        # The transport's optional capabilities (transports/base.py), looked up once in start().
        self._post_inline: Callable[[str], Awaitable[None]] | None = None
        # Closed yet; the Event that wait_closed() waits on is made only when someone does (a lasting
        # session's runner): a stateless request's connection, one per 2026-07-28 POST, never waits.
        self._closed = False
        self._closed_event: asyncio.Event | None = None
        self.close_reason: ConnectionClosedError | None = None

    # ---- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        self._reader_context = contextvars.copy_context()  # what the reader task runs in (a copy of it)
        self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name=f"{self.name} reader")
        transport = self.transport
        if isinstance(transport, TakesAnswers):  # HTTP client, memory: answers may skip the reader
            transport.take_answer = self.take_answer
        if INLINE and isinstance(transport, PostsInline):
            self._post_inline = transport.post_inline

    def take_answer(self, text: str) -> bool:
        """Take an answer or (in memory) a request, one message, at once as the reader would, instead of
        through the transport's queue and the reader task: done when the reader is idle, so that nothing
        received earlier is unprocessed and the order of messages holds; False otherwise (queue it then).
        A request's handler starts in the reader's context, not the sender's (contextvars do not leak)."""
        if not self._reader_idle or self._closed:
            return False
        self.trace.record("in", text)
        for event in self.session.receive(text):
            if isinstance(event, ResultReceived):
                self._resolve(event.id, result=event.result)
            elif isinstance(event, ErrorReceived):
                self._resolve(event.id, error=event.error)
            elif isinstance(event, RequestReceived):  # its handler starts, as the reader's _dispatch does
                self._reader_context.run(self._start_handler, event)
            else:  # a refusal to send or a violation to note: as the reader would, in order
                self._reader_context.run(self._spawn, self._dispatch(event), f"{self.name} dispatch")
        return True

    def answer_one(self, text: str) -> None:
        """Take the one message of a connection that carries a single request (a 2026-07-28 HTTP POST)
        without a reader task: its handler starts at once; :meth:`end` closes the connection."""
        self._take_one(text, False)

    def answer_inline(
        self, text: str, loop: asyncio.AbstractEventLoop | None = None
    ) -> Coroutine[Any, Any, object] | None:
        """:meth:`answer_one`, but the request's handler is returned, for the caller to await in its own task
        (no task of its own; Python 3.11+, see pending.INLINE). Ending the connection cancels that task as
        it would the handler's; the returned coroutine then takes that cancel back (Task.uncancel), so the
        caller carries on, while any other cancel of its task still propagates. None when there is no
        handler to run (a refusal is sent as :meth:`answer_one` sends it). ``loop``: the running loop, when
        the caller has it (asking for it is a getpid system call on Python 3.11)."""
        return self._take_one(text, True, loop)

    def _take_one(
        self, text: str, inline: bool, loop: asyncio.AbstractEventLoop | None = None
    ) -> Coroutine[Any, Any, object] | None:
        self.trace.record("in", text)
        run = None
        for event in self.session.receive(text):
            if isinstance(event, RequestReceived) and inline and run is None:
                task = asyncio.current_task(loop)
                assert task is not None
                incoming = IncomingRequest(event.id, event.method, event.params, self, event.modern)
                self._running[event.id] = (task, incoming)
                run = self._handle(incoming, True, task)
            elif isinstance(event, RequestReceived):
                self._start_handler(event)
            else:  # a refusal to send, or a note: as the reader would
                self._spawn(self._dispatch(event), f"{self.name} dispatch")
        return run

    def end(self, reason: str) -> None:
        """Close without waiting: pending requests fail and running handlers are cancelled (they finish on
        their own; nothing they send is delivered). The transport is the caller's to close. No handler
        starts after this, so the connection lets go of them: their owner, which holds this connection,
        is then freed by reference counting, not left to the cycle collector (one per stateless request)."""
        self._shutdown(ConnectionClosedError(f"{self.name}: {reason}"))
        self._request_handler = _closed
        self._notification_handler = None

    @property
    def closed(self) -> bool:
        return self._closed

    async def wait_closed(self) -> None:
        if self._closed:
            return
        if self._closed_event is None:
            self._closed_event = asyncio.Event()
        await self._closed_event.wait()

    async def aclose(self) -> None:
        """Close the transport; pending requests fail, running handlers are cancelled."""
        if not self._closed:
            self._shutdown(ConnectionClosedError(f"{self.name}: closed by this side"))
        try:
            await self.transport.aclose()
        finally:
            reader = self._reader
            if reader is not None and reader is not asyncio.current_task():
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)
            await self._drain_tasks()

    async def _drain_tasks(self) -> None:
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    def _shutdown(self, reason: ConnectionClosedError) -> None:
        if self._closed:
            return
        self.close_reason = reason
        self.session.close()
        self._closed = True
        if self._closed_event is not None:
            self._closed_event.set()
        if self._pending:
            for pending in list(self._pending.values()):
                pending.fail(reason)
            self._pending.clear()
        self._timers.stop()
        if self._running:
            for task, incoming in list(self._running.values()):
                self._stop(task, incoming)

    # ---- sending -----------------------------------------------------------------------------------------
    async def _send(self, text: str, related_id: RequestId | None = None) -> None:
        self.trace.record("out", text)
        await self.transport.send(text, related_id=related_id)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related_id: RequestId | None = None
    ) -> None:
        self._check_open()
        await self._send(self.session.send_notification(method, params), related_id)

    def _check_open(self) -> None:
        if self._closed:
            raise self.close_reason or ConnectionClosedError(f"{self.name}: the connection is closed")

    # ---- receiving ---------------------------------------------------------------------------------------
    async def _read_loop(self) -> None:
        try:
            while True:
                self._reader_idle = True
                try:
                    text = await self.transport.receive()
                finally:
                    self._reader_idle = False
                self.trace.record("in", text)
                events = self.session.receive(text)
                if self._is_batch(text, events):
                    self._spawn(self._answer_batch(events), f"{self.name} batch")
                    continue
                for event in events:
                    await self._dispatch(event)
        except TransportClosed as exc:
            self._shutdown(exc)
        except asyncio.CancelledError:
            self._shutdown(ConnectionClosedError(f"{self.name}: closed"))
            raise
        except Exception as exc:  # a bug in a handler path must not leave callers hanging
            log.exception("%s: reader failed", self.name)
            self._shutdown(ConnectionClosedError(f"{self.name}: internal error: {exc!r}"))

    async def _dispatch(self, event: Event) -> None:
        if isinstance(event, ResultReceived):
            self._resolve(event.id, result=event.result)
        elif isinstance(event, ErrorReceived):
            self._resolve(event.id, error=event.error)
        elif isinstance(event, RequestReceived):
            self._start_handler(event)
        elif isinstance(event, NotificationReceived):
            self._on_notification(event)
        elif isinstance(event, ProtocolViolation):
            self.trace.record("note", event.reason)
            log.debug("%s: %s", self.name, event.reason)
            if event.reply is not None:
                await self._send(event.reply)

    def _spawn(self, coro: Awaitable[Any], name: str, *, leaves: bool = False) -> asyncio.Task[Any]:
        """Run ``coro`` in a task of this connection's (cancelled and awaited by :meth:`aclose`). ``leaves``:
        the task takes itself out of the connection's tasks when it ends (a request's handler, in
        :meth:`_handle`), instead of a done callback doing it: one loop callback less per request."""
        if type(coro) is CoroutineType:  # the usual case: straight to the loop, named as it is made
            task = asyncio.get_running_loop().create_task(coro, name=name)
        else:
            task = asyncio.ensure_future(coro)
            task.set_name(name)
        self._tasks.add(task)
        if not leaves or task.done():  # (done already: its own leaving ran before it was added)
            task.add_done_callback(self._tasks.discard)
        return task

    def _is_batch(self, text: str, events: list[Event]) -> bool:
        """A JSON-RPC batch the session accepted (2025-03-26 only: basic#batching), to answer as one array.

        A batch that is not valid JSON, or an empty one, gets a single error instead (JSON-RPC 2.0 section 6).
        """
        version = self.session.version
        if not text.lstrip().startswith("[") or version is None or not version.supports("batching"):
            return False
        only = events[0] if len(events) == 1 else None
        refused_whole = ("parse error", "empty batch")
        return not (isinstance(only, ProtocolViolation) and only.reason.startswith(refused_whole))

    async def _answer_batch(self, events: list[Event]) -> None:
        """Run a batch's requests concurrently; send their answers (and errors for invalid entries) as one
        array, when there is anything to answer (a batch of notifications gets nothing back)."""
        answers: list[str] = []
        tasks: list[asyncio.Task[str | None]] = []
        for event in events:
            if isinstance(event, RequestReceived):
                tasks.append(self._start_handler(event, send=False))
            elif isinstance(event, ProtocolViolation):
                self.trace.record("note", event.reason)
                if event.reply is not None:
                    answers.append(event.reply)
            else:
                await self._dispatch(event)
        done = await asyncio.gather(*tasks, return_exceptions=True)
        answers += [text for text in done if isinstance(text, str)]  # cancelled requests are not answered
        if not answers:
            return
        first = next((e.id for e in events if isinstance(e, RequestReceived)), None)
        try:
            await self._send("[" + ",".join(answers) + "]", first)
        except ConnectionClosedError as exc:
            log.debug("%s: answer to a batch not delivered: %s", self.name, exc)

    def _start_handler(self, event: RequestReceived, *, send: bool = True) -> asyncio.Task[Any]:
        incoming = IncomingRequest(event.id, event.method, event.params, self, event.modern)
        work = self._handle(incoming, send)
        task = self._spawn(work, f"{self.name} handle {event.method} {event.id}", leaves=send)
        if not task.done():  # (done: an eager task factory ran it to its end as it was made)
            self._running[event.id] = (task, incoming)
        return task

    async def _handle(
        self, incoming: IncomingRequest, send: bool = True, inline: asyncio.Task[Any] | None = None
    ) -> str | None:
        """Run the handler and send its answer (``send`` False: return it, for a batch's one answer; None:
        cancelled, so nothing may be sent). ``inline``: the caller's task the handler runs in
        (:meth:`answer_inline`): a cancel of ours (the request stopped) is taken back from it, anyone
        else's still propagates. One coroutine for all of it: each level is resumed again by the answer."""
        try:
            try:
                recorder = otel.tracer()
                if recorder is None:
                    result = await self._request_handler(incoming)
                else:
                    with otel.server_span(recorder, incoming.method, incoming.params, incoming.id):
                        result = await self._request_handler(incoming)
                text = self.session.send_result(incoming.id, result)
            except asyncio.CancelledError:
                self.session.forget(incoming.id)  # cancelled by the peer or by closing: no answer is sent
                text = None
            except JSONRPCError as exc:
                text = self.session.send_error(incoming.id, exc.code, exc.message, exc.data)
            except Exception as exc:
                # the exception (its type too: KeyError names what was looked up) stays in the server's log;
                # the peer learns only that the request failed inside the server
                log.exception("%s: handler for %s failed: %s", self.name, incoming.method, type(exc).__name__)
                text = self.session.send_error(incoming.id, INTERNAL_ERROR, "Internal error")
            finally:
                self._running.pop(incoming.id, None)
            if not send:
                return text
            if text is not None:
                try:
                    await self._send(text, incoming.id)
                except ConnectionClosedError as exc:
                    log.debug("%s: answer to %s not delivered: %s", self.name, incoming.id, exc)
        except asyncio.CancelledError:
            if inline is not None and incoming.stopped and uncancelled(inline):
                return None  # only ours
            raise
        finally:  # its task leaves the connection's tasks (_spawn's leaves; inline: not one of them)
            if send and inline is None:
                self._tasks.discard(asyncio.current_task())
        if inline is not None:
            if incoming.stopped:
                uncancelled(inline)
            if cancelling(inline):  # someone else cancelled the caller's task meanwhile: theirs to see
                raise asyncio.CancelledError
        return None

    def _on_notification(self, event: NotificationReceived) -> None:
        params = event.params
        if event.method == "notifications/cancelled":
            self._cancel_incoming(params.get("requestId"))
            return
        if event.method == "notifications/progress":
            self._on_progress(params)
            return
        if self._notification_handler is not None:
            handler = self._notification_handler
            self._spawn(handler(event.method, params), f"{self.name} {event.method}")

    def _cancel_incoming(self, request_id: Any) -> None:
        running = self._running.get(request_id) if valid_id(request_id) else None
        if running is None:
            self._cancelled_by_peer(request_id)
            return  # unknown or finished: ignore (cancellation#behavior-requirements)
        task, incoming = running
        if incoming.method == "initialize":
            return
        self._stop(task, incoming)
        # A task cancelled before its first step never runs its handler's own cleanup (the finally that lets
        # the id go): if that is what happened, let it go here once the task is done.
        task.add_done_callback(lambda done: self._let_go(request_id, done))

    def _let_go(self, request_id: RequestId, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)  # nor its own leaving the connection's tasks (_handle's finally)
        running = self._running.get(request_id)
        if running is not None and running[0] is task:  # still ours: its handler never ran
            del self._running[request_id]
            self.session.forget(request_id)

    @staticmethod
    def _stop(task: asyncio.Task[Any], incoming: IncomingRequest) -> None:
        incoming.cancel_event.set()
        incoming.stopped = True
        task.cancel()
