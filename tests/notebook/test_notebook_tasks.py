"""Tasks in the notebook: a call handle shows its task's status live, Cancel sends ``tasks/cancel``,
``%mcp tasks`` lists them, ``%mcp task get SERVER.ID`` fetches the result of a task this kernel did not
start (as after a kernel restart). Our server (2026-07-28 with the Tasks extension, the default era) and
server-everything over stdio (2025-11-25, a third-party peer)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcp_notebook import Context, Server
from tests.interop._peers import find_peers
from tests.waiting import wait_until

WAIT = 20.0

pytestmark = pytest.mark.timeout(90)


def mcp(shell: Any, line: str) -> Any:
    return shell.run_line_magic("mcp", line)


def jobs_server(release: threading.Event) -> Server:
    server = Server("jobs")
    server.tasks.poll_interval_ms = 20

    @server.tool(task="required")
    async def build(ctx: Context) -> str:
        """Runs until released (or cancelled)."""
        while not release.is_set():
            ctx.check_cancelled()
            await asyncio.sleep(0.01)
        return "built"

    return server


def until(what: str, check: Any, timeout: float = WAIT) -> Any:
    return wait_until(check, what, timeout)


def approved(shell: Any, line: str) -> Any:
    handle = mcp(shell, line)
    if handle.state == "awaiting-approval":
        handle.approve()
    return handle


def test_handle_shows_task_status_and_tasks_lists_it(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    release = threading.Event()
    shell.user_ns["mcp"].connect("jobs", jobs_server(release))
    handle = approved(shell, "call jobs.build")
    task = until("the task is created", lambda: handle.task)
    assert task["status"] == "working"
    text = handle._repr_mimebundle_()["text/plain"]
    assert f"task {task['taskId']}: working" in text
    rows = mcp(shell, "tasks").rows
    assert [(r["server"], r["task"], r["tool"], r["status"]) for r in rows] == [
        ("jobs", task["taskId"], "build", "working")
    ]
    release.set()
    assert handle._settle(WAIT)
    assert handle.text == "built" and handle.task["status"] == "completed"
    assert f"task {task['taskId']}: completed" in handle._repr_mimebundle_()["text/plain"]
    assert mcp(shell, "tasks").rows[0]["status"] == "completed"


def test_cancel_sends_tasks_cancel(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    release = threading.Event()
    api = shell.user_ns["mcp"]
    api.connect("jobs", jobs_server(release))
    handle = approved(shell, "call jobs.build")
    task = until("the task is created", lambda: handle.task)
    assert handle.cancel()
    assert handle.state == "cancelled"
    assert "tasks/cancel was sent" in handle._repr_mimebundle_()["text/plain"]
    client = api.calls.client("jobs")
    until(
        "tasks/cancel reaches the server",
        lambda: any(e.message.get("method") == "tasks/cancel" for e in client.trace if e.direction == "out"),
    )
    status = until(
        "the server's task is cancelled",
        lambda: (t := client.runtime.run(client.aio.get_task(task["taskId"])))["status"] == "cancelled" and t,
    )
    assert status["taskId"] == task["taskId"]
    assert mcp(shell, "tasks").rows[0]["status"] == "cancelled"
    release.set()


def test_task_get_after_a_kernel_restart(shell_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new shell (a restarted kernel: nothing remembered) fetches a task's result by its id."""
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    release = threading.Event()
    server = jobs_server(release)
    # The same person on both connections (as a bearer token or OAuth says on a real server): a task is
    # bound to its principal, and two anonymous in-memory connections are two principals (issue 18).
    server.principal_of = lambda session, request: "token:notebook-user"
    first = shell_factory()
    first.user_ns["mcp"].connect("jobs", server)
    handle = approved(first, "call jobs.build")
    task_id = until("the task is created", lambda: handle.task)["taskId"]
    second = shell_factory()  # the restarted kernel: same server, no memory of the task
    second.user_ns["mcp"].connect("jobs", server)
    assert "no tasks yet" in mcp(second, "tasks")._repr_mimebundle_()["text/plain"]
    release.set()
    view = mcp(second, f"task get jobs.{task_id}")
    bundle = view._repr_mimebundle_()
    assert "built" in bundle["text/plain"] and task_id in bundle["text/plain"]
    view = mcp(second, f"task get {task_id}")  # one connection besides the notebook's: SERVER may go
    assert "built" in view._repr_mimebundle_()["text/plain"]


@pytest.mark.parametrize("line", ["task get {id}", "task get jobs.{id}", "task get --server jobs {id}"])
def test_task_get_takes_an_id_that_begins_with_a_dash(
    shell: Any, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    """A server may choose any id (ours drew ``secrets.token_urlsafe``, which begins with ``-`` 1 time in 64):
    argparse took ``-xyz`` for an unknown option ("arguments are required: target")."""
    from mcp_notebook.protocol import tasks as wire

    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    monkeypatch.setattr(wire, "new_task_id", lambda: "-dashed_Task-id")
    release = threading.Event()
    shell.user_ns["mcp"].connect("jobs", jobs_server(release))
    handle = approved(shell, "call jobs.build")
    assert until("the task is created", lambda: handle.task)["taskId"] == "-dashed_Task-id"
    release.set()
    text = mcp(shell, line.format(id="-dashed_Task-id"))._repr_mimebundle_()["text/plain"]
    assert "built" in text and "-dashed_Task-id" in text


def test_our_task_ids_never_begin_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    import secrets

    from mcp_notebook.protocol import tasks as wire

    draws = iter(["-first", "-second", "third"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: next(draws))
    assert wire.new_task_id() == "third"


def test_task_usage_errors(shell: Any) -> None:
    from IPython.core.error import UsageError

    shell.user_ns["mcp"].connect("a", jobs_server(threading.Event()))
    shell.user_ns["mcp"].connect("b", jobs_server(threading.Event()))
    with pytest.raises(UsageError, match="which server"):
        mcp(shell, "task get some-id")


def test_task_only_tool_of_server_everything(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """2025-11-25 against a third-party server: simulate-research-query must run as a task."""
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    peers = find_peers()
    api = shell.user_ns["mcp"]
    api.connect("everything", [str(peers.node), str(peers.everything), "stdio"])
    assert api.calls.client("everything").negotiated_version.name == "2025-11-25"
    seen: list[str] = []
    handle = approved(shell, "call everything.simulate-research-query topic=notebooks")
    handle.on_change(
        lambda h: h.task and (not seen or seen[-1] != h.task["status"]) and seen.append(h.task["status"])
    )
    assert handle._settle(30)
    assert "Research Report: notebooks" in handle.text
    assert handle.task["status"] == "completed" and seen[-1] == "completed"
    rows = mcp(shell, "tasks everything").rows  # ours, and the server's own tasks/list
    assert any(r["task"] == handle.task["taskId"] and r["status"] == "completed" for r in rows)
    api.disconnect("everything")
