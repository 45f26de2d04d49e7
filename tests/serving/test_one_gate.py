"""``mcp-notebook serve`` and ``%mcp serve`` share one gate and one set of HTTP limits (issue 8, DESIGN 14).

Before, only the in-kernel server wrapped its sessions in an approval transport: the command line served
destructive tools to anyone. Now the gate is the server's approval hook, installed by both the same way;
the command line runs headless (no console to click), with ``--rule`` for exceptions. Real subprocesses,
real HTTP on 127.0.0.1, every wait bounded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import connect
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.calls.policy import AuditLog, IncomingPolicy
from mcp_notebook.notebook.serving.server import serve
from mcp_notebook.transports.http_limits import HTTPLimits
from tests.interop._peers import ROOT, serve_http
from tests.serving._http import open_session, post

TOOLS = '''
from mcp_notebook import Server

server = Server("gated")


@server.tool(annotations={"destructiveHint": True})
def wipe(table: str) -> str:
    """Delete everything in a table."""
    return f"wiped {table}"


@server.tool(annotations={"readOnlyHint": True})
def peek() -> str:
    """Read something."""
    return "peeked"
'''


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "gated_tools.py"
    path.write_text(TOOLS)
    return path


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("one-gate runtime")
    yield rt
    rt.stop()


def in_kernel_refusal(target: Path, runtime: Runtime) -> str:
    namespace: dict[str, Any] = {}
    exec(compile(target.read_text(), str(target), "exec"), namespace)
    policy = IncomingPolicy(headless=True)
    with (
        serve(namespace["server"], runtime=runtime, policy=policy, audit=AuditLog()) as handle,
        connect(handle.url, headers=handle.headers, runtime=runtime) as client,
    ):
        result = client.call_tool("wipe", {"table": "t"})
        assert result["isError"] is True
        assert client.call_tool("peek", {})["content"][0]["text"] == "peeked"
        return str(result["content"][0]["text"])


def test_cli_http_and_in_kernel_serving_refuse_the_same_way(
    target: Path, tmp_path: Path, runtime: Runtime
) -> None:
    expected = in_kernel_refusal(target, runtime)
    assert "destructiveHint" in expected
    log = tmp_path / "server.log"
    with serve_http(target, log) as url, connect(url, runtime=runtime) as client:
        result = client.call_tool("wipe", {"table": "t"})
        assert result["isError"] is True and result["content"][0]["text"] == expected
        assert client.call_tool("peek", {})["content"][0]["text"] == "peeked"
    assert "refused 'wipe' for http" in log.read_text()


def test_cli_rule_allows_exactly_the_named_principal_and_tool(
    target: Path, tmp_path: Path, runtime: Runtime
) -> None:
    with (
        serve_http(target, tmp_path / "http.log", "--rule", "http.wipe=allow") as url,
        connect(url, runtime=runtime) as client,
    ):
        assert client.call_tool("wipe", {"table": "t"})["content"][0]["text"] == "wiped t"
    stdio = [sys.executable, "-m", "mcp_notebook", "serve", str(target), "--rule", "http.wipe=allow"]
    with connect(stdio, runtime=runtime, cwd=str(ROOT)) as client:  # the rule names http, not stdio
        assert client.call_tool("wipe", {"table": "t"})["isError"] is True
    with connect([*stdio[:-1], "stdio.wipe=allow"], runtime=runtime, cwd=str(ROOT)) as client:
        assert client.call_tool("wipe", {"table": "t"})["content"][0]["text"] == "wiped t"


def test_cli_and_in_kernel_share_the_http_limits(target: Path, tmp_path: Path, runtime: Runtime) -> None:
    """The same HTTPLimits object, configured the same way, answers the same (here: the body cap)."""
    big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 2048}}
    namespace: dict[str, Any] = {}
    exec(compile(target.read_text(), str(target), "exec"), namespace)
    with serve(namespace["server"], runtime=runtime, max_body_size=1024) as handle:
        assert handle.http.limits == HTTPLimits(max_body_size=1024)
        session = open_session(handle.url, handle.token)
        kernel_reply = post(handle.url, big, token=handle.token, session=session)
    cli = ("--limit", "max_body_size=1024", "--token", "t0k")
    with serve_http(target, tmp_path / "limits.log", *cli) as url:
        session = open_session(url, "t0k")
        cli_reply = post(url, big, token="t0k", session=session)
    assert kernel_reply.status == cli_reply.status == 413
    assert kernel_reply.body == cli_reply.body
