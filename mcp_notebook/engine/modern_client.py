"""The client's 2026-07-28 machinery that is not a single request: listening, and remembering eras.

**Listening** (basic/patterns/subscriptions). A modern server sends change notifications only on a
``subscriptions/listen`` stream the client opened, tagged with
``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen request's JSON-RPC id); the stream's first
message is ``notifications/subscriptions/acknowledged``
with the subset of the filter the server honours. :class:`Subscriptions` keeps one such stream open per
client with the filter the client currently wants -- the list_changed flags the server declares, the
resources it was asked to watch, and any list another feature adds (the Tasks extension's ``taskIds``) --
and re-opens it when the filter changes (new stream first, then the old one is closed, so nothing is lost
in between) or when the stream drops (bounded, with backoff). Notifications reach handlers registered per
method with :meth:`Subscriptions.on`; the same registry serves legacy sessions, where the same
notifications arrive without a stream, so a feature registers its handler once for both eras.

**Eras** (basic/versioning#era-detection): the era found for a server is remembered per stdio command and
per HTTP origin for the life of the process, so a second connection to a known legacy server skips the
``server/discover`` probe (and re-probes if the handshake then fails).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from ..protocol import era as eras
from ..protocol.errors import (
    ConnectionClosedError,
    JSONRPCError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from ..protocol.jsonrpc import RequestId
from ..protocol.modern import LISTEN_FLAGS, META_LOG_LEVEL, META_SUBSCRIPTION_ID
from ..protocol.session import has_capability
from ..protocol.shapes import check_result
from ..transports.base import STREAM_LOST, wait_event
from .client_inputs import _INPUT_METHODS, InputRequest

if TYPE_CHECKING:
    from ..protocol.session import Session
    from .connection import Connection
    from .trace import Trace


class EraClient(Protocol):
    """What subscriptions and the era probe need from :class:`~mcp_notebook.engine.client.Client`, declared
    here so that the import runs one way (client -> modern_client; tests/test_layers.py)."""

    @property
    def name(self) -> str: ...

    @property
    def timeout(self) -> float: ...

    @property
    def probe_timeout(self) -> float: ...

    @property
    def modern_version(self) -> str: ...

    @property
    def trace(self) -> Trace: ...

    @property
    def client_info(self) -> dict[str, Any]: ...

    @property
    def is_modern(self) -> bool: ...

    @property
    def connection(self) -> Connection: ...

    @property
    def server_capabilities(self) -> dict[str, Any]: ...

    @property
    def session(self) -> Session: ...

    @property
    def log_level(self) -> str | None: ...

    roots: Any
    sampling_handler: Any
    elicitation_handler: Any
    extensions: dict[str, Any]
    meta_block: MetaBlock

    def capabilities(self) -> dict[str, Any]: ...

    async def answer_input(self, request: InputRequest) -> dict[str, Any]: ...

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]: ...


__all__ = [
    "ACKNOWLEDGED",
    "MetaBlock",
    "NotificationHandler",
    "Subscription",
    "Subscriptions",
    "answer_modern",
    "era_key",
    "modern_request",
    "probe",
    "remember_era",
    "remembered_era",
    "with_meta",
]

log = logging.getLogger("mcp_notebook.engine.client")

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
NotificationHandler = Callable[[dict[str, Any]], Any]  # params -> anything (sync or async)
MAX_REISSUES = 2  # a request whose 2026 response stream broke is sent again at most this many times
_MAX_RELISTENS = 5  # consecutive stream failures (no ack in between) before the client stops re-listening
_NO_VALUE: dict[str, Any] = {}  # read only
_LIST_FIELDS = frozenset({"resourceSubscriptions", "taskIds"})  # filter fields that are lists of values


# ---- eras, remembered -------------------------------------------------------------------------------------
_ERAS: dict[tuple[str, ...], Literal["legacy", "modern"]] = {}


def era_key(target: object) -> tuple[str, ...] | None:
    """Where an era is remembered: an HTTP origin (scheme, host, port) plus path, or a stdio command line;
    None for an in-memory server or a ready-made transport (probing those costs nothing worth saving)."""
    if isinstance(target, str):
        parts = urlsplit(target)
        return ("http", parts.scheme, parts.netloc.lower(), parts.path or "/")
    if isinstance(target, Sequence) and all(isinstance(p, str) for p in target):
        return ("stdio", *target)
    return None


def remembered_era(target: object) -> Literal["legacy", "modern"] | None:
    key = era_key(target)
    return _ERAS.get(key) if key is not None else None


def remember_era(target: object, era: Literal["legacy", "modern"] | None) -> None:
    """Record (or with None, forget) what ``target`` speaks."""
    key = era_key(target)
    if key is None:
        return
    if era is None:
        _ERAS.pop(key, None)
    else:
        _ERAS[key] = era


# ---- listening --------------------------------------------------------------------------------------------
async def _call(handler: NotificationHandler, params: dict[str, Any]) -> None:
    result = handler(params)
    if inspect.isawaitable(result):
        await result


class Subscription:
    """One ``subscriptions/listen`` stream: the filter asked for, the one honoured, and its request id."""

    def __init__(self, owner: Subscriptions, wanted: dict[str, Any]) -> None:
        self._owner = owner
        self.wanted = wanted
        self.honoured: dict[str, Any] | None = None  # set by the acknowledgement
        self.id: RequestId | None = None
        self.acknowledged = asyncio.Event()
        self.error: BaseException | None = None  # why the stream could not be opened
        self.task: asyncio.Task[None] | None = None
        self._closing = False

    def __repr__(self) -> str:
        return f"<Subscription {self.id} {self.honoured if self.honoured is not None else self.wanted}>"

    def _on_id(self, request_id: RequestId) -> None:
        self.id = request_id
        self._owner._by_id[request_id] = self

    async def run(self) -> None:
        """Listen until closed; re-listen after a drop (reconnect, basic/patterns/subscriptions#ending)."""
        client = self._owner.client
        failures = 0
        while not self._closing:
            acked_before = self.acknowledged.is_set()
            try:
                await client.request(
                    "subscriptions/listen", {"notifications": self.wanted}, timeout=None, on_id=self._on_id
                )
                reason = "the server ended the stream"
                if not acked_before and not self.acknowledged.is_set():
                    # Answered without the acknowledgement that MUST come first (e.g. one JSON body from a
                    # server that keeps no stream): it does not listen; asking again would not help.
                    self._fail(RemoteProtocolError("the server answered without acknowledging: no stream"))
                    return
            except ConnectionClosedError as exc:
                self._fail(exc)
                return
            except (MCPError, OSError) as exc:  # JSON-RPC error, a broken stream, a local refusal
                if not self.acknowledged.is_set():
                    self._fail(exc)
                    return  # never acknowledged: the server does not listen (or not to this filter)
                reason = f"the stream broke: {exc}"
            finally:
                if self.id is not None:
                    self._owner._by_id.pop(self.id, None)
            if self._closing or client.connection.closed:
                return
            failures = 0 if self.acknowledged.is_set() and not acked_before else failures + 1
            if failures >= _MAX_RELISTENS:
                self._fail(ConnectionClosedError(f"subscriptions/listen: {reason}; gave up re-listening"))
                return
            client.trace.record("note", f"subscriptions/listen: {reason}; listening again")
            self._owner.missed()  # notifications may have been lost while the stream was down
            await asyncio.sleep(min(0.1 * 2**failures, 5.0))  # reconnect backoff, not a settle wait

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        self.acknowledged.set()  # wake whoever waits for the ack: it reads ``error``

    def _acknowledge(self, params: dict[str, Any]) -> None:
        honoured = params.get("notifications")
        self.honoured = dict(honoured) if isinstance(honoured, dict) else {}
        self.error = None
        self.acknowledged.set()

    async def close(self) -> None:
        """End the stream: the pending listen request is cancelled (HTTP: its stream is closed; stdio and
        memory: ``notifications/cancelled`` with the listen id)."""
        self._closing = True
        task = self.task
        try:
            if task is not None and not task.done():
                task.cancel()
                # asyncio.wait: a cancel of whoever closes propagates. wait_for(shield(task)) under
                # suppress(CancelledError) swallowed it: a task call cancelled as it re-listened ran on.
                await asyncio.wait({task}, timeout=5)
                if task.done() and not task.cancelled():
                    task.exception()  # retrieved: run() reports its own failures
        finally:
            if self.id is not None:
                self._owner._by_id.pop(self.id, None)


class Subscriptions:
    """A client's notification handlers (both eras) and, in 2026-07-28, its listen stream."""

    def __init__(self, client: EraClient) -> None:
        self.client = client
        self._handlers: dict[str, list[NotificationHandler]] = {}
        self._extra: dict[str, list[Any]] = {}  # list filter fields -> values (resourceSubscriptions...)
        self._by_id: dict[RequestId, Subscription] = {}
        self.current: Subscription | None = None
        self.failure: BaseException | None = None  # why the last listen stream could not be opened
        self._lock = asyncio.Lock()
        self._on_missed: list[Callable[[], None]] = []
        self._closed = False  # close() was called (and no connection since): no stream is opened

    # -- handlers ------------------------------------------------------------------------------------------
    def on(self, method: str, handler: NotificationHandler) -> Callable[[], None]:
        """Call ``handler(params)`` for every ``method`` notification, in either era; returns a remover."""
        self._handlers.setdefault(method, []).append(handler)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._handlers.get(method, []).remove(handler)

        return remove

    def on_missed(self, callback: Callable[[], None]) -> None:
        """``callback()`` when notifications may have been lost (a listen stream dropped and came back)."""
        self._on_missed.append(callback)

    def missed(self) -> None:
        for callback in list(self._on_missed):
            callback()

    async def dispatch(self, method: str, params: dict[str, Any]) -> None:
        """A notification from the server: acknowledgements are ours; the rest goes to the handlers."""
        if method == ACKNOWLEDGED:
            meta = params.get("_meta")
            sub_id = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
            sub = self._by_id.get(sub_id) if isinstance(sub_id, str | int) else None
            if sub is not None:
                sub._acknowledge(params)
            return
        for handler in list(self._handlers.get(method, ())):
            try:
                await _call(handler, params)
            except Exception:  # one broken handler must not silence the others
                log.exception("%s: a handler of %s failed", self.client.name, method)

    # -- the listen stream (2026-07-28) --------------------------------------------------------------------
    def wanted(self) -> dict[str, Any]:
        """The filter to listen with: every list_changed the server declares, plus the watched values."""
        caps = self.client.server_capabilities
        wanted: dict[str, Any] = {
            flag: True for flag, (_, path) in LISTEN_FLAGS.items() if has_capability(caps, path)
        }
        for name, values in self._extra.items():
            if values:
                wanted[name] = list(values)
        return wanted

    @property
    def honoured(self) -> dict[str, Any]:
        """What the open stream's acknowledgement said the server will send ({} when none is open)."""
        current = self.current
        if current is None or current.honoured is None or current.error is not None:
            return {}
        return current.honoured

    def listening_for(self, flag: str) -> bool:
        """True while an acknowledged stream carries ``flag`` (e.g. ``toolsListChanged``)."""
        current = self.current
        return (
            bool(self.honoured.get(flag))
            and current is not None
            and current.task is not None
            and not current.task.done()
        )

    async def watch(self, field: str, value: Any) -> None:
        """Add ``value`` to a list filter field (``resourceSubscriptions``, ``taskIds``...) and re-listen."""
        values = self._extra.setdefault(field, [])
        if value not in values:
            values.append(value)
            await self.refresh()

    async def unwatch(self, field: str, value: Any) -> None:
        values = self._extra.get(field, [])
        if value in values:
            values.remove(value)
            await self.refresh()

    async def refresh(self) -> Subscription | None:
        """Open a stream with the wanted filter (if it differs from the open one), then close the old one.

        Waits for the acknowledgement (bounded by the client's timeout). Does nothing outside 2026-07-28, nor
        once :meth:`close` is called (a task call's unwatch, in the background, may come after it).
        """
        if not self.client.is_modern:
            return None
        async with self._lock:
            if self._closed:
                return None
            wanted = self.wanted()
            old = self.current
            if old is not None and old.wanted == wanted and old.task is not None and not old.task.done():
                return old
            if not wanted:
                self.current = None
                if old is not None:
                    await old.close()
                return None
            sub = Subscription(self, wanted)
            sub.task = listening = asyncio.get_running_loop().create_task(
                sub.run(), name=f"{self.client.name} subscriptions/listen"
            )
            try:
                if not await wait_event(sub.acknowledged, self.client.timeout):
                    sub.error = TimeoutError("no acknowledgement of subscriptions/listen in time")
            except asyncio.CancelledError:  # whoever asked is gone: the new stream must not listen on
                sub._closing = True
                listening.cancel()
                raise
            if self._closed:  # closed meanwhile: its failure (the connection closed) is no news
                await sub.close()
                return None
            if sub.error is not None:
                await sub.close()
                self.failure = sub.error
                self.client.trace.record("note", f"subscriptions/listen failed: {sub.error}")
                log.warning(
                    "%s: subscriptions/listen failed, no change notifications: %s",
                    self.client.name,
                    sub.error,
                )
                return None
            self.failure = None
            self.current = sub
            if old is not None:
                await old.close()
            return sub

    def opened(self) -> None:
        """A new connection of the client: streams may be opened again (after :meth:`close`)."""
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        current, self.current = self.current, None
        if current is not None:
            await current.close()


# ---- the probe --------------------------------------------------------------------------------------------
async def probe(client: EraClient, connection: Connection) -> eras.UseModern | eras.UseLegacy:
    """``server/discover`` at the client's preferred modern version, once more at one the server names.

    versioning#era-detection: anything but a DiscoverResult or a recognised modern error -- another error
    code, a transport failure, no answer within ``probe_timeout`` -- is a legacy server.
    """
    version = client.modern_version
    capabilities = client.capabilities()
    if not client.is_modern:
        capabilities = eras.client_capabilities(capabilities)
    for _ in range(2):
        params = eras.modern_params(None, version, capabilities, client.client_info)
        try:
            result = await connection.request(
                "server/discover", params, timeout=min(client.probe_timeout, client.timeout)
            )
        except JSONRPCError as exc:
            verdict = eras.classify_discover_error(exc.code, exc.data, version)
        except (RequestTimeoutError, ConnectionClosedError) as exc:
            verdict = eras.UseLegacy(f"server/discover got no answer ({exc})")
        else:
            verdict = eras.classify_discover_result(result, version)
        if not isinstance(verdict, eras.Retry):
            return verdict
        version = verdict.version
    return eras.UseLegacy("the server rejected every modern version we proposed")


# ---- one modern request -----------------------------------------------------------------------------------
async def modern_request(
    client: EraClient,
    connection: Connection,
    method: str,
    params: dict[str, Any] | None,
    options: dict[str, Any],
    live: Callable[[], Awaitable[Connection]] | None = None,
) -> dict[str, Any]:
    """A 2026-07-28 request: ``_meta`` added; an ``input_required`` result answered through the client's
    input handlers and retried with a new id (MRTR) until it is complete. ``live``: the client's connection
    of the moment (connecting again if it may), asked for when ``connection`` closed before this ran."""
    if connection.closed and live is not None:  # made before it closed (Client.request binds it)
        connection = await live()
    original = dict(params or {})
    for _ in range(eras.MAX_INPUT_ROUNDS):
        sent = with_meta(client, original, connection.session)
        try:  # the first attempt here, not in _reissued: one coroutine less per request
            result = await connection.request(method, sent, **options)
        except JSONRPCError as exc:
            result = await _reissued(client, connection, method, sent, options, exc)
        # (a complete result, the usual case, is one read_result would return None for: asked inline)
        step = (
            None if result.get("resultType", "complete") == "complete" else eras.read_result(method, result)
        )
        if step is None:
            shaped = result
            if not isinstance(result.get("structuredContent", _NO_VALUE), dict):  # any JSON value in 2026
                shaped = {k: v for k, v in result.items() if k != "structuredContent"}
            check_result(method, original, shaped)
            return eras.plain_result(method, result)
        responses = {key: await answer_modern(client, req) for key, req in step.requests.items()}
        original = eras.retry_params(original, step, responses)
    raise RemoteProtocolError(f"{method}: still input_required after {eras.MAX_INPUT_ROUNDS} rounds")


async def _reissued(
    client: EraClient,
    connection: Connection,
    method: str,
    params: dict[str, Any],
    options: dict[str, Any],
    failed: JSONRPCError,
) -> dict[str, Any]:
    """After a first attempt that ``failed``: when its response stream broke before the answer (the
    transport says ``STREAM_LOST``), the request is sent again as a new request with a new id (2026-07-28
    basic/transports/streamable-http: no resumption, the client MUST re-issue it), at most
    :data:`MAX_REISSUES` times; any other error is raised as it is."""
    for attempt in range(MAX_REISSUES + 1):
        lost = isinstance(failed.data, dict) and failed.data.get(STREAM_LOST) is True
        if not lost or attempt == MAX_REISSUES:
            raise failed
        client.trace.record("note", f"{method}: the response stream broke; re-issued with a new id")
        log.info("%s: %s: response stream lost, re-issuing (%d)", client.name, method, attempt + 1)
        try:
            return await connection.request(method, params, **options)
        except JSONRPCError as exc:
            failed = exc
    raise AssertionError("unreachable")  # the loop returns or raises


def with_meta(client: EraClient, params: dict[str, Any], session: Session | None = None) -> dict[str, Any]:
    """``params`` with this client's per-request ``_meta`` (version, capabilities, info, log level);
    ``session``: the client's, when the caller has it at hand."""
    block = client.meta_block.get(client, session)
    sent = dict(params)
    meta = sent.get("_meta")
    sent["_meta"] = {**meta, **block} if isinstance(meta, dict) else dict(block)  # a new _meta per request
    return sent


def _built_meta(client: EraClient, version: str) -> dict[str, Any]:
    sent: dict[str, Any] = eras.modern_params(None, version, client.capabilities(), client.client_info)[
        "_meta"
    ]
    if client.log_level is not None:
        sent[META_LOG_LEVEL] = client.log_level
    return sent


class MetaBlock:
    """The ``_meta`` fields every 2026-07-28 request of one client carries (version, capabilities,
    clientInfo, log level), made once and made again when what they are made of changed: the version, the
    era, the log level, which of roots and the sampling and elicitation handlers are set, and the
    ``extensions`` and ``clientInfo`` dicts (compared by value with copies taken when made, so a change
    inside them counts; while those copies hold a number, also by type: ``True == 1 == 1.0`` in Python, not
    in JSON). A legacy client, or a client whose class or instance has its own ``capabilities()``, gets
    them made per request, as before."""

    __slots__ = ("_block", "_extensions", "_info", "_key", "_numbers", "_plain")

    def __init__(self, plain: Callable[..., dict[str, Any]]) -> None:
        self._plain = plain  # Client.capabilities: what the key below covers
        self._key: tuple[Any, ...] | None = None
        self._extensions: dict[str, Any] = {}
        self._info: dict[str, Any] = {}
        self._block: dict[str, Any] = {}
        self._numbers = False  # the copies hold a number: == alone may miss a change (see the class)

    def get(self, client: EraClient, session: Session | None = None) -> dict[str, Any]:
        """The fields, shared: the caller copies them into a ``_meta`` of its own (``session``: the
        client's, when the caller has it at hand)."""
        version = (client.session if session is None else session).version
        name = version.name if version else ""
        if (
            not client.is_modern
            or type(client).capabilities is not self._plain
            or "capabilities" in getattr(client, "__dict__", ())  # set on this one instance
        ):
            return _built_meta(client, name)
        key = (
            name,
            client.log_level,
            client.roots is not None,
            client.sampling_handler is not None,
            client.elicitation_handler is not None,
        )
        extensions, info = client.extensions, client.client_info
        if (
            key != self._key
            or extensions != self._extensions
            or info != self._info
            or (
                self._numbers
                and not (_same_json(extensions, self._extensions) and _same_json(info, self._info))
            )
        ):
            self._block = _built_meta(client, name)
            self._extensions = copy.deepcopy(extensions)
            self._info = copy.deepcopy(info)
            self._numbers = _has_number(self._extensions) or _has_number(self._info)
            self._key = key
        return self._block


def _has_number(value: Any) -> bool:
    """``value`` holds a bool, int or float at some depth: where ``==`` may call two JSON values equal."""
    if isinstance(value, dict):
        return any(_has_number(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_number(item) for item in value)
    return isinstance(value, (int, float))


def _same_json(a: Any, b: Any) -> bool:
    """``a == b`` and their numbers of the same type at every depth (``True`` and ``1`` differ in JSON)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(item, b[k]) for k, item in a.items())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


async def answer_modern(client: EraClient, request: dict[str, Any]) -> dict[str, Any]:
    """One ``inputRequests`` entry, through the same handlers as a legacy server->client request."""
    kind = _INPUT_METHODS.get(request["method"])
    if kind is None:
        raise RemoteProtocolError(f"the server asked for unknown input {request['method']!r}")
    params = request.get("params")
    return await client.answer_input(
        InputRequest(kind, params if isinstance(params, dict) else {}, client.name)
    )
