"""The command line: ``mcp-notebook serve TARGET`` (also ``python -m mcp_notebook serve TARGET``).

``TARGET`` names a :class:`~mcp_notebook.Server` object: ``MODULE_OR_FILE[:ATTRIBUTE]``, where the
module is a dotted import name (``pkg.tools``) or a path to a ``.py`` file, and the attribute defaults to
``server``; or a notebook, ``NOTEBOOK.ipynb[:NAME]``, whose code cells run in a fresh IPython shell and
whose ``@mcp.tool`` tools are served (``notebook/notebook_file.py``). It is served over stdio (this
process's stdin/stdout) unless ``--http HOST:PORT`` asks for Streamable HTTP.

Served the same way as ``%mcp serve`` serves a notebook: incoming ``tools/call`` requests pass the same
approval gate (:class:`~mcp_notebook.notebook.calls.policy.IncomingPolicy`, headless here: a tool declaring
``destructiveHint`` is refused unless an exact ``--rule PRINCIPAL.TOOL=allow`` says otherwise; the principal
is ``stdio`` or ``http``), and HTTP gets the same :class:`~mcp_notebook.transports.http_limits.HTTPLimits`
(``--limit NAME=VALUE``).

How a target is loaded is chosen by its file suffix from :data:`LOADERS` (dotted names are imported);
another kind of source, such as a notebook, plugs in with :func:`register_loader`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import importlib.util
import ipaddress
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from . import cli_cassette, cli_scale
from .auth.options import add_auth_arguments, protected_resource
from .engine.server import Server
from .errors import TargetError

if TYPE_CHECKING:
    from .auth.resource import ProtectedResource
    from .engine.approval import IncomingCall
    from .transports.http_limits import HTTPLimits

__all__ = ["LOADERS", "Target", "TargetError", "load_server", "main", "parse_target", "register_loader"]

PROG = "mcp-notebook"
DEFAULT_ATTRIBUTE = "server"
DEFAULT_HOST = "127.0.0.1"
TOKEN_ENV = "MCP_NOTEBOOK_TOKEN"
DEFAULT_SSE_RETRY_MS = 500

EXIT_USAGE = 2  # argparse's code for a bad command line; a target that is not a Server is one too
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Target:
    source: str  # a dotted module name or a file path
    attribute: str | None  # None: the loader's default


# A loader turns a source file into the Server it defines; ``attribute`` None means "the default one".
Loader = Callable[[Path, "str | None"], Server]


def parse_target(text: str) -> Target:
    """``pkg.mod``, ``pkg.mod:app``, ``path/to/file.py``, ``path/to/file.py:app``.

    Only a final ``:identifier`` is an attribute, so a Windows drive (``C:\\x.py``) stays part of the path.
    """
    source, colon, attribute = text.rpartition(":")
    if colon and source and attribute.isidentifier():
        return Target(source, attribute)
    return Target(text, None)


def _check_server(value: object, where: str) -> Server:
    if not isinstance(value, Server):
        raise TargetError(f"{where} is not an mcp_notebook.Server (it is a {type(value).__name__} object)")
    return value


def _server_attribute(module: ModuleType, attribute: str | None, where: str) -> Server:
    name = attribute or DEFAULT_ATTRIBUTE
    if not hasattr(module, name):
        hint = "" if attribute else f" (name another one with {where}:NAME)"
        raise TargetError(f"{where} has no attribute {name!r}{hint}")
    return _check_server(getattr(module, name), f"{where}:{name}")


def _unique_module_name(path: Path) -> str:
    stem = path.stem
    if stem.isidentifier() and stem not in sys.modules:
        return stem
    n = 1
    while f"_mcp_notebook_target_{n}" in sys.modules:
        n += 1
    return f"_mcp_notebook_target_{n}"


def load_python_file(path: Path, attribute: str | None) -> Server:
    """Run a ``.py`` file as a module (its folder first on ``sys.path``, as ``python FILE`` does)."""
    path = path.resolve()
    name = _unique_module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    sys.modules[name] = module  # registered first, so dataclasses and pickling can find the module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return _server_attribute(module, attribute, str(path))


def load_module(dotted: str, attribute: str | None) -> Server:
    """Import ``dotted`` the way ``python -m`` would find it (the current folder first on ``sys.path``)."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(dotted)
    except ModuleNotFoundError as exc:
        # Only a missing *target* is a usage error; a module the target itself imports is its own bug.
        if exc.name is not None and (dotted == exc.name or dotted.startswith(exc.name + ".")):
            raise TargetError(f"no module named {dotted!r} (and no file of that name)") from exc
        raise
    return _server_attribute(module, attribute, dotted)


def load_notebook_file(path: Path, attribute: str | None) -> Server:
    """Run a notebook's code cells in a fresh IPython shell; its tools' server (see ``notebook_file``)."""
    from .notebook.notebook_file import load_notebook_target

    return load_notebook_target(path, attribute)


LOADERS: dict[str, Loader] = {".py": load_python_file, ".ipynb": load_notebook_file}


def register_loader(suffix: str, loader: Loader) -> None:
    """Serve files ending in ``suffix`` (``".ipynb"``, say) with ``loader(path, attribute) -> Server``."""
    LOADERS[suffix.lower()] = loader


def load_server(target: Target) -> Server:
    """The Server ``target`` names; raises :class:`TargetError` for what the user got wrong."""
    path = Path(target.source)
    loader = LOADERS.get(path.suffix.lower())
    if loader is not None:
        if not path.is_file():
            raise TargetError(f"no such file: {target.source}")
        return loader(path, target.attribute)
    if path.is_file():
        known = ", ".join(sorted(LOADERS))
        raise TargetError(f"cannot serve {target.source}: not a known kind of file ({known})")
    if not all(part.isidentifier() for part in target.source.split(".")):
        raise TargetError(f"{target.source!r} is neither a file nor a dotted module name")
    return load_module(target.source, target.attribute)


# ---- serving ---------------------------------------------------------------------------------------------
def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1); ``[::1]:PORT`` for IPv6. Port 0: any free."""
    host, colon, port_text = text.rpartition(":")
    if not colon:
        host, port_text = "", text
    host = host.removeprefix("[").removesuffix("]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {port}")
    return host, port


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of milliseconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of milliseconds, got {value}")
    return value


def _rule(text: str) -> tuple[str, str]:
    pattern, equals, verdict = text.rpartition("=")
    if not equals or not pattern:
        raise argparse.ArgumentTypeError(f"expected PATTERN=allow|ask|deny, got {text!r}")
    return pattern, verdict


def _limit(text: str) -> tuple[str, float | int | None]:
    from .transports.http_limits import HTTPLimits

    name, equals, value = text.partition("=")
    defaults = HTTPLimits()
    if not equals or name not in HTTPLimits.names():
        known = ", ".join(HTTPLimits.names())
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with NAME one of {known}; got {text!r}")
    if name == "rate" and value.lower() in ("none", "off"):
        return name, None
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: expected a number, got {value!r}") from None
    return name, int(number) if isinstance(getattr(defaults, name), int) else number


def install_gate(server: Server, rules: Sequence[tuple[str, str]] = ()) -> None:
    """The approval gate ``%mcp serve`` uses, headless: nobody is at a console to click."""
    from .notebook.calls.policy import AuditLog, Decision, IncomingPolicy, PolicyApprover

    def report(call: IncomingCall, decision: Decision) -> None:
        who = f"{call.peer.principal} (calls itself {call.declared_name!r})"
        print(f"{PROG}: refused {call.tool!r} for {who}: {decision.by}", file=sys.stderr, flush=True)

    policy = IncomingPolicy(dict(rules), headless=True)
    PolicyApprover(policy, AuditLog(), on_denied=report).install(server)


async def serve_http(
    server: Server,
    host: str,
    port: int,
    *,
    token: str | None = None,
    sse_retry_ms: int | None = None,
    limits: HTTPLimits | None = None,
    auth: ProtectedResource | None = None,
    reuse_port: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve over Streamable HTTP until SIGINT or SIGTERM, then stop cleanly (open sessions are ended).

    ``sse_retry_ms`` set turns on SSE polling with that reconnection delay; ``limits``: the HTTP bounds;
    ``auth``: serve as an OAuth protected resource (its middleware checks every request's access token).
    ``allowed_hosts``: more ``Host`` headers to accept (a load balancer's name), besides loopback's.
    """
    from .transports.http_server import DEFAULT_ALLOWED_HOSTS, StreamableHTTPServer

    http = StreamableHTTPServer(
        server,
        token=token,
        limits=limits,
        sse_polling=sse_retry_ms is not None,
        sse_retry_ms=sse_retry_ms or DEFAULT_SSE_RETRY_MS,
        middlewares=[auth.middleware] if auth is not None else [],
        identify=auth.identity if auth is not None else None,
        allowed_hosts=(*DEFAULT_ALLOWED_HOSTS, *allowed_hosts) if allowed_hosts else None,
    )
    if auth is not None:
        auth.body_timeout = http.limits.body_timeout  # the tool-scope check reads bodies too
    url = await http.start(host, port, reuse_port=reuse_port)
    if auth is not None and not auth.resource:
        auth.bind(url)
    print(f"{PROG}: serving {server.name!r} at {url}", file=sys.stderr, flush=True)
    try:
        await _until_signalled()
    finally:
        await http.stop()
        await server.tasks.aclose()  # tasks still running here end "failed" in the (shared) store
        print(f"{PROG}: stopped", file=sys.stderr, flush=True)


def _unauthenticated(host: str) -> str | None:
    """Serving with neither --token nor --auth: refused off loopback (anyone who can reach the port could
    call the tools), a warning on stderr on loopback (other users of this machine can still reach it)."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        return (
            f"refusing to serve {host} without authentication: give --token T (or ${TOKEN_ENV}) or --auth "
            "ISSUER, or serve on 127.0.0.1"
        )
    print(
        f"{PROG}: warning: no --token or --auth: anyone on this machine can call the tools",
        file=sys.stderr,
        flush=True,
    )
    return None


async def _until_signalled() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    installed: list[signal.Signals] = []
    for sig in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows' loop
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    try:
        await stop.wait()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


@contextlib.contextmanager
def _stdout_to_stderr(enabled: bool) -> Iterator[None]:
    """While loading a stdio server, stray ``print``s must not reach stdout, which carries the protocol."""
    if not enabled:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _serve(args: argparse.Namespace) -> int:
    target = parse_target(args.target)
    stdio = args.http is None
    try:
        with _stdout_to_stderr(stdio):
            server = load_server(target)
    except TargetError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:
        print(f"{PROG}: error: loading {args.target} failed:", file=sys.stderr)
        traceback.print_exc()
        return 1
    try:
        install_gate(server, args.rule)
    except ValueError as exc:
        print(f"{PROG}: error: --rule: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        cli_scale.configure(server, args)  # --task-store, --state-key
    except (ValueError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if stdio:
            server.run_stdio()
        else:
            from .transports.http_limits import HTTPLimits

            host, port = args.http
            server.mask_errors = not args.show_errors  # callers over the network see no internals
            token = args.token or os.environ.get(TOKEN_ENV) or None
            retry = args.sse_retry if args.sse_polling else None
            limits = HTTPLimits(**dict(args.limit))
            auth = protected_resource(args)
            if token is None and auth is None:
                problem = _unauthenticated(host)
                if problem:
                    print(f"{PROG}: error: {problem}", file=sys.stderr)
                    return EXIT_USAGE
            reuse = os.environ.get(cli_scale.REUSE_PORT_ENV) == "1"  # one of --workers N
            asyncio.run(
                serve_http(
                    server,
                    host,
                    port,
                    token=token,
                    sse_retry_ms=retry,
                    limits=limits,
                    auth=auth,
                    reuse_port=reuse,
                    allowed_hosts=args.allowed_host or (),
                )
            )
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Build, serve and call MCP servers from Python.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve an mcp_notebook Server over stdio or Streamable HTTP",
        description="Serve the Server named by TARGET over stdio (default) or Streamable HTTP (--http).",
        epilog=(
            "TARGET is MODULE_OR_FILE[:NAME]: a dotted module name or a path to a .py file, and the name of "
            f"the Server object in it (default: {DEFAULT_ATTRIBUTE}); or a notebook (.ipynb), whose code "
            "cells run in a fresh IPython shell (cells tagged mcp-skip or skip left out) and whose @mcp.tool "
            "tools are served. Examples: mcp-notebook serve tools.py; mcp-notebook serve pkg.tools:app "
            "--http 127.0.0.1:8765; mcp-notebook serve analysis.ipynb"
        ),
    )
    serve.add_argument("target", metavar="TARGET", help="MODULE_OR_FILE[:NAME] (NAME defaults to 'server')")
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=parse_address,
        help=f"serve Streamable HTTP at http://HOST:PORT/mcp (default HOST {DEFAULT_HOST}; PORT 0: any free)",
    )
    serve.add_argument(
        "--token",
        metavar="T",
        help=f"with --http: require 'Authorization: Bearer T' (default: ${TOKEN_ENV} if set)",
    )
    serve.add_argument(
        "--show-errors",
        action="store_true",
        help=(
            "with --http: send the type and message of an exception a tool raises to the caller (by default "
            "HTTP callers get 'an internal error occurred'; ToolError messages always reach them)"
        ),
    )
    serve.add_argument(
        "--sse-polling",
        action="store_true",
        help=(
            "with --http: start each SSE stream with a priming event and a 'retry:' delay, so the server may "
            "close a stream mid-call and the client resume it with Last-Event-ID (SEP-1699)"
        ),
    )
    serve.add_argument(
        "--sse-retry",
        metavar="MS",
        type=_positive_int,
        default=DEFAULT_SSE_RETRY_MS,
        help=f"with --sse-polling: the reconnection delay sent to clients (default {DEFAULT_SSE_RETRY_MS})",
    )
    serve.add_argument(
        "--rule",
        metavar="PATTERN=VERDICT",
        type=_rule,
        action="append",
        default=[],
        help=(
            "an approval rule for incoming tool calls, PRINCIPAL.TOOL=allow|ask|deny (PRINCIPAL: stdio or "
            "http); only an exact rule allows a tool that declares destructiveHint; repeatable"
        ),
    )
    serve.add_argument(
        "--limit",
        metavar="NAME=VALUE",
        type=_limit,
        action="append",
        default=[],
        help=(
            "with --http: change one HTTP limit (rate, burst, concurrency, address_concurrency, "
            "max_body_size, body_timeout, header_timeout, session_idle_timeout, max_sessions_per_client, "
            "max_sessions; rate=none: no rate limit); "
            "repeatable"
        ),
    )
    add_auth_arguments(serve)
    cli_scale.add_scale_arguments(serve)
    serve.set_defaults(run=_serve)
    cli_cassette.add_commands(  # replay, verify, export, test
        commands,
        load=lambda text: load_server(parse_target(text)),
        address=parse_address,
        until_signalled=_until_signalled,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (
        args.command == "serve"
        and args.http is None
        and (args.token or args.sse_polling or args.limit or args.auth)
    ):
        parser.error("--token, --sse-polling, --limit and --auth apply to --http only")
    if args.command == "serve" and args.workers > 1:
        problem = cli_scale.check_workers(args)
        if problem:
            parser.error(problem)
        return cli_scale.run_workers(sys.argv[1:] if argv is None else argv, args)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)
