"""Cassettes: a connection's messages on disk, to replay (:mod:`.replay`) and verify (:mod:`.verify`).

A cassette is JSON Lines. The first line is the header; every other line is one message as it passed, in
order, with who sent it and when (seconds after the recording started)::

    {"cassette": "mcp-notebook", "version": 1, "era": "legacy", "protocolVersion": "2025-11-25",
     "server": {"name": "demo", "serverInfo": {...}, "capabilities": {...}}, "recordedAt": "2026-...Z"}
    {"from": "client", "at": 0.0, "message": {"jsonrpc": "2.0", "id": 1, "method": "initialize", ...}}
    {"from": "server", "at": 0.004, "message": {"jsonrpc": "2.0", "id": 1, "result": {...}}}

Everything the client's trace sees is recorded: both eras, tasks (``tasks/*`` and status notifications),
MRTR rounds (each retry is one more request), server requests (elicitation, sampling) and the client's
answers, notifications. Each message passes through :func:`~mcp_notebook.auth.redact.redact` (the trace's
redaction) before it is written, so no credential reaches the file.

A recording made on a connection that is already open starts with that connection's handshake (the last
``initialize`` or ``server/discover`` exchange its trace still holds) and a fresh ``tools/list``, so that
a replay can answer a new client from the start.

:func:`exchanges` reads the messages back as :class:`Exchange` objects: one client request with everything
the server sent for it. A server message is given to the request it belongs to: a progress notification
by its ``progressToken``, a listen stream's notification by its subscription id, a server request or
another notification to the latest unanswered request (a listen stream last).

The matching rules for volatile fields (shared by replay and verify) are in :func:`match_key` and
:data:`IGNORED_IN_RESULTS`; ``docs/cassettes.md`` states them for people.
"""

from __future__ import annotations

import datetime
import difflib
import json
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..auth.redact import redact
from ..protocol.modern import META_SUBSCRIPTION_ID

if TYPE_CHECKING:
    from .client import Client
    from .trace import TraceEntry

__all__ = [
    "FORMAT",
    "IGNORED_IN_RESULTS",
    "VERSION",
    "CassetteError",
    "CassetteFile",
    "Exchange",
    "Recording",
    "ServerMessage",
    "exchanges",
    "match_key",
    "nearest",
    "read_cassette",
    "strip_params",
]

FORMAT = "mcp-notebook"
VERSION = 1
HANDSHAKE = ("initialize", "server/discover")
LISTEN = "subscriptions/listen"

#: Request params that never decide a match: ``_meta`` (progress tokens, the 2026 era's version, client
#: info and capabilities) and ``requestState`` (an opaque value the server made; a client echoes it).
IGNORED_IN_PARAMS = frozenset({"_meta", "requestState"})

#: Result fields verify does not compare, by name, wherever they appear: values that differ on every run.
#: ``taskId``, ``nextCursor`` and ``requestState`` are compared by presence only; the live value takes the
#: recorded one's place in later requests.
IGNORED_IN_RESULTS = frozenset(
    {
        "_meta",
        "createdAt",
        "lastUpdatedAt",
        "ttl",
        "ttlMs",
        "pollInterval",
        "pollIntervalMs",
        "progressToken",
        "timestamp",
    }
)
SUBSTITUTED = frozenset({"taskId", "nextCursor", "requestState"})

Sender = Literal["client", "server"]


class CassetteError(ValueError):
    """The file is not a cassette this version reads."""


@dataclass
class CassetteFile:
    header: dict[str, Any]
    messages: list[tuple[Sender, dict[str, Any]]]  # (who sent it, the JSON-RPC message)

    @property
    def era(self) -> Literal["legacy", "modern"]:
        return "modern" if self.header.get("era") == "modern" else "legacy"


def read_cassette(path: str | Path) -> CassetteFile:
    """Read a cassette file (header line, then messages)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc}") from exc
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            raise CassetteError(f"{path}:{number}: not JSON: {exc}") from exc
    if not rows or not isinstance(rows[0], dict) or rows[0].get("cassette") != FORMAT:
        raise CassetteError(f"{path} is not an mcp-notebook cassette (no header line)")
    header = rows[0]
    if header.get("version") != VERSION:
        raise CassetteError(f"{path}: cassette version {header.get('version')!r}; this reads {VERSION}")
    messages: list[tuple[Sender, dict[str, Any]]] = []
    for row in rows[1:]:
        sender, message = row.get("from"), row.get("message")
        if sender in ("client", "server") and isinstance(message, dict):
            messages.append((sender, message))
    return CassetteFile(header, messages)


# ---- exchanges --------------------------------------------------------------------------------------------
@dataclass
class ServerMessage:
    """A notification or request the server sent while answering; ``answer``: the client's reply to it."""

    message: dict[str, Any]
    answer: dict[str, Any] | None = None

    @property
    def is_request(self) -> bool:
        return "id" in self.message


@dataclass
class Exchange:
    """One client request, what the server sent meanwhile, and its response (None: never answered)."""

    index: int  # 1-based, in the order the client sent its requests
    request: dict[str, Any]
    during: list[ServerMessage] = field(default_factory=list)
    response: dict[str, Any] | None = None

    @property
    def method(self) -> str:
        return str(self.request.get("method"))

    @property
    def params(self) -> dict[str, Any]:
        params = self.request.get("params")
        return params if isinstance(params, dict) else {}

    @property
    def key(self) -> str:
        return match_key(self.method, self.params)

    def describe(self, width: int = 160) -> str:
        shown = json.dumps(strip_params(self.params), sort_keys=True, ensure_ascii=False)
        if len(shown) > width:
            shown = shown[: width - 3] + "..."
        return f"{self.method} {shown}"


def strip_params(params: Any) -> Any:
    """Params without what never decides a match (:data:`IGNORED_IN_PARAMS`)."""
    if not isinstance(params, dict):
        return params
    return {k: v for k, v in params.items() if k not in IGNORED_IN_PARAMS}


def match_key(method: str, params: Any) -> str:
    """The text two requests must share to match: the method and the params, ``_meta`` and
    ``requestState`` left out, keys sorted. JSON-RPC ids never count."""
    return method + " " + json.dumps(strip_params(params or {}), sort_keys=True, ensure_ascii=False)


def nearest(key: str, candidates: Iterable[Exchange]) -> Exchange | None:
    """The recorded request most like ``key`` (same method first, then by text similarity)."""
    method = key.partition(" ")[0]
    best: tuple[tuple[bool, float], Exchange] | None = None
    for exchange in candidates:
        score = (exchange.method == method, difflib.SequenceMatcher(None, key, exchange.key).ratio())
        if best is None or score > best[0]:
            best = (score, exchange)
    return best[1] if best else None


def _flat(messages: Iterable[tuple[Sender, dict[str, Any]]]) -> Iterator[tuple[Sender, dict[str, Any]]]:
    for sender, message in messages:
        batch = message.get("batch")
        if isinstance(batch, list):  # a JSON-RPC batch (2025-03-26) is its entries, one by one
            yield from ((sender, m) for m in batch if isinstance(m, dict))
        else:
            yield sender, message


def exchanges(messages: Iterable[tuple[Sender, dict[str, Any]]]) -> list[Exchange]:
    """The client's requests in order, each with the server messages that belong to it."""
    found: list[Exchange] = []
    pending: dict[Any, Exchange] = {}  # client request id -> its exchange, until answered
    asked: dict[Any, ServerMessage] = {}  # server request id -> the message, until the client answers
    for sender, message in _flat(messages):
        has_method, has_id = "method" in message, "id" in message
        if sender == "client":
            if has_method and has_id:
                exchange = Exchange(len(found) + 1, message)
                found.append(exchange)
                pending[_id_key(message["id"])] = exchange
            elif not has_method and has_id and _id_key(message["id"]) in asked:
                asked.pop(_id_key(message["id"])).answer = message
            continue
        if not has_method:
            answered = pending.pop(_id_key(message.get("id")), None)
            if answered is not None:
                answered.response = message
            continue
        owner = _owner(message, pending)
        if owner is None:
            continue  # nothing was asked: an unsolicited notification, not replayed
        item = ServerMessage(message)
        owner.during.append(item)
        if has_id:
            asked[_id_key(message["id"])] = item
    return found


def _id_key(value: Any) -> str:
    return json.dumps(value)


def _owner(message: dict[str, Any], pending: dict[Any, Exchange]) -> Exchange | None:
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    assert isinstance(params, dict)
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    assert isinstance(meta, dict)
    subscription = meta.get(META_SUBSCRIPTION_ID)
    if subscription is not None:
        return pending.get(_id_key(subscription))
    token = params.get("progressToken")
    if message.get("method") == "notifications/progress" and token is not None:
        for exchange in reversed(pending.values()):
            request_meta = exchange.params.get("_meta")
            if isinstance(request_meta, dict) and request_meta.get("progressToken") == token:
                return exchange
        return None
    ordinary = [e for e in pending.values() if e.method != LISTEN]
    if ordinary:
        return ordinary[-1]
    return next(reversed(pending.values()), None)


# ---- recording --------------------------------------------------------------------------------------------
class Recording:
    """Write what ``client`` sends and receives to ``path``, from now until :meth:`stop`.

    ``async with Recording(client, "x.jsonl"):`` (or ``await start()`` / ``stop()``). Lines are written as
    the messages pass (on the connection's thread) and flushed, so an interrupted session keeps what it
    recorded. The client must be connected.
    """

    def __init__(self, client: Client, path: str | Path) -> None:
        self.client = client
        self.path = Path(path)
        self._file: Any = None
        self._lock = threading.Lock()
        self._began = 0.0
        self.count = 0  # messages written

    @property
    def recording(self) -> bool:
        return self._file is not None

    def header(self) -> dict[str, Any]:
        client = self.client
        server: dict[str, Any] = {
            "name": client.name,
            "serverInfo": client.server_info,
            "capabilities": client.server_capabilities,
        }
        if client.instructions:
            server["instructions"] = client.instructions
        version = client.negotiated_version
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "cassette": FORMAT,
            "version": VERSION,
            "era": "modern" if client.is_modern else "legacy",
            "protocolVersion": version.name if version is not None else None,
            "server": server,
            "recordedAt": now,
        }

    async def start(self, *, list_tools: bool = True) -> Recording:
        """Begin: header, the connection's handshake, then (``list_tools``) a fresh ``tools/list``."""
        self.begin()
        if list_tools:
            await self.client.list_tools()
        return self

    def begin(self) -> None:
        """Begin without any request of our own (the synchronous part of :meth:`start`)."""
        if self._file is not None:
            raise RuntimeError(f"already recording to {self.path}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handshake = _last_handshake(list(self.client.trace))
        self._file = self.path.open("w", encoding="utf-8")
        self._began = time.time()
        self._write_line(self.header())
        for entry in handshake:
            self._write(entry.direction, entry.raw, entry.time)
        self.client.trace.listen(self._on_entry)

    def _on_entry(self, entry: TraceEntry) -> None:
        if entry.direction != "note":
            self._write(entry.direction, entry.raw, entry.time)

    def _write(self, direction: str, raw: str, when: float) -> None:
        try:
            message = json.loads(redact(raw))
        except ValueError:
            return  # not JSON: the trace keeps it as a remark; a cassette has only messages
        sender = "client" if direction == "out" else "server"
        if not isinstance(message, dict):
            message = {"batch": message}
        self._write_line({"from": sender, "at": round(max(when - self._began, 0.0), 4), "message": message})
        self.count += 1

    def _write_line(self, row: dict[str, Any]) -> None:
        with self._lock:
            if self._file is None:
                return
            self._file.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._file.flush()

    def stop(self) -> Path:
        """Stop recording (idempotent); the cassette's path."""
        with self._lock:
            file, self._file = self._file, None
        if file is not None:
            self.client.trace.unlisten(self._on_entry)
            file.close()
        return self.path

    async def __aenter__(self) -> Recording:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.stop()


def _last_handshake(entries: list[TraceEntry]) -> list[TraceEntry]:
    """The trace's last ``initialize`` or ``server/discover`` request, its answer and what came between
    them and ``notifications/initialized`` (legacy)."""
    start = None
    request_id = None
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        if entry.direction == "out" and entry.message.get("method") in HANDSHAKE:
            start, request_id = i, entry.message.get("id")
            break
    if start is None:
        return []
    kept = [entries[start]]
    for entry in entries[start + 1 :]:
        if entry.direction == "note":
            continue
        message = entry.message
        if entry.direction == "in" and "method" not in message and message.get("id") == request_id:
            kept.append(entry)
        elif entry.direction == "out" and message.get("method") == "notifications/initialized":
            kept.append(entry)
            break
    return kept
