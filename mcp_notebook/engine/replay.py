"""A cassette served as an MCP server: ``Client(Cassette("x.jsonl"))``, ``mcp-notebook replay x.jsonl``.

:class:`Cassette` answers each request with what the recorded server answered to the matching recorded
request (:func:`~.cassette.match_key`: method and params, without ``_meta`` and ``requestState``):

* **ids**: never matched; the answer carries the asking request's id. Server requests recorded during an
  exchange (elicitation, sampling) are sent with new ids and the client's answer is awaited, then ignored.
* **progress tokens, subscription ids**: recorded notifications are re-addressed to the asking request's
  ``progressToken`` (dropped if it gave none) and the listen request's id.
* **repeats**: identical requests get the recorded answers in recorded order, and the last one after that
  (a polled ``tasks/get`` goes ``working`` -> ``completed`` and stays there). An ``initialize`` or
  ``server/discover`` starts a new client: the order starts again.
* **cursors, task ids, requestState**: handed out as recorded, so a client echoing them matches.
* **timestamps**: sent as recorded.
* **redacted values**: a value the recording blanked out (``[redacted]``, see :mod:`.cassette`) matches any
  value in its place.
* **handshake**: ``initialize`` / ``server/discover`` come from the recording, or, when the recording
  started later, are made from its header; ``ping`` and ``logging/setLevel`` are always answered.

An unmatched request gets a JSON-RPC error naming the nearest recorded request (-32601 when the method
was never recorded, else -32602). A recorded request that was never answered (a ``subscriptions/listen``
stream still open when the recording stopped) is left unanswered. A ``subscriptions/listen`` the recording
does not hold (it began after the connection opened its stream) is acknowledged as carrying nothing and
left open: a replay has no change to announce, and a client should not be told its server is broken.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..auth.redact import REDACTED, redact
from ..protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from ..protocol.modern import META_SERVER_INFO, META_SUBSCRIPTION_ID
from ..transports.base import Peer, Transport, TransportClosed
from .cassette import (
    HANDSHAKE,
    CassetteFile,
    Exchange,
    exchanges,
    match_key,
    nearest,
    read_cassette,
    strip_params,
)

__all__ = ["REPLAY_MISS", "Cassette"]

REPLAY_MISS = "no recorded answer"
LISTEN, LISTEN_ACK = "subscriptions/listen", "notifications/subscriptions/acknowledged"
_Waiting = dict[str, "asyncio.Future[dict[str, Any]]"]
_ANSWER_TIMEOUT = 60.0  # how long a replayed server request waits for the client's reply


class Cassette:
    """A recorded session as a server (anything a :class:`~mcp_notebook.transports.base.Serves` can be):
    in memory (``Client(Cassette(path))``), over stdio or Streamable HTTP (``mcp-notebook replay``)."""

    def __init__(self, source: str | Path | CassetteFile) -> None:
        self.file = source if isinstance(source, CassetteFile) else read_cassette(source)
        self.path = None if isinstance(source, CassetteFile) else Path(source)
        self.exchanges = exchanges(self.file.messages)
        self._by_key: dict[str, list[Exchange]] = defaultdict(list)
        self._redacted: dict[str, list[Exchange]] = defaultdict(list)
        for exchange in self.exchanges:
            self._by_key[exchange.key].append(exchange)
            if REDACTED in exchange.key:
                self._redacted[exchange.key].append(exchange)
        self._served: dict[str, int] = defaultdict(int)  # key -> how many times answered
        self._next_id = 0

    @property
    def name(self) -> str:
        server = self.file.header.get("server")
        return str(server.get("name", "cassette")) if isinstance(server, dict) else "cassette"

    @property
    def era(self) -> str:
        return self.file.era

    def __repr__(self) -> str:
        where = f" {self.path}" if self.path else ""
        return f"<Cassette{where}: {self.era}, {len(self.exchanges)} requests>"

    def rewind(self) -> None:
        """Answer repeated requests from their first recorded answer again."""
        self._served.clear()

    def tool_input_schema(self, name: object) -> dict[str, Any] | None:
        for exchange in reversed(self.exchanges):
            if exchange.method == "tools/list" and exchange.response is not None:
                result = exchange.response.get("result")
                for tool in result.get("tools", []) if isinstance(result, dict) else []:
                    if isinstance(tool, dict) and tool.get("name") == name:
                        schema = tool.get("inputSchema")
                        return schema if isinstance(schema, dict) else None
        return None

    # ---- serving ------------------------------------------------------------------------------------------
    async def serve(self, transport: Transport, *, peer: Peer | None = None) -> None:
        """Answer one client over ``transport`` until it hangs up."""
        waiting: _Waiting = {}  # our server requests, by id
        running: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    text = await transport.receive()
                except TransportClosed:
                    return
                try:
                    parsed = json.loads(text)
                except ValueError:
                    await _send(transport, _error(None, -32700, "Parse error"))
                    continue
                for message in parsed if isinstance(parsed, list) else [parsed]:
                    if not isinstance(message, dict):
                        continue
                    if "method" not in message:  # the client's answer to one of our requests
                        future = waiting.pop(json.dumps(message.get("id")), None)
                        if future is not None and not future.done():
                            future.set_result(message)
                        continue
                    if "id" not in message:
                        continue  # client notifications (initialized, cancelled, ...) change nothing here
                    task = asyncio.get_running_loop().create_task(self._answer(transport, message, waiting))
                    running.add(task)
                    task.add_done_callback(running.discard)
        finally:
            for task in list(running):
                task.cancel()
            if running:  # their ends are theirs; a cancel of serve's own task meanwhile still reaches it
                await asyncio.gather(*running, return_exceptions=True)

    async def _answer(
        self,
        transport: Transport,
        request: dict[str, Any],
        waiting: dict[str, asyncio.Future[dict[str, Any]]],
    ) -> None:
        request_id = request["id"]
        method = str(request.get("method"))
        params = request.get("params") if isinstance(request.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method in HANDSHAKE:
            self.rewind()
        exchange = self._pick(match_key(method, params), method, params)
        try:
            if exchange is None and method == LISTEN and self.era == "modern":
                meta = {META_SUBSCRIPTION_ID: request_id}
                ack = {"jsonrpc": "2.0", "method": LISTEN_ACK, "params": {"_meta": meta, "notifications": {}}}
                await _send(transport, ack, related_id=request_id)
                return  # the stream stays open, quiet, until the client hangs up
            if exchange is None:
                await _send(transport, self._unmatched(request_id, method, params), related_id=request_id)
                return
            for item in exchange.during:
                message = self._readdress(item.message, request)
                if message is None:
                    continue
                if not item.is_request:
                    await _send(transport, message, related_id=request_id)
                    continue
                self._next_id += 1
                message["id"] = f"replay-{self._next_id}"
                future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
                waiting[json.dumps(message["id"])] = future
                await _send(transport, message, related_id=request_id)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(future, _ANSWER_TIMEOUT)
            if exchange.response is not None:
                await _send(transport, {**exchange.response, "id": request_id}, related_id=request_id)
        except TransportClosed:
            return

    def _pick(self, key: str, method: str, params: dict[str, Any]) -> Exchange | None:
        recorded = self._by_key.get(key)
        if not recorded:  # a recorded value the redaction blanked out matches any value
            key = next(
                (k for k, r in self._redacted.items() if r[0].method == method and _fits(r[0], params)), ""
            )
            recorded = self._redacted.get(key)
        if not recorded:
            return None
        served = self._served[key]
        self._served[key] = served + 1
        return recorded[min(served, len(recorded) - 1)]

    def _readdress(self, message: dict[str, Any], request: dict[str, Any]) -> dict[str, Any] | None:
        """A recorded server message for ``request``: progress token and subscription id made its own."""
        message = json.loads(json.dumps(message))
        params = message.get("params")
        if not isinstance(params, dict):
            return message
        request_params = request.get("params") if isinstance(request.get("params"), dict) else {}
        request_meta = request_params.get("_meta") if isinstance(request_params, dict) else None
        if message.get("method") == "notifications/progress" and "progressToken" in params:
            token = request_meta.get("progressToken") if isinstance(request_meta, dict) else None
            if token is None:
                return None  # the client asked for no progress
            params["progressToken"] = token
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_SUBSCRIPTION_ID in meta:
            meta[META_SUBSCRIPTION_ID] = request["id"]
        return message

    def _unmatched(self, request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        made = self._made_up(method)
        if made is not None:
            return {"jsonrpc": "2.0", "id": request_id, "result": made}
        key = match_key(method, params)
        close = nearest(key, self.exchanges)
        known = any(e.method == method for e in self.exchanges)
        where = f" in {self.path}" if self.path else ""
        text = redact(f"{REPLAY_MISS} for {key[:300]}{where}")
        data: dict[str, Any] = {"request": {"method": method}}
        if close is not None:
            text += redact(f"; the nearest recorded request is #{close.index}: {close.describe()}")
            data["nearest"] = {"index": close.index, "method": close.method, "params": close.params}
        return _error(request_id, INVALID_PARAMS if known else METHOD_NOT_FOUND, text, data)

    def _made_up(self, method: str) -> dict[str, Any] | None:
        """Answers a recording that began after the handshake (or never pinged) still needs."""
        header = self.file.header
        server = header.get("server") if isinstance(header.get("server"), dict) else {}
        assert isinstance(server, dict)
        info = server.get("serverInfo") or {"name": self.name, "version": "replay"}
        capabilities = server.get("capabilities") or {}
        version = header.get("protocolVersion")
        if method in ("ping", "logging/setLevel"):
            return {}
        if method == "initialize" and self.era == "legacy":
            result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
            if server.get("instructions"):
                result["instructions"] = server["instructions"]
            return result
        if method == "server/discover" and self.era == "modern":
            found: dict[str, Any] = {
                "supportedVersions": [version],
                "capabilities": capabilities,
                "_meta": {META_SERVER_INFO: info},
            }
            if server.get("instructions"):
                found["instructions"] = server["instructions"]
            return found
        return None


def _fits(recorded: Exchange, params: dict[str, Any]) -> bool:
    return _same(strip_params(recorded.params), strip_params(params))


def _same(recorded: Any, value: Any) -> bool:
    if recorded == REDACTED:
        return True
    if isinstance(recorded, dict) and isinstance(value, dict):
        return recorded.keys() == value.keys() and all(_same(recorded[k], value[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(value, list):
        return len(recorded) == len(value) and all(_same(a, b) for a, b in zip(recorded, value, strict=True))
    return bool(recorded == value)


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def _send(transport: Transport, message: dict[str, Any], *, related_id: Any = None) -> None:
    await transport.send(json.dumps(message, ensure_ascii=False), related_id=related_id)
