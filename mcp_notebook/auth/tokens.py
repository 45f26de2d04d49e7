"""The tokens of one MCP server (:class:`Tokens`, as kept in the token store) and the token request that
obtains them (RFC 6749 §5: the answer checked, only the standard error codes repeated)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from .discovery import AuthError, ScopeRefused, ServerMetadata, check_fetch
from .fetch import JSON, json_or_none

__all__ = ["Tokens", "token_request"]

_TOKEN_ERRORS = frozenset(
    {
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
        "invalid_target",
    }
)


@dataclass
class Tokens:
    access_token: str
    issuer: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None

    def expired(self) -> bool:
        return self.expires_at is not None and time.time() > self.expires_at - 30

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


async def token_request(
    http: aiohttp.ClientSession,
    server_url: str,
    server: ServerMetadata,
    form: Mapping[str, str],
    headers: Mapping[str, str],
    scope: str | None,
) -> Tokens:
    """POST ``form`` to the token endpoint (which must pass the SSRF guard for ``server_url``, the server
    the person chose) and read the tokens; ``scope`` is what was asked for, kept when none is granted."""
    endpoint = server.endpoint("token_endpoint")
    check_fetch(server_url, endpoint)
    async with http.post(endpoint, data=dict(form), headers={**JSON, **headers}) as resp:
        data = await json_or_none(resp)
        status = resp.status
    if status >= 400 or not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
        error = data.get("error") if isinstance(data, dict) else None
        code = error if error in _TOKEN_ERRORS else ""  # RFC 6749 §5.2 codes only: no fetched text
        raise (ScopeRefused if error == "invalid_scope" else AuthError)(
            f"the token endpoint of {server.issuer} answered HTTP {status} {code}".strip()
        )
    if str(data.get("token_type", "bearer")).lower() != "bearer":
        raise AuthError("the token endpoint issued a token type other than Bearer")
    expires_in = data.get("expires_in")
    return Tokens(
        access_token=data["access_token"],
        issuer=server.issuer,
        refresh_token=data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else None,
        expires_at=time.time() + float(expires_in) if isinstance(expires_in, int | float) else None,
        scope=data.get("scope") if isinstance(data.get("scope"), str) else scope,
    )
