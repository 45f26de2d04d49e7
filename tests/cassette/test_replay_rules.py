"""The replay's documented matching rules (docs/cassettes.md), each on the wire: a raw client sends JSON-RPC
to a :class:`Cassette` through the memory transport and reads exactly what comes back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import Cassette, Client
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.memory import memory_pair
from tests.cassette.test_record_replay import record

WAIT = 10.0


class Raw:
    """A bare JSON-RPC peer: send dicts, read dicts (bounded waits)."""

    def __init__(self, cassette: Cassette) -> None:
        self.client, server = memory_pair()
        self.task = asyncio.get_running_loop().create_task(cassette.serve(server))

    async def send(self, message: dict[str, Any]) -> None:
        await self.client.send(json.dumps(message))

    async def read(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(await asyncio.wait_for(self.client.receive(), WAIT))
        return value

    async def until_answer(self, request_id: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages before the answer to ``request_id``, and the answer."""
        before = []
        while True:
            message = await self.read()
            if message.get("id") == request_id and "method" not in message:
                return before, message
            before.append(message)

    async def close(self) -> None:
        await self.client.aclose()
        await asyncio.wait_for(self.task, WAIT)


@pytest.fixture
async def legacy(tmp_path: Path) -> Cassette:
    path = tmp_path / "legacy.jsonl"
    await record(path, "legacy")
    return Cassette(path)


def call(request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_ids_and_progress_tokens_are_the_askers(legacy: Cassette) -> None:
    raw = Raw(legacy)
    await raw.send(call("my-own-id", "count", {"n": 3}, {"progressToken": "tok-X"}))
    before, answer = await raw.until_answer("my-own-id")
    assert answer["result"]["structuredContent"] == {"result": 3}
    assert [m["params"]["progressToken"] for m in before] == ["tok-X"] * 3
    await raw.send(call(7, "count", {"n": 3}))  # no progressToken asked: no progress sent
    before, answer = await raw.until_answer(7)
    assert before == [] and answer["result"]["structuredContent"] == {"result": 3}
    await raw.close()


async def test_redacted_values_match_anything_and_errors_do_not_echo_secrets(legacy: Cassette) -> None:
    raw = Raw(legacy)
    await raw.send(call(1, "login", {"user": "ada", "password": "another-secret"}))
    _, answer = await raw.until_answer(1)
    assert answer["result"]["content"][0]["text"] == "ada signed in"
    await raw.send(call(2, "login", {"user": "bob", "password": "bobs-secret"}))
    _, missed = await raw.until_answer(2)
    assert missed["error"]["code"] == -32602
    assert "bobs-secret" not in json.dumps(missed)
    assert "nearest recorded request is #" in missed["error"]["message"]
    await raw.close()


def write(path: Path, messages: list[tuple[str, dict[str, Any]]]) -> Path:
    header = {
        "cassette": "mcp-notebook",
        "version": 1,
        "era": "legacy",
        "protocolVersion": "2025-11-25",
        "server": {"name": "x", "serverInfo": {"name": "x", "version": "1"}, "capabilities": {}},
    }
    rows = [header] + [{"from": sender, "at": 0.0, "message": m} for sender, m in messages]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


async def test_repeats_follow_the_recorded_order_and_initialize_rewinds(tmp_path: Path) -> None:
    """A task's polls come back in recorded order and then stay at the last one."""
    get = {"jsonrpc": "2.0", "method": "tasks/get", "params": {"taskId": "t-1"}}
    statuses = ["working", "working", "completed"]
    messages: list[tuple[str, dict[str, Any]]] = []
    for n, status in enumerate(statuses):
        messages.append(("client", {**get, "id": n}))
        messages.append(
            ("server", {"jsonrpc": "2.0", "id": n, "result": {"taskId": "t-1", "status": status}})
        )
    raw = Raw(Cassette(write(tmp_path / "polls.jsonl", messages)))
    seen = []
    for n in range(5):
        await raw.send({**get, "id": f"poll-{n}"})
        _, answer = await raw.until_answer(f"poll-{n}")
        seen.append(answer["result"]["status"])
    assert seen == [*statuses, "completed", "completed"]
    await raw.send({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {}})
    await raw.until_answer("i")
    await raw.send({**get, "id": "again"})
    _, answer = await raw.until_answer("again")
    assert answer["result"]["status"] == "working"  # a new client: the order starts again
    await raw.close()


async def test_handshake_and_ping_without_a_recording_of_them(tmp_path: Path) -> None:
    path = write(tmp_path / "bare.jsonl", [])
    raw = Raw(Cassette(path))
    await raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    _, answer = await raw.until_answer(1)
    assert answer["result"]["serverInfo"] == {"name": "x", "version": "1"}
    await raw.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    _, pong = await raw.until_answer(2)
    assert pong["result"] == {}
    await raw.send({"jsonrpc": "2.0", "id": 3, "method": "server/discover"})
    _, refused = await raw.until_answer(3)
    assert refused["error"]["code"] == -32601  # a legacy cassette: the probe falls back to initialize
    await raw.close()


async def test_an_unrecorded_listen_is_acknowledged_quiet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 19 (workshop 09 in JupyterLab): a recording that began after the connection opened its
    subscriptions/listen stream holds no listen; a client on the replay printed "subscriptions/listen
    failed, no change notifications: no recorded answer ..." under the cell (-32601). The replay now
    acknowledges the stream as carrying nothing and leaves it open (failed before: an error answer)."""
    path = write(tmp_path / "modern.jsonl", [])
    header = json.loads(path.read_text().splitlines()[0])
    header.update(era="modern", protocolVersion="2026-07-28")
    header["server"]["capabilities"] = {"tools": {"listChanged": True}}
    path.write_text(json.dumps(header) + "\n")
    raw = Raw(Cassette(path))
    listen = {"notifications": {"toolsListChanged": True}}
    await raw.send({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": listen})
    ack = await raw.read()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {}
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"
    await raw.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert await raw.read() == {"jsonrpc": "2.0", "id": 2, "result": {}}  # the listen got no answer
    await raw.close()
    with caplog.at_level("WARNING"):
        async with Client(Cassette(path)) as client:
            assert client.is_modern
            assert client.server_capabilities == {"tools": {"listChanged": True}}
    assert "subscriptions/listen failed" not in caplog.text


class _SlowToStop:
    """A transport whose one answer never goes out and whose send, once cancelled, ends only when told."""

    def __init__(self) -> None:
        self.sending, self.stopping, self.stop = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self.requests = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})]

    async def receive(self) -> str:
        if self.requests:
            return self.requests.pop()
        await self.sending.wait()
        raise TransportClosed("the client hung up")

    async def send(self, message: str, *, related_id: Any = None) -> None:
        self.sending.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.stopping.set()
            await self.stop.wait()
            raise

    async def aclose(self) -> None:
        pass


async def test_a_cancel_of_serve_while_it_stops_its_requests_is_not_lost(tmp_path: Path) -> None:
    """serve() ends when its client hangs up, cancelling the requests it still runs and awaiting them; a
    cancel aimed at serve's own task meanwhile (its caller giving up) was swallowed with theirs
    (contextlib.suppress(CancelledError) around each await): serve returned as if nothing had happened."""
    transport = _SlowToStop()
    serving = asyncio.get_running_loop().create_task(
        Cassette(write(tmp_path / "b.jsonl", [])).serve(transport)
    )
    await asyncio.wait_for(transport.stopping.wait(), WAIT)  # serve's clean-up awaits the stopping request
    serving.cancel()
    transport.stop.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(serving, WAIT)
