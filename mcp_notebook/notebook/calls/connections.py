"""The notebook's named connections: one ``SyncClient`` per name, all on the shared runtime loop.

``local`` is the notebook's own server, connected in memory on first use. Other names are chosen by the
user (``%mcp connect NAME ...``) and become the ``SERVER`` of ``SERVER.TOOL``. Tools are read through each
client's own cache (``Client.tools_by_name``), the one its calls use too.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...auth.redact import redact
from .policy import LOCAL

if TYPE_CHECKING:
    from ...engine.runtime import Runtime
    from ...engine.sync import SyncClient

__all__ = ["Connections", "NotebookError"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
Opener = Callable[..., "SyncClient"]  # (name, target, **options) -> a connected SyncClient


class NotebookError(Exception):
    """A usage problem a person can fix: unknown server or tool, bad name, bad target."""


class Connections:
    """Named connections; thread-safe (notifications arrive on the runtime thread)."""

    def __init__(self, opener: Opener, local_target: Callable[[], Any]) -> None:
        self._open = opener
        self._local_target = local_target
        self._clients: dict[str, SyncClient] = {}
        self._targets: dict[str, tuple[str, str]] = {}  # name -> (transport, target shown to people)
        self._lock = threading.RLock()

    def get(self, name: str) -> SyncClient:
        with self._lock:
            if name == LOCAL and LOCAL not in self._clients:
                self._clients[LOCAL] = self._open(LOCAL, self._local_target())
                self._targets[LOCAL] = ("memory", "this notebook")
            client = self._clients.get(name)
        if client is None:
            known = ", ".join(self.names())
            raise NotebookError(f"no server named {name!r} is connected (connected: {known})")
        return client

    def names(self) -> list[str]:
        with self._lock:
            return [LOCAL, *sorted(n for n in self._clients if n != LOCAL)]

    def __contains__(self, name: object) -> bool:
        return name == LOCAL or name in self._clients

    def target(self, name: str) -> tuple[str, str]:
        return self._targets.get(name, ("?", "?"))

    def http_url(self, name: str) -> str | None:
        """The URL of an HTTP connection as shown to people, credentials blanked (None: another kind, or not
        connected)."""
        kind, shown = self.target(name)
        return shown if kind == "http" else None

    def split(self, name: str) -> tuple[str, str]:
        """``SERVER.TOOL`` when ``SERVER`` is a connection; otherwise all of it names a notebook tool."""
        head, dot, rest = name.partition(".")
        if dot and rest and head in self:
            return head, rest
        return LOCAL, name

    def connect(
        self,
        name: str,
        target: Any,
        *,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        auth: Any = None,
        era: str | None = None,
    ) -> SyncClient:
        if name == LOCAL or not _NAME.fullmatch(name):
            raise NotebookError(
                f"invalid connection name {name!r}: use letters, digits, '_' and '-' (and not 'local')"
            )
        options: dict[str, Any] = {}
        if hasattr(target, "serve"):  # a Server object: in memory
            kind, shown = "memory", f"Server({getattr(target, 'name', '?')!r})"
        elif isinstance(target, str):
            if not re.match(r"https?://", target):
                raise NotebookError(
                    f"{target!r} is not an http(s) URL; a command goes as a list: ['python', 'server.py']"
                )
            kind, shown, options = "http", redact(target), {"headers": dict(headers or {})}  # ?token=...
            if auth is not None:  # an mcp_notebook.auth.OAuth
                options["auth"] = auth
        elif isinstance(target, Sequence) and target:
            target = [str(part) for part in target]
            kind, shown = "stdio", " ".join(target)
            options = {"env": dict(env) if env is not None else None, "cwd": cwd}
        else:
            raise NotebookError("connect needs a URL, a non-empty command list or a Server")
        if era is not None:
            options["era"] = era
        if name in self._clients:
            self.disconnect(name)
        try:
            client = self._open(name, target, **options)
        except Exception as exc:
            # the error's text may repeat the URL with its ?token=... (or a header): blanked out for the cell
            text = f"could not connect {name!r} ({shown}): {type(exc).__name__}: {exc}"
            raise NotebookError(redact(text)) from exc
        with self._lock:
            self._clients[name] = client
            self._targets[name] = (kind, shown)
        return client

    def disconnect(self, name: str) -> None:
        if name == LOCAL:
            raise NotebookError("the notebook's own server ('local') stays connected")
        with self._lock:
            client = self._clients.pop(name, None)
            self._targets.pop(name, None)
        if client is None:
            raise NotebookError(f"no server named {name!r} is connected")
        client.close()

    def close(self) -> None:
        with self._lock:
            clients = list(self._clients.values())
            self._clients.clear()
            self._targets.clear()
        for client in clients:
            client.close()

    # -- tools: through the client's cache ---------------------------------------------------------------
    def tools(self, name: str, want: str | None = None) -> dict[str, dict[str, Any]]:
        """The server's tools (see ``Client.tools_by_name``: a ``want``ed tool missing lists again)."""
        return self.get(name).tools_by_name(want)

    async def tools_async(
        self, name: str, runtime: Runtime, want: str | None = None
    ) -> dict[str, dict[str, Any]]:
        return await runtime.run_async(self.get(name).aio.tools_by_name(want))
