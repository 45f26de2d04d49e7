"""mcp_notebook: build, call, see and teach the Model Context Protocol from notebook cells.

```python
from mcp_notebook import Server, Client

server = Server("demo")

@server.tool
def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b

async with Client(server) as client:          # in memory; a command list means stdio, a URL means HTTP
    result = await client.call_tool("add", {"a": 1, "b": 2})
```

Names are imported lazily, so ``import mcp_notebook`` stays cheap (and ``%load_ext mcp_notebook`` fast).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .auth.oauth import OAuth
    from .engine.cassette import Recording
    from .engine.client import Client
    from .engine.replay import Cassette
    from .engine.server import Server
    from .engine.sync import SyncClient, connect
    from .engine.tables import to_pandas
    from .protocol.errors import ConnectionClosedError, JSONRPCError, MCPError, RequestTimeoutError
    from .tools import Audio, Context, EmbeddedResource, Field, Image, ResourceLink, ToolError, ToolResult

__all__ = [
    "Audio",
    "Cassette",
    "Client",
    "ConnectionClosedError",
    "Context",
    "EmbeddedResource",
    "Field",
    "Image",
    "JSONRPCError",
    "MCPError",
    "OAuth",
    "Recording",
    "RequestTimeoutError",
    "ResourceLink",
    "Server",
    "SyncClient",
    "ToolError",
    "ToolResult",
    "connect",
    "load_ipython_extension",
    "to_pandas",
    "unload_ipython_extension",
]

_WHERE = {
    "OAuth": ".auth.oauth",
    "Cassette": ".engine.replay",
    "Client": ".engine.client",
    "Recording": ".engine.cassette",
    "Server": ".engine.server",
    "SyncClient": ".engine.sync",
    "connect": ".engine.sync",
    "to_pandas": ".engine.tables",
    "ConnectionClosedError": ".protocol.errors",
    "JSONRPCError": ".protocol.errors",
    "MCPError": ".protocol.errors",
    "RequestTimeoutError": ".protocol.errors",
    **dict.fromkeys(
        ["Audio", "Context", "EmbeddedResource", "Field", "Image", "ResourceLink", "ToolError", "ToolResult"],
        ".tools",
    ),
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext mcp_notebook``: register the magics and the notebook's ``mcp`` object."""
    from .notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.magics import unload

    unload(ipython)
