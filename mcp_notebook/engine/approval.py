"""Approval of incoming ``tools/call``: an awaited hook of :class:`~mcp_notebook.engine.server.Server`.

```python
async def approve(call: IncomingCall) -> bool | Approval:
    return call.peer.principal != "stdio" or call.tool != "wipe"

server = Server("demo", approve=approve)
```

The engine calls the hook where it handles ``tools/call`` (DESIGN decision 14), after the tool is found and
before it runs; pings, lists and every other request never wait for it. A denied call never reaches the
tool and is answered with an ``isError`` result saying why; a hook that raises denies. The caller's identity
is :attr:`IncomingCall.peer`, what the *connection* knows (transport, session, credential name);
:attr:`IncomingCall.declared_name` is what the client says it is, for showing to a person (escaped) only.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.jsonrpc import RequestId
from ..transports.base import Peer

__all__ = ["Approval", "Approver", "IncomingCall", "check", "denied_result"]


@dataclass(eq=False)
class IncomingCall:
    """A ``tools/call`` from a client, as the approval hook sees it (one object per call: hashable by id)."""

    peer: Peer
    tool: str
    arguments: dict[str, Any]
    tool_def: dict[str, Any]
    request_id: RequestId
    client_info: dict[str, Any] = field(default_factory=dict)  # declared by the client: display only
    received: float = field(default_factory=time.time)
    # The principal the call is bound to (ServerSession.principal): a token's name, an OAuth subject and
    # client, else the connection; None for an unauthenticated one-request (2026-07-28 HTTP) call.
    principal: str | None = None

    @property
    def declared_name(self) -> str:
        """The client's own ``clientInfo.name``: shown to people, never matched by a rule."""
        name = self.client_info.get("name")
        return name if isinstance(name, str) and name else "unknown"

    @property
    def session_id(self) -> str:
        return self.peer.session_id or ""


@dataclass(frozen=True)
class Approval:
    """The hook's answer with its reason, for the caller's error message and the audit log."""

    allowed: bool
    reason: str = ""


Approver = Callable[[IncomingCall], Awaitable["bool | Approval"]]


async def check(approver: Approver, call: IncomingCall) -> Approval:
    """Ask ``approver`` about ``call``. Only ``True`` or an allowing :class:`Approval` lets it run."""
    try:
        answer = await approver(call)
    except Exception as exc:  # a broken approver denies; it never lets a call through
        return Approval(False, f"the approver failed: {type(exc).__name__}: {exc}")
    if isinstance(answer, Approval):
        return answer
    return Approval(True, "approved") if answer is True else Approval(False, "not approved")


def denied_result(call: IncomingCall, approval: Approval) -> dict[str, Any]:
    """What a denied caller gets: a tool execution error (server/tools#error-handling), not a protocol one."""
    text = f"The server did not approve this call to {call.tool!r}: {approval.reason or 'not approved'}."
    return {"content": [{"type": "text", "text": text}], "isError": True}
