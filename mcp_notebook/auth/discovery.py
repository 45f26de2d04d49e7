"""Where the OAuth documents of an MCP server are, and what they say (sans-IO: stdlib only).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization (and the 2026-07-28
``basic/authorization/*`` pages): a 401's ``WWW-Authenticate`` names the protected resource metadata
(RFC 9728), else the well-known URIs are tried (path-inserted, then root); the metadata names authorization
servers, whose metadata comes from RFC 8414 or OpenID discovery URIs (path-aware order). Servers of the
2025-03-26 era had no resource metadata: their origin is the authorization server, with default endpoints.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "AuthError",
    "Challenge",
    "ServerMetadata",
    "as_metadata_urls",
    "canonical_resource",
    "check_fetch",
    "check_issuer",
    "check_resource",
    "fallback_endpoints",
    "is_local_address",
    "parse_www_authenticate",
    "prm_urls",
    "refuses_local",
    "select_scope",
]


class AuthError(Exception):
    """The authorization step failed; the message says where, and never contains a secret."""


class ScopeRefused(AuthError):
    """The authorization server answered ``invalid_scope``: the client's registration may not cover the
    scope asked for (a registration made without ``scope`` gets none from some servers)."""


# RFC 9110 §11.6.1: challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
_PARAM = re.compile(r'\s*([!#$%&\'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')


@dataclass(frozen=True)
class Challenge:
    """One ``Bearer`` challenge of a ``WWW-Authenticate`` header."""

    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scope(self) -> str | None:
        return self.params.get("scope") or None

    @property
    def error(self) -> str | None:
        return self.params.get("error")


def parse_www_authenticate(header: str | None) -> Challenge | None:
    """The Bearer challenge of a ``WWW-Authenticate`` value, or None when there is none."""
    if not header:
        return None
    match = re.search(r"(?i)(?:^|,)\s*bearer(?:\s+|$)", header)
    if match is None:
        return None
    rest = header[match.end() :]
    params: dict[str, str] = {}
    pos = 0
    while pos < len(rest):
        found = _PARAM.match(rest, pos)
        if found is None or found.end() == pos:
            break
        name, value = found.group(1).lower(), found.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params.setdefault(name, value)
        pos = found.end()
    return Challenge(params)


def canonical_resource(url: str) -> str:
    """RFC 8707 resource indicator of an MCP server URL: lowercase scheme and host, no fragment or query,
    no trailing slash unless it is the whole path (https://modelcontextprotocol.io/specification/2025-11-25/
    basic/authorization#canonical-server-uri)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def prm_urls(server_url: str, challenge: Challenge | None) -> list[str]:
    """Protected resource metadata URLs to try, in order (RFC 9728 §3.1; the challenge's first)."""
    urls = [challenge.resource_metadata] if challenge and challenge.resource_metadata else []
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    if path:
        urls.append(f"{_origin(server_url)}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{_origin(server_url)}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> list[str]:
    """Authorization server metadata URLs for an issuer: RFC 8414, then OpenID discovery (path-aware)."""
    parts = urlsplit(issuer)
    origin = _origin(issuer)
    path = parts.path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def fallback_endpoints(server_url: str) -> dict[str, Any]:
    """2025-03-26 back-compat: no metadata anywhere, so the default endpoints at the server's origin."""
    origin = _origin(server_url)
    return {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/authorize",
        "token_endpoint": f"{origin}/token",
        "registration_endpoint": f"{origin}/register",
        "code_challenge_methods_supported": ["S256"],
    }


def check_resource(server_url: str, resource: object) -> str:
    """The PRM's ``resource`` must be this server (or a parent path of it on the same origin, RFC 9728 §3.3);
    returns the resource indicator to send."""
    if not isinstance(resource, str) or not resource:
        raise AuthError("the protected resource metadata has no 'resource'")
    ours, theirs = canonical_resource(server_url), canonical_resource(resource)
    if _origin(ours) != _origin(theirs):
        raise AuthError(f"the protected resource metadata names another resource, not {server_url!r}")
    our_path, their_path = urlsplit(ours).path + "/", urlsplit(theirs).path + "/"
    if not our_path.startswith(their_path):
        raise AuthError(f"the protected resource metadata names another resource, not {server_url!r}")
    return resource


def check_issuer(expected: str, metadata: Mapping[str, Any]) -> None:
    """RFC 8414 §3.3: the metadata's ``issuer`` must be the one we asked about (simple comparison; a
    trailing slash of the configured URL is tolerated)."""
    issuer = metadata.get("issuer")
    if issuer != expected and (not isinstance(issuer, str) or issuer.rstrip("/") != expected.rstrip("/")):
        raise AuthError(f"the authorization server metadata names another issuer, not {expected!r}")


@dataclass
class ServerMetadata:
    """What discovery found about one MCP server."""

    resource: str | None  # the RFC 8707 indicator to send (None for a 2025-03-26 server without PRM)
    issuer: str
    metadata: dict[str, Any]
    prm: dict[str, Any] | None = None
    legacy: bool = False  # the 2025-03-26 back-compat path

    def endpoint(self, name: str) -> str:
        value = self.metadata.get(name)
        if not isinstance(value, str) or not value.startswith(("https://", "http://")):
            raise AuthError(f"the authorization server {self.issuer} has no usable {name}")
        return value

    def supports(self, key: str, value: str) -> bool:
        listed = self.metadata.get(key)
        return isinstance(listed, list) and value in listed


def select_scope(
    challenge: Challenge | None,
    prm: Mapping[str, Any] | None,
    as_metadata: Mapping[str, Any],
    *,
    requested: Sequence[str] | None = None,
    previous: str | None = None,
    offline_access: bool = True,
) -> str | None:
    """The ``scope`` to ask for: the caller's, else the challenge's, else the PRM's ``scopes_supported``,
    else none (spec: #scope-selection-strategy). A step-up keeps what was granted before. ``offline_access``
    is added when the authorization server lists it (2026: so a refresh token can be issued)."""
    scopes: list[str] = []
    if requested:
        scopes = list(requested)
    elif challenge is not None and challenge.scope:
        scopes = challenge.scope.split()
    elif prm and isinstance(prm.get("scopes_supported"), list):
        scopes = [s for s in prm["scopes_supported"] if isinstance(s, str)]
    if previous:
        scopes = [*previous.split(), *scopes]
    listed = as_metadata.get("scopes_supported")
    if scopes and offline_access and isinstance(listed, list) and "offline_access" in listed:
        scopes.append("offline_access")
    unique = list(dict.fromkeys(scopes))
    return " ".join(unique) if unique else None


def is_local_address(address: str) -> bool:
    """An IP address on this machine or network (loopback, private, link-local such as the cloud metadata
    service 169.254.169.254, reserved, unspecified, multicast); False for a public one or a non-address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_unspecified
    ) or ip.is_multicast


def _is_local(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    return is_local_address(host)  # a name: its resolved addresses are checked when connecting


def refuses_local(server_url: str) -> bool:
    """Whether fetches for ``server_url`` must not reach local addresses: unless the server is itself local
    (development), every address a name resolves to is checked too (the OAuth client's resolver)."""
    return not _is_local(urlsplit(server_url).hostname or "")


def check_fetch(server_url: str, url: str) -> None:
    """SSRF guard for URLs that discovery hands us (security best practices, "SSRF"): only http(s); a
    server on a public address may not send us to a loopback, private or link-local address (such as the
    cloud metadata service 169.254.169.254), nor from https down to http. A server on this machine or
    network (development) may point anywhere local."""
    target, origin = urlsplit(url), urlsplit(server_url)
    if target.scheme not in ("https", "http") or not target.hostname:
        raise AuthError(f"refusing to fetch {url!r}: not an http(s) URL")
    if _is_local(origin.hostname or ""):
        return
    if _is_local(target.hostname):
        raise AuthError(f"refusing to fetch {url!r}: a public server may not point at a local address")
    if origin.scheme == "https" and target.scheme != "https":
        raise AuthError(f"refusing to fetch {url!r}: not https")
