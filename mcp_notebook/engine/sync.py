"""The synchronous client: a thin bridge over :class:`~mcp_notebook.engine.client.Client` (STYLE rule 5).

Each method runs the async one on the background runtime loop, so it works the same in a script and in a
running Jupyter kernel (whose own loop is busy running the cell).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from .client import Client
from .runtime import Runtime, get_runtime

if TYPE_CHECKING:
    from ..protocol.versions import ProtocolVersion

__all__ = ["SyncClient", "connect"]

P = ParamSpec("P")
T = TypeVar("T")


def _bridge(
    method: Callable[Concatenate[Client, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[SyncClient, P], T]:
    def call(self: SyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.runtime.run(method(self.aio, *args, **kwargs))

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call


class SyncClient:
    """``Client`` with blocking methods. ``.aio`` is the async client (it lives on ``.runtime``'s loop)."""

    def __init__(self, target: Any, *, runtime: Runtime | None = None, **options: Any) -> None:
        self.runtime = runtime or get_runtime()
        self.aio = Client(target, **options)
        self.runtime.close_at_stop(self.aio)  # a client left open is closed at exit, not dropped mid-flight
        self.runtime.run(self._connect())

    async def _connect(self) -> None:
        await self.aio.connect()

    def __repr__(self) -> str:
        connection = self.aio._connection
        if connection is None or connection.closed:
            return f"<SyncClient {self.name!r}, not connected>"
        info = self.server_info
        server = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        return f"<SyncClient {self.name!r}: {server}, protocol {self.negotiated_version}>"

    def close(self) -> None:
        self.runtime.run(self.aio.aclose())

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return self.aio.name

    @property
    def server_info(self) -> dict[str, Any]:
        return self.aio.server_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.aio.server_capabilities

    @property
    def negotiated_version(self) -> ProtocolVersion | None:
        return self.aio.negotiated_version

    @property
    def trace(self) -> Any:
        return self.aio.trace

    @property
    def dropped_tools(self) -> dict[str, str]:
        """Tools the last ``tools/list`` left out (malformed), by name: why."""
        return self.aio.dropped_tools

    def request(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        return self.runtime.run(self.aio.request(method, params, **options))

    list_tools = _bridge(Client.list_tools)
    tools_by_name = _bridge(Client.tools_by_name)
    call_tool = _bridge(Client.call_tool)
    map = _bridge(Client.map)
    list_resources = _bridge(Client.list_resources)
    list_resource_templates = _bridge(Client.list_resource_templates)
    read_resource = _bridge(Client.read_resource)
    subscribe_resource = _bridge(Client.subscribe_resource)
    unsubscribe_resource = _bridge(Client.unsubscribe_resource)
    list_prompts = _bridge(Client.list_prompts)
    get_prompt = _bridge(Client.get_prompt)
    complete = _bridge(Client.complete)
    set_logging_level = _bridge(Client.set_logging_level)
    send_ping = _bridge(Client.send_ping)


def connect(target: Any, **options: Any) -> SyncClient:
    """Connect synchronously: ``c = connect(server_or_command_or_url); c.call_tool("add", {"a": 1})``."""
    return SyncClient(target, **options)
