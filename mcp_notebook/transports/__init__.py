"""Transports move serialized JSON-RPC messages; nothing else. See :mod:`.base` for the interface.

The HTTP transports load on first use, so importing this package does not import aiohttp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Transport, TransportClosed
from .memory import memory_pair

if TYPE_CHECKING:
    from .http_client import LegacySSEClientTransport, SessionExpired, StreamableHTTPClientTransport
    from .http_connect import HTTPClientTransport, connect_http
    from .http_server import HTTPSessionTransport, StreamableHTTPServer
    from .stdio import StdioClientTransport, StdioServerTransport, redirect_stdout_to_stderr

__all__ = [
    "HTTPClientTransport",
    "HTTPSessionTransport",
    "LegacySSEClientTransport",
    "SessionExpired",
    "StdioClientTransport",
    "StdioServerTransport",
    "StreamableHTTPClientTransport",
    "StreamableHTTPServer",
    "Transport",
    "TransportClosed",
    "connect_http",
    "memory_pair",
    "redirect_stdout_to_stderr",
]

_WHERE = {
    "HTTPClientTransport": ".http_connect",
    "LegacySSEClientTransport": ".http_client",
    "SessionExpired": ".http_client",
    "StreamableHTTPClientTransport": ".http_client",
    "connect_http": ".http_connect",
    "HTTPSessionTransport": ".http_server",
    "StreamableHTTPServer": ".http_server",
    "StdioClientTransport": ".stdio",
    "StdioServerTransport": ".stdio",
    "redirect_stdout_to_stderr": ".stdio",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
