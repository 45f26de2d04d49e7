"""The async engine: runs a sans-IO :class:`~.protocol.session.Session` over a transport.

Shared by both roles. One reader task turns incoming text into session events; each incoming request runs
as its own task (so a slow handler never blocks pings, progress or other calls); each outgoing request waits
on a future with a timeout that progress may extend. When the transport ends, every pending request fails at
once with the transport's reason and every running handler is cancelled: nothing hangs.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Coroutine
from types import CoroutineType
from typing import Any

from ..protocol.errors import (
    INTERNAL_ERROR,
    ConnectionClosedError,
    JSONRPCError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from ..protocol.jsonrpc import RequestId, valid_id
from ..protocol.modern import is_modern
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
from .pending import INLINE, Expired, Pending, ProgressCallback, Timers, cancelling, uncancelled
from .trace import Trace

__all__ = ["Connection", "IncomingRequest", "ProgressCallback"]

log = logging.getLogger("mcp_notebook")
NOTICE_WAIT = 1.0  # s a caller waits for its request's notice of cancellation to go out (then: background)


def _noted(sending: asyncio.Task[None]) -> None:
    """A notice of cancellation that failed once its caller stopped waiting: logged, not left unretrieved."""
    if not sending.cancelled() and sending.exception() is not None:
        log.debug("could not send a cancellation: %r", sending.exception())


RequestHandler = Callable[[IncomingRequest], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


async def _closed(request: IncomingRequest) -> dict[str, Any]:
    raise ConnectionClosedError("the connection ended")


def _check_seconds(name: str, value: float | None) -> None:
    """A request's timeout is a number of seconds, at least 0 (0: expire at once), or None for none: a NaN,
    a negative number or a string is the caller's mistake, said before anything is sent (a NaN never
    expired)."""
    if value is None or (type(value) is float and value >= 0.0):  # the usual case (NaN fails ">=")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, or None for no limit; got {value!r}")


class Connection:
    """Drives one session over one transport. Start with :meth:`start`; end with :meth:`aclose`."""

    def __init__(
        self,
        session: Session,
        transport: Transport,
        *,
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
        self._closed = asyncio.Event()
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
        if not self._reader_idle or self._closed.is_set():
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
        self._take_one(text, inline=False)

    def answer_inline(self, text: str) -> Coroutine[Any, Any, None] | None:
        """:meth:`answer_one`, but the request's handler is returned, for the caller to await in its own task
        (no task of its own; Python 3.11+, see pending.INLINE). Ending the connection cancels that task as
        it would the handler's; the returned coroutine then takes that cancel back (Task.uncancel), so the
        caller carries on, while any other cancel of its task still propagates. None when there is no
        handler to run (a refusal is sent as :meth:`answer_one` sends it)."""
        return self._take_one(text, inline=True)

    def _take_one(self, text: str, *, inline: bool) -> Coroutine[Any, Any, None] | None:
        self.trace.record("in", text)
        run = None
        for event in self.session.receive(text):
            if isinstance(event, RequestReceived) and inline and run is None:
                task = asyncio.current_task()
                assert task is not None
                incoming = IncomingRequest(event.id, event.method, event.params, self, modern=event.modern)
                self._running[event.id] = (task, incoming)
                run = self._handle_inline(incoming, task)
            elif isinstance(event, RequestReceived):
                self._start_handler(event)
            else:  # a refusal to send, or a note: as the reader would
                self._spawn(self._dispatch(event), f"{self.name} dispatch")
        return run

    async def _handle_inline(self, incoming: IncomingRequest, task: asyncio.Task[Any]) -> None:
        try:
            await self._handle(incoming)  # a cancel inside the handler ends it unanswered, as in its own task
        except asyncio.CancelledError:
            if incoming.stopped and uncancelled(task):
                return  # only ours
            raise
        if incoming.stopped:
            uncancelled(task)
        if cancelling(task):  # someone else cancelled the caller's task meanwhile: theirs to see
            raise asyncio.CancelledError

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
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def aclose(self) -> None:
        """Close the transport; pending requests fail, running handlers are cancelled."""
        if not self._closed.is_set():
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
        if self._closed.is_set():
            return
        self.close_reason = reason
        self.session.close()
        self._closed.set()
        for pending in list(self._pending.values()):
            pending.fail(reason)
        self._pending.clear()
        self._timers.stop()
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
        if self._closed.is_set():
            raise self.close_reason or ConnectionClosedError(f"{self.name}: the connection is closed")

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress_callback: ProgressCallback | None = None,
        max_timeout: float | None = None,
        related_id: RequestId | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its result, in an OpenTelemetry CLIENT span whose trace context
        the request carries in ``_meta`` (``engine/otel.py``; nothing without OpenTelemetry).

        ``on_id(request_id)`` is called before the request goes out (a listen stream's notifications name it).

        ``timeout`` is reset by every progress notification when a ``progress_callback`` is given;
        ``max_timeout`` bounds the total wait regardless (basic/lifecycle#timeouts). Both run from the send
        on: a send held up by a peer that stops reading (a full pipe) counts. A timeout or a
        cancelled caller sends ``notifications/cancelled`` (basic/utilities/cancellation).
        """
        _check_seconds("timeout", timeout)
        _check_seconds("max_timeout", max_timeout)
        recorder = otel.tracer()
        if recorder is None:
            return await self._request(
                method, params, timeout, progress_callback, max_timeout, related_id, on_id
            )
        with otel.client_span(recorder, method, params) as params:
            return await self._request(
                method, params, timeout, progress_callback, max_timeout, related_id, on_id
            )

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress_callback: ProgressCallback | None,
        max_timeout: float | None,
        related_id: RequestId | None,
        on_id: Callable[[RequestId], None] | None,
    ) -> dict[str, Any]:
        self._check_open()
        loop = asyncio.get_running_loop()
        pending = Pending(loop.create_future(), self._timers, progress_callback)
        token: int | None = None
        if progress_callback is not None:
            # A token unique among our active requests (basic/utilities/progress).
            self._last_token += 1
            token = self._last_token
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": token}
            self._progress[token] = pending
        request_id, text = self.session.send_request(method, params)
        self._pending[request_id] = pending
        if on_id is not None:
            on_id(request_id)
        post = self._post_inline
        if post is not None and not is_modern(params):
            post = None
        try:
            if post is None:
                # Armed first: a send held up by a peer that stops reading (a full pipe) counts too, and
                # on 3.11+ the timeout or the connection's end stops it (pending.fail cancels this task).
                self._arm(pending, timeout, max_timeout)
                if INLINE:
                    pending.caller = asyncio.current_task()
                try:
                    await self._send(text, related_id)
                except asyncio.CancelledError:
                    if not (pending.stopped and uncancelled(pending.caller)):  # type: ignore[arg-type]
                        raise  # the caller's own cancel; else ours: the future says why
                finally:
                    pending.caller = None
            else:
                self._arm(pending, timeout, max_timeout)
                await self._post_exchange(post, text, request_id, pending)
            try:  # the answer (its timer is armed), awaited here: no coroutine of its own per request
                result: dict[str, Any] = await pending.future
                return result
            except Expired as expired:
                delay, capped = expired.args  # capped: the wait max_timeout allowed ended, not a window
                waited = f"{max_timeout:g} s (max_timeout)" if capped and max_timeout else f"{delay:g} s"
                if not pending.cut:
                    await self._abandon(request_id, method, f"timed out after {waited}")
                message = f"{method} (request {request_id}) timed out after {waited}"
                raise RequestTimeoutError(message) from None
        except asyncio.CancelledError:
            if not pending.cut:  # a cut exchange already cancelled the request on the wire
                await self._abandon(request_id, method, "the caller cancelled the request")
            raise
        finally:
            pending.disarm()
            self._pending.pop(request_id, None)
            if token is not None:
                self._progress.pop(token, None)

    def _arm(self, pending: Pending, timeout: float | None, max_timeout: float | None) -> None:
        """Start the request's timer (re-armed by progress); it fails the future when time runs out."""
        loop = asyncio.get_running_loop()
        if max_timeout is not None:
            pending.deadline = loop.time() + max_timeout
        pending.timeout = timeout
        pending.arm(loop)

    async def _post_exchange(
        self, post: Callable[[str], Awaitable[None]], text: str, request_id: RequestId, pending: Pending
    ) -> None:
        """A 2026-07-28 request over a transport that can run its exchange in the caller's own task (HTTP:
        the POST and its answer), with no task of its own and no wake-up through the future when the answer
        came in time. A timeout, the connection's end or the peer ending the request stops the exchange
        (pending.fail cancels this task; the future holds why); so does a cancelled caller. Either way the
        exchange is cut, which the transport's contract makes the request's cancellation on the wire."""
        self.trace.record("out", text)
        task = asyncio.current_task()
        pending.caller = task
        try:
            await post(text)
        except asyncio.CancelledError:
            pending.cut = True
            self.trace.record("note", f"request {request_id}: its exchange was cut (its cancellation)")
            if pending.stopped and task is not None and uncancelled(task):
                return  # stopped by pending.fail alone: the caller learns why from the future
            raise
        finally:
            pending.caller = None

    async def _abandon(self, request_id: RequestId, method: str, reason: str) -> None:
        if method in ("initialize", "server/discover") or self._closed.is_set():
            # The client MUST NOT cancel initialize; nor the era probe, which a legacy server may not know
            # (its answer, if late, is dropped). A closed connection needs no notice.
            return
        try:
            notice = self.session.cancel(request_id, reason)
        except LocalProtocolError as exc:
            log.debug("%s: could not send cancellation: %s", self.name, exc)
            return
        # Waited for while it goes out at once (the usual case: it is sent when the caller hears of the
        # timeout); a peer that stopped reading (a full pipe) keeps it waiting in the background, not the
        # caller, which would otherwise wait as long as the peer does.
        sending = self._spawn(self._send_notice(notice), f"{self.name} cancel {request_id}")
        sending.add_done_callback(_noted)
        done, _ = await asyncio.wait((sending,), timeout=NOTICE_WAIT)
        if done:
            sending.result()  # its failure reaches the caller, as when the notice was awaited here

    async def _send_notice(self, text: str) -> None:
        try:
            await self._send(text)
        except ConnectionClosedError as exc:
            log.debug("%s: could not send cancellation: %s", self.name, exc)

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

    def _resolve(self, request_id: RequestId, *, result: Any = None, error: Exception | None = None) -> None:
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return
        if error is not None:
            pending.future.set_exception(error)
        else:
            pending.future.set_result(result)

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
        incoming = IncomingRequest(event.id, event.method, event.params, self, modern=event.modern)
        work = self._handle(incoming) if send else self._answer(incoming)
        task = self._spawn(work, f"{self.name} handle {event.method} {event.id}", leaves=send)
        if not task.done():  # (done: an eager task factory ran it to its end as it was made)
            self._running[event.id] = (task, incoming)
        return task

    async def _handle(self, incoming: IncomingRequest) -> None:
        try:
            text = await self._answer(incoming)
            if text is None:
                return
            try:
                await self._send(text, incoming.id)
            except ConnectionClosedError as exc:
                log.debug("%s: answer to %s not delivered: %s", self.name, incoming.id, exc)
        finally:  # its task leaves the connection's tasks (_spawn's leaves; inline: not one of them)
            self._tasks.discard(asyncio.current_task())

    async def _answer(self, incoming: IncomingRequest) -> str | None:
        """Run the handler; the answer to send (None: cancelled, so nothing may be sent)."""
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
            return None
        except JSONRPCError as exc:
            text = self.session.send_error(incoming.id, exc.code, exc.message, exc.data)
        except Exception as exc:
            # the exception (its type too: KeyError names what was looked up) stays in the server's log;
            # the peer learns only that the request failed inside the server
            log.exception("%s: handler for %s failed: %s", self.name, incoming.method, type(exc).__name__)
            text = self.session.send_error(incoming.id, INTERNAL_ERROR, "Internal error")
        finally:
            self._running.pop(incoming.id, None)
        return text

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

    def _cancelled_by_peer(self, request_id: Any) -> None:
        """2026-07-28: a server tearing down a stream of ours (``subscriptions/listen``) says so with
        ``notifications/cancelled`` naming our request (basic/patterns/cancellation): that request ends."""
        version = self.session.version
        pending = self._pending.get(request_id) if valid_id(request_id) else None
        if pending is None or version is None or version.era != "modern":
            return
        pending.fail(RemoteProtocolError(f"the server ended request {request_id!r}"))

    def _on_progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        pending = self._progress.get(token) if isinstance(token, int) else None
        if pending is None or pending.on_progress is None:
            return
        progress, total, message = params.get("progress"), params.get("total"), params.get("message")
        if not isinstance(progress, (int, float)):
            return  # malformed progress: ignore rather than crash the reader
        if pending.expires is not None:
            pending.arm(asyncio.get_running_loop())  # progress arrived: the timeout starts again
        try:
            outcome = pending.on_progress(progress, total, message)
            if inspect.isawaitable(outcome):
                self._spawn(outcome, f"{self.name} progress callback")
        except Exception:
            log.exception("%s: progress callback failed", self.name)
