"""Signing in to an OAuth-protected MCP server from JupyterLab: ``%mcp connect NAME URL --auth`` shows a
card; the person clicks Authorize, approves on the (local) authorization server's page in the new tab, the
redirect reaches the kernel's one-shot loopback listener, the card says who is signed in, and the first tool
call succeeds. The authorization server and the protected server run in a subprocess
(``tests/auth/_servers.py``)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.auth.local_as import SUBJECT

from .conftest import UI_TIMEOUT_MS, Notebook

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0


@pytest.fixture
def protected() -> Iterator[str]:
    """The protected MCP server's URL (its authorization server asks the person to approve)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.auth._servers", "--consent"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    reader: threading.Thread | None = None
    try:
        lines: queue.Queue[str] = queue.Queue()
        stdout = process.stdout
        assert stdout is not None
        reader = threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True)
        reader.start()
        found: dict[str, str] = {}
        while "MCP" not in found:
            try:
                kind, _, url = lines.get(timeout=START_TIMEOUT).strip().partition(" ")
            except queue.Empty:
                raise AssertionError("the test servers did not start") from None
            found[kind] = url
        yield found["MCP"]
    finally:
        if process.stdin is not None:
            process.stdin.close()  # the servers stop when their stdin closes
        try:
            process.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=START_TIMEOUT)
        if reader is not None:
            reader.join(START_TIMEOUT)  # it ends at the output's end, which the exit brought
        if process.stdout is not None:
            process.stdout.close()


def test_authorize_card_then_first_call(
    open_notebook: Callable[..., Notebook], protected: str, tmp_path: Path
) -> None:
    setup = (
        f"import os; os.environ['JUPYTER_DATA_DIR'] = {str(tmp_path)!r}  # tokens go to a temporary folder\n"
        "%load_ext mcp_notebook\n"
        "mcp.policy.set('prot.*', 'allow')"
    )
    notebook = open_notebook([setup, f"%mcp connect prot {protected} --auth", "%mcp call prot.add a=2 b=3"])
    notebook.run_cell(0)
    notebook.run_cell(1)  # returns at once: the card waits, the kernel does not
    card = notebook.output(1)
    link = card.locator("a.mcp-authorize")
    expect(link).to_be_visible(timeout=UI_TIMEOUT_MS)
    expect(card).to_contain_text("waiting for you to authorize")
    with notebook.page.context.expect_page() as opened:
        link.click()
    consent = opened.value
    consent.get_by_role("button", name="Approve").click()
    expect(consent.locator("body")).to_contain_text("Authorization received")
    expect(card.locator(".mcp-auth-subject")).to_have_text(SUBJECT, timeout=UI_TIMEOUT_MS)
    expect(card).to_contain_text("connected")
    expect(link).to_have_count(0)
    notebook.run_cell(2)
    expect(notebook.output(2)).to_contain_text("5")
    assert not notebook.errors(), notebook.errors()
