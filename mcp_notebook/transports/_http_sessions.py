"""The sessions and streams behind :class:`~.http_server.StreamableHTTPServer` (kept apart for size).

A :class:`_Session` is one engine's transport: its inbox, and one :class:`_Stream` per POSTed request (or
batch) plus the standalone (GET) stream. A legacy session lives from ``initialize`` to DELETE, to its idle
expiry, or to its eviction by a newer session (:class:`Sessions`: no lock-out by abandoned sessions); a
modern (2026-07-28) request gets a session of its own that ends with its answer. Events go to bounded
buffers that HTTP connections (:class:`_Writer`) drain, so sending never blocks on a slow or vanished client.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from mcp_notebook.protocol.errors import INTERNAL_ERROR
from mcp_notebook.protocol.jsonrpc import ErrorResponse, Request, RequestId, Response, parse, peek, serialize
from mcp_notebook.protocol.modern import META_SUBSCRIPTION_ID

from .base import TransportClosed
from .http_limits import HTTPLimits
from .sse import encode_event

__all__ = ["Exchange", "ExchangeHooks", "FirstActivity", "HTTPSessionTransport", "Sessions"]

log = logging.getLogger("mcp_notebook.http")


class _Writer:
    """One HTTP connection draining a stream. A newer connection for the same stream replaces it."""

    def __init__(self) -> None:
        self.wake = asyncio.Event()
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True
        self.wake.set()


class _Stream:
    """The events of one SSE stream: a POSTed request's, or the session's standalone (GET) stream."""

    def __init__(self, stream_id: str, request: Request | None, *, json_mode: bool, buffer: int) -> None:
        self.id = stream_id
        self.request = request
        self.json_mode = json_mode
        # (seq, message): framed as SSE when written, so an answer sent as one JSON body is never framed
        self.events: deque[tuple[int, str]] = deque(maxlen=buffer)
        self.next_seq = 0
        self.delivered = -1  # highest seq written to some connection
        self.finished = False  # no event will be added any more
        self._done: asyncio.Event | None = None  # made when first awaited (a JSON-mode legacy POST)
        self.answer: str | None = None
        self.writer: _Writer | None = None
        self.activity = asyncio.Event()  # set by every event and by finish (a modern POST waits on it)
        self.batch: set[RequestId] | None = None  # a 2025-03-26 batch's requests still unanswered
        self.event_ids = True  # False for a 2026-07-28 response: no resumption, so no event ids
        self.abandoned = False  # its client left before the first event (set by :class:`FirstActivity`)
        self.on_activity: Callable[[], None] | None = None  # told of every event, the end, abandonment

    @property
    def done(self) -> asyncio.Event:
        """Set once the stream is finished (JSON mode: the answer is there, or there will be none)."""
        if self._done is None:
            self._done = asyncio.Event()
            if self.finished:
                self._done.set()
        return self._done

    def signal_activity(self) -> None:
        self.activity.set()
        if self.on_activity is not None:
            self.on_activity()

    def event_id(self, seq: int) -> str:
        return f"{self.id}_{seq}"

    def add(self, message: str) -> None:
        seq = self.next_seq
        self.next_seq += 1
        self.events.append((seq, message))
        self.signal_activity()
        if self.writer is not None:
            self.writer.wake.set()

    def priming(self, retry_ms: int | None) -> bytes:
        """An event with an id, empty data and, when polling, ``retry``: lets clients resume (2025-11-25)."""
        seq = self.next_seq
        self.next_seq += 1
        return encode_event("", event_id=self.event_id(seq), retry=retry_ms)

    def finish(self, answer: str | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        if self._done is not None:
            self._done.set()
        if answer is not None:
            self.answer = answer
            if not self.json_mode:
                self.add(answer)  # which signals the activity and wakes the writer
                return
        self.signal_activity()
        if self.writer is not None:
            self.writer.wake.set()

    def attach(self) -> _Writer:
        if self.writer is not None:
            self.writer.stop()  # a client reconnecting replaces its dead connection: one writer per stream
        self.writer = _Writer()
        return self.writer

    def detach(self, writer: _Writer) -> None:
        if self.writer is writer:
            self.writer = None

    def pending(self, seq: int) -> bool:
        """Whether an event after ``seq`` is buffered."""
        return bool(self.events) and self.events[-1][0] > seq

    def after(self, seq: int) -> list[tuple[int, bytes]]:
        """The buffered events after ``seq``, framed for the wire."""
        ids = self.event_ids
        return [
            (n, encode_event(message, event_id=self.event_id(n) if ids else None))
            for n, message in self.events
            if n > seq
        ]


class FirstActivity:
    """POSTs waiting for their stream's first event, and one task that checks every ``interval`` seconds
    whether their clients are still there (``gone(request)``): no timer per request, as a wait bounded
    per request would cost (a Streamable HTTP server waits like this once per POST)."""

    def __init__(self, gone: Callable[[Any], bool], interval: float) -> None:
        self._gone = gone
        self.interval = interval
        self._waiting: dict[_Stream | Exchange, Any] = {}  # stream -> the aiohttp request waiting for it
        self._wake = asyncio.Event()  # set while something waits

    async def wait(self, request: Any, stream: _Stream | Exchange) -> bool:
        """Until the stream's first event or its end: True; False when the client disconnected first."""
        activity = stream.activity
        if activity.is_set():
            return True
        self.hold(request, stream)
        try:
            await activity.wait()
        finally:
            self.release(stream)
        return not stream.abandoned

    def hold(self, request: Any, stream: _Stream | Exchange) -> None:
        """Watch ``stream``'s client without waiting (until :meth:`release`): if it leaves before the first
        event, the stream is marked abandoned and its activity set (``on_activity`` hears it)."""
        self._waiting[stream] = request
        self._wake.set()

    def release(self, stream: _Stream | Exchange) -> None:
        self._waiting.pop(stream, None)

    async def watch(self) -> None:
        """Run while the server runs: a waiting stream whose client is gone is marked and woken. The wake-up
        event is made here, on the loop the server runs on (a server stopped and started again on another
        loop would find the first one's bound to that loop). An error while checking one request does not
        end the watching (see :meth:`_check`)."""
        self._wake = asyncio.Event()
        failed: set[_Stream | Exchange] = set()  # streams whose check raised (each logged once)
        while True:
            if not self._waiting:
                failed.clear()
                self._wake.clear()
                await self._wake.wait()
            await asyncio.sleep(self.interval)
            for stream, request in list(self._waiting.items()):
                try:
                    self._check(stream, request)
                except Exception:
                    if stream not in failed:
                        failed.add(stream)
                        log.exception("checking a waiting POST's client failed (the watcher goes on)")
            if failed:
                failed.intersection_update(self._waiting)

    def _check(self, stream: _Stream | Exchange, request: Any) -> None:
        """Mark and wake ``stream`` when its client is gone. When asking raises, the request is left
        waiting and asked again next time: taken for gone, a client that is still there would lose its
        answer (an empty 202) and its tool; left, a client that did go costs at worst what it cost before
        the watcher (the tool runs to its end, its answer is dropped)."""
        if self._gone(request) and not stream.activity.is_set():
            del self._waiting[stream]
            stream.abandoned = True
            stream.signal_activity()


class _Session:
    """One client's MCP session: the engine's transport, its inbox and its streams."""

    def __init__(
        self,
        session_id: str,
        *,
        replay_events: int,
        retained_streams: int,
        on_end: Callable[[_Session], None] = lambda session: None,
        credential: str | None = None,
        client: str = "",
        identity: str | None = None,
    ) -> None:
        self.id = session_id
        self.replay_events = replay_events  # events kept per stream for a resume
        self.retained_streams = retained_streams  # finished streams kept for a resume
        self._on_end = on_end
        self.credential = credential  # the name of the token that opened it: only it may use the session
        self.client = client  # who opened it, for the per-client session cap
        self.identity = identity  # who authenticated (token, OAuth subject): only they may use the session
        self.last_seen = asyncio.get_running_loop().time()
        self._inbox: asyncio.Queue[str | None] | None = None  # made when first used: a 2026 POST has none
        self.close_reason: str | None = None
        self.protocol_version: str | None = None
        self.streams: dict[str, _Stream] = {}
        self.active: dict[RequestId, _Stream] = {}  # requests not yet answered
        self._counter = 0
        self._standalone: _Stream | None = None  # made when first used: a 2026 POST has none
        self.task: asyncio.Task[None] | None = None  # the engine serving this session (Serves.serve)
        self.end_engine: Callable[[str], None] | None = None  # or, for one request, how to end its engine

    @property
    def transport(self) -> HTTPSessionTransport:
        """The engine's side of this session (made when asked for: the session holds none, so that a
        session and the engine serving it are freed by reference counting, not by the cycle collector)."""
        return HTTPSessionTransport(self)

    @property
    def inbox(self) -> asyncio.Queue[str | None]:
        """What the engine reads (``None``: the session ended)."""
        if self._inbox is None:
            self._inbox = asyncio.Queue()
            if self.close_reason is not None:
                self._inbox.put_nowait(None)
        return self._inbox

    @property
    def standalone(self) -> _Stream:
        """The GET stream: server messages related to no request wait here for the client."""
        if self._standalone is None:
            self._standalone = self._new_stream(None, json_mode=False)
            if self.close_reason is not None:
                self._standalone.finish()
        return self._standalone

    def _new_stream(self, request: Request | None, *, json_mode: bool) -> _Stream:
        self._counter += 1
        stream = _Stream(f"s{self._counter}", request, json_mode=json_mode, buffer=self.replay_events)
        self.streams[stream.id] = stream
        self._evict()
        return stream

    def _evict(self) -> None:
        if len(self.streams) <= self.retained_streams:  # so at most that many finished: nothing to evict
            return
        finished = [
            s for s in self.streams.values() if s.finished and s.writer is None and s is not self._standalone
        ]
        for stream in finished[: max(0, len(finished) - self.retained_streams)]:
            del self.streams[stream.id]

    def open_request(self, request: Request, *, json_mode: bool) -> _Stream:
        stream = self._new_stream(request, json_mode=json_mode)
        self.active[request.id] = stream
        return stream

    def open_modern_request(self, request: Request, *, json_mode: bool) -> _Stream:
        """:meth:`open_request` for a 2026-07-28 POST: no resumability, so its SSE events carry no ids."""
        stream = self.open_request(request, json_mode=json_mode)
        stream.event_ids = False
        return stream

    def open_batch(self, requests: list[Request], *, json_mode: bool) -> _Stream:
        """One stream for a 2025-03-26 batch: the engine answers it with one array (basic#batching)."""
        stream = self._new_stream(None, json_mode=json_mode)
        stream.batch = {request.id for request in requests}
        for request in requests:
            self.active[request.id] = stream
        return stream

    def touch(self) -> None:
        self.last_seen = asyncio.get_running_loop().time()

    @property
    def busy(self) -> bool:
        """A request is being answered or a client holds a stream open: not idle, whatever the clock says."""
        return bool(self.active) or any(stream.writer is not None for stream in self.streams.values())

    def find(self, last_event_id: str) -> tuple[_Stream, int] | None:
        stream_id, _, seq = last_event_id.rpartition("_")
        stream = self.streams.get(stream_id)
        # ASCII digits only, and few: int() of a 4,300-digit string raises (and "²".isdigit() is True)
        if stream is None or not (seq.isascii() and seq.isdigit()) or len(seq) > 18:
            return None
        return stream, int(seq)

    def deliver(self, message: str, related_id: RequestId | None) -> None:
        """Route one outgoing message to its stream (transports#multiple-connections: one stream each)."""
        if self.close_reason is not None:
            raise TransportClosed(f"HTTP session {self.id[:8]}: {self.close_reason}")
        if message.startswith("["):  # the engine's answer to a batch: one array, on the batch's stream
            self._deliver_batch(message)
            return
        parsed = peek(message)  # our own answer: the engine's Wire says what it is, nothing is decoded
        if isinstance(parsed, Response | ErrorResponse):
            stream = self.active.pop(parsed.id, None) if parsed.id is not None else None
            if stream is None:
                log.debug(
                    "HTTP session %s: dropping an answer nobody waits for: %.200s", self.id[:8], message
                )
                return
            self._on_answer(stream, parsed)
            stream.finish(message)
            return
        stream = self.active.get(related_id) if related_id is not None else None
        if stream is None or stream.json_mode:
            stream = self.standalone
        stream.add(message)

    def _deliver_batch(self, message: str) -> None:
        ids = [a.id for a in parse(message, allow_batch=True) if isinstance(a, Response | ErrorResponse)]
        popped = (self.active.pop(i, None) for i in ids if i is not None)
        streams = {id(stream): stream for stream in popped if stream is not None}
        if not streams:  # nobody waits for it (a batch without requests): the GET stream carries it
            self.standalone.add(message)
        for stream in streams.values():
            stream.finish(message)

    def _on_answer(self, stream: _Stream, answer: Response | ErrorResponse) -> None:
        if stream.request is None or stream.request.method != "initialize":
            return
        if isinstance(answer, Response):
            version = answer.result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None
        else:  # a failed initialize leaves nothing worth keeping; the client starts over without a session id
            asyncio.get_running_loop().call_soon(self.terminate, "initialization failed")

    def cancel(self, request_id: object) -> None:
        """The client cancelled a request: the engine sends no answer, so end its stream here."""
        if isinstance(request_id, str | int) and not isinstance(request_id, bool):
            stream = self.active.pop(request_id, None)
            if stream is not None and stream.batch is not None:
                stream.batch.discard(request_id)  # the engine's array will not include it
                if stream.batch:
                    return
            if stream is not None:
                stream.finish()

    def close_stream(self, related_id: RequestId) -> bool:
        """End the HTTP connection of a request's stream, keeping the stream: the client resumes it by GET."""
        stream = self.active.get(related_id)
        if stream is None or stream.writer is None:
            return False
        stream.writer.stop()
        return True

    def terminate(self, reason: str, *, answer_pending: bool = False) -> None:
        """End the session. Unanswered requests get an error carrying ``reason`` when ``answer_pending``
        (the server is stopping); otherwise their streams just end (the client resumes, gets 404 and learns
        the session is gone)."""
        if self.close_reason is not None:
            return
        self.close_reason = reason
        if self._inbox is not None:
            self._inbox.put_nowait(None)
        for request_id, stream in list(self.active.items()):
            if answer_pending and stream.batch is None:
                stream.finish(_final_answer(stream.request, request_id, reason))
            stream.finish()
        self.active.clear()
        if self._standalone is not None:
            self._standalone.finish()
        self._on_end(self)


class ExchangeHooks(NamedTuple):
    """What an :class:`Exchange` asks of the server running it (made once per server)."""

    open: Callable[[Exchange], _Session]  # the request's session, when it needs one
    write: Callable[[Exchange], asyncio.Task[Any]]  # the task writing its stream as the POST's SSE response
    end: Callable[[Exchange], None]  # it is over: forget it and end its engine


class Exchange:
    """A 2026-07-28 request whose handler runs in its POST's own task (``Server.serve_inline``), as the
    engine's transport. Until the handler sends something besides its answer nothing more is built: the
    answer is kept here for the POST's JSON body. The first other message makes the request's
    :class:`_Session` and :class:`_Stream` (:meth:`open`), as a modern POST served otherwise has, and that
    message and everything after go there; while the handler runs (``running``) the stream's first event
    starts its SSE response (the owner's writer task). For :class:`FirstActivity` it is the request's stream
    until then: ``activity`` (set by the answer, the end, abandonment or the first other message) and
    ``abandoned`` (a client that leaves meanwhile ends the request)."""

    # (class defaults: most are never set for a request that sends only its answer)
    answer: str | None = None
    abandoned = False
    running = False  # the handler runs (the POST awaits it): abandonment ends it, an event starts the writer
    close_reason: str | None = None
    session: _Session | None = None  # with the stream, made by the first message besides the answer
    stream: _Stream | None = None
    writer: asyncio.Task[Any] | None = None  # the SSE response's task, once the stream has an event
    task: asyncio.Task[None] | None = None  # (none: the handler runs in the POST's task)
    end_engine: Callable[[str], None] | None = None

    def __init__(
        self, exchange_id: str, request: Request, http_request: Any, json_mode: bool, hooks: ExchangeHooks
    ) -> None:
        self.id = exchange_id
        self.request = request
        self.http_request = http_request  # the aiohttp request
        self.json_mode = json_mode
        self._hooks = hooks
        self.activity = asyncio.Event()

    def signal_activity(self) -> None:
        self.activity.set()
        if self.abandoned and self.running:
            self.terminate("the client left")

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        if self.session is not None:
            self.session.deliver(message, related_id)
            return
        if self.close_reason is not None:
            raise TransportClosed(f"HTTP request {self.id}: {self.close_reason}")
        parsed = peek(message)  # our own answer: the engine's Wire says what it is, nothing is decoded
        if isinstance(parsed, Response | ErrorResponse) and not message.startswith("["):
            if parsed.id is None or parsed.id != self.request.id or self.answer is not None:
                log.debug("HTTP request %s: dropping an answer nobody waits for: %.200s", self.id, message)
                return
            self.answer = message
            self.signal_activity()
        elif self.answer is None:
            self.open().deliver(message, related_id)
        else:  # (where a session would buffer it on a stream nobody can ask for)
            log.debug("HTTP request %s: dropping a message after the answer: %.200s", self.id, message)

    async def receive(self) -> str:
        raise TransportClosed(f"HTTP request {self.id}: one request, nothing more to receive")

    async def aclose(self) -> None:
        self.terminate("closed by the server")

    def open(self) -> _Session:
        """The request's session and stream, as a modern POST served otherwise has (made once)."""
        if self.session is None:
            session = self._hooks.open(self)
            stream = session.open_modern_request(self.request, json_mode=self.json_mode)
            stream.on_activity = self._stream_activity
            self.session, self.stream = session, stream
            if self.close_reason is not None:
                session.terminate(self.close_reason)
            self.activity.set()  # the watcher lets go: the stream's writer watches its client from now on
        return self.session

    def _stream_activity(self) -> None:
        stream = self.stream
        if self.running and self.writer is None and stream is not None and not stream.finished:
            self.writer = self._hooks.write(self)
            self.writer.add_done_callback(self._written)

    def _written(self, _: asyncio.Task[Any]) -> None:
        self.terminate("the request ended")

    def terminate(self, reason: str, *, answer_pending: bool = False) -> None:
        """End the request as :meth:`_Session.terminate` ends a modern POST's session."""
        if self.close_reason is not None:
            return
        self.close_reason = reason
        if self.session is not None:
            self.session.terminate(reason, answer_pending=answer_pending)
        elif self.answer is None:  # unanswered: its stream would end here, with an error when answer_pending
            if answer_pending:
                self.answer = _final_answer(self.request, self.request.id, reason)
            self.signal_activity()
        self._hooks.end(self)


def _final_answer(request: Request | None, request_id: RequestId, reason: str) -> str:
    """What a request still open when the server stops is answered with: an error carrying ``reason``;
    a subscriptions/listen stream ends gracefully with its normal result instead (2026-07-28
    basic/patterns/subscriptions: a server ending a subscription SHOULD answer the listen request)."""
    if request is not None and request.method == "subscriptions/listen":
        result = {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: request_id}}
        return serialize(Response(request_id, result))
    return serialize(ErrorResponse(request_id, INTERNAL_ERROR, reason))


class Sessions(dict[str, _Session]):
    """The live legacy sessions by id, with the caps of :class:`~.http_limits.HTTPLimits`.

    A new session never fails because of abandoned ones: past the per-client cap the client's idlest
    session is ended, past the total cap the idlest of anyone's; only sessions in use (a request being
    answered, a stream open) are never evicted, so 503 means every session is busy.
    """

    def __init__(self, limits: HTTPLimits) -> None:
        super().__init__()
        self.limits = limits

    def make_room(self, client: str) -> bool:
        """Evict what the caps require before ``client`` opens a session; False when nothing may go."""
        own = [s for s in self.values() if s.client == client]
        if len(own) >= self.limits.max_sessions_per_client and not self._evict_idlest(own):
            return False
        return len(self) < self.limits.max_sessions or self._evict_idlest(list(self.values()))

    @staticmethod
    def _evict_idlest(candidates: list[_Session]) -> bool:
        idle = [s for s in candidates if not s.busy]
        if not idle:
            return False
        min(idle, key=lambda s: s.last_seen).terminate("evicted: the idlest session, to make room")
        return True

    def expire(self, now: float) -> None:
        """End sessions nobody used for ``session_idle_timeout`` seconds."""
        limit = self.limits.session_idle_timeout
        for session in list(self.values()):
            if not session.busy and now - session.last_seen > limit:
                session.terminate(f"expired after {limit:g} s without use")


class HTTPSessionTransport:
    """The server side of one HTTP session, as a :class:`~.base.Transport` for ``server.serve``."""

    def __init__(self, session: _Session) -> None:
        self._session = session

    @property
    def session_id(self) -> str:
        return self._session.id

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        self._session.deliver(message, related_id)

    async def receive(self) -> str:
        item = await self._session.inbox.get()
        if item is None:
            self._session.inbox.put_nowait(None)
            raise TransportClosed(f"HTTP session {self._session.id[:8]}: {self._session.close_reason}")
        return item

    async def aclose(self) -> None:
        self._session.terminate("closed by the server")

    def close_sse_stream(self, related_id: RequestId) -> bool:
        """Close the connection carrying request ``related_id``'s SSE stream, mid-call (SSE polling).

        Later messages for the request are buffered; the client resumes with GET + ``Last-Event-ID`` after the
        ``retry`` delay (meaningful with ``sse_polling``). False when no connection carries that stream.
        """
        return self._session.close_stream(related_id)
