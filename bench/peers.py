"""The servers the benchmarks talk to, built the same way with each library.

    python bench/peers.py ours stdio          # mcp_notebook Server on stdin/stdout
    python bench/peers.py sdk stdio           # official SDK MCPServer on stdin/stdout
    python bench/peers.py ours http PORT      # mcp_notebook StreamableHTTPServer on 127.0.0.1:PORT, the
                                              # default HTTPLimits (what a user gets)
    python bench/peers.py ours-off http PORT  # the same with the rate limit off and room for 1024 sessions
    python bench/peers.py sdk http PORT       # MCPServer.run(transport="streamable-http") on 127.0.0.1:PORT

Tools (identical wire shape in both): ``echo(text) -> text`` and ``echo_async`` (unstructured text result:
the SDK's are declared ``structured_output=False``, since ours gives a ``str`` result no outputSchema), and
``add(a, b) -> int`` (structured: outputSchema ``{"result": int}`` in both, checked by both clients).
Imports happen inside the builders, so a cold start pays for one library only. ``BENCH_EXTRA_TOOLS=N`` in the
environment adds N more tools ``tool_0 .. tool_{N-1}`` (``(a: int, b: str = "x") -> str``) to either server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any


def _extra_tools() -> list[Any]:
    def make(i: int) -> Any:
        def fn(a: int, b: str = "x") -> str:
            return b * a

        fn.__name__ = f"tool_{i}"
        fn.__doc__ = f"Tool number {i}.\n\nArgs:\n    a: How many times.\n    b: What to repeat.\n"
        return fn

    return [make(i) for i in range(int(os.environ.get("BENCH_EXTRA_TOOLS", "0")))]


def build_ours() -> Any:
    from mcp_notebook import Server

    server = Server("bench")
    for fn in _extra_tools():
        server.tool(fn)

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool
    async def echo_async(text: str) -> str:
        """Return the text."""
        return text

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


def build_sdk() -> Any:
    from mcp.server.mcpserver import MCPServer

    # WARNING, not the default INFO: uvicorn would otherwise log every HTTP request (ours logs none).
    server = MCPServer("bench", log_level="WARNING")
    for fn in _extra_tools():
        server.tool(structured_output=False)(fn)

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool(structured_output=False)
    async def echo_async(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


async def _serve_ours_http(port: int, *, limits_off: bool) -> None:
    from mcp_notebook.transports.http_limits import HTTPLimits
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    # limits off: the SDK server has no session cap nor rate limit; the growth curve opens 256 sessions from
    # one address. Otherwise the defaults a user gets (README "Serving").
    limits = HTTPLimits(rate=None, max_sessions=1024, max_sessions_per_client=1024) if limits_off else None
    http = StreamableHTTPServer(build_ours(), limits=limits)
    await http.start("127.0.0.1", port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await http.stop()


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("ours", "ours-off", "sdk") or argv[1] not in ("stdio", "http"):
        print(__doc__, file=sys.stderr)
        return 2
    impl, mode = argv[0], argv[1]
    if mode == "http":
        port = int(argv[2])
        if impl in ("ours", "ours-off"):
            asyncio.run(_serve_ours_http(port, limits_off=impl == "ours-off"))
        else:
            build_sdk().run(transport="streamable-http", host="127.0.0.1", port=port)
    elif impl in ("ours", "ours-off"):
        build_ours().run_stdio()
    else:
        build_sdk().run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
