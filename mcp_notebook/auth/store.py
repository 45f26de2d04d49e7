"""Where tokens and client registrations are kept: per server (resource) and per authorization server.

:class:`FileTokenStore` (the default) writes one JSON file per key under the user's Jupyter data directory
(``jupyter --data-dir``/mcp_notebook/oauth), created 0600 in a 0700 folder; :class:`KeyringTokenStore` uses
the system keyring when the ``keyring`` package is installed; :class:`MemoryTokenStore` forgets on exit.
Nothing here ever prints a value.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, Protocol

__all__ = ["FileTokenStore", "KeyringTokenStore", "MemoryTokenStore", "TokenStore", "default_store"]


class TokenStore(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """Tokens for this process only."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        item = self._items.get(key)
        return dict(item) if item is not None else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._items[key] = dict(value)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)

    def __repr__(self) -> str:
        return f"MemoryTokenStore({len(self._items)} entries)"


def _data_dir() -> Path:
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "mcp_notebook" / "oauth"


class FileTokenStore:
    """One 0600 JSON file per key (the file name is a hash of the key, so it leaks no server name)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else _data_dir()

    def _path(self, key: str) -> Path:
        return self.directory / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")

    def _check_directory(self) -> None:
        """Refuse a folder others could plant files or links in (POSIX): not ours, or group/world
        writable. A symlinked folder is judged by what it points to."""
        if os.name != "posix":
            return
        info = self.directory.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            raise PermissionError(
                f"refusing to keep tokens in {self.directory}: it must belong to you and be writable by you "
                f"only (chmod 700), not mode {stat.filemode(info.st_mode)}"
            )

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            self._check_directory()
            # O_NOFOLLOW: a symlink planted in place of the file is not read through
            fd = os.open(self._path(key), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, encoding="utf-8") as file:
                if os.name == "posix" and os.fstat(file.fileno()).st_uid != os.getuid():
                    return None
                data = json.loads(file.read())
        except (OSError, ValueError):
            return None
        return data.get("value") if isinstance(data, dict) and data.get("key") == key else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._check_directory()
        path = self._path(key)
        temporary = path.with_suffix(".tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()  # a stale (or planted) one: unlink removes a link, never what it points to
        # Created 0600 from the start (no window where another user could read it), never through a link
        # (O_EXCL | O_NOFOLLOW), then moved in place (a rename replaces a link, it does not follow it).
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temporary, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"key": key, "value": value}, out)
        os.replace(temporary, path)

    def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(key).unlink()

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self.directory)!r})"


class KeyringTokenStore:
    """The system keyring (``pip install keyring``), one entry per key under the service "mcp-notebook"."""

    SERVICE = "mcp-notebook"

    def __init__(self) -> None:
        import keyring  # type: ignore[import-not-found,unused-ignore]

        self._keyring: Any = keyring

    def get(self, key: str) -> dict[str, Any] | None:
        raw = self._keyring.get_password(self.SERVICE, key)
        try:
            value = json.loads(raw) if raw else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._keyring.set_password(self.SERVICE, key, json.dumps(value))

    def delete(self, key: str) -> None:
        with contextlib.suppress(Exception):
            self._keyring.delete_password(self.SERVICE, key)

    def __repr__(self) -> str:
        return "KeyringTokenStore()"


def default_store() -> TokenStore:
    """The keyring when ``keyring`` is installed and has a usable backend, else the 0600 files."""
    try:
        import keyring  # type: ignore[import-not-found,unused-ignore]
        from keyring.backends.fail import Keyring as FailKeyring  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return FileTokenStore()
    if isinstance(keyring.get_keyring(), FailKeyring):
        return FileTokenStore()
    return KeyringTokenStore()
