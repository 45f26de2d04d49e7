"""The MCP Inspector's CLI (@modelcontextprotocol/inspector) against our server, over stdio and HTTP.

A real third-party client: each call is one CLI run printing one JSON object (``--cli -q --format json``);
a tool that returns ``isError: true`` makes it exit 5. It keeps state in ``$HOME``, so HOME is a temporary
folder. Our server is ``sample_server.py``: spawned by the Inspector (stdio) or served by the CLI (HTTP).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.interop._peers import HERE, ROOT, Peers, node_env, serve_http

pytestmark = pytest.mark.timeout(60)

RUN_TIMEOUT = 30.0  # seconds for one Inspector run
EXIT_TOOL_ERROR = 5  # the Inspector CLI's exit status for a tool result with isError: true
SAMPLE = HERE / "sample_server.py"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        try:
            value: dict[str, Any] = json.loads(self.stdout)
        except ValueError:
            pytest.fail(f"not one JSON object on stdout (exit {self.returncode}):\n{self}")
        return value

    @property
    def result(self) -> dict[str, Any]:
        assert self.returncode == 0, str(self)
        result: dict[str, Any] = self.json["result"]
        return result

    def __str__(self) -> str:
        return f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


@pytest.fixture(scope="module")
def sample_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("sample") / "server.log"
    with serve_http(SAMPLE, log) as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def server_args(request: pytest.FixtureRequest) -> list[str]:
    """The Inspector's target: our server's command line (it spawns it) or its URL."""
    if request.param == "stdio":
        return [sys.executable, "-m", "mcp_notebook", "serve", str(SAMPLE)]
    return [request.getfixturevalue("sample_url")]


@pytest.fixture
def inspector(peers: Peers, server_args: list[str], tmp_path: Path) -> Any:
    """``inspector(*options)`` runs the Inspector CLI once against our server; bounded, killed by PID."""
    env = {**node_env(), "HOME": str(tmp_path)}
    base = [str(peers.node), str(peers.inspector), "--cli", "-q", "--format", "json"]

    def run(*options: str) -> Run:
        # Its own process group, so a timeout also stops the stdio server the Inspector spawned.
        process = subprocess.Popen(
            [*base, *server_args, *options],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(f"the Inspector ran over {RUN_TIMEOUT} s: {options}\n{stdout}\n{stderr}")
        return Run(process.returncode, stdout, stderr)

    return run


def test_tools_list(inspector: Any) -> None:
    tools = {tool["name"]: tool for tool in inspector("--method", "tools/list").result["tools"]}
    assert set(tools) == {"add", "echo", "structured", "image", "fail"}
    assert tools["add"]["inputSchema"]["properties"] == {
        "a": {"type": "integer", "description": "The first number."},
        "b": {"type": "integer", "description": "The second number."},
    }
    assert tools["structured"]["outputSchema"]["required"] == ["city", "celsius", "sunny"]


def test_tools_call(inspector: Any) -> None:
    call = ("--method", "tools/call", "--tool-name")
    added = inspector(*call, "add", "--tool-args-json", '{"a": 2, "b": 3}').result
    assert added["content"] == [{"type": "text", "text": '{"result": 5}'}]
    assert added["structuredContent"] == {"result": 5}
    weather = inspector(*call, "structured", "--tool-args-json", '{"city": "Oslo"}').result
    assert weather["structuredContent"] == {"city": "Oslo", "celsius": 21.5, "sunny": True}
    [image] = inspector(*call, "image").result["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"], validate=True).startswith(b"\x89PNG\r\n\x1a\n")


def test_tool_error_exits_5(inspector: Any) -> None:
    run = inspector("--method", "tools/call", "--tool-name", "fail", "--tool-args-json", '{"reason": "now"}')
    assert run.returncode == EXIT_TOOL_ERROR, str(run)
    assert run.json["result"] == {"content": [{"type": "text", "text": "failed now"}], "isError": True}


def test_resources(inspector: Any) -> None:
    [resource] = inspector("--method", "resources/list").result["resources"]
    assert resource["uri"] == "sample://note" and resource["mimeType"] == "text/plain"
    read = inspector("--method", "resources/read", "--uri", "sample://note").result
    assert read["contents"] == [
        {"uri": "sample://note", "mimeType": "text/plain", "text": "A note kept by the sample server."}
    ]
    templates = inspector("--method", "resources/templates/list").result["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["sample://items/{item_id}"]


def test_prompts(inspector: Any) -> None:
    [prompt] = inspector("--method", "prompts/list").result["prompts"]
    assert prompt["name"] == "greet" and [a["name"] for a in prompt["arguments"]] == ["name", "style"]
    got = inspector(
        "--method", "prompts/get", "--prompt-name", "greet", "--prompt-args", "name=Ada", "style=formal"
    ).result
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Say hello to Ada in a formal style."}}
    ]


def test_auto_era_falls_back_to_legacy(inspector: Any) -> None:
    """``--protocol-era auto`` probes for 2026-07-28 first; our server must let it fall back."""
    tools = inspector("--protocol-era", "auto", "--method", "tools/list").result["tools"]
    assert len(tools) == 5
