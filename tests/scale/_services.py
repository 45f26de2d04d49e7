"""Real services for the past-one-machine tests: Debian's redis-server and haproxy (installed by
scripts/install-services.sh), each started on a free 127.0.0.1 port with its files in a temp dir and
stopped by PID. A test that needs one skips, naming the missing program, only where it is not installed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop._peers import ROOT, free_port, listening

READY = 20.0


def program(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found is None:
        pytest.skip(f"{name} is not installed (bash scripts/install-services.sh installs Debian's)")
    return found


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _ping(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(16).startswith(b"+PONG")
    return False


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A private redis-server on 127.0.0.1 (no persistence); yields ``redis://127.0.0.1:PORT/0``."""
    binary = program("redis-server")
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory), "--save", ""]
    command += ["--appendonly", "no", "--daemonize", "no", "--logfile", str(directory / "redis.log")]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + READY
        while not _ping(port):
            if process.poll() is not None or time.monotonic() > deadline:
                log = directory / "redis.log"
                pytest.fail(f"redis-server did not start: {log.read_text() if log.exists() else ''}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(process)


FIXTURE = Path(__file__).resolve().parents[1] / "tasks" / "_fixture.py"
KEY = "a shared secret for the workers, 32+ chars"


@contextlib.contextmanager
def worker(
    log: Path,
    store: str,
    *options: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``mcp-notebook serve tests/tasks/_fixture.py --http 127.0.0.1:PORT --task-store STORE`` with the
    shared state key; yields its URL and process (a test may SIGKILL it)."""
    port = port or free_port()
    command = [sys.executable, "-m", "mcp_notebook", "serve", str(FIXTURE), "--http", f"127.0.0.1:{port}"]
    command += ["--task-store", store, "--state-key", KEY, *options]
    with listening(command, port, log, env={**os.environ, **(env or {})}) as started:
        yield started


EXAMPLE_HAPROXY = ROOT / "examples" / "scale" / "haproxy.cfg"


def haproxy_config(port: int, workers: list[int]) -> str:
    """The README's HAProxy config (examples/scale/haproxy.cfg) with these ports put in."""
    lines = []
    for line in EXAMPLE_HAPROXY.read_text().splitlines():
        if line.strip().startswith("bind "):
            line = f"    bind 127.0.0.1:{port}"
        elif line.strip().startswith("server "):
            if not workers:
                continue
            line = f"    server w{len(lines)} 127.0.0.1:{workers.pop(0)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def haproxy(directory: Path, port: int, workers: list[int]) -> Iterator[str]:
    """Debian's haproxy on 127.0.0.1:``port`` in front of ``workers``; yields the balancer's MCP URL."""
    binary = program("haproxy")
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "haproxy.cfg"
    config.write_text(haproxy_config(port, list(workers)))
    log = directory / "haproxy.log"
    with listening([binary, "-f", str(config), "-db"], port, log, cwd=None) as (url, _):
        yield url
