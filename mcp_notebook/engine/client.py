"""The MCP client: one class for every transport, chosen by what it is given.

```python
async with Client(server) as c:                          # a Server object: in memory
async with Client(["node", "server.js", "stdio"]) as c:  # a command: stdio subprocess
async with Client("http://127.0.0.1:8000/mcp") as c:     # a URL: Streamable HTTP
    tools = await c.list_tools()
    result = await c.call_tool("add", {"a": 1, "b": 2})
```
Method names follow the official Python SDK.

Eras (DESIGN decision 1): ``era="auto"`` (the default) probes with ``server/discover`` and speaks
2026-07-28 statelessly to a modern server, falling back to the ``initialize`` handshake on anything that is
not a recognised modern answer; ``era="legacy"`` only does the handshake; ``era="modern"`` only speaks
2026-07-28. A modern client listens (``subscriptions/listen``) for the change notifications a legacy
session gets unasked, so both eras behave the same for the caller. The decisions live in
:mod:`mcp_notebook.protocol.era`; the listen stream and the remembered eras in :mod:`.modern_client`; the
tools cache and the outputSchema checks in :mod:`.client_tools`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..protocol import era as eras
from ..protocol.errors import (
    JSONRPCError,
    RemoteProtocolError,
)
from ..protocol.session import Role, Session
from ..protocol.shapes import check_result
from ..protocol.tasks import EXTENSION as TASKS_EXTENSION
from ..protocol.types import CallToolResult
from ..protocol.versions import LATEST_LEGACY, MODERN_VERSIONS, ProtocolVersion
from ..tools import jsonable_arguments
from ..tools.validation import SchemaCheck
from ..transports.base import Serves, Transport
from ..transports.memory import memory_pair
from .client_inputs import InputAnswers, InputRequest
from .client_tasks import TaskClientMixin, TaskStatusCallback
from .client_tools import ToolsCache
from .connection import Connection, ProgressCallback
from .modern_client import (
    MetaBlock,
    Subscriptions,
    modern_request,
    probe,
    remember_era,
    remembered_era,
    with_meta,
)
from .shared_run import SharedRun
from .trace import Trace

if TYPE_CHECKING:
    from ..auth.oauth import OAuth
    from .batch import BatchRun, OnError, OnOutcome
    from .server import Server

__all__ = ["Client", "InputRequest"]

Handler = Callable[[dict[str, Any]], Any]  # params -> result (sync or async)
_NO_TOOL: dict[str, Any] = {}  # read only: the tool of a name not in the cache


class Client(ToolsCache, InputAnswers, TaskClientMixin):
    """An MCP client session: ``async with Client(target) as c`` (or ``await c.connect()``, ``aclose()``)."""

    subscriptions: Subscriptions

    def __init__(
        self,
        target: Server | Sequence[str] | str | Transport,
        *,
        name: str | None = None,
        client_info: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 60.0,
        sampling_handler: Handler | None = None,
        elicitation_handler: Handler | None = None,
        roots: list[dict[str, Any]] | Callable[[], Any] | None = None,
        logging_handler: Callable[[dict[str, Any]], Any] | None = None,
        notification_handler: Callable[[str, dict[str, Any]], Any] | None = None,
        protocol_version: str | None = None,
        era: eras.EraMode | None = None,
        probe_timeout: float = 10.0,
        trace_size: int = 2000,
        validate_output: bool = True,
        auth: OAuth | None = None,
        extensions: dict[str, Any] | None = None,
        listen: bool = True,
    ) -> None:
        """``protocol_version``: a legacy version (``initialize`` asks for it; implies ``era="legacy"``
        unless ``era`` says otherwise) or a modern one (the version the probe prefers; implies "auto").
        ``era``: "auto" (default), "legacy" or "modern". ``probe_timeout`` bounds the wait for the
        ``server/discover`` answer; no answer in time counts as a legacy server. ``auth``: an
        :class:`mcp_notebook.auth.OAuth` for servers that require MCP authorization (HTTP only).
        ``listen``: in 2026-07-28, keep a ``subscriptions/listen`` stream open for the list_changed
        notifications the server declares (and watched resources); handlers for any notification:
        ``client.subscriptions.on(method, fn)``."""
        self._target = target
        self.name = name or _default_name(target)
        self._headers, self._env, self._cwd = headers, env, cwd
        self.auth = auth
        self.timeout = timeout
        self.sampling_handler = sampling_handler
        self.elicitation_handler = elicitation_handler
        self.roots = roots
        self.logging_handler = logging_handler
        self.notification_handler = notification_handler
        if era is not None and era not in eras.ERA_MODES:
            raise ValueError(f"era must be one of {', '.join(eras.ERA_MODES)}, not {era!r}")
        is_modern = protocol_version in MODERN_VERSIONS  # next two: what initialize and the probe ask for
        self.protocol_version = protocol_version if protocol_version and not is_modern else LATEST_LEGACY
        self.modern_version = protocol_version if protocol_version and is_modern else MODERN_VERSIONS[-1]
        self.era: eras.EraMode = era or ("legacy" if protocol_version and not is_modern else "auto")
        self.listen = listen
        self.subscriptions = Subscriptions(self)
        self.subscriptions.on_missed(self._forget_tools)
        self.probe_timeout = probe_timeout
        self._modern = False  # True once the server answered server/discover: 2026-07-28 requests
        self._log_level: str | None = None
        self._tools_deadline: float | None = None  # modern: when the cached tools/list goes stale (ttlMs)
        self.validate_output = validate_output
        self.extensions = dict(extensions or {})  # declared under capabilities.extensions (SEP-2133)
        self.meta_block = MetaBlock(Client.capabilities)  # modern: the _meta fields each request carries
        self.trace = Trace(trace_size)
        self._info = client_info or {"name": "mcp-notebook", "version": __version__}
        self._session: Session | None = None
        self._connection: Connection | None = None
        self._server_task: asyncio.Task[None] | None = None
        self._reopening = SharedRun()  # the new connection requests that find ours closed wait for (_live)
        self._listing = SharedRun()  # the tools listing calls that need one wait for (client_tools)
        self._reopen_failed = False  # the last new connection failed (say, a 503 while starting): try again
        self._tools: dict[str, dict[str, Any]] = {}
        # tool -> (its listed outputSchema, its check): schema_check's cache key is a json.dumps per call
        self._output_checks: dict[str, tuple[dict[str, Any], SchemaCheck]] = {}
        #: Tools the last ``tools/list`` left out, by name (``#index`` without one): why (``%mcp lint``).
        self.dropped_tools: dict[str, str] = {}
        self._tools_stale = True

    # ---- connection --------------------------------------------------------------------------------------
    def capabilities(self) -> dict[str, Any]:
        """What this client declares: in ``initialize`` (legacy) or in every request's ``_meta`` (modern)."""
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self._modern:  # tasks: the 2026 extension, or 2025-11-25's capability (client_tasks.py)
            extensions = {TASKS_EXTENSION: {}, **self.extensions}
            return {**eras.client_capabilities(caps), "extensions": extensions}
        if self.extensions:
            caps["extensions"] = dict(self.extensions)
        tasks = self._task_capabilities()
        return {**caps, "tasks": tasks} if tasks else caps

    @property
    def is_modern(self) -> bool:
        """True when this client speaks 2026-07-28 (stateless requests) with the server."""
        return self._modern

    async def _open_transport(self) -> Transport:
        target = self._target
        if isinstance(target, Transport):
            return target
        if isinstance(target, str):
            from ..transports.http_connect import connect_http

            if self.auth is not None:  # the OAuth middleware sees every HTTP request of this connection
                # Sign in first, so the time a person takes is not counted against the era probe's timeout.
                await self.auth.sign_in(target, headers=self._headers)
                middlewares = (self.auth.middleware,)
                return await connect_http(
                    target, headers=self._headers, timeout=self.timeout, middlewares=middlewares
                )
            return await connect_http(target, headers=self._headers, timeout=self.timeout)
        if isinstance(target, Sequence):
            from ..transports.stdio import StdioClientTransport

            return await StdioClientTransport.start(
                list(target),
                env=self._env,
                cwd=self._cwd,
                name=self.name,
                on_stderr=self._on_stderr,
                on_invalid_line=self._on_invalid_line,
            )
        if isinstance(target, Serves):  # a Server: join it in memory (still JSON on the wire)
            client_side, server_side = memory_pair()
            self._server_task = asyncio.get_running_loop().create_task(target.serve(server_side))
            return client_side
        raise TypeError(
            f"Client() needs a Server, a command list, a URL or a Transport, not {type(target).__name__}"
        )

    def _on_stderr(self, line: str) -> None:
        self.trace.record("note", f"[stderr] {line}")

    def _on_invalid_line(self, line: str) -> None:
        self.trace.record("note", f"[not JSON-RPC on stdout, ignored] {line}")

    async def _start(self) -> Connection:
        transport = await self._open_transport()
        self._modern = False
        self._session = Session(Role.CLIENT, info=self._info, capabilities=self.capabilities())
        self._connection = Connection(
            self._session,
            transport,
            request_handler=self._on_request,
            notification_handler=self._on_notification,
            trace=self.trace,
            name=self.name,
        )
        self._connection.start()
        self.subscriptions.opened()
        return self._connection

    async def connect(self) -> Client:
        """Open the transport and find the era: probe ``server/discover`` (modern) and, unless the server
        answered it, run the ``initialize`` handshake (legacy)."""
        connection = await self._start()
        try:
            if self.era == "legacy":
                await self._initialize(self.protocol_version)
                return self
            if self.era == "auto" and remembered_era(self._target) == "legacy":
                with contextlib.suppress(JSONRPCError):  # known legacy: skip the probe; re-probe on failure
                    await self._initialize(self.protocol_version)
                    return self
                remember_era(self._target, None)
                await connection.aclose()
                connection = await self._start()
            verdict = await probe(self, connection)
            if isinstance(verdict, eras.UseModern):
                found = verdict.server
                self.session.adopt_modern(
                    found.version, found.capabilities, found.server_info, found.instructions
                )
                self._modern = True
                self.trace.record("note", f"the server speaks {found.version}: stateless requests")
                remember_era(self._target, "modern")
                if self.listen:
                    await self.subscriptions.refresh()
                return self
            gone = connection.close_reason if connection.closed else None
            if gone is not None and self._reconnects(gone) == "unreachable":
                raise gone  # nothing listens there: not a verdict on its era
            if self.era == "modern":
                raise RemoteProtocolError(f"the server does not speak 2026-07-28: {verdict.reason}")
            self.trace.record("note", f"legacy server ({verdict.reason}): initialize handshake")
            if connection.closed and not isinstance(self._target, Transport):
                await connection.aclose()  # the probe ended the connection: start over, legacy
                await self._start()
            await self._initialize(verdict.version or self.protocol_version)
            remember_era(self._target, "legacy")
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _initialize(self, version: str) -> None:
        params = {"protocolVersion": version, "capabilities": self.capabilities(), "clientInfo": self._info}
        result = await self.connection.request("initialize", params, timeout=self.timeout)
        check_result("initialize", params, result)
        await self.connection.notify("notifications/initialized")

    async def aclose(self) -> None:
        reopening = self._reopening.running
        if reopening is not None and not reopening.done() and reopening is not asyncio.current_task():
            reopening.cancel()  # closed while a request was connecting again: no connection after close
            await asyncio.gather(reopening, return_exceptions=True)
        if reopening is not asyncio.current_task():
            self._reopen_failed = False  # closed by this side: no request connects again
        await self.subscriptions.close()
        if self._connection is not None:
            await self._connection.aclose()
        if self._server_task is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._server_task), timeout=5)
            if not self._server_task.done():
                self._server_task.cancel()

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def connection(self) -> Connection:
        if self._connection is None:
            raise RuntimeError(
                "the client is not connected: use 'async with Client(...)' or 'await client.connect()'"
            )
        return self._connection

    @property
    def session(self) -> Session:
        return self.connection.session

    @property
    def server_info(self) -> dict[str, Any]:
        return self.session.peer_info

    @property
    def client_info(self) -> dict[str, Any]:
        """What this client declares about itself (``clientInfo``)."""
        return self._info

    @property
    def log_level(self) -> str | None:
        """The log level asked of the server (``logging/setLevel``; the 2026 era sends it per request)."""
        return self._log_level

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.session.peer_capabilities

    @property
    def negotiated_version(self) -> ProtocolVersion | None:
        return self.session.version

    @property
    def instructions(self) -> str | None:
        return self.session.instructions

    def request(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """Send any request (await it); the typed methods below are thin wrappers over this.

        Modern era: ``_meta`` (version, capabilities, client info) is added, and an ``input_required``
        result is answered with this client's handlers and retried (MRTR) until the result is complete.
        A connected modern client's request is :func:`modern_request`'s coroutine itself (no coroutine
        around it); nothing is checked or sent before it is awaited.
        """
        options.setdefault("timeout", self.timeout)
        connection = self._connection
        if connection is None or connection.closed or not self._modern:
            return self._request(method, params, options)
        return modern_request(self, connection, method, params, options, self._live)

    async def _request(self, method: str, params: dict[str, Any] | None, options: Any) -> dict[str, Any]:
        connection = self._connection
        if connection is None or connection.closed:  # not connected, or the server ended our HTTP session
            connection = await self._live()
        if not self._modern:
            result = await connection.request(method, params, **options)
            check_result(method, params, result)  # a malformed result is an error here, not a surprise later
            return result
        return await modern_request(self, connection, method, params, options)

    def _with_meta(self, params: dict[str, Any]) -> dict[str, Any]:
        return with_meta(self, params)

    def closed_for_good(self) -> bool:
        """The connection is closed and the server cannot be had now: a map gives up its remaining rows.
        Only an HTTP session the server ended (404) is started again at once; an HTTP server that was
        unreachable is tried again by the next request (see ``_live``); a server gone (memory, stdio) stays
        gone, and so does a client closed by this side."""
        connection = self._connection
        if connection is None or not connection.closed:
            return False
        return self._reconnects(connection.close_reason) != "expired"

    async def _live(self) -> Connection:
        """The connection, after connecting again if the HTTP server ended our session or was unreachable.

        transports#session-management: a 404 for our session id means the server dropped it, and the
        client MUST start a new one with a fresh initialize. A server that refused the connection (down,
        restarting) is connected to afresh by the next request: when it is back, calls work again; while
        it is not, each request fails at once with why. Requests that were in flight have failed (they
        may or may not have run). Requests that find the connection closed together wait for one new
        connection, not one each.
        """
        connection = self.connection
        if not connection.closed or not isinstance(self._target, str):
            return connection
        reason = connection.close_reason
        if self._reconnects(reason) is None and not self._reopen_failed:
            return connection  # closed by this side, or for another reason: the request fails with it
        await self._reopening.join(lambda: self._reopen(connection, reason))  # or the one under way
        return self.connection

    def _reconnects(self, reason: BaseException | None) -> str | None:
        """Why the next request may connect again after ``reason`` closed the connection: "expired" (the
        HTTP server ended our session: 404), "unreachable" (nothing accepted the connection); None: it may
        not (not HTTP, or closed by this side or for another reason)."""
        if not isinstance(self._target, str) or reason is None:
            return None
        from ..transports.http_client import ServerUnreachable, SessionExpired  # aiohttp: HTTP clients only

        if isinstance(reason, SessionExpired):
            return "expired"
        return "unreachable" if isinstance(reason, ServerUnreachable) else None

    async def _reopen(self, connection: Connection, reason: BaseException | None) -> None:
        kind = self._reconnects(reason)
        if kind == "expired":
            self.trace.record("note", "the server ended the session (HTTP 404): starting a new one")
        elif kind == "unreachable":
            self.trace.record("note", f"the server was unreachable ({reason}): connecting again")
        else:
            self.trace.record("note", "the last attempt to connect again failed: connecting again")
        await connection.aclose()
        self._tools_stale = True
        try:
            await self.connect()
        except BaseException:
            self._reopen_failed = True  # (connect closed the client) the next request tries again
            raise
        self._reopen_failed = False

    # ---- tools (the cache and the outputSchema checks: client_tools.py) ----------------------------------
    async def _all_pages(self, method: str, field: str) -> tuple[list[dict[str, Any]], float]:
        """Every item across the pages, and when the list goes stale (modern: the smallest ``ttlMs``)."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        deadline = time.monotonic() + 3600.0
        seen: set[str] = set()
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            items.extend(result.get(field, []))
            deadline = min(deadline, eras.cache_deadline(eras.era_meta(result)))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items, deadline
            if cursor in seen:  # the same page again: following it would never end
                raise RemoteProtocolError(f"{method}: the server sent the cursor {cursor!r} twice")
            seen.add(cursor)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        progress_callback: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
        task: bool | dict[str, Any] | None = None,
        on_task: TaskStatusCallback | None = None,
    ) -> CallToolResult:
        """Call a tool. A tool's own failure is a result with ``isError: true``, not an exception.

        ``task``: run it as a task (2025-11-25; ``{"ttl": ms}`` to ask for a retention); by default only
        tools that require it are. With 2026-07-28 the server decides. A task is followed to its end
        (``on_task`` hears every status); cancelling the awaiting coroutine sends ``tasks/cancel``.

        ``timeout`` (default: the client's) restarts on every progress notification when a
        ``progress_callback`` is given. Cancelling the awaiting task sends ``notifications/cancelled``.
        """
        if self._tools_stale or name not in self._tools:
            await self._refresh_tools_if_needed(name)
        # a DataFrame, numpy values, datetimes... as their JSON form (README "Data frames and arrays")
        params: dict[str, Any] = {"name": name, "arguments": jsonable_arguments(arguments)}
        task_params = None if self._modern else self._task_for_call(name, task)  # modern: the server decides
        if task_params is not None:
            params["task"] = task_params
        if meta:
            params["_meta"] = meta
        result = await self.request(
            "tools/call",
            params,
            timeout=timeout if timeout is not None else self.timeout,
            max_timeout=max_timeout,
            progress_callback=progress_callback,
        )
        if "task" in result if not self._modern else result.get("resultType") == "task":
            result = await self._follow_task(name, result, on_task)
            check_result("tools/call", None, result)  # the task's payload: the tool's own result
        if (
            self.validate_output
            and not result.get("isError")
            and (self._tools.get(name) or _NO_TOOL).get("outputSchema") is not None  # else nothing to check
            and self._structured_problem(name, result)
        ):
            await self._check_structured(name, result)  # a mismatch: judged again, maybe by a fresh list
        checked: CallToolResult = result  # type: ignore[assignment]  # request() checked its shape
        return checked

    async def map(
        self,
        name: str,
        rows: Any,
        *,
        concurrency: int = 8,
        on_error: OnError = "collect",
        retries: int = 2,
        backoff: float = 0.5,
        timeout: float | None = None,
        on_outcome: OnOutcome | None = None,
        run: BatchRun | None = None,
    ) -> BatchRun:
        """Call tool ``name`` once per row (a DataFrame, a list of dicts, any iterable), ``concurrency`` at a
        time, transient failures retried; ``.to_pandas()`` of the returned run is aligned with the input.
        See :mod:`mcp_notebook.engine.batch`."""
        from .batch import call_many, single_argument

        await self._refresh_tools_if_needed(name)

        def call(arguments: dict[str, Any]) -> Any:
            return self.call_tool(name, arguments, timeout=timeout)

        argument = single_argument(self._tools.get(name))
        return await call_many(
            call,
            rows,
            concurrency=concurrency,
            on_error=on_error,
            retries=retries,
            backoff=backoff,
            argument=argument,
            on_outcome=on_outcome,
            run=run,
            gone=self.closed_for_good,
        )

    # ---- resources, prompts, completion, logging, ping ---------------------------------------------------
    async def list_resources(self) -> list[dict[str, Any]]:
        return (await self._all_pages("resources/list", "resources"))[0]

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return (await self._all_pages("resources/templates/list", "resourceTemplates"))[0]

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri})

    async def subscribe_resource(self, uri: str) -> None:
        """Hear ``notifications/resources/updated`` for ``uri`` (modern: through the listen stream)."""
        if self._modern:
            return await self.subscriptions.watch("resourceSubscriptions", uri)
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        if self._modern:
            return await self.subscriptions.unwatch("resourceSubscriptions", uri)
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self) -> list[dict[str, Any]]:
        return (await self._all_pages("prompts/list", "prompts"))[0]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.request("prompts/get", params)

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, str], context_arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context_arguments:
            params["context"] = {"arguments": context_arguments}
        result = await self.request("completion/complete", params)
        completion: dict[str, Any] = result.get("completion", {})
        return completion

    async def set_logging_level(self, level: str) -> None:
        """Legacy: ``logging/setLevel``. Modern: the level travels in every request's ``_meta``."""
        if self._modern:
            self._log_level = level
            return
        await self.request("logging/setLevel", {"level": level})

    async def send_ping(self) -> None:
        """A round trip: ``ping`` (legacy); 2026-07-28 has no ping, so ``server/discover`` stands in."""
        await self.request("server/discover" if self._modern else "ping")

    async def send_roots_list_changed(self) -> None:
        if self._modern:
            return  # 2026-07-28: roots are asked for per request; there is no list_changed to send
        await self.connection.notify("notifications/roots/list_changed")


def _default_name(target: object) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, Sequence):
        return " ".join(str(part) for part in target)[:80]
    name = getattr(target, "name", None)
    return str(name) if name else type(target).__name__
