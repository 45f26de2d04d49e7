"""Workers sharing a Redis task store (DESIGN decision 21), as real ``mcp-notebook serve`` processes on
127.0.0.1 with a private redis-server; every wait bounded.

- A ``tasks/cancel`` answered by worker B stops the tool running on worker A, through Redis pub/sub: the
  workers' store polls and lease renewals are set 10 minutes apart, so nothing else could carry it.
- A ``subscriptions/listen`` stream on B hears a status change made on A.
- A worker SIGKILLed mid-task: its task fails, with an error that says why, within the bound, as another
  worker sees it (SQLite and Redis; the lease).
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from mcp_notebook.protocol import era
from mcp_notebook.protocol.tasks import EXTENSION
from tests.scale._services import worker
from tests.tasks.test_workers import Modern, until

pytestmark = pytest.mark.timeout(120)
V = "2026-07-28"
QUIET = {"FIXTURE_WATCH_INTERVAL": "600", "FIXTURE_LEASE_SECONDS": "2400"}  # no polls, no renewals
WAIT = 20.0


async def test_a_cancel_on_one_worker_stops_the_tool_on_another(tmp_path: Path, redis_url: str) -> None:
    mark = tmp_path / "stopped"
    with (
        worker(tmp_path / "a.log", redis_url, env=QUIET) as (a, process_a),
        worker(tmp_path / "b.log", redis_url, env=QUIET) as (b, _),
    ):
        async with aiohttp.ClientSession() as http:
            client = Modern(http)
            created = await client.call(
                a, "tools/call", {"name": "until_cancelled", "arguments": {"mark": str(mark)}}
            )
            assert created["resultType"] == "task" and created["status"] == "working"
            await client.call(b, "tasks/cancel", {"taskId": created["taskId"]})

            async def stopped() -> str | None:
                return mark.read_text() if mark.exists() else None

            assert (
                await until("the tool on A sees the cancel made on B", stopped)
                == f"stopped in {process_a.pid}"
            )
            task = await client.call(a, "tasks/get", {"taskId": created["taskId"]})
            assert task["status"] == "cancelled"


async def test_a_listen_stream_on_one_worker_hears_another(tmp_path: Path, redis_url: str) -> None:
    with (
        worker(tmp_path / "a.log", redis_url, env=QUIET) as (a, _),
        worker(tmp_path / "b.log", redis_url, env=QUIET) as (b, _),
    ):
        async with aiohttp.ClientSession() as http:
            client = Modern(http)
            mark = str(tmp_path / "stopped")
            created = await client.call(
                a, "tools/call", {"name": "until_cancelled", "arguments": {"mark": mark}}
            )
            task_id = created["taskId"]
            params = era.modern_params(
                {"notifications": {"taskIds": [task_id]}},
                V,
                {"extensions": {EXTENSION: {}}},
                {"name": "listen-test", "version": "1"},
            )
            message = {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": params}
            headers = {
                **era.http_headers("subscriptions/listen", params),
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            }
            async with http.post(
                b, json=message, headers=headers, timeout=aiohttp.ClientTimeout(WAIT)
            ) as stream:
                events = _sse(stream)
                ack = await asyncio.wait_for(anext(events), WAIT)
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                assert ack["params"]["notifications"]["taskIds"] == [task_id]
                now = await asyncio.wait_for(anext(events), WAIT)  # the catch-up: the state as it is
                assert now["params"]["taskId"] == task_id and now["params"]["status"] == "working"
                await client.call(a, "tasks/cancel", {"taskId": task_id})  # on A; B's stream hears it
                heard = await asyncio.wait_for(anext(events), WAIT)
    assert heard["method"] == "notifications/tasks"
    assert heard["params"]["taskId"] == task_id and heard["params"]["status"] == "cancelled"
    assert heard["params"]["_meta"]  # tagged with the listen request's id


async def _sse(response: aiohttp.ClientResponse) -> Any:
    async for raw in response.content:
        line = raw.decode().strip()
        if line.startswith("data:"):
            yield json.loads(line[5:])


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_a_killed_workers_task_fails_within_the_bound(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    store = str(tmp_path / "tasks.db") if kind == "sqlite" else request.getfixturevalue("redis_url")
    lease = {"FIXTURE_LEASE_SECONDS": "4"}  # renewed every second (2 s: a loaded CI machine stalled one)
    with (
        worker(tmp_path / "a.log", store, env=lease) as (a, process_a),
        worker(tmp_path / "b.log", store, env=lease) as (b, _),
    ):
        async with aiohttp.ClientSession() as http:
            client = Modern(http)
            created = await client.call(a, "tools/call", {"name": "slow", "arguments": {"seconds": 60}})
            task_id = created["taskId"]
            assert (await client.call(b, "tasks/get", {"taskId": task_id}))["status"] == "working"
            process_a.send_signal(signal.SIGKILL)  # no shutdown: nothing marks the task
            process_a.wait(WAIT)

            async def failed() -> dict[str, Any] | None:
                task = await client.call(b, "tasks/get", {"taskId": task_id})
                return task if task["status"] != "working" else None

            # the bound: the lease (4 s) after its last renewal; 10 s promised, room for a busy machine
            task = await until("B sees the dead worker's task fail", failed, timeout=15.0)
    assert task["status"] == "failed"
    assert "the worker running the task stopped" in task["error"]["message"]
