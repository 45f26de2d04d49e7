"""The MCP client: one class for every transport, chosen by what it is given.

```python
async with Client(server) as c:                          # a Server object: in memory
async with Client(["node", "server.js", "stdio"]) as c:  # a command: stdio subprocess
async with Client("http://127.0.0.1:8000/mcp") as c:     # a URL: Streamable HTTP
    tools = await c.list_tools()
    result = await c.call_tool("add", {"a": 1, "b": 2})
```
Method names follow the official Python SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .connection import Connection, IncomingRequest, ProgressCallback
from .protocol.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
    RemoteProtocolError,
)
from .protocol.session import Role, Session, has_capability
from .protocol.versions import LATEST_LEGACY, ProtocolVersion
from .tools._validation import SchemaCheck
from .trace import Trace
from .transports.base import Transport
from .transports.memory import memory_pair

if TYPE_CHECKING:
    from .server import Server

__all__ = ["Client", "InputRequest"]

log = logging.getLogger("mcp_notebook.client")

Handler = Callable[[dict[str, Any]], Any]  # params -> result (sync or async)
InputKind = Literal["elicitation", "sampling", "roots"]

_INPUT_METHODS: dict[str, InputKind] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


@dataclass(frozen=True)
class InputRequest:
    """Something the server needs from the user side: elicitation, sampling or roots.

    Legacy servers ask with a server->client request; modern (2026-07-28) ones with an ``input_required``
    result. Both arrive here, so handlers are written once (DESIGN decision 1).
    """

    kind: InputKind
    params: dict[str, Any]
    server: str


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Client:
    """An MCP client session: ``async with Client(target) as c`` (or ``await c.connect()``, ``aclose()``)."""

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
        protocol_version: str = LATEST_LEGACY,
        trace_size: int = 2000,
        validate_output: bool = True,
    ) -> None:
        self._target = target
        self.name = name or _default_name(target)
        self._headers, self._env, self._cwd = headers, env, cwd
        self.timeout = timeout
        self.sampling_handler = sampling_handler
        self.elicitation_handler = elicitation_handler
        self.roots = roots
        self.logging_handler = logging_handler
        self.notification_handler = notification_handler
        self.protocol_version = protocol_version
        self.validate_output = validate_output
        self.trace = Trace(trace_size)
        self._info = client_info or {"name": "mcp-notebook", "version": "0.1.0"}
        self._session: Session | None = None
        self._connection: Connection | None = None
        self._server_task: asyncio.Task[None] | None = None
        self._tools: dict[str, dict[str, Any]] = {}
        self._validators: dict[str, SchemaCheck] = {}
        self._tools_stale = True

    # ---- connection --------------------------------------------------------------------------------------
    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        return caps

    async def _open_transport(self) -> Transport:
        target = self._target
        if isinstance(target, Transport):
            return target
        if isinstance(target, str):
            from .transports.http_client import connect_http

            return await connect_http(target, headers=self._headers, timeout=self.timeout)
        if isinstance(target, Sequence):
            from .transports.stdio import StdioClientTransport

            return await StdioClientTransport.start(
                list(target),
                env=self._env,
                cwd=self._cwd,
                name=self.name,
                on_stderr=self._on_stderr,
                on_invalid_line=self._on_invalid_line,
            )
        if hasattr(target, "serve"):  # a Server: join it in memory (still JSON on the wire)
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

    async def connect(self) -> Client:
        """Open the transport and run the initialize handshake."""
        transport = await self._open_transport()
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
        try:
            await self._connection.request(
                "initialize",
                {
                    "protocolVersion": self.protocol_version,
                    "capabilities": self.capabilities(),
                    "clientInfo": self._info,
                },
                timeout=self.timeout,
            )
            await self._connection.notify("notifications/initialized")
        except BaseException:
            await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
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
    def server_capabilities(self) -> dict[str, Any]:
        return self.session.peer_capabilities

    @property
    def negotiated_version(self) -> ProtocolVersion | None:
        return self.session.version

    @property
    def instructions(self) -> str | None:
        return self.session.instructions

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        """Send any request; the typed methods below are thin wrappers over this."""
        options.setdefault("timeout", self.timeout)
        return await (await self._live()).request(method, params, **options)

    async def _live(self) -> Connection:
        """The connection, after starting a new HTTP session if the server ended ours.

        transports#session-management: a 404 for our session id means the server dropped it, and the
        client MUST start a new one with a fresh initialize. Requests that were in flight have failed
        (they may or may not have run); the next one goes to the new session.
        """
        connection = self.connection
        if not connection.closed or not isinstance(self._target, str):
            return connection
        from .transports._http_common import SessionExpired

        if not isinstance(connection.close_reason, SessionExpired):
            return connection  # closed for good: the request fails with the reason
        self.trace.record("note", "the server ended the session (HTTP 404): starting a new one")
        await connection.aclose()
        self._tools_stale = True
        await self.connect()
        return self.connection

    # ---- tools -------------------------------------------------------------------------------------------
    async def _all_pages(self, method: str, field: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            items.extend(result.get(field, []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, across all pages; refreshes the cache used to validate structured results."""
        tools = await self._all_pages("tools/list", "tools")
        self._tools = {tool["name"]: tool for tool in tools if isinstance(tool, dict) and "name" in tool}
        self._validators.clear()
        self._tools_stale = False
        return tools

    def cached_tool(self, name: str) -> dict[str, Any] | None:
        return self._tools.get(name)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        progress_callback: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Call a tool. A tool's own failure is a result with ``isError: true``, not an exception.

        ``timeout`` (default: the client's) restarts on every progress notification when a
        ``progress_callback`` is given. Cancelling the awaiting task sends ``notifications/cancelled``.
        """
        await self._refresh_tools_if_needed(name)
        execution = (self._tools.get(name) or {}).get("execution")
        if isinstance(execution, dict) and execution.get("taskSupport") == "required":
            # server/tools#tool-execution: such a tool MUST be called as a task; we cannot do that yet.
            raise LocalProtocolError(
                f"tool {name!r} needs tasks (its execution.taskSupport is 'required'); "
                "mcp_notebook does not support task-augmented calls yet"
            )
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        result = await (await self._live()).request(
            "tools/call",
            params,
            timeout=timeout if timeout is not None else self.timeout,
            max_timeout=max_timeout,
            progress_callback=progress_callback,
        )
        if self.validate_output and not result.get("isError"):
            await self._check_structured(name, result)
        return result

    async def _refresh_tools_if_needed(self, name: str) -> None:
        """The tool cache (outputSchema, execution) is refreshed once per list_changed, not per call."""
        if (self._tools_stale or name not in self._tools) and has_capability(
            self.server_capabilities, ("tools",)
        ):
            with contextlib.suppress(JSONRPCError):
                await self.list_tools()
            self._tools_stale = False  # even when listing failed: do not retry on every call

    async def _check_structured(self, name: str, result: dict[str, Any]) -> None:
        """Structured results are checked against the tool's outputSchema (server/tools#output-schema)."""
        schema = (self._tools.get(name) or {}).get("outputSchema")
        if not isinstance(schema, dict):
            return
        if "structuredContent" not in result:
            raise RemoteProtocolError(f"tool {name!r} has an outputSchema but returned no structuredContent")
        check = self._validators.get(name)
        if check is None:
            try:
                check = self._validators[name] = SchemaCheck(schema)
            except ValueError as exc:
                raise RemoteProtocolError(f"tool {name!r} has an unusable outputSchema: {exc}") from exc
        problems = check.problems(result["structuredContent"])
        if problems:
            raise RemoteProtocolError(
                f"tool {name!r} returned structuredContent not matching its outputSchema: {problems[0]}"
            )

    # ---- resources, prompts, completion, logging, ping ---------------------------------------------------
    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._all_pages("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._all_pages("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri})

    async def subscribe_resource(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._all_pages("prompts/list", "prompts")

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
        await self.request("logging/setLevel", {"level": level})

    async def send_ping(self) -> None:
        await self.request("ping")

    async def send_roots_list_changed(self) -> None:
        await self.connection.notify("notifications/roots/list_changed")

    # ---- what the server sends us ------------------------------------------------------------------------
    async def _on_request(self, request: IncomingRequest) -> dict[str, Any]:
        if request.method == "ping":
            return {}
        kind = _INPUT_METHODS.get(request.method)
        if kind is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return await self.answer_input(InputRequest(kind, request.params, self.name))

    async def answer_input(self, request: InputRequest) -> dict[str, Any]:
        """Answer an elicitation, sampling or roots request with the registered handler."""
        if request.kind == "roots":
            roots = self.roots() if callable(self.roots) else self.roots
            if roots is None:
                raise JSONRPCError(METHOD_NOT_FOUND, "Roots are not supported by this client")
            return {"roots": list(await _maybe_await(roots))}
        handler = self.elicitation_handler if request.kind == "elicitation" else self.sampling_handler
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"This client does not support {request.kind}")
        if request.kind == "elicitation":
            mode = request.params.get("mode", "form")
            if mode not in ("form", "url"):
                raise JSONRPCError(INVALID_PARAMS, f"Unsupported elicitation mode: {mode!r}")
        result = await _maybe_await(handler(request.params))
        if not isinstance(result, dict):
            raise TypeError(f"the {request.kind} handler must return a dict, not {type(result).__name__}")
        return result

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            self._tools_stale = True
        elif method == "notifications/message" and self.logging_handler is not None:
            await _maybe_await(self.logging_handler(params))
        if self.notification_handler is not None:
            await _maybe_await(self.notification_handler(method, params))


def _default_name(target: object) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, Sequence):
        return " ".join(str(part) for part in target)[:80]
    name = getattr(target, "name", None)
    return str(name) if name else type(target).__name__
