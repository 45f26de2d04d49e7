"""Past one machine (DESIGN decision 18): ``mcp-notebook serve`` processes sharing the requestState key and
the SQLite task store. Real processes, real HTTP on 127.0.0.1; every wait bounded.

- Two workers on two ports (what any HTTP load balancer does): a client alternates between them; an MRTR
  retry and the task polls land on the other worker and succeed; ``tasks/update`` on one worker answers
  a task running on the other.
- The SQLite store survives a server restart: a task finished before the restart is still there after.
- ``--workers 2``: two processes on one port (SO_REUSEPORT) answer, and stop together.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from mcp_notebook import Client
from mcp_notebook.protocol import era
from mcp_notebook.protocol.tasks import EXTENSION
from tests.interop._peers import ROOT, _stop, _wait_listening, free_port, serve_http
from tests.waiting import wait_until_async

pytestmark = pytest.mark.timeout(120)
FIXTURE = Path(__file__).with_name("_fixture.py")
KEY = "a shared secret for the workers, 32+ chars"
V = "2026-07-28"
WAIT = 20.0


def serve(
    log: Path, *options: str, port: int | None = None, key: str | None = KEY
) -> contextlib.AbstractContextManager[str]:
    """``python -m mcp_notebook serve _fixture.py --http 127.0.0.1:PORT OPTIONS``; yields the URL."""
    state = ["--state-key", key] if key is not None else []
    return serve_http(FIXTURE, log, *state, *options, port=port)


class Modern:
    """Raw 2026-07-28 requests (each one stateless), sent to whichever worker we name."""

    def __init__(self, http: aiohttp.ClientSession, tasks: bool = True) -> None:
        self.http = http
        self.tasks = tasks
        self.next_id = 0

    async def call(self, url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"elicitation": {}}
        if self.tasks:
            capabilities["extensions"] = {EXTENSION: {}}
        body = era.modern_params(params, V, capabilities, {"name": "worker-test", "version": "1"})
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": body}
        headers = {
            **era.http_headers(method, body),
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        async with self.http.post(
            url, json=message, headers=headers, timeout=aiohttp.ClientTimeout(WAIT)
        ) as got:
            text = await got.text()
        for line in text.splitlines():  # an SSE answer: the data line with our id
            if line.startswith("data:") and f'"id":{self.next_id}' in line.replace(" ", ""):
                text = line[5:]
        answer = json.loads(text)
        if "error" in answer:
            raise AssertionError(f"{method} on {url}: {answer['error']}")
        result: dict[str, Any] = answer["result"]
        return result


async def until(what: str, check: Any, timeout: float = WAIT) -> Any:
    return await wait_until_async(check, what, timeout)


async def test_two_workers_alternate(tmp_path: Path) -> None:
    store = str(tmp_path / "tasks.db")
    with (
        serve(tmp_path / "a.log", "--task-store", store) as a,
        serve(tmp_path / "b.log", "--task-store", store) as b,
    ):
        async with aiohttp.ClientSession() as http:
            client = Modern(http)
            pid_a = (await client.call(a, "tools/call", {"name": "pid"}))["structuredContent"]["result"]
            pid_b = (await client.call(b, "tools/call", {"name": "pid"}))["structuredContent"]["result"]
            assert pid_a != pid_b

            # MRTR: round 1 on A, the retry (with A's sealed requestState) on B
            first = await client.call(a, "tools/call", {"name": "greet"})
            assert first["resultType"] == "input_required" and "name" in first["inputRequests"]
            retry = {
                "name": "greet",
                "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first["requestState"],
            }
            done = await client.call(b, "tools/call", retry)
            assert done["content"][0]["text"] == f"Hello, Ada from {pid_b}"

            # a task created on A, polled on B until done (A did the work)
            created = await client.call(a, "tools/call", {"name": "slow", "arguments": {"seconds": 0.3}})
            assert created["resultType"] == "task"
            task_id = created["taskId"]

            async def finished() -> dict[str, Any] | None:
                task = await client.call(b, "tasks/get", {"taskId": task_id})
                return task if task["status"] == "completed" else None

            task = await until("the task polled on B completes", finished)
            assert task["result"]["content"][0]["text"] == f"slept 0.3 in {pid_a}"

            # a task waiting for input on A, answered through B, polled on A
            created = await client.call(a, "tools/call", {"name": "confirm"})
            task_id = created["taskId"]

            async def waiting() -> dict[str, Any] | None:
                task = await client.call(b, "tasks/get", {"taskId": task_id})
                return task if task["status"] == "input_required" else None

            task = await until("the task waits for input", waiting)
            assert list(task["inputRequests"]) == ["go"]
            ack = await client.call(
                b,
                "tasks/update",
                {"taskId": task_id, "inputResponses": {"go": {"action": "accept", "content": {"ok": True}}}},
            )
            assert ack["resultType"] == "complete"

            async def answered() -> dict[str, Any] | None:
                task = await client.call(a, "tasks/get", {"taskId": task_id})
                return task if task["status"] == "completed" else None

            task = await until("the answered task completes", answered)
            assert task["result"]["content"][0]["text"] == f"ok=True in {pid_a}"

            # a cancel on B stops a task running on A
            created = await client.call(a, "tools/call", {"name": "slow", "arguments": {"seconds": 30}})
            await client.call(b, "tasks/cancel", {"taskId": created["taskId"]})
            task = await client.call(a, "tasks/get", {"taskId": created["taskId"]})
            assert task["status"] == "cancelled"


async def test_without_a_shared_key_the_retry_fails(tmp_path: Path) -> None:
    """The control for the test above: each worker with its own random key rejects the other's state."""
    with serve(tmp_path / "a.log", key=None) as a, serve(tmp_path / "b.log", key=None) as b:
        async with aiohttp.ClientSession() as http:
            client = Modern(http)
            first = await client.call(a, "tools/call", {"name": "greet"})
            retry = {
                "name": "greet",
                "inputResponses": {"name": {"action": "accept"}},
                "requestState": first["requestState"],
            }
            with pytest.raises(AssertionError, match="tampered"):
                await client.call(b, "tools/call", retry)


async def test_sqlite_store_survives_a_restart(tmp_path: Path) -> None:
    """2025-11-25 and 2026 tasks finished before a restart are still there after it (same file), for the
    same caller: a task is bound to its principal, here the bearer token (an anonymous HTTP session is its
    own principal and ends with the restart)."""
    store = str(tmp_path / "tasks.db")
    port = free_port()
    auth = {"Authorization": "Bearer restart-token"}
    with serve(tmp_path / "1.log", "--task-store", store, "--token", "restart-token", port=port) as url:
        async with Client(url, era="legacy", headers=auth) as client:  # 2025-11-25
            seen: list[dict[str, Any]] = []
            result = await asyncio.wait_for(
                client.call_tool("slow", {"seconds": 0.1}, task=True, on_task=seen.append), WAIT
            )
            legacy_id = seen[0]["taskId"]
        async with Client(url, era="modern", headers=auth) as client:
            seen = []
            await asyncio.wait_for(client.call_tool("slow", {"seconds": 0.1}, on_task=seen.append), WAIT)
            modern_id = seen[0]["taskId"]
    with serve(tmp_path / "2.log", "--task-store", store, "--token", "restart-token", port=port) as url:
        async with Client(url, era="legacy", headers=auth) as client:
            assert (await client.get_task(legacy_id))["status"] == "completed"
            again = await asyncio.wait_for(client.task_result(legacy_id), WAIT)
            assert again["content"] == result["content"]
            assert legacy_id in {task["taskId"] for task in await client.list_tasks()}
        async with Client(url, era="modern", headers=auth) as client:
            task = await client.get_task(modern_id)
            assert task["status"] == "completed" and task["result"]["content"][0]["text"].startswith(
                "slept 0.1"
            )


async def test_in_memory_store_does_not_survive_a_restart(tmp_path: Path) -> None:
    """The control: without --task-store the task is gone after a restart (-32602)."""
    port = free_port()
    with serve(tmp_path / "1.log", port=port) as url:
        async with Client(url, era="legacy") as client:
            seen: list[dict[str, Any]] = []
            await asyncio.wait_for(
                client.call_tool("slow", {"seconds": 0.05}, task=True, on_task=seen.append), WAIT
            )
    with serve(tmp_path / "2.log", port=port) as url:
        async with Client(url, era="legacy") as client:
            with pytest.raises(Exception, match="Unknown task"):
                await client.get_task(seen[0]["taskId"])


async def test_workers_option_serves_one_port_with_several_processes(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "workers.log"
    command = [sys.executable, "-m", "mcp_notebook", "serve", str(FIXTURE), "--http", f"127.0.0.1:{port}"]
    command += ["--workers", "2", "--task-store", str(tmp_path / "tasks.db")]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + WAIT
        while log.read_text().count("serving") < 2:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        _wait_listening(process, port, log)
        url = f"http://127.0.0.1:{port}/mcp"
        pids = set()
        for _ in range(24):  # a new connection each time: the kernel spreads them over the workers
            async with aiohttp.ClientSession() as http:
                answer = await Modern(http).call(url, "tools/call", {"name": "pid"})
                pids.add(answer["structuredContent"]["result"])
        assert len(pids) == 2, pids
        # a task created through one connection is seen through any other (the shared store)
        async with aiohttp.ClientSession() as http:
            created = await Modern(http).call(
                url, "tools/call", {"name": "slow", "arguments": {"seconds": 0}}
            )
        for _ in range(6):
            async with aiohttp.ClientSession() as http:
                task = await Modern(http).call(url, "tasks/get", {"taskId": created["taskId"]})
                assert task["taskId"] == created["taskId"]
    finally:
        _stop(process)
    assert process.returncode == 0, log.read_text()
    assert "Traceback" not in log.read_text()


async def test_a_task_running_at_shutdown_ends_failed(tmp_path: Path) -> None:
    """Stopping the server ends its running tasks ``failed`` in the shared store, never "working" forever."""
    store = str(tmp_path / "tasks.db")
    port = free_port()
    with serve(tmp_path / "1.log", "--task-store", store, port=port) as url:
        async with aiohttp.ClientSession() as http:
            created = await Modern(http).call(
                url, "tools/call", {"name": "slow", "arguments": {"seconds": 60}}
            )
            assert created["status"] == "working"
    with serve(tmp_path / "2.log", "--task-store", store, port=port) as url:
        async with aiohttp.ClientSession() as http:
            task = await Modern(http).call(url, "tasks/get", {"taskId": created["taskId"]})
    assert task["status"] == "failed" and task["error"]["message"] == "the server stopped the task"


def test_a_worker_that_dies_stops_the_service(tmp_path: Path) -> None:
    """One of ``--workers 2`` failed to start (CI of fd19b8b: "database is locked") and the supervisor went on
    waiting for it, the port served by one worker and nothing said. A worker that ends alone now stops the
    others, and the supervisor says which one and exits with its code."""
    import os

    port = free_port()
    log = tmp_path / "workers.log"
    command = [sys.executable, "-m", "mcp_notebook", "serve", str(FIXTURE), "--http", f"127.0.0.1:{port}"]
    command += ["--workers", "2", "--task-store", str(tmp_path / "tasks.db")]
    env = dict(os.environ, FIXTURE_ONE_DIES=str(tmp_path / "first-started"))
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        code = process.wait(WAIT)
    except subprocess.TimeoutExpired:
        _stop(process)
        raise AssertionError("the supervisor kept running with a dead worker:\n" + log.read_text()) from None
    text = log.read_text()
    assert code == 1, text
    assert "this worker fails to start" in text
    assert "exited with code 1; stopping the others" in text
    pids = text.split("(pids ")[1].split(")")[0].split(", ")
    for pid in pids:  # the survivor was stopped too, not orphaned
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)
