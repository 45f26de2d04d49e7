"""Tasks in the notebook: what ``%mcp tasks`` lists and ``%mcp task get|cancel`` reaches.

A call that runs as a task (a tool declared ``taskSupport: required``, or one a 2026 server chose to run as a
task) shows its status on its handle; the notebook also notes every task its calls started, so ``%mcp
tasks`` lists them with their current status (plus, from a 2025-11-25 server that has ``tasks/list``, the
tasks it keeps). A task outlives the kernel that started it: ``%mcp task get SERVER.ID`` fetches the result
of a task started before a restart (its id is on the old output), as long as the server keeps it.

The book is durable for tasks of HTTP servers (a stdio or in-memory server does not outlive the kernel):
their ids are kept per server URL in a 0600 file in Jupyter's data directory (``mcp_notebook/tasks.json``;
``$MCP_NOTEBOOK_TASK_BOOK`` names another file, ``off`` keeps none), so after a kernel restart ``%mcp
tasks`` lists them again for a connection to the same URL, and ``%mcp task get ID`` finds their server.
An entry goes when the task's ttl is over, or when the server no longer knows the task.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...engine.client_tasks import TaskCancelledError
from ...protocol.errors import INVALID_PARAMS, JSONRPCError, MCPError
from ...protocol.session import has_capability
from ...protocol.tasks import TERMINAL
from ..rendering.results import ResultView
from ..rendering.views import TableView
from .connections import Connections
from .policy import LOCAL
from .task_file import TaskFile

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


class TaskCalls(Protocol):
    """What the task commands need of the notebook's call pipeline (``pipeline.Calls``), declared here so
    that the import runs one way (pipeline -> tasks: it keeps the TaskBook; tests/test_layers.py)."""

    task_book: TaskBook
    connections: Connections

    def client(self, server: str) -> SyncClient: ...


class TaskBook:
    """The tasks this notebook's calls started: (server, taskId) -> the tool and the latest task dict; those
    of HTTP servers also in a :class:`TaskFile`, by URL (``url_of(name)``: a connection's URL, or None)."""

    def __init__(
        self, file: TaskFile | None = None, url_of: Callable[[str], str | None] = lambda name: None
    ) -> None:
        self._tasks: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._file = file
        self._url_of = url_of

    def note(self, server: str, tool: str, task: dict[str, Any]) -> None:
        task_id = task.get("taskId")
        if isinstance(task_id, str):
            with self._lock:
                self._tasks[(server, task_id)] = (tool, dict(task))
            url = self._url_of(server)
            if self._file is not None and url is not None:
                self._file.note(url, tool, task)

    def started_here(self, server: str, task_id: str) -> bool:
        """Whether this kernel's calls started the task (not only the file knows it)."""
        with self._lock:
            return (server, task_id) in self._tasks

    def forget(self, server: str, task_id: str) -> None:
        """The server no longer knows the task."""
        with self._lock:
            self._tasks.pop((server, task_id), None)
        url = self._url_of(server)
        if self._file is not None and url is not None:
            self._file.forget(url, task_id)

    def tool_of(self, server: str, task_id: str) -> str | None:
        return next((tool for _s, tool, task in self.entries(server) if task.get("taskId") == task_id), None)

    def entries(
        self, server: str | None = None, names: list[str] | None = None
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """This kernel's tasks, then the file's for the connected servers (``names``, or ``server``)."""
        with self._lock:
            items = list(self._tasks.items())
        found = [(s, tool, task) for (s, _), (tool, task) in items if server is None or s == server]
        if self._file is None:
            return found
        seen = {(s, str(task.get("taskId"))) for s, _tool, task in found}
        for name in [server] if server else names or []:
            url = self._url_of(name)
            if url is None:
                continue
            for tool, task in self._file.tasks(url):
                if (name, str(task.get("taskId"))) not in seen:
                    found.append((name, tool, task))
        return found

    def server_of(self, task_id: str, names: list[str]) -> str | None:
        """The connected server a task belongs to, by the book (None: not known)."""
        return next(
            (s for s, _tool, task in self.entries(None, names) if task.get("taskId") == task_id), None
        )


def _row(server: str, tool: str | None, task: dict[str, Any]) -> dict[str, Any]:
    return {
        "server": server,
        "task": task.get("taskId"),
        "tool": tool or "",
        "status": task.get("status"),
        "message": task.get("statusMessage") or "",
        "updated": task.get("lastUpdatedAt") or "",
    }


def list_tasks(calls: TaskCalls, server: str | None = None) -> TableView:
    """The tasks of this notebook's calls, refreshed (``tasks/get``), and a 2025-11-25 server's own list."""
    book: TaskBook = calls.task_book
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    notes: list[str] = []
    for name, tool, task in book.entries(server, calls.connections.names()):
        client = calls.client(name)
        # a task from the file is asked about even when it had ended: the server at that URL now may be
        # another one (a port used again), and one that does not know the task makes the book forget it
        if task.get("status") not in TERMINAL or not book.started_here(name, str(task.get("taskId"))):
            try:
                task = client.runtime.run(client.aio.get_task(str(task["taskId"])))
                book.note(name, tool, task)
            except JSONRPCError as exc:
                if exc.code == INVALID_PARAMS:  # the server no longer knows it (expired, or restarted)
                    book.forget(name, str(task.get("taskId")))
                    continue
                notes.append(f"{name}: task {task.get('taskId')}: {exc}")
            except MCPError as exc:
                notes.append(f"{name}: task {task.get('taskId')}: {exc}")
        rows[(name, str(task.get("taskId")))] = _row(name, tool, task)
    for name in [server] if server else calls.connections.names():
        client = calls.client(name)
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


def _split(calls: TaskCalls, target: str, server: str | None) -> tuple[str, str]:
    if server is None and "." in target:
        name, _, task_id = target.partition(".")
        if name in calls.connections.names():
            return name, task_id
    if server is None:
        server = calls.task_book.server_of(
            target, calls.connections.names()
        )  # a task of the book, any kernel's
    if server is None:
        names = [
            n for n in calls.connections.names() if n != LOCAL
        ] or calls.connections.names()  # remote first
        if len(names) != 1:
            raise ValueError(
                f"which server? use SERVER.TASK_ID or --server (connections: {', '.join(names)})"
            )
        server = names[0]
    return server, target


def get_task(calls: TaskCalls, target: str, server: str | None = None) -> Any:
    """The result of a task (waits until it is done), or its status when it failed or was cancelled."""
    name, task_id = _split(calls, target, server)
    client = calls.client(name)
    tool = calls.task_book.tool_of(name, task_id)
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


def cancel_task(calls: TaskCalls, target: str, server: str | None = None) -> TableView:
    name, task_id = _split(calls, target, server)
    client = calls.client(name)
    client.runtime.run(client.aio.cancel_task(task_id))
    task = client.runtime.run(client.aio.get_task(task_id))
    return TableView([_row(name, calls.task_book.tool_of(name, task_id), task)], COLUMNS, title="Task")
