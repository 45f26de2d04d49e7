"""The server bench/scale.py runs as workers: ``echo`` (the protocol's own cost) and ``spin`` (CPU work in
the tool, ``ms`` milliseconds of pure Python)."""

from __future__ import annotations

import time

from mcp_notebook import Server

server = Server("bench-scale")


@server.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool
def spin(ms: float) -> int:
    """Busy the CPU for ``ms`` milliseconds (holding the GIL); how many loops that took."""
    deadline = time.perf_counter() + ms / 1000
    loops = 0
    while time.perf_counter() < deadline:
        loops += 1
    return loops
