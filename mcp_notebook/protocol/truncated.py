"""What can still be read from a message too large to parse: its kind and id, from its first and last bytes.

A transport that drops an over-limit message keeps its ends, so the request it carried can be answered
(or the call it answered failed) with the request's id instead of leaving a call to its timeout. Only the
top level of the object counts: an ``"id"`` nested in ``params`` or ``result`` is not the message's id.
JSON-RPC: https://www.jsonrpc.org/specification (an id is a string or an integer here, as MCP requires).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from .jsonrpc import RequestId

__all__ = ["Ends", "read_ends"]

Kind = Literal["request", "notification", "response", "unknown"]

_VALUE = r'(-?\d+|"(?:[^"\\]|\\.)*")'
_ID_VALUE = re.compile(r"\s*" + _VALUE)
_ID_LAST = re.compile(r'"id"\s*:\s*' + _VALUE + r"\s*\}\s*$")  # the id as the object's last member


@dataclass(frozen=True, slots=True)
class Ends:
    kind: Kind
    id: RequestId | None


def read_ends(head: str, tail: str) -> Ends:
    """The kind and id of a JSON-RPC message known only by ``head`` (its start) and ``tail`` (its end)."""
    keys, msg_id = _top_level(head)
    if msg_id is None:
        match = _ID_LAST.search(tail)
        msg_id = _id(match.group(1)) if match else None
    if "method" in keys:
        return Ends("request" if msg_id is not None else "notification", msg_id)
    if "result" in keys or "error" in keys:
        return Ends("response", msg_id)
    return Ends("unknown", msg_id)


def _id(text: str) -> RequestId | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _top_level(text: str) -> tuple[set[str], RequestId | None]:
    """The member names at depth 1 of a JSON object's beginning, and its ``id`` if that is complete."""
    keys: set[str] = set()
    msg_id: RequestId | None = None
    depth, i, n = 0, 0, len(text)
    expect_key = False
    while i < n:
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            if end < 0:
                break  # cut inside a string
            if depth == 1 and expect_key:
                key = _id(text[i : end + 1])
                if isinstance(key, str):
                    keys.add(key)
                    if key == "id":
                        colon = text.find(":", end + 1)
                        match = _ID_VALUE.match(text, colon + 1) if colon >= 0 else None
                        if match and match.end() < n:  # complete only if something follows it
                            msg_id = _id(match.group(1))
                expect_key = False
            i = end + 1
            continue
        if char in "{[":
            depth += 1
            expect_key = char == "{" and depth == 1
        elif char in "}]":
            depth -= 1
        elif char == "," and depth == 1:
            expect_key = True
        i += 1
    return keys, msg_id


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == '"':
            return i
        i += 1
    return -1
