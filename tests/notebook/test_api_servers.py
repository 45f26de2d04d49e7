"""The ``mcp`` Python API: resources, prompts, the servers table, trace, connecting (stdio, a Server object, a
failed URL), tools added after connecting and saving a result (calls, approval, progress, forms: test_api.py).

Each test gets a fresh IPython shell with the extension loaded (``ipyshell.py``). Every wait is bounded
(``WAIT``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import Client, Server
from mcp_notebook.notebook.api import NotebookError, NotebookMCP
from tests.notebook.ipyshell import WAIT, add_tools, api, remote_server
from tests.stdio_demo import stdio_demo

# --------------------------------------------------------------------------- resources, prompts, servers


def test_resources_read_prompts_and_prompt_get(shell: Any) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())

    @mcp.resource("notes://today")
    def today() -> str:
        return "write tests"

    uris = [row["uri"] for row in mcp.resources().rows]
    assert uris == ["notes://today", "memo://greeting"]
    assert "hello from the remote" in mcp.read("memo://greeting")._repr_mimebundle_()["text/plain"]
    assert mcp.read("notes://today").data["contents"][0]["text"] == "write tests"
    assert [row["call as"] for row in mcp.prompts().rows] == ["remote.review"]
    prompt = mcp.prompt_get("remote.review", code="x = 1")
    assert "Please review:\nx = 1" in prompt._repr_mimebundle_()["text/plain"]


def test_servers_trace_disconnect_and_reconnect(shell: Any) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    mcp.connect("remote", remote_server())  # re-running the cell replaces the connection
    rows = mcp.servers().rows
    assert [(r["name"], r["transport"]) for r in rows] == [("local", "memory"), ("remote", "memory")]
    assert rows[1]["server"].startswith("remote-demo")
    trace = mcp.trace("remote", last=2)
    assert len(trace.entries) == 2
    full = mcp.trace("remote").entries
    assert len(full) > 2 and trace.entries == full[-2:]  # the last two, not the handshake
    assert "initialize" not in [entry["message"].get("method") for entry in trace.entries]
    assert [title for title, _ in mcp.trace().sections] == ["local", "remote"]
    mcp.disconnect("remote")
    assert mcp.connections() == ["local"]
    with pytest.raises(NotebookError, match="no server named 'remote'"):
        mcp.disconnect("remote")


def test_handle_trace_is_the_conversation_of_that_call(shell: Any) -> None:
    mcp = api(shell)
    add_tools(mcp)
    handle = mcp.call("add", a=1, b=1)
    methods = [e["message"].get("method") for e in handle.trace().entries]
    assert "tools/call" in methods


async def test_list_changed_reaches_a_connected_client(shell: Any) -> None:
    mcp = api(shell)
    heard = asyncio.Event()

    def on_note(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            heard.set()

    async with Client(mcp.server, notification_handler=on_note) as client:
        add_tools(mcp)
        await asyncio.wait_for(heard.wait(), WAIT)
        assert [t["name"] for t in await client.list_tools()] == ["add", "shout"]


# -------------------------------------------------------------------------------------------- stdio


def test_connect_a_stdio_server_subprocess(
    shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS_POLICY", "allow")
    script = stdio_demo(tmp_path)
    mcp = api(shell)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    mcp.connect("demo", [sys.executable, str(script)], env=env)
    assert mcp.servers().rows[1]["transport"] == "stdio"
    assert mcp.call("demo.hello", name="pipe", call_timeout=WAIT).text == "hello pipe"
    mcp.disconnect("demo")


def test_a_server_object_can_be_a_target_without_ipython() -> None:
    mcp = NotebookMCP(config=None)
    try:
        mcp.connect("remote", remote_server())
        assert mcp.headless  # no shell: nobody to click
        handle = mcp.call("remote.peek")
        assert handle.state == "denied"  # the default headless policy
    finally:
        mcp.close()


def test_the_server_is_not_created_by_load(shell_factory: Any) -> None:
    shell = shell_factory()
    assert api(shell)._server is None  # %load_ext stays cheap: the server comes on first use
    assert Server is type(api(shell).server)


def test_a_tool_added_to_a_connected_server_is_callable_at_once(shell: Any) -> None:
    """The tools cache is refreshed on a miss: list_changed may still be in flight when the cell calls it."""
    mcp: NotebookMCP = shell.user_ns["mcp"]
    server = remote_server()
    mcp.connect("remote", server)
    mcp.policy.set("remote.*", "allow")
    assert "late" not in mcp.calls.tools("remote")  # the cache now holds the old list

    @server.tool
    def late(word: str) -> str:
        """Added after connecting."""
        return word * 2

    handle = mcp.call("remote.late", word="ab")
    assert handle.state == "done" and handle.text == "abab"


def test_save_writes_all_of_a_result_the_page_shows_only_in_part(shell: Any, tmp_path: Path) -> None:
    import base64

    from mcp_notebook import Image

    mcp: NotebookMCP = shell.user_ns["mcp"]
    big_text = "x" * 2_000_000
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )

    @mcp.tool
    def big():  # type: ignore[no-untyped-def]  # no annotation: the list is content blocks, not data
        """A long text and an image."""
        return [big_text, Image(png)]

    handle = mcp.call("big")
    bundle = handle._repr_mimebundle_()
    assert len(bundle["text/html"]) < 200_000 and ".save(path)" in bundle["text/html"]
    handle.save(str(tmp_path / "all.txt"))
    assert (tmp_path / "all.txt").read_text() == big_text
    handle.save(str(tmp_path / "img.png"), index=1)
    assert (tmp_path / "img.png").read_bytes() == png
    with pytest.raises(IndexError, match="2 content block"):
        handle.save(str(tmp_path / "nope"), index=5)


def test_a_failed_connect_does_not_show_the_token_in_its_url(shell: Any) -> None:
    """Before: "could not connect 'broken' (http://...?token=SECRET123): ... POST http://...?token=SECRET123"
    went into the cell (and the saved notebook)."""
    mcp = api(shell)
    with pytest.raises(NotebookError) as caught:
        mcp.connect("broken", "http://127.0.0.1:9/mcp?token=SECRET123&x=1")
    assert "SECRET123" not in str(caught.value) and "token=[redacted]" in str(caught.value)
