"""A notebook as a standalone server: ``mcp-notebook serve NOTEBOOK.ipynb [--http HOST:PORT]`` (issue 5).

In-process loading checks the rules (skip tags, failing cells, which server); the command line is checked
end to end with third-party clients: the official Python SDK's client and the Inspector CLI, over stdio and
Streamable HTTP.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import connect
from mcp_notebook.cli import TargetError
from mcp_notebook.notebook.notebook_file import NotebookCellError, load_notebook, read_cells, unload_notebook
from tests.interop._peers import Peers, node_env, serve_http

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0

TOOLS_CELL = '''
GREETING = "Hello"

@mcp.tool
def greet(name: str) -> str:
    """Greet someone."""
    print("greeting", name)  # must never reach stdout over stdio
    return f"{GREETING}, {name}!"
'''


def write_notebook(folder: Path, *cells: dict[str, Any], name: str = "tools.ipynb") -> Path:
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}
    path = folder / name
    path.write_text(json.dumps(notebook, indent=1))
    return path


def code(source: str, *tags: str) -> dict[str, Any]:
    metadata = {"tags": list(tags)} if tags else {}
    lines = source.splitlines(keepends=True)  # as Jupyter saves it: a list of lines
    return {
        "cell_type": "code",
        "metadata": metadata,
        "source": lines,
        "outputs": [],
        "execution_count": None,
    }


def markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def raw(text: str) -> dict[str, Any]:
    return {"cell_type": "raw", "metadata": {}, "source": text}


def tools_notebook(folder: Path) -> Path:
    return write_notebook(
        folder,
        markdown("# Notebook tools\nThis is not code."),
        code("%load_ext mcp_notebook\nprint('loading the notebook')"),
        code(TOOLS_CELL),
        code("raise RuntimeError('a demo cell that must not run when serving')", "mcp-skip"),
        code("@mcp.tool\ndef hidden() -> str:\n    return 'no'", "skip"),
        code("%mcp serve --http 127.0.0.1:0", "skip"),
        raw("raw text"),
        code("GREETING  # a displayed value goes to stderr over stdio"),
    )


@pytest.fixture
def loaded() -> Iterator[list[Any]]:
    """Servers loaded in-process, unloaded after; IPython's builtins restored."""
    saved = {k: builtins.__dict__.get(k) for k in ("__IPYTHON__", "display", "get_ipython")}
    servers: list[Any] = []
    yield servers
    for server in servers:
        unload_notebook(server)
    for key, value in saved.items():
        if value is None:
            builtins.__dict__.pop(key, None)
        else:
            builtins.__dict__[key] = value


def test_cells_run_in_order_and_skip_tags_are_honoured(tmp_path: Path, loaded: list[Any]) -> None:
    path = tools_notebook(tmp_path)
    assert [c.number for c in read_cells(path)] == [2, 3, 8]  # markdown, raw and tagged cells left out
    server = load_notebook(path)
    loaded.append(server)
    assert server.tools.names() == ["greet"]
    with connect(server) as client:
        assert client.call_tool("greet", {"name": "Ada"})["content"][0]["text"] == "Hello, Ada!"


def test_a_failing_cell_stops_start_up_with_its_number(tmp_path: Path, loaded: list[Any]) -> None:
    path = write_notebook(
        tmp_path,
        markdown("intro"),
        code("%load_ext mcp_notebook"),
        code("x = 1\n1 / 0"),
        code(TOOLS_CELL),
    )
    with pytest.raises(NotebookCellError) as info:
        load_notebook(path)
    assert info.value.number == 3
    message = str(info.value)
    assert "cell 3 failed: ZeroDivisionError: division by zero" in message and "x = 1" in message


def test_which_server_is_served(tmp_path: Path, loaded: list[Any]) -> None:
    empty = write_notebook(tmp_path, code("x = 1"), name="empty.ipynb")
    with pytest.raises(TargetError, match="registers no tools"):
        load_notebook(empty)
    own = write_notebook(
        tmp_path,
        code(
            "from mcp_notebook import Server\napp = Server('own')\n@app.tool\ndef one() -> int:\n    return 1"
        ),
        name="own.ipynb",
    )
    server = load_notebook(own)
    loaded.append(server)
    assert server.name == "own"
    with pytest.raises(TargetError, match="no 'nope'"):
        load_notebook(own, "nope")
    not_json = tmp_path / "broken.ipynb"
    not_json.write_text("{")
    with pytest.raises(TargetError, match="not a readable notebook"):
        load_notebook(not_json)


# ---- the command line, with third-party clients ------------------------------------------------------------
def serve_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "mcp_notebook", "serve", str(path)]


def test_cli_stdio_with_the_official_sdk_client(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    path = tools_notebook(tmp_path)
    command = serve_command(path)

    async def session() -> tuple[list[str], Any]:
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(ROOT))
        async with Client(params) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            return tools, await client.call_tool("greet", {"name": "SDK"})

    tools, result = asyncio.run(asyncio.wait_for(session(), WAIT))
    assert tools == ["greet"]
    assert result.content[0].text == "Hello, SDK!" and not result.is_error


def inspector(peers: Peers, tmp_path: Path, *target_and_args: str) -> dict[str, Any]:
    env = node_env()
    env["HOME"] = str(tmp_path / "home")
    command = [str(peers.node), str(peers.inspector), "--cli", "-q", "--format", "json", *target_and_args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, env=env, cwd=str(tmp_path))
    assert done.returncode == 0, f"inspector failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)["result"]
    return result


def test_cli_stdio_with_the_inspector(tmp_path: Path, peers: Peers) -> None:
    path = tools_notebook(tmp_path)
    listed = inspector(peers, tmp_path, *serve_command(path), "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == ["greet"]
    called = inspector(
        peers,
        tmp_path,
        *serve_command(path),
        "--method",
        "tools/call",
        "--tool-name",
        "greet",
        "--tool-arg",
        "name=Inspector",
    )
    assert called["content"][0]["text"] == "Hello, Inspector!"


def test_cli_http_with_the_sdk_client_and_the_inspector(tmp_path: Path, peers: Peers) -> None:
    from mcp import Client

    path = tools_notebook(tmp_path)
    with serve_http(path, tmp_path / "server.log") as url:

        async def session() -> Any:
            async with Client(url) as client:
                return await client.call_tool("greet", {"name": "HTTP"})

        result = asyncio.run(asyncio.wait_for(session(), WAIT))
        assert result.content[0].text == "Hello, HTTP!"
        listed = inspector(peers, tmp_path, url, "--method", "tools/list")
        assert [t["name"] for t in listed["tools"]] == ["greet"]
        called = inspector(
            peers, tmp_path, url, "--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=I"
        )
        assert called["content"][0]["text"] == "Hello, I!"
    log = (tmp_path / "server.log").read_text()
    assert "loading the notebook" in log and "greeting HTTP" in log


def test_cli_failing_cell_is_a_clear_error(tmp_path: Path) -> None:
    path = write_notebook(tmp_path, code("%load_ext mcp_notebook"), code("undefined_name + 1"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        serve_command(path), capture_output=True, text=True, timeout=WAIT, stdin=subprocess.DEVNULL, env=env
    )
    assert done.returncode == 2
    assert done.stdout == ""  # stdio: nothing but protocol ever goes to stdout
    assert "cell 2 failed: NameError" in done.stderr and "undefined_name" in done.stderr
