"""The approval gate for incoming calls to notebook tools (DESIGN decision 11; issue 5).

Outside clients' ``tools/call`` requests wait here, between the HTTP session and the engine, until an
:data:`Approver` says yes; everything else passes at once, so pings and lists never wait for a click. A
denied call is answered with a clean ``isError`` result and never reaches the tool. The default approver,
:class:`PolicyApprover`, decides by :class:`IncomingPolicy` (ask for tools that declare ``destructiveHint``,
allow read-only and ordinary notebook tools; rules per ``CLIENT.TOOL`` pattern), asks a person for an
``ask`` (the server console's card), and records every decision and outcome in the audit log.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST
from ..protocol.jsonrpc import ErrorResponse, Notification, Request, RequestId, Response, parse, serialize
from ..transports.base import Transport, TransportClosed
from .policy import AuditEntry, AuditLog, Decision, RuleBook, declares_destructive, is_read_only

if TYPE_CHECKING:
    from ..engine.server import Server

__all__ = ["Approver", "Gate", "IncomingCall", "IncomingPolicy", "PolicyApprover"]


@dataclass
class IncomingCall:
    """A ``tools/call`` from an outside client, waiting for (or past) the approval gate."""

    client: str  # the client's clientInfo.name ("unknown" if it gave none)
    client_info: dict[str, Any]
    session_id: str
    tool: str
    arguments: dict[str, Any]
    tool_def: dict[str, Any] | None
    request_id: RequestId
    decision: Decision | None = None
    entry: AuditEntry | None = None
    received: float = field(default_factory=time.time)

    @property
    def label(self) -> str:
        return f"{self.client}.{self.tool}"


Approver = Callable[[IncomingCall], Awaitable[bool]]
Asker = Callable[[IncomingCall], Awaitable[bool]]


class IncomingPolicy(RuleBook):
    """Who may run which notebook tool. Rules by ``CLIENT.TOOL`` pattern (``"*.delete_rows": "ask"``,
    ``"mcp-inspector.*": "allow"``); an ``allow`` *pattern* does not cover a tool declaring
    ``destructiveHint`` (only an exact ``CLIENT.TOOL`` rule does). Defaults: ask for tools that declare
    ``destructiveHint: true``, allow read-only and other notebook tools (the notebook's author wrote them).
    Headless (nobody to click), an ``ask`` becomes ``headless_policy``."""

    party = "CLIENT"
    example = "'*.wipe' or 'claude-code.*'"

    def _default(self, party: str, tool_def: Mapping[str, Any] | None) -> Decision:
        if declares_destructive(tool_def):
            return Decision("ask", "default: the tool declares destructiveHint")
        if is_read_only(tool_def):
            return Decision("allow", "default: read-only tool")
        return Decision("allow", "default: notebook tool")


class PolicyApprover:
    """The default gate: decide by policy, ask a person (the console) for an ``ask``, audit everything."""

    def __init__(
        self,
        policy: IncomingPolicy,
        audit: AuditLog,
        ask: Asker | None = None,
        on_denied: Callable[[IncomingCall], None] | None = None,
    ) -> None:
        self.policy, self.audit, self.ask, self.on_denied = policy, audit, ask, on_denied

    async def __call__(self, call: IncomingCall) -> bool:
        decision = self.policy.decide(call.client, call.tool, call.tool_def)
        if decision.verdict == "ask" and self.ask is None:
            decision = Decision("deny", f"nobody to ask ({decision.by})")
        call.decision = decision
        status = "awaiting-approval" if decision.verdict == "ask" else "running"
        call.entry = self.audit.add(
            AuditEntry(
                call.client,
                call.tool,
                dict(call.arguments),
                decision.verdict,
                decision.by,
                status,
                kind="incoming",
            )
        )
        if decision.verdict == "ask":
            assert self.ask is not None
            approved = await self.ask(call)
            call.entry.decision = "allow" if approved else "deny"
            call.entry.decided_by = "you, in the server console"
            call.decision = Decision(call.entry.decision, call.entry.decided_by)  # type: ignore[arg-type]
        approved = call.entry.decision == "allow"
        call.entry.status = "running" if approved else "denied"
        if not approved and decision.verdict != "ask" and self.on_denied is not None:
            self.on_denied(call)
        return approved


def _denied_result(call: IncomingCall) -> dict[str, Any]:
    why = call.decision.by if call.decision is not None else "not approved"
    text = f"The notebook's user did not approve this call to {call.tool!r} ({why})."
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _record(call: IncomingCall, answer: Response | ErrorResponse) -> None:
    """The call's audit entry learns how it ended."""
    entry = call.entry
    if entry is None:
        return
    entry.duration = time.time() - call.received
    failed = isinstance(answer, ErrorResponse) or answer.result.get("isError") is True
    entry.status = "failed" if failed else "done"
    if isinstance(answer, ErrorResponse):
        entry.error = answer.message
    elif failed:
        entry.error = "tool error (isError)"


class GatedTransport:
    """Between one HTTP session and the engine: holds each ``tools/call`` until the approver says yes."""

    def __init__(self, inner: Transport, gate: Gate) -> None:
        self._inner, self._gate = inner, gate
        self._ready: asyncio.Queue[str | BaseException] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._held: dict[RequestId, asyncio.Task[None]] = {}
        self._tracked: dict[RequestId, IncomingCall] = {}
        self._in_flight: set[RequestId] = set()  # requests the engine has and has not answered yet
        self.client_info: dict[str, Any] = {}

    @property
    def session_id(self) -> str:
        return str(getattr(self._inner, "session_id", ""))

    def __getattr__(self, name: str) -> Any:  # close_sse_stream, protocol_version, ...
        return getattr(self._inner, name)

    async def send(self, message: str, *, related_id: RequestId | None = None) -> None:
        if related_id is not None and related_id in self._in_flight:
            answer = parse(message)[0]
            if isinstance(answer, Response | ErrorResponse) and answer.id == related_id:
                self._in_flight.discard(related_id)
                call = self._tracked.pop(related_id, None)
                if call is not None:
                    _record(call, answer)
        await self._inner.send(message, related_id=related_id)

    async def abort(self, reason: str) -> None:
        """Answer every request still waiting (for approval or for the engine) with an error: stopping."""
        waiting = self._in_flight | set(self._held)
        for task in list(self._held.values()):
            task.cancel()
        self._in_flight.clear()
        for request_id in waiting:
            call = self._tracked.pop(request_id, None)
            if call is not None and call.entry is not None:
                call.entry.status, call.entry.error = "cancelled", reason
            error = serialize(ErrorResponse(request_id, INTERNAL_ERROR, reason))
            with contextlib.suppress(Exception):
                await self._inner.send(error, related_id=request_id)

    async def receive(self) -> str:
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(self._read())
        item = await self._ready.get()
        if isinstance(item, BaseException):
            self._ready.put_nowait(item)
            raise item
        return item

    async def aclose(self) -> None:
        self._stop_tasks()
        await self._inner.aclose()

    def _stop_tasks(self) -> None:
        for task in [*self._held.values(), *([self._pump] if self._pump else [])]:
            task.cancel()

    async def _read(self) -> None:
        try:
            while True:
                text = await self._inner.receive()
                self._route(text)
        except TransportClosed as exc:
            self._ready.put_nowait(exc)
        except Exception as exc:
            self._ready.put_nowait(TransportClosed(f"the approval gate failed: {exc!r}"))
        finally:
            for task in self._held.values():
                task.cancel()

    def _route(self, text: str) -> None:
        messages = parse(text, allow_batch=True)
        calls = [m for m in messages if isinstance(m, Request) and m.method == "tools/call"]
        if not calls:
            for m in messages:
                if isinstance(m, Request) and m.method == "initialize":
                    info = (m.params or {}).get("clientInfo")
                    self.client_info = dict(info) if isinstance(info, dict) else {}
                elif isinstance(m, Notification) and m.method == "notifications/cancelled":
                    cancelled = (m.params or {}).get("requestId")
                    self._in_flight.discard(cancelled)
                    held = self._held.get(cancelled)  # type: ignore[arg-type]
                    if held is not None:
                        held.cancel()
                if isinstance(m, Request):
                    self._in_flight.add(m.id)
            self._ready.put_nowait(text)
            return
        if len(messages) > 1:  # batches reach no tool unapproved
            for m in calls:
                reply = ErrorResponse(m.id, INVALID_REQUEST, "tools/call is not accepted inside a batch")
                self._send_soon(serialize(reply), m.id)
            return
        request = calls[0]
        task = asyncio.get_running_loop().create_task(self._approve(request, text))
        self._held[request.id] = task
        task.add_done_callback(partial(self._release, request.id))

    def _release(self, request_id: RequestId, _task: asyncio.Task[None]) -> None:
        self._held.pop(request_id, None)

    def _send_soon(self, message: str, related_id: RequestId) -> None:
        async def send() -> None:
            with contextlib.suppress(Exception):
                await self._inner.send(message, related_id=related_id)

        asyncio.get_running_loop().create_task(send())

    async def _approve(self, request: Request, text: str) -> None:
        params = request.params or {}
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str):  # malformed: the engine answers it
            self._in_flight.add(request.id)
            self._ready.put_nowait(text)
            return
        tool = self._gate.server.tools.get(name)
        call = IncomingCall(
            client=str(self.client_info.get("name") or "unknown"),
            client_info=self.client_info,
            session_id=self.session_id,
            tool=name,
            arguments=dict(arguments) if isinstance(arguments, dict) else {},
            tool_def=tool.definition if tool is not None else None,
            request_id=request.id,
        )
        if tool is None:  # unknown tool: nothing runs; the engine answers with its error
            self._in_flight.add(request.id)
            self._ready.put_nowait(text)
            return
        try:
            approved = await self._gate.approve(call)
        except asyncio.CancelledError:
            if call.entry is not None:
                call.entry.status = "cancelled"
            raise
        except Exception as exc:  # a broken approver denies, it never lets a call through
            approved = False
            call.decision = Decision("deny", f"the approver failed: {type(exc).__name__}: {exc}")
        if approved:
            self._tracked[request.id] = call
            self._in_flight.add(request.id)
            self._ready.put_nowait(text)
        else:
            await self._inner.send(
                serialize(Response(request.id, _denied_result(call))), related_id=request.id
            )


class Gate:
    """What ``StreamableHTTPServer`` serves: the Server, with each session's transport gated."""

    def __init__(self, server: Server, approve: Approver | None) -> None:
        self.server = server
        self._approve = approve
        self._live: weakref.WeakSet[GatedTransport] = weakref.WeakSet()

    async def abort_in_flight(self, reason: str) -> None:
        """Answer every session's unanswered requests with an error (before the server stops)."""
        for transport in list(self._live):
            await transport.abort(reason)

    async def approve(self, call: IncomingCall) -> bool:
        return True if self._approve is None else await self._approve(call)

    async def serve(self, transport: Transport) -> None:
        gated = GatedTransport(transport, self)
        self._live.add(gated)
        await self.server.serve(gated, name=f"{self.server.name} HTTP")
