"""The command line's cassette and notebook commands: ``replay``, ``verify``, ``export``, ``test``.

* ``mcp-notebook replay x.jsonl [--http HOST:PORT]``: serve a cassette (:class:`~.engine.replay.Cassette`)
  over stdio or Streamable HTTP.
* ``mcp-notebook verify x.jsonl -- CMD ...`` (or ``verify x.jsonl URL``, ``verify x.jsonl FILE.py:server``,
  ``verify x.jsonl NB.ipynb``): re-send the cassette's requests to a live server and print the
  differences (:mod:`~.engine.verify`); exit 1 when there are some; ``--update`` accepts them.
* ``mcp-notebook export NB.ipynb -o server.py``: a standalone server module (:mod:`.export`).
* ``mcp-notebook test NB.ipynb``: run the notebook headless; exit 1 on an error or a failed ``%mcp check``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["add_commands", "resolve_target"]

PROG = "mcp-notebook"
EXIT_DIFFERENT = 1
EXIT_USAGE = 2

Loader = Callable[[str], Any]  # "FILE.py:NAME" / "NB.ipynb" / "pkg.mod" -> a Server


def add_commands(
    commands: Any,
    *,
    load: Loader,
    address: Callable[[str], tuple[str, int]],
    until_signalled: Callable[[], Awaitable[None]],
) -> None:
    """Add the subcommands to ``commands`` (the main parser's subparsers); the rest comes from ``cli``."""
    replay = commands.add_parser(
        "replay",
        help="serve a recorded cassette as an MCP server (stdio or Streamable HTTP)",
        description="Answer MCP requests from a cassette recorded with %%mcp record / mcp.record().",
    )
    replay.add_argument("cassette", metavar="CASSETTE.jsonl")
    replay.add_argument("--http", metavar="HOST:PORT", type=address, help="serve Streamable HTTP at /mcp")
    replay.set_defaults(run=lambda args: _replay(args, until_signalled))

    verify = commands.add_parser(
        "verify",
        help="re-send a cassette's requests to a live server and diff the answers",
        description=(
            "Re-send the requests of CASSETTE to a live server, in the cassette's era, and print what "
            "differs (results and tool schemas; ids, timestamps, cursors, task ids and requestState by rule)."
        ),
        epilog=(
            "TARGET: -- COMMAND ARGS... (stdio), an http(s) URL, a FILE.py[:NAME] or module[:NAME] holding "
            "a Server, or a notebook NB.ipynb. Exit status: 0 same, 1 differences, 2 usage or no server."
        ),
    )
    verify.add_argument("cassette", metavar="CASSETTE.jsonl")
    verify.add_argument("target", nargs=argparse.REMAINDER, metavar="TARGET")
    verify.add_argument("--update", action="store_true", help="write the live answers over the cassette")
    verify.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    verify.set_defaults(run=lambda args: _verify(args, load))

    export = commands.add_parser(
        "export",
        help="write a notebook's tools, resources and prompts as a standalone server module",
        description=(
            "Write the notebook's @mcp.tool / @mcp.resource / @mcp.prompt definitions and the imports and "
            "helper cells they use as one Python module, runnable with 'python server.py' (stdio) or "
            "'python server.py --http HOST:PORT', needing no Jupyter."
        ),
    )
    export.add_argument("notebook", metavar="NB.ipynb")
    export.add_argument("-o", "--output", metavar="FILE.py", help="where to write (default: stdout)")
    export.set_defaults(run=_export)

    test = commands.add_parser(
        "test",
        help="run a notebook headless; fail on an error or a failed %%mcp check",
        description="Execute the notebook in a fresh kernel (nbclient); exit 1 on an error or failed check.",
    )
    test.add_argument("notebook", metavar="NB.ipynb")
    test.add_argument("--timeout", type=float, default=600.0, help="seconds per cell (default 600)")
    test.set_defaults(run=_test)


# ---- replay -----------------------------------------------------------------------------------------------
def _replay(args: argparse.Namespace, until_signalled: Callable[[], Awaitable[None]]) -> int:
    from .engine.cassette import CassetteError
    from .engine.replay import Cassette

    try:
        cassette = Cassette(args.cassette)
    except CassetteError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.http is None:
            asyncio.run(_replay_stdio(cassette))
        else:
            host, port = args.http
            asyncio.run(_replay_http(cassette, host, port, until_signalled))
    except KeyboardInterrupt:
        return 130
    return 0


async def _replay_stdio(cassette: Any) -> None:
    from .transports.base import Peer
    from .transports.stdio import StdioServerTransport

    await cassette.serve(StdioServerTransport(), peer=Peer("stdio"))


async def _replay_http(
    cassette: Any, host: str, port: int, until_signalled: Callable[[], Awaitable[None]]
) -> None:
    from .transports.http_server import StreamableHTTPServer

    http = StreamableHTTPServer(cassette)
    url = await http.start(host, port)
    print(f"{PROG}: replaying {cassette.path} ({cassette.era}) at {url}", file=sys.stderr, flush=True)
    try:
        await until_signalled()
    finally:
        await http.stop()


# ---- verify -----------------------------------------------------------------------------------------------
def resolve_target(words: list[str], load: Loader) -> tuple[Any, str]:
    """What ``verify`` connects to: a command list, a URL, or a Server loaded from a file or module."""
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise ValueError("name a server to verify against: -- COMMAND..., a URL, FILE.py[:NAME] or NB.ipynb")
    if len(words) == 1 and words[0].startswith(("http://", "https://")):
        return words[0], words[0]
    first = words[0]
    if len(words) == 1 and (
        first.rpartition(":")[0].endswith((".py", ".ipynb")) or first.endswith((".py", ".ipynb"))
    ):
        return load(first), first
    return list(words), " ".join(words)


def _verify(args: argparse.Namespace, load: Loader) -> int:
    from .engine.cassette import CassetteError
    from .engine.verify import verify
    from .errors import MCPError, TargetError

    try:
        target, shown = resolve_target(list(args.target), load)
    except (ValueError, TargetError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = asyncio.run(
            verify(args.cassette, target, timeout=args.timeout, update=args.update, target_name=shown)
        )
    except CassetteError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (MCPError, OSError) as exc:  # the server would not start, or not talk MCP in the cassette's era
        print(f"{PROG}: error: cannot verify against {shown}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(report.text())
    if args.update and not report.ok:
        print(f"{PROG}: updated {args.cassette} with the live answers", file=sys.stderr)
        return 0
    return 0 if report.ok else EXIT_DIFFERENT


# ---- export / test ----------------------------------------------------------------------------------------
def _export(args: argparse.Namespace) -> int:
    from .errors import TargetError
    from .export import export_notebook

    try:
        text = export_notebook(Path(args.notebook))
    except (TargetError, SyntaxError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"{PROG}: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _test(args: argparse.Namespace) -> int:
    from .export import run_notebook

    outcome = run_notebook(Path(args.notebook), timeout=args.timeout)
    print(outcome.text())
    return 0 if outcome.ok else 1
