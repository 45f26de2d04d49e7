"""Tasks in the notebook: what ``%mcp tasks`` lists and ``%mcp task get|cancel`` reaches.

A call that runs as a task (a tool declared ``taskSupport: required``, or one a 2026 server chose to run as a
task) shows its status on its handle; the notebook also notes every task its calls started, so ``%mcp
tasks`` lists them with their current status (plus, from a 2025-11-25 server that has ``tasks/list``, the
tasks it keeps). A task outlives the kernel that started it: ``%mcp task get SERVER.ID`` fetches the result
of a task started before a restart (its id is on the old output), as long as the server keeps it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

from ...engine.client_tasks import TaskCancelledError
from ...protocol.errors import JSONRPCError, MCPError
from ...protocol.session import has_capability
from ...protocol.tasks import TERMINAL
from ..rendering.results import ResultView
from ..rendering.views import TableView
from .policy import LOCAL

if TYPE_CHECKING:
    from ...engine.sync import SyncClient

__all__ = ["TaskBook", "cancel_task", "get_task", "list_tasks", "task_line"]

COLUMNS = ["server", "task", "tool", "status", "message", "updated"]


def task_line(task: dict[str, Any]) -> str:
    """One line for a handle: ``task 1a2b3c4d…: working (message)``."""
    task_id = str(task.get("taskId", "?"))
    line = f"task {task_id}: {task.get('status', '?')}"
    message = task.get("statusMessage")
    return f"{line} ({message})" if message else line


class NotebookMCP(Protocol):
    """What the task commands need from the notebook's ``mcp`` object (``api.NotebookMCP``), declared here
    so that the import runs one way (api -> tasks; tests/test_layers.py)."""

    task_book: TaskBook

    def _client(self, name: str) -> SyncClient: ...

    def connections(self) -> list[str]: ...


class TaskBook:
    """The tasks this notebook's calls started: (server, taskId) -> the tool and the latest task dict."""

    def __init__(self) -> None:
        self._tasks: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def note(self, server: str, tool: str, task: dict[str, Any]) -> None:
        task_id = task.get("taskId")
        if isinstance(task_id, str):
            with self._lock:
                self._tasks[(server, task_id)] = (tool, dict(task))

    def tool_of(self, server: str, task_id: str) -> str | None:
        with self._lock:
            known = self._tasks.get((server, task_id))
        return known[0] if known else None

    def entries(self, server: str | None = None) -> list[tuple[str, str, dict[str, Any]]]:
        with self._lock:
            items = list(self._tasks.items())
        return [(s, tool, task) for (s, _), (tool, task) in items if server is None or s == server]


def _row(server: str, tool: str | None, task: dict[str, Any]) -> dict[str, Any]:
    return {
        "server": server,
        "task": task.get("taskId"),
        "tool": tool or "",
        "status": task.get("status"),
        "message": task.get("statusMessage") or "",
        "updated": task.get("lastUpdatedAt") or "",
    }


def list_tasks(api: NotebookMCP, server: str | None = None) -> TableView:
    """The tasks of this notebook's calls, refreshed (``tasks/get``), and a 2025-11-25 server's own list."""
    book: TaskBook = api.task_book
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    notes: list[str] = []
    for name, tool, task in book.entries(server):
        client = api._client(name)
        if task.get("status") not in TERMINAL:
            try:
                task = client.runtime.run(client.aio.get_task(str(task["taskId"])))
                book.note(name, tool, task)
            except MCPError as exc:
                notes.append(f"{name}: task {task.get('taskId')}: {exc}")
        rows[(name, str(task.get("taskId")))] = _row(name, tool, task)
    for name in [server] if server else api.connections():
        client = api._client(name)
        if client.aio.is_modern or not has_capability(client.server_capabilities, ("tasks", "list")):
            continue
        try:
            listed = client.runtime.run(client.aio.list_tasks())
        except MCPError as exc:
            notes.append(f"{name}: tasks/list failed: {exc}")
            continue
        for task in listed:
            key = (name, str(task.get("taskId")))
            rows.setdefault(key, _row(name, book.tool_of(*key), task))
    if not rows:
        notes.append("no tasks yet: a call runs as a task when its tool needs one or the server decides so")
    return TableView(list(rows.values()), COLUMNS, title="Tasks", notes=notes)


def _split(api: NotebookMCP, target: str, server: str | None) -> tuple[str, str]:
    if server is None and "." in target:
        name, _, task_id = target.partition(".")
        if name in api.connections():
            return name, task_id
    if server is None:
        names = [n for n in api.connections() if n != LOCAL] or api.connections()  # remote ones first
        if len(names) != 1:
            raise ValueError(
                f"which server? use SERVER.TASK_ID or --server (connections: {', '.join(names)})"
            )
        server = names[0]
    return server, target


def get_task(api: NotebookMCP, target: str, server: str | None = None) -> Any:
    """The result of a task (waits until it is done), or its status when it failed or was cancelled."""
    name, task_id = _split(api, target, server)
    client = api._client(name)
    tool = api.task_book.tool_of(name, task_id)
    try:
        result = client.runtime.run(client.aio.task_result(task_id))
    except TaskCancelledError:
        return TableView(
            [_row(name, tool, {"taskId": task_id, "status": "cancelled"})], COLUMNS, title="Task"
        )
    except JSONRPCError as exc:
        task = client.runtime.run(client.aio.get_task(task_id))
        notes = [f"{exc.message} (JSON-RPC error {exc.code})"]
        return TableView([_row(name, tool, task)], COLUMNS, title="Task", notes=notes)
    title = f"{name}.{tool} (task {task_id})" if tool else f"{name}: task {task_id}"
    return ResultView(result, title=title)


def cancel_task(api: NotebookMCP, target: str, server: str | None = None) -> TableView:
    name, task_id = _split(api, target, server)
    client = api._client(name)
    client.runtime.run(client.aio.cancel_task(task_id))
    task = client.runtime.run(client.aio.get_task(task_id))
    return TableView([_row(name, api.task_book.tool_of(name, task_id), task)], COLUMNS, title="Task")
