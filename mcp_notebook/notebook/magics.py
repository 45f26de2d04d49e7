"""``%mcp SUBCOMMAND ...`` and ``%%mcp_tool``: thin over :class:`~.api.NotebookMCP` (STYLE rule 8).

Each subcommand parses its arguments (``IPython.core.magic_arguments.MagicArgumentParser``, DESIGN decision
13), calls the ``mcp`` object and returns something that renders. ``%mcp SUB --help`` prints the
subcommand's usage; ``%mcp`` alone lists them. Problems become ``UsageError``s with a clear message, never a
traceback from inside the library.

``$NAME`` in a ``connect`` line is an *environment* variable (``--header "Authorization: Bearer $TOKEN"``),
expanded here, so secrets stay out of the notebook; elsewhere IPython's usual ``$var`` / ``{expr}``
expansion from the user namespace applies.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shlex
import weakref
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import MagicArgumentParser
from IPython.utils.text import DollarFormatter

from ..protocol.errors import MCPError
from .api import NotebookError, NotebookMCP
from .calls.callargs import parse_call_args, parse_kv, split_json
from .calls.policy import VERDICTS

__all__ = ["MCPMagics", "load", "unload"]

_loaded: weakref.WeakKeyDictionary[Any, NotebookMCP] = weakref.WeakKeyDictionary()
_ENV_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# Errors a person can act on; anything else is a bug and keeps its traceback.
_USER_ERRORS = (NotebookError, MCPError, OSError, ValueError, TimeoutError, KeyError)


def _parser(name: str, description: str) -> argparse.ArgumentParser:
    # argparse's own formatter: IPython's MagicHelpFormatter writes docstring markup ("::" then an indented
    # usage line) meant for a magic's __doc__, which --help printed as is
    parser: argparse.ArgumentParser = MagicArgumentParser(  # type: ignore[no-untyped-call]
        prog=f"%mcp {name}" if name else "%%mcp_tool",
        description=description,
        formatter_class=argparse.HelpFormatter,
    )
    return parser


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"cannot split the line: {exc}") from exc


def _ids_as_positionals(tokens: list[str], valued: set[str]) -> list[str]:
    """Options first, then ``--`` and the positionals: an id a server chose may begin with ``-`` (a task id
    from ``secrets.token_urlsafe`` does 1 time in 64), which argparse would take for an unknown option."""
    options: list[str] = []
    positionals: list[str] = []
    rest = iter(tokens)
    for token in rest:
        name = token.split("=", 1)[0]
        if token in ("-h", "--help") or (name in valued and "=" in token):
            options.append(token)
        elif token in valued:
            options += [token, next(rest, "")]
        elif token == "--":
            positionals += list(rest)
        else:
            positionals.append(token)
    return [*options, "--", *positionals]


def expand_env(text: str) -> str:
    """``$NAME`` / ``${NAME}`` from the environment; an unset variable is an error, not an empty string."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in os.environ:
            raise UsageError(f"environment variable ${name} is not set")
        return os.environ[name]

    return _ENV_VAR.sub(value, text)


class _Sub:
    """One subcommand: its parser and the method that runs it."""

    def __init__(self, name: str, summary: str, run: Callable[[str], Any], parser: argparse.ArgumentParser):
        self.name, self.summary, self.run, self.parser = name, summary, run, parser


@magics_class
class MCPMagics(Magics):
    """``%mcp`` and ``%%mcp_tool``."""

    def __init__(self, shell: Any, api: NotebookMCP) -> None:
        super().__init__(shell=shell)
        self.api = api
        self.subcommands: dict[str, _Sub] = {}
        self._define()

    # ---- the subcommand table ---------------------------------------------------------------------------
    def _add(self, name: str, summary: str, run: Callable[[str], Any]) -> argparse.ArgumentParser:
        parser = _parser(name, summary)
        self.subcommands[name] = _Sub(name, summary, run, parser)
        return parser

    def _define(self) -> None:
        p = self._add(
            "tools", "List tools: the notebook's and every connected server's, one table.", self._tools
        )
        p.add_argument("server", nargs="?", help="only this connection")
        p = self._add(
            "call", "Call a tool: %mcp call SERVER.TOOL k=v ... | JSON object. Returns a handle.", self._call
        )
        p.add_argument("--timeout", type=float, help="seconds (default: c.MCPNotebook.default_timeout)")
        p.add_argument("target", help="TOOL (notebook) or SERVER.TOOL")
        p.add_argument("args", nargs="*", help="k=v (v parsed as JSON when it parses), or one JSON object")
        p = self._add("map", "Call a tool once per row: %mcp map SERVER.TOOL ROWS (a variable).", self._map)
        p.add_argument("target", help="TOOL or SERVER.TOOL")
        p.add_argument("rows", help="a variable: a DataFrame, a list of dicts or any iterable")
        p.add_argument("--concurrency", type=int, default=8, help="calls in flight at once (default 8)")
        p.add_argument("--on-error", choices=["collect", "raise"], default="collect")
        p.add_argument("--retries", type=int, default=2, help="retries of a transient failure (default 2)")
        p.add_argument(
            "--timeout", type=float, help="seconds per call (default: c.MCPNotebook.default_timeout)"
        )
        p = self._add("form", "A form for the tool's inputSchema; submitting calls it.", self._form)
        p.add_argument("target", help="TOOL or SERVER.TOOL")
        p = self._add(
            "connect",
            "Connect a server: %mcp connect NAME -- COMMAND ARGS (stdio) or %mcp connect NAME URL (HTTP).",
            self._connect,
        )
        p.add_argument("name", help="the name to call it by (SERVER in SERVER.TOOL)")
        p.add_argument("url", nargs="?", help="http(s) URL of a Streamable HTTP server")
        p.add_argument(
            "--header", action="append", default=[], help="'Key: Value'; $VARS from the environment"
        )
        p.add_argument("--auth", action="store_true", help="OAuth: sign in (a card with an Authorize link)")
        p.add_argument("--client-id", help="with --auth: a pre-registered OAuth client id")
        p.add_argument("--client-secret-env", metavar="VAR", help="with --auth: the client secret's env var")
        p.add_argument("--scope", action="append", default=[], help="with --auth: a scope to ask for")
        p.add_argument("--env", action="append", default=[], help="K=V for a stdio server's environment")
        p.add_argument("--cwd", help="working directory of a stdio server")
        p.add_argument(
            "--era",
            choices=["auto", "legacy", "modern"],
            help="auto (default: probe server/discover, else initialize), legacy or modern",
        )
        p = self._add("disconnect", "Close a connection.", self._disconnect)
        p.add_argument("name")
        p = self._add("auth", "Sign in again to a server connected with --auth.", self._auth)
        p.add_argument("name")
        p = self._add("logout", "Forget the tokens of a server connected with --auth.", self._logout)
        p.add_argument("name")
        self._add("servers", "The connections: transport, server, protocol version, trust.", self._servers)
        p = self._add("resources", "List resources and resource templates.", self._resources)
        p.add_argument("server", nargs="?")
        p = self._add("read", "Read a resource and render its contents.", self._read)
        p.add_argument("uri")
        p.add_argument("--server", help="the connection to read from")
        p = self._add("prompts", "List prompts.", self._prompts)
        p.add_argument("server", nargs="?")
        p = self._add("prompt", "Get a prompt: %mcp prompt [SERVER.]NAME k=v ...", self._prompt)
        p.add_argument("target")
        p.add_argument("args", nargs="*")
        p = self._add("trace", "The JSON-RPC conversation (every connection, or one).", self._trace)
        p.add_argument("server", nargs="?")
        p.add_argument("--last", type=int, default=50, help="how many messages (default 50; 0 = all)")
        p.add_argument("--diagram", action="store_true", help="as a sequence diagram (click an arrow: JSON)")
        p.add_argument("--live", action="store_true", help="keep the output current as messages arrive")
        p.add_argument("--otlp", metavar="FILE", help="write it to FILE as OTLP/JSON spans, one per request")
        p = self._add(
            "record",
            "Record a connection's messages to a cassette: record NAME [SERVER] | record --stop [SERVER].",
            self._record,
        )
        p.add_argument("name", nargs="?", help="the cassette (NAME.jsonl unless it has a suffix)")
        p.add_argument("server", nargs="?", help="the connection (default: this notebook's tools)")
        p.add_argument("--stop", action="store_true", help="stop recording (SERVER, or every recording)")
        p = self._add("log", "A live pane of a server's log messages and notifications.", self._log)
        p.add_argument("server")
        p.add_argument("--last", type=int, default=200, help="how many (default 200)")
        p.add_argument("--level", default="info", help="ask for log messages from this level up (info)")
        p = self._add(
            "lint", "Check tools against the spec and common mistakes: lint [TOOL|SERVER].", self._lint
        )
        p.add_argument("target", nargs="?", help="TOOL, SERVER.TOOL or SERVER (default: everything)")
        p.add_argument("--long", type=float, default=10.0, help="seconds from which a call is long (task?)")
        p = self._add(
            "check",
            "Check a tool against its contract: check TOOL [--sample ARGS] [--error ARGS] [--required P] ...",
            self._check,
        )
        p.add_argument("target", help="TOOL or SERVER.TOOL")
        p.add_argument("--sample", action="append", default=[], help="arguments (JSON) that must succeed")
        p.add_argument("--error", action="append", default=[], help="arguments (JSON) that must be isError")
        p.add_argument("--required", action="append", default=[], help="a parameter that must be required")
        p = self._add("tasks", "Tasks this notebook's calls started (and a server's own list).", self._tasks)
        p.add_argument("server", nargs="?", help="only this connection")
        p = self._add(
            "task", "A task by id: task get [SERVER.]ID (its result) | task cancel [SERVER.]ID.", self._task
        )
        p.add_argument("action", choices=["get", "cancel"])
        p.add_argument("target", help="SERVER.TASK_ID, or TASK_ID with one connection or --server")
        p.add_argument("--server", help="the connection the task belongs to")
        p = self._add(
            "app", "Open a tool's MCP App (its ui:// resource) without calling the tool.", self._app
        )
        p.add_argument("target", help="TOOL or SERVER.TOOL (with --preview: or an HTML file)")
        p.add_argument(
            "--preview",
            action="store_true",
            help="a fake host context and the bridge's messages, to develop it",
        )
        p = self._add("history", "The audit log of calls and decisions, with copy-as-code.", self._history)
        p.add_argument("--last", type=int, default=0, help="only the last N entries")
        p = self._add(
            "policy",
            "Show or change approval: policy [show | set PATTERN allow|ask|deny | unset PATTERN | "
            "trust SERVER | untrust SERVER].",
            self._policy,
        )
        p.add_argument(
            "action", nargs="?", default="show", choices=["show", "set", "unset", "trust", "untrust"]
        )
        p.add_argument("args", nargs="*")
        p = self._add(
            "serve",
            "Serve the notebook's tools over Streamable HTTP on 127.0.0.1 (token, console): serve [--stop].",
            self._serve_notebook,
        )
        p.add_argument("--http", default="127.0.0.1:0", metavar="HOST:PORT", help="default: any free port")
        p.add_argument(
            "--token", help="bearer token (default: a random one; shown masked, mcp.serving.token)"
        )
        p.add_argument(
            "--auth", metavar="ISSUER", help="OAuth instead: tokens from this authorization server"
        )
        p.add_argument(
            "--auth-scope", action="append", default=[], help="with --auth: a scope every call needs"
        )
        p.add_argument("--tool-scope", action="append", default=[], metavar="TOOL=SCOPE", help="with --auth")
        p.add_argument("--stop", action="store_true", help="stop serving")

    def overview(self) -> str:
        width = max(len(n) for n in self.subcommands)
        lines = ["%mcp SUBCOMMAND ... (each takes --help); the same from Python on the `mcp` object:"]
        lines += [f"  {name:<{width}}  {sub.summary}" for name, sub in self.subcommands.items()]
        lines.append(
            "%%mcp_tool [--name N] [--title T] [--destructive|--read-only]: a cell defining one tool"
        )
        return "\n".join(lines)

    # ---- dispatch ------------------------------------------------------------------------------------------
    @no_var_expand
    @line_magic
    def mcp(self, line: str) -> Any:
        """MCP from the notebook. ``%mcp`` alone lists the subcommands; ``%mcp SUB --help`` explains one."""
        sub_name, _, rest = line.strip().partition(" ")
        if sub_name in ("", "help", "-h", "--help"):
            print(self.overview())
            return None
        sub = self.subcommands.get(sub_name)
        if sub is None:
            raise UsageError(f"%mcp: unknown subcommand {sub_name!r}; one of: {', '.join(self.subcommands)}")
        head, _json = split_json(rest)
        if {"-h", "--help"} & set(_split(head.split(" -- ")[0])):
            print(sub.parser.format_help())
            return None
        if sub_name != "connect" and not _json:
            rest = self._expand_user_vars(rest)
        try:
            return sub.run(rest)
        except UsageError:
            raise
        except _USER_ERRORS as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise UsageError(f"%mcp {sub_name}: {message}") from exc

    def _expand_user_vars(self, text: str) -> str:
        # IPython's own $var / {expr} expansion from the user namespace, as other magics get it; like
        # IPython, a line that does not expand cleanly is left as typed.
        if self.shell is None or ("$" not in text and "{" not in text):
            return text
        try:
            return str(DollarFormatter().vformat(text, args=[], kwargs=dict(self.shell.user_ns)))
        except Exception:
            return text

    def _parse(self, name: str, text: str) -> argparse.Namespace:
        return self.subcommands[name].parser.parse_args(_split(text))

    # ---- subcommands ---------------------------------------------------------------------------------------
    def _tools(self, rest: str) -> Any:
        return self.api.tools(self._parse("tools", rest).server)

    def _call(self, rest: str) -> Any:
        head, json_text = split_json(rest)
        ns = self._parse("call", head)
        if json_text and ns.args:
            raise UsageError("%mcp call: give k=v arguments or one JSON object, not both")
        target = self.api.calls.resolve(ns.target)  # once: the schema parses the arguments, then the call
        schema = target.definition.get("inputSchema")
        arguments = parse_call_args(json_text, schema) if json_text else parse_kv(ns.args, schema)
        return self.api.call(target, arguments, call_timeout=ns.timeout)

    def _map(self, rest: str) -> Any:
        ns = self._parse("map", rest)
        namespace = self.shell.user_ns if self.shell is not None else {}
        if ns.rows not in namespace:
            raise UsageError(f"%mcp map: no variable {ns.rows!r} in the notebook (rows must be a variable)")
        options = {"concurrency": ns.concurrency, "on_error": ns.on_error, "retries": ns.retries}
        return self.api.map(ns.target, namespace[ns.rows], call_timeout=ns.timeout, **options)

    def _form(self, rest: str) -> Any:
        return self.api.form(self._parse("form", rest).target)

    def _connect(self, rest: str) -> Any:
        tokens = _split(rest)
        command: list[str] | None = None
        if "--" in tokens:
            at = tokens.index("--")
            tokens, command = tokens[:at], tokens[at + 1 :]
        ns = self.subcommands["connect"].parser.parse_args(tokens)
        if (command is None) == (ns.url is None):
            raise UsageError(
                "%mcp connect: give a URL or '-- COMMAND ARGS', e.g. %mcp connect s -- python server.py"
            )
        if command is not None and not command:
            raise UsageError("%mcp connect: nothing after '--': the command that starts the server")
        headers: dict[str, str] = {}
        for header in ns.header:
            key, colon, value = header.partition(":")
            if not colon or not key.strip():
                raise UsageError(f"%mcp connect: a header is 'Key: Value', not {header!r}")
            headers[key.strip()] = expand_env(value.strip())
        env: dict[str, str] | None = None
        if ns.env:
            env = dict(os.environ)
            for item in ns.env:
                key, eq, value = item.partition("=")
                if not eq or not key:
                    raise UsageError(f"%mcp connect: --env takes K=V, not {item!r}")
                env[key] = expand_env(value)
        if command is not None and headers:
            raise UsageError("%mcp connect: --header is for HTTP servers (a URL)")
        if command is not None and ns.auth:
            raise UsageError("%mcp connect: --auth is for HTTP servers (a URL)")
        target: str | list[str] = ns.url if command is None else command
        extra: dict[str, Any] = {"auth": _auth_options(ns)} if ns.auth else {}
        if ns.era:
            extra["era"] = ns.era
        client = self.api.connect(ns.name, target, headers=headers, env=env, cwd=ns.cwd, **extra)
        if not hasattr(client, "server_info"):
            return client  # the authorization card: it connects once the person has signed in
        info = client.server_info or {}
        version = client.negotiated_version
        title = f" — {info['title']}" if isinstance(info.get("title"), str) and info["title"] else ""
        print(
            f"connected {ns.name!r}: {info.get('name', '?')} {info.get('version', '')}".rstrip()
            + f"{title} (protocol {version.name if version else '?'}). Tools: %mcp tools {ns.name}"
        )
        instructions = client.aio.instructions
        if isinstance(instructions, str) and instructions.strip():  # the server's own guidance (a claim)
            print(f"The server's instructions: {instructions.strip()}")

    def _auth(self, rest: str) -> Any:
        return self.api.auth(self._parse("auth", rest).name)

    def _logout(self, rest: str) -> None:
        name = self._parse("logout", rest).name
        self.api.logout(name)
        print(f"signed out of {name!r}: its tokens are forgotten")

    def _disconnect(self, rest: str) -> None:
        name = self._parse("disconnect", rest).name
        self.api.disconnect(name)
        print(f"disconnected {name!r}")

    def _servers(self, rest: str) -> Any:
        self._parse("servers", rest)
        return self.api.servers()

    def _resources(self, rest: str) -> Any:
        return self.api.resources(self._parse("resources", rest).server)

    def _read(self, rest: str) -> Any:
        ns = self._parse("read", rest)
        return self.api.read(ns.uri, server=ns.server)

    def _prompts(self, rest: str) -> Any:
        return self.api.prompts(self._parse("prompts", rest).server)

    def _prompt(self, rest: str) -> Any:
        head, json_text = split_json(rest)
        ns = self._parse("prompt", head)
        arguments = parse_call_args(json_text) if json_text else parse_kv(ns.args, {"properties": {}})
        return self.api.prompt_get(ns.target, arguments)

    def _trace(self, rest: str) -> Any:
        ns = self._parse("trace", rest)
        return self.api.trace(ns.server, last=ns.last or None, diagram=ns.diagram, live=ns.live, otlp=ns.otlp)

    def _record(self, rest: str) -> Any:
        ns = self._parse("record", rest)
        if ns.stop:
            stopped = self.api.stop_recording(ns.server or ns.name)
            if not stopped:
                raise UsageError("%mcp record --stop: nothing is being recorded")
            return stopped[0] if len(stopped) == 1 else stopped
        if not ns.name:
            raise UsageError("%mcp record NAME [SERVER]: name the cassette")
        try:
            return self.api.record(ns.name, ns.server)
        except ValueError as exc:
            raise UsageError(f"%mcp record: {exc}") from exc

    def _lint(self, rest: str) -> Any:
        ns = self._parse("lint", rest)
        return self.api.lint(ns.target, long_call=ns.long)

    def _check(self, rest: str) -> Any:
        ns = self._parse("check", rest)
        samples = [parse_call_args(text) for text in ns.sample]
        errors = [parse_call_args(text) for text in ns.error]
        return self.api.check(ns.target, samples=samples, errors=errors, required=ns.required)

    def _tasks(self, rest: str) -> Any:
        from .calls.tasks import list_tasks

        return list_tasks(self.api.calls, self._parse("tasks", rest).server)

    def _task(self, rest: str) -> Any:
        from .calls.tasks import cancel_task, get_task

        ns = self.subcommands["task"].parser.parse_args(_ids_as_positionals(_split(rest), {"--server"}))
        try:
            if ns.action == "get":
                return get_task(self.api.calls, ns.target, ns.server)
            return cancel_task(self.api.calls, ns.target, ns.server)
        except ValueError as exc:
            raise UsageError(f"%mcp task: {exc}") from None

    def _app(self, rest: str) -> Any:
        ns = self._parse("app", rest)
        return self.api.app(ns.target, preview=ns.preview)

    def _log(self, rest: str) -> Any:
        ns = self._parse("log", rest)
        return self.api.log(ns.server, last=ns.last, level=ns.level)

    def _history(self, rest: str) -> Any:
        return self.api.history(last=self._parse("history", rest).last or None)

    def _serve_notebook(self, rest: str) -> Any:
        args = self._parse("serve", rest)
        if args.stop:
            print("stopped serving" if self.api.stop_serving() else "nothing was being served")
            return None
        host, _, port = args.http.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"%mcp serve: --http takes HOST:PORT, e.g. 127.0.0.1:8765 (got {args.http!r})")
        if not args.auth:
            return self.api.serve(host.strip("[]"), int(port), args.token)
        from ..auth.resource import ProtectedResource

        tool_scopes: dict[str, list[str]] = {}
        for item in args.tool_scope:
            tool, eq, scope = item.partition("=")
            if not eq or not tool or not scope:
                raise UsageError(f"%mcp serve: --tool-scope takes TOOL=SCOPE, not {item!r}")
            tool_scopes.setdefault(tool, []).append(scope)
        auth = ProtectedResource(None, args.auth, required_scopes=args.auth_scope, tool_scopes=tool_scopes)
        return self.api.serve(host.strip("[]"), int(port), args.token, auth=auth)

    def _policy(self, rest: str) -> Any:
        ns = self._parse("policy", rest)
        policy, args = self.api.policy, ns.args
        wanted = {"show": 0, "set": 2, "unset": 1, "trust": 1, "untrust": 1}[ns.action]
        if len(args) != wanted:
            raise UsageError(f"%mcp policy {ns.action} takes {wanted} argument(s); see %mcp policy --help")
        if ns.action == "set":
            if args[1].lower() not in VERDICTS:
                raise UsageError(f"%mcp policy set: {args[1]!r} is not one of allow, ask, deny")
            policy.set(args[0], args[1])
        elif ns.action == "unset" and not policy.unset(args[0]):
            raise UsageError(f"%mcp policy unset: there is no rule {args[0]!r}")
        elif ns.action == "trust":
            policy.trust(args[0])
        elif ns.action == "untrust":
            policy.untrust(args[0])
        return policy

    # ---- %%mcp_tool ----------------------------------------------------------------------------------------
    _tool_parser = _parser("", "Define (or redefine) a notebook tool from the function this cell defines.")
    _tool_parser.add_argument("--name", help="tool name (default: the function's name)")
    _tool_parser.add_argument("--title", help="human-readable title")
    _kind = _tool_parser.add_mutually_exclusive_group()
    _kind.add_argument("--destructive", action="store_true", help="annotate destructiveHint: true")
    _kind.add_argument("--read-only", action="store_true", help="annotate readOnlyHint: true")

    @cell_magic
    def mcp_tool(self, line: str, cell: str) -> None:
        """Run the cell in the notebook's namespace; the (last) function it defines becomes a tool.

        Re-running the cell replaces the tool; connected clients get ``notifications/tools/list_changed``.
        """
        tokens = _split(line)
        if {"-h", "--help"} & set(tokens):
            print(self._tool_parser.format_help())
            return
        ns = self._tool_parser.parse_args(tokens)
        shell = self.shell
        assert shell is not None
        source: str = shell.transform_cell(cell)  # type: ignore[no-untyped-call]
        tree = ast.parse(source)  # a SyntaxError is the user's and shows as one
        functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not functions:
            raise UsageError("%%mcp_tool: the cell must define a function (def or async def) at top level")
        filename = shell.compile.cache(source, shell.execution_count, raw_code=cell)
        exec(compile(tree, filename, "exec"), shell.user_global_ns, shell.user_ns)
        fn = shell.user_ns[functions[-1].name]
        annotations: dict[str, Any] = {}
        if ns.destructive:
            annotations = {"readOnlyHint": False, "destructiveHint": True}
        elif ns.read_only:
            annotations = {"readOnlyHint": True}
        options = {"name": ns.name, "title": ns.title, "annotations": annotations or None}
        name = ns.name or fn.__name__
        existed = name in self.api.server.tools
        try:
            tool = self.api.server.add_tool(fn, **{k: v for k, v in options.items() if v is not None})
        except (TypeError, ValueError) as exc:
            raise UsageError(f"%%mcp_tool: {exc}") from exc
        print(f"{'updated' if existed else 'defined'} tool {tool.name!r} (%mcp call {tool.name} ...)")


def load(ip: Any) -> NotebookMCP:
    """Register the magics and put ``mcp`` in the user namespace; nothing else (idempotent)."""
    api = _loaded.get(ip)
    if api is None:
        api = NotebookMCP(ip)
        _loaded[ip] = api
        ip.register_magics(MCPMagics(ip, api))
    ip.push({"mcp": api})
    return api


def unload(ip: Any) -> None:
    """Close the connections, remove the magics and ``mcp``."""
    api = _loaded.pop(ip, None)
    if api is None:
        return
    api.close()
    magics = ip.magics_manager.magics
    magics["line"].pop("mcp", None)
    magics["cell"].pop("mcp_tool", None)
    if ip.user_ns.get("mcp") is api:
        del ip.user_ns["mcp"]
        ip.user_ns_hidden.pop("mcp", None)


def _auth_options(ns: Any) -> dict[str, Any]:
    """``OAuth`` options from ``%mcp connect --auth`` flags (a secret only comes from the environment)."""
    options: dict[str, Any] = {}
    if ns.client_id:
        options["client_id"] = ns.client_id
    if ns.client_secret_env:
        secret = os.environ.get(ns.client_secret_env)
        if not secret:
            raise UsageError(f"%mcp connect: ${ns.client_secret_env} is not set")
        options["client_secret"] = secret
    if ns.scope:
        options["scopes"] = ns.scope
    return options
