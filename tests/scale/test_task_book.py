"""The notebook's durable task book: a task of an HTTP server, started in one kernel, is listed by ``%mcp
tasks`` and fetched by ``%mcp task get ID`` in the next (a restart: a fresh shell that remembers nothing),
through a 0600 file; an entry goes with the task's ttl, or when the server no longer knows the task."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.notebook.calls.task_file import TaskFile, expires_at
from tests.notebook import ipyshell
from tests.notebook.test_notebook_tasks import approved, mcp, until
from tests.scale._services import worker

shell_factory = ipyshell.shell_factory
pytestmark = pytest.mark.timeout(120)


def test_task_ids_survive_a_kernel_restart(
    shell_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    book = tmp_path / "jupyter" / "mcp_notebook" / "tasks.json"
    monkeypatch.setenv("MCP_NOTEBOOK_TASK_BOOK", str(book))
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    with worker(tmp_path / "w.log", str(tmp_path / "tasks.db")) as (url, _):
        first = shell_factory()
        first.user_ns["mcp"].connect("w", url)
        handle = approved(first, "call w.slow seconds=1")
        task_id = until("the task is created", lambda: handle.task)["taskId"]
        assert stat.S_IMODE(book.stat().st_mode) == 0o600
        assert [e["task"]["taskId"] for e in json.loads(book.read_text())["tasks"]] == [task_id]
        for stale in ("working", "completed"):  # tasks of another server once at this URL
            entry = {"taskId": f"unknown-{stale}", "status": stale, "ttl": 60_000}
            TaskFile(book).note(url, "slow", {**entry, "createdAt": "2099-01-01T00:00:00Z"})

        second = shell_factory()  # the restarted kernel: nothing in memory
        second.user_ns["mcp"].connect("w", url)
        rows = mcp(second, "tasks").rows
        assert [(r["server"], r["task"], r["tool"]) for r in rows] == [("w", task_id, "slow")]
        # the server did not know the stale ones, finished or not: the book forgot them
        assert [e["task"]["taskId"] for e in json.loads(book.read_text())["tasks"]] == [task_id]
        view = mcp(second, f"task get {task_id}")  # its server found by the book
        assert "slept 1" in view._repr_mimebundle_()["text/plain"]
        again = second.user_ns["mcp"].task(task_id)  # the same from Python
        assert "slept 1" in again._repr_mimebundle_()["text/plain"]


def test_an_entry_goes_with_the_tasks_ttl(tmp_path: Path) -> None:
    book = TaskFile(tmp_path / "tasks.json")
    now = time.time()
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 10))
    book.note("http://a/mcp", "t", {"taskId": "old", "createdAt": created, "ttl": 5_000})  # ended 5 s ago
    book.note("http://a/mcp", "t", {"taskId": "new", "createdAt": created, "ttlMs": 60_000})
    book.note("http://a/mcp", "t", {"taskId": "kept", "createdAt": created, "ttl": None})
    book.note("http://b/mcp", "t", {"taskId": "other", "createdAt": created, "ttl": None})
    assert [task["taskId"] for _tool, task in book.tasks("http://a/mcp")] == ["new", "kept"]
    assert "old" not in (tmp_path / "tasks.json").read_text()  # and it is not written again
    assert expires_at({"createdAt": "2026-01-01T00:00:00Z", "ttlMs": 1000}) == pytest.approx(1767225601.0)
