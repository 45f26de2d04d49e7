"""Fetching the authorization documents, behind the SSRF guard: the guarded resolver and HTTP session,
the discovery documents (every redirect hop checked, bodies bounded) and the discovery of a server's
authorization server (protected resource metadata, then authorization server metadata).

The rules are sans-IO in :mod:`.discovery`; this module does the HTTP with aiohttp for :class:`.OAuth`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import yarl

from .discovery import (
    AuthError,
    Challenge,
    ServerMetadata,
    as_metadata_urls,
    check_fetch,
    check_issuer,
    check_resource,
    fallback_endpoints,
    is_local_address,
    prm_urls,
    refuses_local,
)
from .resource import bounded_json

__all__ = ["GuardedResolver", "LocalAddress", "discover", "get_json", "guarded_session", "json_or_none"]

JSON = {"Accept": "application/json"}
_MAX_REDIRECTS = 5
_MCP_PROTOCOL = "2025-11-25"  # sent on discovery requests (spec: protocol version header on metadata)


class LocalAddress(OSError):
    """A name resolved to a local address while the server is public (the SSRF guard)."""


class GuardedResolver(aiohttp.ThreadedResolver):
    """aiohttp's resolver with the SSRF guard: while the MCP server being signed in to is public, a name
    resolving to a loopback, private or link-local address is refused. The server's own name is always
    resolved (the person chose it); when it resolves to a local address, the server is local and so may
    point anywhere local."""

    def __init__(self, server_url: Callable[[], str]) -> None:
        super().__init__()
        self._server_url = server_url
        self._local_servers: set[str] = set()

    async def resolve(self, host: str, port: int = 0, family: Any = 0) -> Any:
        found = await super().resolve(host, port, family)
        local = any(is_local_address(str(entry["host"])) for entry in found)
        server_url = self._server_url()
        server_host = (urlsplit(server_url).hostname or "").lower()
        if not server_host or host.lower() == server_host:
            if local:
                self._local_servers.add(host.lower())
            return found
        if local and refuses_local(server_url) and server_host not in self._local_servers:
            raise LocalAddress(f"{host} resolves to a local address")
        return found


def guarded_session(server_url: Callable[[], str], timeout: float) -> aiohttp.ClientSession:
    """An HTTP session whose every name is resolved through the SSRF guard: a public server's documents
    may not lead us to a name that resolves to a local address (checked at connect time, so DNS cannot
    change its mind). ``server_url`` gives the server the person chose, when a name is resolved."""
    connector = aiohttp.TCPConnector(resolver=GuardedResolver(server_url))
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout), connector=connector)


async def json_or_none(resp: aiohttp.ClientResponse) -> Any:
    try:
        return await bounded_json(resp)
    except ValueError:
        return None


async def get_json(http: aiohttp.ClientSession, server_url: str, url: str) -> dict[str, Any] | None:
    """A discovery document: every redirect hop passes the SSRF guard (``server_url``: the server the
    person chose), the body is bounded."""
    headers = {**JSON, "MCP-Protocol-Version": _MCP_PROTOCOL}
    for _ in range(_MAX_REDIRECTS + 1):
        check_fetch(server_url, url)
        try:
            async with http.get(url, headers=headers, allow_redirects=False) as resp:
                if resp.status in (301, 302, 303, 307, 308) and "Location" in resp.headers:
                    url = str(resp.url.join(yarl.URL(resp.headers["Location"])))
                    continue
                if resp.status != 200:
                    return None
                data = await bounded_json(resp)
        except ValueError:  # not JSON, or larger than the bound
            return None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, LocalAddress):
                raise AuthError(f"refusing to fetch {url!r}: {exc.os_error}") from None
            raise
        return data if isinstance(data, dict) else None
    raise AuthError(f"too many redirects fetching discovery documents (at most {_MAX_REDIRECTS})")


async def discover(
    http: aiohttp.ClientSession, server_url: str, challenge: Challenge | None
) -> ServerMetadata:
    """The authorization server of the MCP server at ``server_url`` and what it says about itself."""
    prm: dict[str, Any] | None = None
    for url in prm_urls(server_url, challenge):
        prm = await get_json(http, server_url, url)
        if prm is not None:
            break
    if prm is None:  # a 2025-03-26 server: its origin is the authorization server
        issuer = fallback_endpoints(server_url)["issuer"]
        metadata = await _as_metadata(http, server_url, issuer, strict=False)
        legacy = metadata is None
        return ServerMetadata(None, issuer, metadata or fallback_endpoints(server_url), None, legacy)
    resource = check_resource(server_url, prm.get("resource"))
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise AuthError("the protected resource metadata names no authorization server")
    issuer = servers[0]
    metadata = await _as_metadata(http, server_url, issuer, strict=True)
    if metadata is None:
        raise AuthError(f"no authorization server metadata found for {issuer}")
    return ServerMetadata(resource, str(metadata.get("issuer", issuer)), metadata, prm)


async def _as_metadata(
    http: aiohttp.ClientSession, server_url: str, issuer: str, *, strict: bool
) -> dict[str, Any] | None:
    for url in as_metadata_urls(issuer):
        metadata = await get_json(http, server_url, url)
        if metadata is not None:
            if strict:
                check_issuer(issuer, metadata)
            return metadata
    return None
