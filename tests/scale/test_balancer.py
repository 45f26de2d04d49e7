"""A real load balancer (Debian's HAProxy, with the README's config: examples/scale/haproxy.cfg) in front
of three ``mcp-notebook serve --http`` workers sharing a Redis task store and a state key. Loopback only,
bounded in count and time.

- 2026-07-28 requests are spread round-robin (no stickiness) and still work: MRTR retries and task polls
  land on any worker; 2025-11-25 sessions stick to the worker that issued their ``Mcp-Session-Id``.
- Under load (4 clients x 50 operations), one worker SIGKILLed mid-run: every operation is answered, or
  (only what was in flight on the killed worker) fails with the balancer's 502 or a connection closed
  mid-answer; every task created ends (completed, or failed with the lease's error); the survivors carry
  on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Client
from mcp_notebook.protocol import era
from mcp_notebook.protocol.tasks import EXTENSION
from tests.interop._peers import free_port
from tests.scale._services import haproxy, worker

pytestmark = pytest.mark.timeout(180)
V = "2026-07-28"
WAIT = 30.0
LEASE = {"FIXTURE_LEASE_SECONDS": "4"}  # renewed every second


class Dropped(Exception):
    """What a call in flight on a worker that died gets: the balancer's 502/503 (the worker died before
    answering) or the connection closed mid-answer (it died while streaming it)."""


class Stateless:
    """2026-07-28 requests through the balancer: each one stands alone."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http, self.url, self.next_id = http, url, 0

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = {"elicitation": {}, "extensions": {EXTENSION: {}}}
        body = era.modern_params(params, V, capabilities, {"name": "balancer-test", "version": "1"})
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": body}
        headers = {
            **era.http_headers(method, body),
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        try:
            async with self.http.post(
                self.url, json=message, headers=headers, timeout=aiohttp.ClientTimeout(WAIT)
            ) as got:
                if got.status in (502, 503):
                    raise Dropped(f"HTTP {got.status} from the balancer")
                assert got.status == 200, (got.status, await got.text())
                text = await got.text()
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError) as exc:
            raise Dropped(f"the connection closed mid-answer: {exc!r}") from exc
        for line in text.splitlines():
            if line.startswith("data:") and f'"id":{self.next_id}' in line.replace(" ", ""):
                text = line[5:]
        answer = json.loads(text)
        assert "error" not in answer, answer["error"]
        result: dict[str, Any] = answer["result"]
        return result


@contextlib.contextmanager
def cluster(
    tmp_path: Path, store: str, n: int = 3, env: dict[str, str] | None = None
) -> Iterator[tuple[str, list[Any]]]:
    balancer, ports = free_port(), [free_port() for _ in range(n)]
    public = ("--allowed-host", f"127.0.0.1:{balancer}")  # the Host header clients send the balancer
    with contextlib.ExitStack() as stack:
        processes = [
            stack.enter_context(
                worker(tmp_path / f"w{i}.log", store, *public, port=port, env={**LEASE, **(env or {})})
            )[1]
            for i, port in enumerate(ports)
        ]
        url = stack.enter_context(haproxy(tmp_path / "haproxy", balancer, ports))
        yield url, processes


async def test_round_robin_for_2026_sticky_sessions_for_2025(tmp_path: Path, redis_url: str) -> None:
    with cluster(tmp_path, redis_url) as (url, processes):
        pids = {p.pid for p in processes}
        async with aiohttp.ClientSession() as http:
            client = Stateless(http, url)
            seen = [
                (await client.call("tools/call", {"name": "pid"}))["structuredContent"]["result"]
                for _ in range(6)
            ]
            assert set(seen) == pids  # round-robin: each of the three answered

            first = await client.call("tools/call", {"name": "greet"})  # MRTR: the retry lands elsewhere
            retry = {
                "name": "greet",
                "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first["requestState"],
            }
            assert (await client.call("tools/call", retry))["content"][0]["text"].startswith(
                "Hello, Ada from "
            )

        async with Client(url, era="legacy") as legacy:  # one Mcp-Session-Id: one worker
            answers = [await legacy.call_tool("pid") for _ in range(6)]
            assert len({a["structuredContent"]["result"] for a in answers}) == 1


async def test_a_worker_killed_under_load_loses_nothing(tmp_path: Path, redis_url: str) -> None:
    clients, operations = 4, 50
    with cluster(tmp_path, redis_url) as (url, processes):
        victim = processes[1]
        done = 0
        kill_at = clients * operations // 3
        killed = asyncio.Event()
        failures: list[Dropped] = []
        tasks: dict[str, dict[str, Any]] = {}
        after_kill: set[int] = set()

        async def operation(client: Stateless, i: int) -> None:
            if i % 5 == 0:  # a task: created anywhere, polled anywhere, until it ends
                created = await client.call("tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
                task_id = created["taskId"]
                tasks[task_id] = created
                while tasks[task_id]["status"] in ("working", "input_required"):
                    with contextlib.suppress(Dropped):  # a poll that hit the dying worker: poll again
                        tasks[task_id] = await client.call("tasks/get", {"taskId": task_id})
                    await asyncio.sleep(0.05)
            elif i % 5 == 1:  # MRTR: two requests, any two workers
                first = await client.call("tools/call", {"name": "greet"})
                retry = {
                    "name": "greet",
                    "inputResponses": {"name": {"action": "accept", "content": {"name": f"c{i}"}}},
                    "requestState": first["requestState"],
                }
                answer = await client.call("tools/call", retry)
                assert answer["content"][0]["text"].startswith(f"Hello, c{i} from ")
            else:
                answer = await client.call("tools/call", {"name": "pid"})
                if killed.is_set():
                    after_kill.add(answer["structuredContent"]["result"])

        async def one_client(k: int) -> None:
            nonlocal done
            async with aiohttp.ClientSession() as http:
                client = Stateless(http, url)
                for i in range(operations):
                    try:
                        await operation(client, i)
                    except Dropped as exc:
                        failures.append(exc)
                    done += 1
                    if done == kill_at:
                        victim.send_signal(signal.SIGKILL)  # mid-run, with the others' calls in flight
                        killed.set()

        await asyncio.wait_for(asyncio.gather(*(one_client(k) for k in range(clients))), 150)

    assert killed.is_set() and victim.poll() == -signal.SIGKILL
    # only what was in flight on the killed worker failed, each with the balancer's clear answer
    assert len(failures) <= clients, failures
    # no task lost: each one created ended, completed or failed because its worker died
    assert len(tasks) >= clients * operations // 5 - clients
    for task_id, task in tasks.items():
        assert task["status"] in ("completed", "failed"), (task_id, task)
        if task["status"] == "failed":
            assert "the worker running the task stopped" in task["error"]["message"], task
    # the survivors carried on, and only they
    assert after_kill and victim.pid not in after_kill
