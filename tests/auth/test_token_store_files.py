"""Issue 18 item 4: the token file store refuses folders others can write to and never follows a planted
symlink (before, a link planted in a world-writable folder received the tokens)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_notebook.auth.store import FileTokenStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and symlinks")


def test_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    store = FileTokenStore(shared)
    with pytest.raises(PermissionError, match="chmod 700"):
        store.set("token:https://h/mcp", {"access_token": "secret-1"})
    assert list(shared.iterdir()) == []


def test_planted_symlinks_are_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "tokens"
    folder.mkdir(mode=0o700)
    store = FileTokenStore(folder)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    key = "token:https://h/mcp"
    final = store._path(key)
    final.with_suffix(".tmp").symlink_to(victim)  # where set() writes first
    store.set(key, {"access_token": "secret-2"})
    assert victim.read_text() == "untouched" and not final.is_symlink()
    assert store.get(key) == {"access_token": "secret-2"}
    planted = tmp_path / "planted.json"
    planted.write_text('{"key": "token:https://h/mcp", "value": {"access_token": "attacker"}}')
    final.unlink()
    final.symlink_to(planted)  # a link in place of the file: not read through
    assert store.get(key) is None
