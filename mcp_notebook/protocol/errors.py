"""Errors, in two directions (STYLE rule 3).

    MCPError                      base of everything this package raises on purpose
    ├── LocalProtocolError        *we* tried something the protocol forbids (wrong state, capability)
    ├── RemoteProtocolError       the *peer* sent something the protocol forbids (malformed, unexpected id)
    ├── JSONRPCError              the peer answered a request with a JSON-RPC error (code, message, data)
    ├── ConnectionClosedError     the transport ended (EOF, process exit, HTTP failure); carries the detail
    └── RequestTimeoutError       no answer in time; a local condition, never a peer error code

JSON-RPC and MCP error codes: https://modelcontextprotocol.io/specification/2025-11-25/basic (schema.ts).
"""

from __future__ import annotations

from typing import Any

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


class MCPError(Exception):
    """Base class of the errors mcp_notebook raises on purpose."""


class LocalProtocolError(MCPError):
    """We tried to do something the protocol does not allow in the current state."""


class RemoteProtocolError(MCPError):
    """The peer sent something the protocol does not allow."""


class JSONRPCError(MCPError):
    """The peer answered with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ConnectionClosedError(MCPError):
    """The connection to the peer ended; ``detail`` says how (exit code, stderr tail, HTTP status...)."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message if not detail else f"{message}\n{detail}")
        self.detail = detail


class RequestTimeoutError(MCPError, TimeoutError):
    """A request got no answer within its timeout; a ``notifications/cancelled`` was sent for it."""
