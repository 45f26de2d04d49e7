"""Audit item 10: exceptions raised by a tool reached the client verbatim (type and message). Now
``Server(mask_errors=True)`` sends only "an internal error occurred" (the server log keeps the rest);
``ToolError`` always passes; off by default (the notebook), on for ``mcp-notebook serve --http``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_notebook import Client, Server, ToolError
from mcp_notebook.engine.sync import connect

pytestmark = pytest.mark.timeout(60)
SECRET = "password=hunter2 at db.internal:5432"


def make_server(**options: bool) -> Server:
    server = Server("audit-10", **options)

    @server.tool
    def broken() -> str:
        raise RuntimeError(SECRET)

    @server.tool
    def refuses() -> str:
        raise ToolError("the quota is used up")

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_10_masked_errors_hide_the_exception_but_not_tool_errors(era: str) -> None:
    async with Client(make_server(mask_errors=True), era=era, timeout=20) as client:  # type: ignore[arg-type]
        masked = await client.call_tool("broken")
        refused = await client.call_tool("refuses")
    assert masked["isError"] and masked["content"][0]["text"] == (
        "Error executing tool broken: an internal error occurred"
    )
    assert SECRET not in str(masked) and "RuntimeError" not in str(masked)
    assert refused["isError"] and refused["content"][0]["text"] == "the quota is used up"


async def test_audit_10_unmasked_by_default() -> None:
    async with Client(make_server(), timeout=20) as client:
        shown = await client.call_tool("broken")
    assert "RuntimeError" in shown["content"][0]["text"] and SECRET in shown["content"][0]["text"]


def test_audit_10_serve_http_masks_by_default(tmp_path: Path) -> None:
    module = tmp_path / "tools_audit10.py"
    module.write_text(
        "from mcp_notebook import Server\n"
        "server = Server('audit-10')\n"
        "@server.tool\n"
        "def broken() -> str:\n"
        f"    raise RuntimeError({SECRET!r})\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_notebook", "serve", str(module), "--http", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = ""
        for _ in range(50):
            line = proc.stderr.readline()
            if "serving" in line or not line:
                break
        url = line.rsplit(" at ", 1)[-1].strip()
        assert url.startswith("http://127.0.0.1:"), line
        with connect(url) as client:
            text = client.call_tool("broken")["content"][0]["text"]
        assert SECRET not in text and text.endswith("an internal error occurred")
    finally:
        proc.terminate()
        proc.wait(20)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_10_a_task_is_masked_too(era: str) -> None:
    server = Server("audit-10-task", mask_errors=True)

    @server.tool(task="required")
    def crash() -> str:
        raise RuntimeError(SECRET)

    async with Client(server, era=era, timeout=20) as client:  # type: ignore[arg-type]
        result = await client.call_tool("crash")
    assert result["isError"] and SECRET not in str(result)
    assert result["content"][0]["text"].endswith("an internal error occurred")
