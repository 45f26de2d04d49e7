"""The exceptions every layer shares, in one small module at the bottom of the package (STYLE rule 3).

    MCPError                      base of everything this package raises on purpose
    ├── LocalProtocolError        *we* tried something the protocol forbids (wrong state, capability)
    ├── RemoteProtocolError       the *peer* sent something the protocol forbids (malformed, unexpected id)
    ├── JSONRPCError              the peer answered a request with a JSON-RPC error (code, message, data)
    ├── ConnectionClosedError     the transport ended (EOF, process exit, HTTP failure); carries the detail
    │   └── transports.base.TransportClosed   raised by transports (translated there, ``raise ... from``)
    ├── RequestTimeoutError       no answer in time; a local condition, never a peer error code
    └── TargetError               ``mcp-notebook serve TARGET``: the target cannot be found or is not a Server

Stdlib only and importing nothing of the package, so ``protocol/`` (sans-IO) and every layer above may use it.
``protocol/errors.py`` re-exports the protocol ones next to the JSON-RPC error codes.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConnectionClosedError",
    "JSONRPCError",
    "LocalProtocolError",
    "MCPError",
    "RemoteProtocolError",
    "RequestTimeoutError",
    "TargetError",
]


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


class TargetError(MCPError):
    """The command line's target cannot be found, or is not a Server: the user's command is wrong (exit 2)."""
