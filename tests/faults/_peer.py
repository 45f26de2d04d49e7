"""Peers for the fault suite, each run as its own process: ``python _peer.py MODE [LIMIT]``.

http          our Server over Streamable HTTP on 127.0.0.1; prints its URL as the first line on stdout
stdio LIMIT   our Server over stdio, reading lines of at most LIMIT bytes
fuzz-http, fuzz-stdio   the same with only the harmless tools (for the fuzz suite: nothing slow, nothing big)
garbage       our Server over stdio that prints non-JSON on stdout before serving and inside a tool
hang          reads stdin, answers nothing, ignores SIGTERM
id-last SIZE  answers initialize, then every tools/call with a result of SIZE bytes whose id comes last
id-hidden SIZE  the same with the id in the middle (not readable from the ends of the line)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

from mcp_notebook import Context, Server


def make_server(*, harmless: bool = False) -> Server:
    server = Server("faults")

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.resource("faults://readme")
    def readme() -> str:
        """A resource to read."""
        return "read me"

    @server.prompt
    def greet(name: str) -> str:
        """A prompt."""
        return f"Hello {name}"

    if harmless:
        return server

    @server.tool
    def big(size: int) -> str:
        """A text of ``size`` characters."""
        return "x" * size

    @server.tool
    async def slow(ctx: Context) -> str:
        """Report progress once, then wait forever."""
        await ctx.report_progress(1, 2, "started")
        await asyncio.Event().wait()
        return "never"

    @server.tool
    def garble() -> str:
        """Write lines that are not JSON-RPC on the protocol stream, then answer."""
        try:
            from mcp_notebook.transports import _stdio_server as stdio
        except ImportError:  # before stdio.py was split
            from mcp_notebook.transports import stdio  # type: ignore[no-redef]

        fd = stdio._protocol_stdout
        assert fd is not None
        os.write(fd, b"[INFO] not a message\n\xff\xfe garbage\n")
        return "garbled"

    return server


async def serve_http(*, harmless: bool = False) -> None:
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    http = StreamableHTTPServer(make_server(harmless=harmless))
    url = await http.start("127.0.0.1", 0)
    print(url, flush=True)
    await asyncio.Event().wait()


async def serve_stdio(limit: int, *, harmless: bool = False) -> None:
    from mcp_notebook.transports.stdio import StdioServerTransport, redirect_stdout_to_stderr

    with redirect_stdout_to_stderr():
        await make_server(harmless=harmless).serve(StdioServerTransport(max_line_bytes=limit))


def hang() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for _ in sys.stdin.buffer:
        pass
    signal.pause()  # stdin closed: still no exit; only SIGKILL ends this


def id_last(size: int, *, hidden: bool = False) -> None:
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        if "id" not in msg:
            continue
        if msg.get("method") == "tools/list":
            line = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}})
        elif msg.get("method") == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "id-last", "version": "1"},
            }
            line = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        else:  # a TypeScript-style answer: result first, the id at the very end
            content = json.dumps({"content": [{"type": "text", "text": "y" * size}]})
            request_id = json.dumps(msg["id"])
            line = f'{{"result":{content},"jsonrpc":"2.0","id":{request_id}}}'
            if hidden:  # the id neither in the first nor as the last member: unreadable once cut
                line = f'{{"result":{content},"id":{request_id},"jsonrpc":"2.0"}}'
        out.write(line.encode() + b"\n")
        out.flush()


def main() -> None:
    mode = sys.argv[1]
    if mode == "http":
        asyncio.run(serve_http())
    elif mode == "stdio":
        asyncio.run(serve_stdio(int(sys.argv[2])))
    elif mode == "fuzz-http":
        asyncio.run(serve_http(harmless=True))
    elif mode == "fuzz-stdio":
        asyncio.run(serve_stdio(1 << 20, harmless=True))
    elif mode == "garbage":
        sys.stdout.write("Server ready\n{not json at all\n")
        sys.stdout.flush()
        asyncio.run(serve_stdio(64 << 20))
    elif mode == "hang":
        hang()
    elif mode == "id-last":
        id_last(int(sys.argv[2]))
    elif mode == "id-hidden":
        id_last(int(sys.argv[2]), hidden=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
