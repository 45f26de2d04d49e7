"""A bounded record of every message a connection sent and received: the teaching view's raw material."""

from __future__ import annotations

import json
import re
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Literal, NamedTuple

from ..auth.redact import redact

__all__ = ["Trace", "TraceEntry"]

Direction = Literal["out", "in", "note"]
_HEAD = 1024  # characters kept of an elided message
_new_entry = tuple.__new__
_now = time.time


class TraceEntry(NamedTuple):
    """One message as it passed (immutable; a named tuple). The trace keeps each entry's fields as a plain
    tuple and makes the TraceEntry when it is read or told to a listener: four messages per round trip in
    memory, and a tuple subclass costs ~150 ns more to make than a tuple (a frozen dataclass ~1 us)."""

    direction: (
        Direction  # "out": we sent it; "in": we received it; "note": transport remark (stderr, bad line)
    )
    time: float  # time.time() when it passed
    raw: str  # exactly the text on the wire (or the remark); only its head when ``elided``
    elided: int = 0  # the whole message's length when the trace kept only its head (too large to keep)

    @property
    def message(self) -> dict[str, Any]:
        """The JSON-RPC message, parsed on demand (the hot path only stores the text)."""
        if self.direction == "note":
            return {"note": self.raw}
        if self.elided:
            return _elided_message(self.raw, self.elided)
        try:
            value = json.loads(self.raw)
        except ValueError:
            return {"unparseable": self.raw[:2000]}
        return value if isinstance(value, dict) else {"batch": value}

    def as_dict(self) -> dict[str, Any]:
        return {"direction": self.direction, "time": self.time, "message": self.message}


def _elided_message(head: str, length: int) -> dict[str, Any]:
    """What the trace shows of a message too large to keep: its id and method, its size, where it is."""
    shown: dict[str, Any] = {"jsonrpc": "2.0"}
    for key in ("id", "method"):
        found = re.search(rf'"{key}"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)', head)
        if found:
            shown[key] = json.loads(found.group(1))
    shown["elided"] = {
        "length": length,
        "why": "too large to keep in the trace; the payload is on the call's handle (its .result)",
    }
    return shown


class Trace:
    """The last messages of a connection, oldest first: at most ``maxlen`` of them and ``max_chars`` of
    text in all. A message longer than ``max_entry_chars`` is kept as its head only (``TraceEntry.elided``),
    so 400 unsolicited 4 MiB log messages cost the trace a few hundred KiB, not 1.6 GiB. Listeners (a live
    view, a cassette recording) still get every message whole, as it passes."""

    def __init__(
        self, maxlen: int = 2000, *, max_chars: int = 8 * 1024 * 1024, max_entry_chars: int = 64 * 1024
    ) -> None:
        # each entry's fields as a plain tuple: the TraceEntry is made when read (see TraceEntry)
        self._entries: deque[tuple[Direction, float, str, int]] = deque()
        self.maxlen, self.max_chars, self.max_entry_chars = maxlen, max_chars, max_entry_chars
        self._chars = 0
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
        fields = (direction, _now(), raw, 0)  # the entry's fields: the TraceEntry is made when read
        size = len(raw)
        if size > self.max_entry_chars:
            head = raw[:_HEAD]
            fields, size = (direction, fields[1], head, size), len(head)
        entries = self._entries
        entries.append(fields)
        self._chars += size
        over = len(entries) - self.maxlen
        if over == 1:  # a full trace (the steady state): the oldest goes
            self._chars -= len(entries.popleft()[2])
        if over > 1 or self._chars > self.max_chars:
            self._trim()
        if self._listeners:  # listeners get the whole message, even when the trace keeps its head
            self._tell(_new_entry(TraceEntry, (direction, fields[1], raw, 0)))

    def _trim(self) -> None:
        entries = self._entries
        while len(entries) > self.maxlen or (self._chars > self.max_chars and len(entries) > 1):
            self._chars -= len(entries.popleft()[2])

    def _tell(self, entry: TraceEntry) -> None:
        alive = []
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                alive.append(ref)
                listener(entry)
        self._listeners = alive

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self, since: float | None = None) -> list[dict[str, Any]]:
        """Entries as ``{"direction", "time", "message"}`` dicts; with ``since``, only the later ones."""
        kept = list(self._entries)  # a copy first: the connection's thread appends meanwhile
        # filtered on the stored time first: only the entries asked for are made
        return [_new_entry(TraceEntry, f).as_dict() for f in kept if since is None or f[1] >= since]

    def _made(self) -> list[TraceEntry]:
        kept = list(self._entries)  # a copy first: the connection's thread appends meanwhile
        return [_new_entry(TraceEntry, fields) for fields in kept]

    def clear(self) -> None:
        self._entries.clear()
        self._chars = 0
