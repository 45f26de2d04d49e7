"""Cassettes against server-everything (the reference TypeScript server, issue 23): record a session over
stdio (plain calls, progress, an image, a task with an ``input_required`` turn answered by elicitation),
replay it offline with the same answers, and verify the cassette against the live server again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import Cassette, Client, Recording
from mcp_notebook.engine.cassette import exchanges, read_cassette
from mcp_notebook.engine.verify import verify
from tests.interop._peers import Peers

pytestmark = pytest.mark.timeout(120)


async def elicit(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada Lovelace", "check": True, "clarification": "all"}}


async def script(c: Client) -> list[Any]:
    seen: list[Any] = []
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    seen.append(await c.call_tool("echo", {"message": "recorded"}))
    seen.append(await c.call_tool("get-sum", {"a": 2, "b": 40}))
    seen.append(await c.call_tool("get-tiny-image", {}))
    long_run = {"duration": 1, "steps": 2}
    seen.append(await c.call_tool("trigger-long-running-operation", long_run, progress_callback=on_progress))
    seen.append(progress)
    statuses: list[str] = []
    seen.append(
        await c.call_tool(
            "simulate-research-query",
            {"topic": "cassettes", "ambiguous": True},
            on_task=lambda task: statuses.append(task["status"]),
        )
    )
    seen.append(statuses[-1])
    return seen


async def test_record_replay_verify_everything(peers: Peers, tmp_path: Path) -> None:
    command = [str(peers.node), str(peers.everything), "stdio"]
    path = tmp_path / "everything.jsonl"
    async with Client(command, elicitation_handler=elicit) as live, Recording(live, path):
        recorded = await script(live)
    assert recorded[4] == [1, 2] and recorded[-1] == "completed"
    assert "Research Report: cassettes" in str(recorded[-2])
    methods = {e.method for e in exchanges(read_cassette(path).messages)}
    assert {"initialize", "tools/list", "tools/call", "tasks/get", "tasks/result"} <= methods

    async with Client(Cassette(path), elicitation_handler=elicit) as offline:  # no process, no network
        assert await script(offline) == recorded

    report = await verify(path, command)
    assert report.ok, report.text()
    assert report.checked >= 6
