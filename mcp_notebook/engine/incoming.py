"""A request from the peer as a handler sees it (moved out of engine/connection.py, which runs it)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..protocol.jsonrpc import RequestId
from ..protocol.modern import RequestMeta

__all__ = ["IncomingRequest", "Link"]


class Link(Protocol):
    """What a handler uses of the connection its request came on (engine.connection.Connection)."""

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related_id: RequestId | None = None
    ) -> None: ...

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, related_id: RequestId | None = None
    ) -> dict[str, Any]: ...


_CANCEL_LOCK = threading.Lock()


@dataclass
class IncomingRequest:
    """A request from the peer, as seen by a handler: what was asked, and how to talk back while answering."""

    id: RequestId
    method: str
    params: dict[str, Any]
    connection: Link  # the Connection (no import back: connection.py imports this module)
    modern: RequestMeta | None = None  # a stateless 2026-07-28 request: its own version and capabilities
    _cancel: threading.Event | None = field(default=None, repr=False, compare=False)
    stopped: bool = field(default=False, repr=False, compare=False)  # the connection cancelled its task

    @property
    def cancel_event(self) -> threading.Event:
        """Set when the request is cancelled (a sync tool checks it from its thread); made when first asked
        for, since most requests never are (a threading.Event costs a Condition and a lock)."""
        event = self._cancel
        if event is None:
            with _CANCEL_LOCK:  # the tool's thread and the loop may ask at once: both must get this one
                if self._cancel is None:
                    self._cancel = threading.Event()
                event = self._cancel
        return event

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> str | int | None:
        token = self.meta.get("progressToken")
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """A notification tied to this request (on HTTP it travels on this request's stream)."""
        await self.connection.notify(method, params, related_id=self.id)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request to the peer made while answering this one (elicitation, sampling, roots)."""
        return await self.connection.request(method, params, related_id=self.id)
