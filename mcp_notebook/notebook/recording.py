"""``mcp.record(NAME, server=None)`` and ``%mcp record NAME [SERVER]`` / ``%mcp record --stop``: a cassette
of one connection's messages (:class:`~mcp_notebook.engine.cassette.Recording`), made from the notebook.

``NAME`` is a path; without a suffix it becomes ``NAME.jsonl``. ``server`` is a connection name; by default
the notebook's own tools (``local``), which is what a prototype is tested with. A recording started on an
open connection begins with its handshake and a fresh ``tools/list``. One recording per connection at a
time; ``mcp.record(...)`` is also a context manager (``with mcp.record("session"): ...``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.cassette import Recording
from .calls.policy import LOCAL

if TYPE_CHECKING:
    from ..engine.sync import SyncClient

__all__ = ["NotebookRecording", "Recordings", "cassette_path"]


def cassette_path(name: str | Path) -> Path:
    path = Path(name)
    return path if path.suffix else path.with_suffix(".jsonl")


class NotebookRecording:
    """One recording in progress (or done): ``.stop()``, ``.path``, ``.count``; a context manager."""

    def __init__(self, owner: Recordings, server: str, client: SyncClient, path: Path) -> None:
        self._owner = owner
        self.server = server
        self.path = path
        self._client = client
        self._recording = Recording(client.aio, path)

    def start(self) -> NotebookRecording:
        self._client.runtime.run(self._recording.start())
        return self

    @property
    def recording(self) -> bool:
        return self._recording.recording

    @property
    def count(self) -> int:
        """Messages written so far."""
        return self._recording.count

    def stop(self) -> Path:
        self._owner.forget(self)
        return self._recording.stop()

    def __enter__(self) -> NotebookRecording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "recording" if self.recording else "recorded"
        return f"<{state} {self.server!r} to {self.path}: {self.count} messages>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class Recordings:
    """The notebook's recordings in progress, one per connection."""

    def __init__(self) -> None:
        self._active: dict[str, NotebookRecording] = {}
        self._lock = threading.Lock()

    def start(self, client: SyncClient, path: str | Path, server: str | None = None) -> NotebookRecording:
        name = server or LOCAL
        with self._lock:
            if name in self._active:
                raise ValueError(
                    f"{name!r} is already being recorded to {self._active[name].path}: stop that first"
                )
            recording = NotebookRecording(self, name, client, cassette_path(path))
            self._active[name] = recording
        try:
            return recording.start()
        except BaseException:
            self.forget(recording)
            raise

    def forget(self, recording: NotebookRecording) -> None:
        with self._lock:
            if self._active.get(recording.server) is recording:
                del self._active[recording.server]

    def stop(self, server: str | None = None) -> list[NotebookRecording]:
        """Stop the recording of ``server`` (every recording when None); the ones stopped."""
        with self._lock:
            chosen = [r for name, r in self._active.items() if server is None or name == server]
        for recording in chosen:
            recording.stop()
        return chosen

    def active(self) -> list[NotebookRecording]:
        with self._lock:
            return list(self._active.values())
