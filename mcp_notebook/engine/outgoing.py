"""Our requests to the peer, the outgoing side of engine/connection.py's Connection (moved out of it):
each waits on its future with a timeout that progress may extend (engine/pending.py), and a timeout or a
cancelled caller sends ``notifications/cancelled``. The answers and progress the connection reads come here.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..protocol.errors import (
    ConnectionClosedError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from ..protocol.jsonrpc import RequestId, valid_id
from ..protocol.modern import is_modern
from . import otel
from .pending import INLINE, Expired, Pending, ProgressCallback, Timers, uncancelled

if TYPE_CHECKING:
    from ..protocol.session import Session
    from .trace import Trace

__all__ = ["NOTICE_WAIT", "Outgoing"]

log = logging.getLogger("mcp_notebook")

NOTICE_WAIT = 1.0  # s a caller waits for its request's notice of cancellation to go out (then: background)


def _noted(sending: asyncio.Task[None]) -> None:
    """A notice of cancellation that failed once its caller stopped waiting: logged, not left unretrieved."""
    if not sending.cancelled() and sending.exception() is not None:
        log.debug("could not send a cancellation: %r", sending.exception())


_SECONDS = (float, int)  # the exact types of a usual timeout (bool, an int subclass, is not one)


def _check_seconds(name: str, value: float | None) -> None:
    """A request's timeout is a number of seconds, at least 0 (0: expire at once), or None for none: a NaN,
    a negative number or a string is the caller's mistake, said before anything is sent (a NaN never
    expired)."""
    if value is None or (type(value) in _SECONDS and value >= 0):  # the usual cases (NaN fails ">=")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, or None for no limit; got {value!r}")


class Outgoing:
    """The requests a Connection sends and awaits (a base of engine.connection.Connection, which sets up
    what is declared here and reads the answers: :meth:`_resolve`, :meth:`_on_progress`)."""

    if TYPE_CHECKING:  # provided by Connection
        session: Session
        trace: Trace
        name: str
        _pending: dict[RequestId, Pending]
        _progress: dict[int, Pending]
        _last_token: int
        _timers: Timers
        _post_inline: Callable[[str], Awaitable[None]] | None
        _closed: bool

        def _check_open(self) -> None: ...

        async def _send(self, text: str, related_id: RequestId | None = None) -> None: ...

        def _spawn(self, coro: Awaitable[Any], name: str, *, leaves: bool = False) -> asyncio.Task[Any]: ...

    # ---- our requests ------------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress_callback: ProgressCallback | None = None,
        max_timeout: float | None = None,
        related_id: RequestId | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """Send a request and wait for its result (await it), in an OpenTelemetry CLIENT span whose trace
        context the request carries in ``_meta`` (``engine/otel.py``; nothing without OpenTelemetry).

        ``on_id(request_id)`` is called before the request goes out (a listen stream's notifications name it).

        ``timeout`` is reset by every progress notification when a ``progress_callback`` is given;
        ``max_timeout`` bounds the total wait regardless (basic/lifecycle#timeouts). Both run from the send
        on: a send held up by a peer that stops reading (a full pipe) counts. A timeout or a
        cancelled caller sends ``notifications/cancelled`` (basic/utilities/cancellation).

        Without a span it is :meth:`_request`'s coroutine itself (no coroutine around it); a timeout that is
        not a number of seconds is refused at once, before anything is sent.
        """
        if not (timeout is None or (type(timeout) in _SECONDS and timeout >= 0)):  # (the usual cases inline)
            _check_seconds("timeout", timeout)
        if max_timeout is not None:
            _check_seconds("max_timeout", max_timeout)
        recorder = otel.tracer()
        if recorder is None:
            return self._request(method, params, timeout, progress_callback, max_timeout, related_id, on_id)
        return self._spanned(
            recorder, method, params, timeout, progress_callback, max_timeout, related_id, on_id
        )

    async def _spanned(
        self,
        recorder: Any,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress_callback: ProgressCallback | None,
        max_timeout: float | None,
        related_id: RequestId | None,
        on_id: Callable[[RequestId], None] | None,
    ) -> dict[str, Any]:
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
        if self._closed:
            self._check_open()  # raises why
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
            # Armed first: a send held up by a peer that stops reading (a full pipe) counts too, and on
            # 3.11+ the timeout or the connection's end stops it (pending.fail cancels this task). The timer
            # is re-armed by progress; it fails the future when time runs out.
            if max_timeout is not None:
                pending.deadline = loop.time() + max_timeout
            pending.timeout = timeout
            pending.arm(loop)
            if post is None:
                if INLINE:
                    pending.caller = asyncio.current_task(loop)
                try:
                    await self._send(text, related_id)
                except asyncio.CancelledError:
                    if not (pending.stopped and uncancelled(pending.caller)):  # type: ignore[arg-type]
                        raise  # the caller's own cancel; else ours: the future says why
                finally:
                    pending.caller = None
            else:
                # A 2026-07-28 request over a transport that can run its exchange in the caller's own task
                # (HTTP: the POST and its answer), with no task of its own and no wake-up through the future
                # when the answer came in time. A timeout, the connection's end or the peer ending the
                # request stops the exchange (pending.fail cancels this task; the future holds why); so does
                # a cancelled caller. Either way the exchange is cut, which the transport's contract makes
                # the request's cancellation on the wire. (Here, not in a coroutine of its own: one less.)
                self.trace.record("out", text)
                pending.caller = task = asyncio.current_task(loop)
                try:
                    await post(text)
                except asyncio.CancelledError:
                    pending.cut = True
                    self.trace.record(
                        "note", f"request {request_id}: its exchange was cut (its cancellation)"
                    )
                    if not (pending.stopped and task is not None and uncancelled(task)):
                        raise  # the caller's own cancel; else stopped by pending.fail alone (see the future)
                finally:
                    pending.caller = None
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
            self._timers.disarm(pending)  # (pending.disarm(), without the call through it)
            self._pending.pop(request_id, None)
            if token is not None:
                self._progress.pop(token, None)

    async def _abandon(self, request_id: RequestId, method: str, reason: str) -> None:
        if method in ("initialize", "server/discover") or self._closed:
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

    # ---- their answers -----------------------------------------------------------------------------------
    def _resolve(self, request_id: RequestId, *, result: Any = None, error: Exception | None = None) -> None:
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return
        if error is not None:
            pending.future.set_exception(error)
        else:
            pending.future.set_result(result)

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
