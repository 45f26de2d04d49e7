"""JSON-RPC and MCP error codes, and the protocol's errors (defined in :mod:`mcp_notebook.errors`).

    MCPError                      base of everything this package raises on purpose
    ├── LocalProtocolError        *we* tried something the protocol forbids (wrong state, capability)
    ├── RemoteProtocolError       the *peer* sent something the protocol forbids (malformed, unexpected id)
    ├── JSONRPCError              the peer answered a request with a JSON-RPC error (code, message, data)
    ├── ConnectionClosedError     the transport ended (EOF, process exit, HTTP failure); carries the detail
    └── RequestTimeoutError       no answer in time; a local condition, never a peer error code

JSON-RPC and MCP error codes: https://modelcontextprotocol.io/specification/2025-11-25/basic (schema.ts).
"""

from __future__ import annotations

from ..errors import (
    ConnectionClosedError,
    JSONRPCError,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
)

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "URL_ELICITATION_REQUIRED",
    "ConnectionClosedError",
    "JSONRPCError",
    "LocalProtocolError",
    "MCPError",
    "RemoteProtocolError",
    "RequestTimeoutError",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # legacy (<= 2025-11-25); 2026-07-28 uses -32602
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only
