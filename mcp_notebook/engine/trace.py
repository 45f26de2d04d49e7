"""A bounded record of every message a connection sent and received: the teaching view's raw material."""

from __future__ import annotations

import json
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..auth.redact import redact

__all__ = ["Trace", "TraceEntry"]

Direction = Literal["out", "in", "note"]


@dataclass(frozen=True, slots=True)
class TraceEntry:
    direction: (
        Direction  # "out": we sent it; "in": we received it; "note": transport remark (stderr, bad line)
    )
    time: float  # time.time() when it passed
    raw: str  # exactly the text on the wire (or the remark)

    @property
    def message(self) -> dict[str, Any]:
        """The JSON-RPC message, parsed on demand (the hot path only stores the text)."""
        if self.direction == "note":
            return {"note": self.raw}
        try:
            value = json.loads(self.raw)
        except ValueError:
            return {"unparseable": self.raw[:2000]}
        return value if isinstance(value, dict) else {"batch": value}

    def as_dict(self) -> dict[str, Any]:
        return {"direction": self.direction, "time": self.time, "message": self.message}


class Trace:
    """The last ``maxlen`` messages of a connection, oldest first."""

    def __init__(self, maxlen: int = 2000) -> None:
        self._entries: deque[TraceEntry] = deque(maxlen=maxlen)
        #: Called with each new entry (a live view of the conversation); held weakly, so a view that is
        #: gone stops being called. Listeners must be quick: they run on the connection's thread.
        self._listeners: list[weakref.ref[Any]] = []

    def listen(self, listener: Callable[[TraceEntry], None]) -> None:
        """Call ``listener(entry)`` for every message recorded from now on (a bound method, held weakly)."""
        ref = weakref.WeakMethod(listener) if hasattr(listener, "__self__") else weakref.ref(listener)
        self._listeners.append(ref)

    def unlisten(self, listener: Callable[[TraceEntry], None]) -> None:
        """Stop calling ``listener`` (one given to :meth:`listen`); unknown listeners are ignored."""
        self._listeners = [ref for ref in self._listeners if ref() not in (None, listener)]

    def record(self, direction: Direction, raw: str) -> None:
        if direction == "note":  # a server's stderr or a transport remark may quote a credential
            raw = redact(raw)
        elif type(raw) is not str:  # a jsonrpc.Wire: keep the text, not the decoded value alongside it
            raw = str.__str__(raw)
        entry = TraceEntry(direction, time.time(), raw)
        self._entries.append(entry)
        if self._listeners:
            self._tell(entry)

    def _tell(self, entry: TraceEntry) -> None:
        alive = []
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                alive.append(ref)
                listener(entry)
        self._listeners = alive

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self, since: float | None = None) -> list[dict[str, Any]]:
        """Entries as ``{"direction", "time", "message"}`` dicts; with ``since``, only the later ones."""
        kept = list(self._entries)  # a copy first: the connection's thread appends meanwhile
        return [e.as_dict() for e in kept if since is None or e.time >= since]

    def clear(self) -> None:
        self._entries.clear()
