"""Verify a cassette against a live server: snapshot tests for tools (``mcp-notebook verify x.jsonl -- CMD``).

:func:`verify` connects to the server in the cassette's era, re-sends the recorded requests in order and
compares each answer with the recorded one. The rules for what changes from run to run:

* results: fields named in :data:`~.cassette.IGNORED_IN_RESULTS` (``_meta``, timestamps, ``ttl``/``ttlMs``,
  ``pollInterval``) are not compared; ``taskId``, ``nextCursor`` and ``requestState`` are compared by
  presence, and the live value replaces the recorded one in every later request (so a task's polls, the
  next page and an MRTR retry go to what the live server made);
* lists of objects that all have a ``name`` (tools, prompts) or a ``uri`` (resources) are compared by that
  name, so a tool schema that changed is reported as ``tools[add].inputSchema...``;
* a task's ``tasks/get`` polls are timing: only the last recorded poll of each task is compared, after
  polling the live task until it reaches the recorded status or ends (bounded by ``timeout``);
  ``tasks/list`` is not compared;
* the handshake (``initialize``, ``server/discover``), ``ping`` and ``subscriptions/listen`` are not
  re-sent (the client makes its own); a request recorded without an answer is sent but not compared;
* a server request recorded during an exchange (elicitation, sampling) is answered with the client's
  recorded answer to the most similar one.

``update=True`` records the verifying session over the cassette (accepting every difference).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol.errors import JSONRPCError
from ..protocol.modern import META_CLIENT_CAPABILITIES
from .cassette import (
    HANDSHAKE,
    IGNORED_IN_RESULTS,
    LISTEN,
    SUBSTITUTED,
    CassetteFile,
    Exchange,
    Recording,
    exchanges,
    match_key,
    read_cassette,
)
from .client import Client

__all__ = ["Difference", "VerifyReport", "diff", "verify"]

NOT_RESENT = frozenset({*HANDSHAKE, LISTEN, "ping"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})
_MISSING = object()


@dataclass(frozen=True)
class Difference:
    where: str  # "#4 tools/call add"
    path: str  # "result.content[0].text"
    recorded: Any
    live: Any

    def __str__(self) -> str:
        return f"  {self.path}:\n    recorded: {_show(self.recorded)}\n    live:     {_show(self.live)}"


@dataclass
class VerifyReport:
    cassette: str
    target: str
    checked: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def text(self) -> str:
        """A readable diff: each request that differs, then each differing field, recorded vs live."""
        if self.ok:
            return f"{self.cassette}: {self.checked} requests, all answered as recorded by {self.target}"
        count = len(self.differences)
        lines = [
            f"{self.cassette}: {count} difference{'' if count == 1 else 's'} in {self.checked} requests "
            f"against {self.target}"
        ]
        last = None
        for difference in self.differences:
            if difference.where != last:
                lines.append(difference.where)
                last = difference.where
            lines.append(str(difference))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(missing)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 300 else text[:297] + "..."


# ---- comparing --------------------------------------------------------------------------------------------
def diff(recorded: Any, live: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """``(path, recorded, live)`` for every difference, by the rules above (missing: a sentinel)."""
    found: list[tuple[str, Any, Any]] = []
    _diff(recorded, live, path, found)
    return found


def _diff(recorded: Any, live: Any, path: str, found: list[tuple[str, Any, Any]]) -> None:
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in sorted(set(recorded) | set(live), key=str):
            if key in IGNORED_IN_RESULTS:
                continue
            here = f"{path}.{key}" if path else str(key)
            a, b = recorded.get(key, _MISSING), live.get(key, _MISSING)
            if key in SUBSTITUTED and a is not _MISSING and b is not _MISSING:
                continue  # present on both sides: the value is the server's to choose
            if a is _MISSING or b is _MISSING:
                found.append((here, a, b))
            else:
                _diff(a, b, here, found)
        return
    if isinstance(recorded, list) and isinstance(live, list):
        keyed_a, keyed_b = _keyed(recorded), _keyed(live)
        if keyed_a is not None and keyed_b is not None:
            _diff_keyed(keyed_a, keyed_b, path, found)
            return
        for i in range(max(len(recorded), len(live))):
            a = recorded[i] if i < len(recorded) else _MISSING
            b = live[i] if i < len(live) else _MISSING
            if a is _MISSING or b is _MISSING:
                found.append((f"{path}[{i}]", a, b))
            else:
                _diff(a, b, f"{path}[{i}]", found)
        return
    if recorded != live or type(recorded) is not type(live):
        found.append((path, recorded, live))


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    for key in ("name", "uri"):
        if items and all(isinstance(i, dict) and isinstance(i.get(key), str) for i in items):
            named = {i[key]: i for i in items}
            if len(named) == len(items):
                return named
    return None


def _diff_keyed(a: dict[str, Any], b: dict[str, Any], path: str, found: list[tuple[str, Any, Any]]) -> None:
    for name in [*a, *(n for n in b if n not in a)]:
        here = f"{path}[{name}]"
        if name not in a or name not in b:
            found.append((here, a.get(name, _MISSING), b.get(name, _MISSING)))
        else:
            _diff(a[name], b[name], here, found)


def _substitutions(recorded: Any, live: Any, into: dict[str, str]) -> None:
    """Remember recorded -> live for the values the server chooses (:data:`SUBSTITUTED`)."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key, value in recorded.items():
            other = live.get(key)
            if key in SUBSTITUTED and isinstance(value, str) and isinstance(other, str):
                into[value] = other
            elif key in live:
                _substitutions(value, other, into)
    elif isinstance(recorded, list) and isinstance(live, list):
        for a, b in zip(recorded, live, strict=False):
            _substitutions(a, b, into)


def _substitute(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, dict):
        return {k: _substitute(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, mapping) for v in value]
    return value


def _outcome(message: dict[str, Any] | None) -> Any:
    if message is None:
        return None
    if "error" in message:
        error = message["error"] if isinstance(message["error"], dict) else {}
        return {"error": {"code": error.get("code"), "message": error.get("message")}}
    return {"result": message.get("result")}


# ---- the run ----------------------------------------------------------------------------------------------
async def verify(
    cassette: str | Path | CassetteFile,
    target: Any,
    *,
    timeout: float = 30.0,
    update: bool = False,
    target_name: str | None = None,
    **client_options: Any,
) -> VerifyReport:
    """Re-send ``cassette``'s requests to ``target`` (what :class:`Client` takes: a Server, a command list,
    a URL) and compare; ``update``: write the live session over the cassette file."""
    file = cassette if isinstance(cassette, CassetteFile) else read_cassette(cassette)
    name = str(cassette) if not isinstance(cassette, CassetteFile) else "cassette"
    report = VerifyReport(name, target_name or _describe(target))
    recorded = exchanges(file.messages)
    answers = _Answers(recorded)
    declared = _client_capabilities(recorded)  # what the recording client declared, so the server
    handlers: dict[str, Any] = {}  # offers the same (server-everything lists tools by capability)
    if "elicitation" in declared:
        handlers["elicitation_handler"] = answers.elicitation
    if "sampling" in declared:
        handlers["sampling_handler"] = answers.sampling
    if "roots" in declared:
        handlers["roots"] = answers.roots
    client = Client(target, era=file.era, timeout=timeout, listen=False, **{**handlers, **client_options})
    async with client:
        recording = None
        if update:
            if isinstance(cassette, CassetteFile):
                raise ValueError("update=True needs a cassette file to write")
            recording = Recording(client, Path(cassette))
            recording.begin()
        try:
            await _run(client, recorded, report, timeout)
        finally:
            if recording is not None:
                recording.stop()
    return report


async def _run(client: Client, recorded: list[Exchange], report: VerifyReport, timeout: float) -> None:
    mapping: dict[str, str] = {}
    last_poll = _last_polls(recorded)
    for exchange in recorded:
        method = exchange.method
        if method in NOT_RESENT:
            continue
        params = _substitute(_without_progress(exchange.params), mapping)
        if method == "tasks/get" and last_poll.get(str(exchange.params.get("taskId"))) is not exchange:
            continue
        if method == "tasks/get":
            live = await _poll(client, params, _recorded_status(exchange), timeout)
        else:
            live = await _send(client, method, params, timeout)
        if exchange.response is None or method == "tasks/list":
            continue
        report.checked += 1
        expected = _outcome(exchange.response)
        _substitutions(expected, live, mapping)
        where = f"#{exchange.index} {exchange.describe(100)}"
        for path, a, b in diff(expected, live):
            report.differences.append(Difference(where, path, a, b))


async def _send(client: Client, method: str, params: dict[str, Any], timeout: float) -> Any:
    try:
        result = await client.connection.request(method, params or None, timeout=timeout)
    except JSONRPCError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    return {"result": result}


async def _poll(client: Client, params: dict[str, Any], status_then: str | None, timeout: float) -> Any:
    """``tasks/get`` until the live task reaches the recorded status or ends (or ``timeout``): that poll
    is what is compared."""
    deadline = time.monotonic() + timeout
    while True:
        live = await _send(client, "tasks/get", params, timeout)
        result = live.get("result") if isinstance(live, dict) else None
        status = result.get("status") if isinstance(result, dict) else None
        if status in TERMINAL or status in (None, status_then) or time.monotonic() >= deadline:
            return live
        interval = result.get("pollInterval") if isinstance(result, dict) else None
        await asyncio.sleep(min(max(float(interval or 100) / 1000, 0.01), 1.0))  # the server's own cadence


def _recorded_status(exchange: Exchange) -> str | None:
    result = exchange.response.get("result") if exchange.response else None
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


def _last_polls(recorded: list[Exchange]) -> dict[str, Exchange]:
    last: dict[str, Exchange] = {}
    for exchange in recorded:
        if exchange.method == "tasks/get":
            last[str(exchange.params.get("taskId"))] = exchange
    return last


def _without_progress(params: dict[str, Any]) -> dict[str, Any]:
    meta = params.get("_meta")
    if not isinstance(meta, dict) or "progressToken" not in meta:
        return params
    rest = {k: v for k, v in meta.items() if k != "progressToken"}
    out = {k: v for k, v in params.items() if k != "_meta"}
    if rest:
        out["_meta"] = rest
    return out


class _Answers:
    """The client's recorded answers to server requests (elicitation, sampling), by method and likeness."""

    def __init__(self, recorded: list[Exchange]) -> None:
        self._by_method: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for exchange in recorded:
            for item in exchange.during:
                method = str(item.message.get("method"))
                answer = item.answer.get("result") if item.answer else None
                if item.is_request and isinstance(answer, dict):
                    key = match_key(method, item.message.get("params"))
                    self._by_method.setdefault(method, []).append((key, answer))

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        choices = self._by_method.get(method, [])
        key = match_key(method, params)
        for recorded_key, answer in choices:
            if recorded_key == key:
                return answer
        if choices:
            return choices[0][1]
        raise JSONRPCError(-32603, f"the cassette has no recorded answer to {method}")

    async def roots(self) -> list[Any]:
        if "roots/list" not in self._by_method:
            return []
        roots = self._answer("roots/list", {}).get("roots")
        return roots if isinstance(roots, list) else []

    async def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._answer("elicitation/create", params)

    async def sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._answer("sampling/createMessage", params)


def _client_capabilities(recorded: list[Exchange]) -> dict[str, Any]:
    for exchange in recorded:
        if exchange.method == "initialize":
            capabilities = exchange.params.get("capabilities")
            return capabilities if isinstance(capabilities, dict) else {}
        meta = exchange.params.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
            found: dict[str, Any] = meta[META_CLIENT_CAPABILITIES]
            return found
    return {}


def _describe(target: Any) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, (list, tuple)):
        return " ".join(str(part) for part in target)
    return getattr(target, "name", None) or type(target).__name__
