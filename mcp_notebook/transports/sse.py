"""Server-Sent Events framing, both directions, without I/O.

Follows the WHATWG event-stream rules (https://html.spec.whatwg.org/multipage/server-sent-events.html):
lines end in CRLF, LF or CR; ``:`` starts a comment; several ``data:`` lines join with ``\\n``; ``id`` and
``retry`` persist across events (so a reconnect can send ``Last-Event-ID`` and wait ``retry`` ms).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent", "encode_comment", "encode_event"]

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None  # the last event id in force when this event was dispatched
    retry: int | None = None  # set when this event block carried a ``retry:`` field


def encode_event(
    data: str, *, event_id: str | None = None, event: str | None = None, retry: int | None = None
) -> bytes:
    """One event. ``data`` may contain newlines (each line becomes a ``data:`` line)."""
    parts: list[str] = []
    if event is not None:
        parts.append(f"event: {_one_line(event)}\n")
    if event_id is not None:
        parts.append(f"id: {_one_line(event_id)}\n")
    if retry is not None:
        parts.append(f"retry: {int(retry)}\n")
    for line in _LINE_END.split(data):
        parts.append(f"data: {line}\n")
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """A comment line (a keep-alive); clients ignore it."""
    return f":{_one_line(text)}\n\n".encode()


def _one_line(value: str) -> str:
    if _LINE_END.search(value) or "\0" in value:
        raise ValueError(f"an SSE field value must be a single line: {value!r}")
    return value


class SSEDecoder:
    """Incremental parser: ``feed(bytes)`` returns the events completed so far.

    ``last_event_id`` and ``retry`` survive across events, as the reconnection rules need.
    ``max_event_size`` bounds memory against a peer that never ends a line or an event.
    """

    def __init__(self, *, last_event_id: str | None = None, max_event_size: int = 64 * 1024 * 1024) -> None:
        self.last_event_id = last_event_id
        self.retry: int | None = None
        self._max = max_event_size
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._first = True
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._block_retry: int | None = None
        self._block_has_fields = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        text = self._utf8.decode(chunk)
        if self._first and text:
            self._first = False
            text = text.removeprefix("\ufeff")
        self._buffer += text
        return self._drain(final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: an unterminated event is discarded (WHATWG), but a pending line is processed."""
        self._buffer += self._utf8.decode(b"", final=True)
        return self._drain(final=True)

    def _drain(self, *, final: bool) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        pos = 0
        buffer = self._buffer
        while True:
            match = _LINE_END.search(buffer, pos)
            if match is None:
                break
            if match.group() == "\r" and match.end() == len(buffer) and not final:
                break  # a CR at the very end may be the first half of CRLF: wait for the next chunk
            event = self._line(buffer[pos : match.start()])
            if event is not None:
                events.append(event)
            pos = match.end()
        self._buffer = buffer[pos:]
        if len(self._buffer) + self._data_size > self._max:
            raise ValueError(f"SSE event larger than {self._max} bytes")
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            if self._data_size > self._max:
                raise ValueError(f"SSE event larger than {self._max} bytes")
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry = self._block_retry = int(value)
        else:
            return None
        self._block_has_fields = True
        return None

    def _dispatch(self) -> SSEEvent | None:
        has_data = bool(self._data)
        event = SSEEvent(
            data="\n".join(self._data),
            event=self._event or "message",
            id=self.last_event_id,
            retry=self._block_retry,
        )
        has_fields = self._block_has_fields
        self._data, self._data_size, self._event = [], 0, ""
        self._block_retry, self._block_has_fields = None, False
        # WHATWG dispatches only blocks with data; we also surface id/retry-only blocks (SSE polling primes
        # with them) so callers see them, with empty data.
        return event if has_data or has_fields else None
