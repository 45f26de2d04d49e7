"""A bounded record of every message a connection sent and received: the teaching view's raw material."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterator
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

    def record(self, direction: Direction, raw: str) -> None:
        if direction == "note":  # a server's stderr or a transport remark may quote a credential
            raw = redact(raw)
        self._entries.append(TraceEntry(direction, time.time(), raw))

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self, since: float | None = None) -> list[dict[str, Any]]:
        """Entries as ``{"direction", "time", "message"}`` dicts; with ``since``, only the later ones."""
        return [e.as_dict() for e in self._entries if since is None or e.time >= since]

    def clear(self) -> None:
        self._entries.clear()
