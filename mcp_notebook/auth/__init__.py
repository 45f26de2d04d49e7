"""MCP authorization (OAuth 2.1): the client side (:class:`OAuth`, used as ``Client(url, auth=OAuth())``),
token stores, and the protected-resource side for served notebooks (:mod:`.resource`).

``discovery`` and ``grant`` are sans-IO (stdlib only); ``oauth`` (with ``fetch``, ``flows`` and ``tokens``),
``loopback`` and ``resource`` do the HTTP with aiohttp. Names are imported lazily so ``import mcp_notebook``
stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .discovery import AuthError
    from .oauth import AuthorizationFailed, OAuth
    from .resource import ProtectedResource
    from .store import FileTokenStore, KeyringTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "AuthError",
    "AuthorizationFailed",
    "FileTokenStore",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "OAuth",
    "ProtectedResource",
    "TokenStore",
]

_WHERE = {
    "AuthError": ".discovery",
    "AuthorizationFailed": ".oauth",
    "OAuth": ".oauth",
    "ProtectedResource": ".resource",
    "FileTokenStore": ".store",
    "KeyringTokenStore": ".store",
    "MemoryTokenStore": ".store",
    "TokenStore": ".store",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_notebook.auth' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
