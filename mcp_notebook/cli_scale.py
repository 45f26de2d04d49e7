"""``mcp-notebook serve`` past one process (DESIGN decision 18): a shared task store, a shared requestState
key, and ``--workers N`` processes on one port.

The 2026-07-28 era is stateless: any worker can answer any request once they share the key that seals MRTR
``requestState`` (``--state-key`` or ``$MCP_NOTEBOOK_STATE_KEY``) and a task store (``--task-store FILE``:
SQLite, one machine; ``--task-store redis://HOST:PORT/DB``: Redis, any machine, DESIGN decision 21).
``--workers N`` starts N copies of the same command, each listening on the same port with ``SO_REUSEPORT``
(Linux spreads connections over them); behind any HTTP load balancer, run one ``serve`` per port instead,
with the same key and store, and ``--allowed-host`` naming the Host clients send the balancer. 2025-11-25
HTTP sessions live in one worker: they need sticky routing by ``Mcp-Session-Id`` (a client whose session
lands elsewhere gets 404 and starts anew). docs/scale.md says what is shared and what is not.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

from .engine.server import Server
from .engine.task_store import open_task_store

__all__ = ["REUSE_PORT_ENV", "STATE_KEY_ENV", "add_scale_arguments", "configure", "run_workers"]

STATE_KEY_ENV = "MCP_NOTEBOOK_STATE_KEY"
REUSE_PORT_ENV = "MCP_NOTEBOOK_REUSE_PORT"  # set by --workers for its children
STOP_TIMEOUT = 10.0
WATCH_INTERVAL = 0.1  # how often the supervisor looks for a worker that ended


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {text!r}") from None
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"expected 1 to 64 worker processes, got {value}")
    return value


def add_scale_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--task-store",
        metavar="FILE|URL",
        help=(
            "keep tasks in this SQLite file (workers on this machine share it) or in Redis, "
            "redis://HOST:PORT/DB (workers on any machine share it; the redis extra); default: memory"
        ),
    )
    serve.add_argument(
        "--state-key",
        metavar="KEY",
        help=(
            f"the secret that seals MRTR requestState (16+ characters; default ${STATE_KEY_ENV}, else random "
            "per process): workers behind one load balancer share it, and a restart keeps live states valid"
        ),
    )
    serve.add_argument(
        "--allowed-host",
        metavar="HOST[:PORT]",
        action="append",
        help=(
            "with --http: also accept requests whose Host header is exactly this (the name clients use to "
            "reach a load balancer in front of the workers); repeatable. Loopback on the served port is "
            "always accepted; any other Host is refused (DNS rebinding)"
        ),
    )
    serve.add_argument(
        "--workers",
        metavar="N",
        type=_workers,
        default=1,
        help=(
            "with --http: run N worker processes on the one port (SO_REUSEPORT); they share --state-key "
            "(random if not given) and need --task-store"
        ),
    )


def configure(server: Server, args: argparse.Namespace) -> None:
    """Apply ``--task-store`` and ``--state-key`` to the loaded server (ValueError: a bad option)."""
    from .engine.sealed_state import StateSealer
    from .protocol.modern import state_key

    secret = args.state_key or os.environ.get(STATE_KEY_ENV)
    if secret:
        server.state_sealer = StateSealer(state_key(secret))
    if args.task_store:
        try:
            server.tasks.store = open_task_store(args.task_store)
        except ImportError as exc:
            raise ValueError(str(exc)) from None


def check_workers(args: argparse.Namespace) -> str | None:
    """Why ``--workers`` cannot run as given, or None."""
    if args.workers == 1:
        return None
    if args.http is None:
        return "--workers applies to --http only"
    if args.http[1] == 0:
        return "--workers needs a fixed port (workers share it), not 0"
    if not args.task_store:
        return "--workers needs --task-store FILE or URL: every worker must see every task"
    return None


def run_workers(argv: Sequence[str], args: argparse.Namespace) -> int:
    """Start ``args.workers`` copies of this ``serve`` command on one port; stop them on SIGINT/SIGTERM."""
    env = dict(os.environ)
    env[STATE_KEY_ENV] = args.state_key or os.environ.get(STATE_KEY_ENV) or secrets.token_hex(32)
    env[REUSE_PORT_ENV] = "1"
    child_argv = _without_workers(list(argv))
    child_argv = _without_option(
        child_argv, "--state-key"
    )  # passed in the environment, not on a command line
    command = [sys.executable, "-m", "mcp_notebook", *child_argv]
    children = [subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL) for _ in range(args.workers)]
    print(
        f"mcp-notebook: {args.workers} workers (pids {', '.join(str(c.pid) for c in children)})",
        file=sys.stderr,
    )

    stopping = False

    def stop_all() -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        stop_all()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    died: int | None = None
    try:
        # A worker that ends on its own (it failed to start, or crashed) ends the whole service: the others
        # stop and its exit code is ours, rather than the port going on half served with nobody told.
        while any(child.poll() is None for child in children):
            for child in children:
                code = child.poll()
                if code is not None and not stopping:
                    stopping = True
                    died = code
                    print(
                        f"mcp-notebook: worker {child.pid} exited with code {code}; stopping the others",
                        file=sys.stderr,
                    )
                    stop_all()
            time.sleep(WATCH_INTERVAL)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(STOP_TIMEOUT)
            if child.poll() is None:
                child.kill()
                child.wait(STOP_TIMEOUT)
    if died is not None:
        return died or 1  # even a clean exit of one worker alone is a failure of the service
    return max((child.returncode for child in children), default=0)


def _without_option(argv: list[str], name: str) -> list[str]:
    out: list[str] = []
    skip = False
    for item in argv:
        if skip:
            skip = False
            continue
        if item == name:
            skip = True
            continue
        if item.startswith(name + "="):
            continue
        out.append(item)
    return out


def _without_workers(argv: list[str]) -> list[str]:
    return _without_option(argv, "--workers")
