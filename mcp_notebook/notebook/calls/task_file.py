"""The durable part of the notebook's task book (``tasks.py``): task ids per server URL, in one JSON file
only its owner can read (0600, in a 0700 folder), so they survive a kernel restart (the tasks extension:
clients SHOULD persist task ids). Each entry keeps the tool and the latest task status; it goes when the
task's ttl is over. Kernels sharing the file take a lock around each read-modify-write."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["ENV", "TaskFile", "default_file"]

ENV = "MCP_NOTEBOOK_TASK_BOOK"  # another file, or "off"


def default_file() -> TaskFile | None:
    """``$MCP_NOTEBOOK_TASK_BOOK`` (``off``: none), else ``mcp_notebook/tasks.json`` in Jupyter's data
    directory (``jupyter --data-dir``)."""
    spec = os.environ.get(ENV, "")
    if spec == "off":
        return None
    return TaskFile(Path(spec) if spec else _jupyter_data_dir() / "mcp_notebook" / "tasks.json")


def _jupyter_data_dir() -> Path:
    try:
        from jupyter_core.paths import jupyter_data_dir
    except ImportError:  # jupyter_core's rule, short: $JUPYTER_DATA_DIR, else the XDG data home
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(os.environ.get("JUPYTER_DATA_DIR") or Path(base) / "jupyter")
    return Path(jupyter_data_dir())


def expires_at(task: dict[str, Any]) -> float | None:
    """When the server drops the task: ``createdAt`` + ``ttl``/``ttlMs`` (None: no ttl)."""
    ttl = task.get("ttlMs", task.get("ttl"))
    if not isinstance(ttl, (int, float)) or isinstance(ttl, bool):
        return None
    created = task.get("createdAt")
    try:
        start = datetime.fromisoformat(str(created).replace("Z", "+00:00")).timestamp()
    except ValueError:
        start = time.time()
    return start + ttl / 1000


class TaskFile:
    """``{"tasks": [{"url", "tool", "task", "expires"}, ...]}`` in ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def note(self, url: str, tool: str, task: dict[str, Any]) -> None:
        task_id = task.get("taskId")
        entry = {"url": url, "tool": tool, "task": dict(task), "expires": expires_at(task)}
        with self._editing() as entries:
            entries[:] = [e for e in entries if (e.get("url"), e["task"].get("taskId")) != (url, task_id)]
            entries.append(entry)

    def forget(self, url: str, task_id: str) -> None:
        with self._editing() as entries:
            entries[:] = [e for e in entries if (e.get("url"), e["task"].get("taskId")) != (url, task_id)]

    def tasks(self, url: str) -> list[tuple[str, dict[str, Any]]]:
        """The live tasks of the server at ``url``: (tool, task), oldest first."""
        now = time.time()
        return [
            (str(e.get("tool", "")), e["task"]) for e in self._read() if e.get("url") == url and _live(e, now)
        ]

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return []
        tasks = data.get("tasks") if isinstance(data, dict) else None
        return [e for e in tasks or [] if isinstance(e, dict) and isinstance(e.get("task"), dict)]

    @contextlib.contextmanager
    def _editing(self) -> Iterator[list[dict[str, Any]]]:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._lock, _locked(self.path.with_name(self.path.name + ".lock")):
            entries = self._read()
            yield entries
            now = time.time()
            text = json.dumps({"tasks": [e for e in entries if _live(e, now)]}, indent=1)
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(text)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)


def _live(entry: dict[str, Any], now: float) -> bool:
    expires = entry.get("expires")
    return not isinstance(expires, (int, float)) or expires > now


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock between kernels (POSIX ``flock``; elsewhere only this process's lock holds)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
