"""The OAuth 2.1 authorization-code grant with PKCE, as data (sans-IO: stdlib only).

:class:`PendingAuthorization` is what exists between sending the person to the authorization server and
getting the code back: the PKCE verifier, ``state`` and the issuer it was sent to (RFC 9207 needs it at the
callback). Token requests are built here as form fields plus headers; the HTTP is done elsewhere.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-code-protection
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from .discovery import AuthError, ScopeRefused, ServerMetadata

__all__ = [
    "ClientRegistration",
    "PendingAuthorization",
    "client_auth",
    "pkce_challenge",
    "start_authorization",
]


def pkce_challenge(verifier: str) -> str:
    """RFC 7636 S256: BASE64URL(SHA256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass
class ClientRegistration:
    """Client credentials at one authorization server (2026: bound to its issuer, never reused elsewhere)."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    issuer: str | None = None
    redirect_uris: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, [])}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClientRegistration:
        return cls(
            client_id=str(data["client_id"]),
            client_secret=data.get("client_secret"),
            token_endpoint_auth_method=data.get("token_endpoint_auth_method"),
            issuer=data.get("issuer"),
            redirect_uris=list(data.get("redirect_uris") or []),
        )


def client_auth(
    registration: ClientRegistration, server: ServerMetadata
) -> tuple[dict[str, str], dict[str, str]]:
    """(form fields, headers) that authenticate the client at the token endpoint: ``none``,
    ``client_secret_basic`` (RFC 6749 §2.3.1: form-urlencoded id and secret in HTTP Basic) or
    ``client_secret_post``; the registration's method, else the first the server supports."""
    method = registration.token_endpoint_auth_method
    if registration.client_secret is None:
        method = "none"
    elif method is None or method == "none":
        supported = server.metadata.get("token_endpoint_auth_methods_supported")
        if isinstance(supported, list) and "client_secret_basic" not in supported:
            method = "client_secret_post" if "client_secret_post" in supported else "client_secret_basic"
        else:
            method = "client_secret_basic"
    if method == "client_secret_basic" and registration.client_secret is not None:
        pair = f"{quote(registration.client_id, safe='')}:{quote(registration.client_secret, safe='')}"
        token = base64.b64encode(pair.encode()).decode("ascii")
        return {}, {"Authorization": f"Basic {token}"}
    if method == "client_secret_post" and registration.client_secret is not None:
        return {"client_id": registration.client_id, "client_secret": registration.client_secret}, {}
    return {"client_id": registration.client_id}, {}


@dataclass
class PendingAuthorization:
    """One authorization request in flight. ``url`` is what the person opens."""

    url: str
    state: str
    verifier: str
    redirect_uri: str
    issuer: str
    iss_supported: bool
    scope: str | None
    resource: str | None
    registration: ClientRegistration

    def code_from(self, callback_url: str) -> str:
        """The code of the redirect the authorization server sent the person to, after checking ``state``
        and, per RFC 9207, ``iss`` (before anything else of the response is acted on or shown)."""
        query = parse_qs(urlsplit(callback_url.strip()).query, keep_blank_values=True)
        values = {name: items[0] for name, items in query.items() if items}
        iss = values.get("iss")
        if iss is not None and iss != self.issuer:
            raise AuthError("the authorization response came from another issuer (RFC 9207 'iss' mismatch)")
        if iss is None and self.iss_supported:
            raise AuthError("the authorization response lacks 'iss' although the server promises it")
        if values.get("state") != self.state:
            raise AuthError("the authorization response does not match this request ('state' differs)")
        if "error" in values:
            detail = values.get("error_description", "")
            refused = ScopeRefused if values["error"] == "invalid_scope" else AuthError
            raise refused(f"the authorization server refused: {values['error']} {detail}".strip())
        code = values.get("code")
        if not code:
            raise AuthError("the authorization response has no code")
        return code

    def token_request(self, code: str, server: ServerMetadata) -> tuple[dict[str, str], dict[str, str]]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier,
        }
        if self.resource:
            form["resource"] = self.resource
        extra, headers = client_auth(self.registration, server)
        return {**form, **extra}, headers


def start_authorization(
    server: ServerMetadata,
    registration: ClientRegistration,
    redirect_uri: str,
    scope: str | None,
) -> PendingAuthorization:
    """Build the authorization URL (PKCE S256, ``state``, RFC 8707 ``resource``). The server must support
    S256; a 2025-03-26 server without metadata is assumed to (it had to)."""
    if not server.legacy and not server.supports("code_challenge_methods_supported", "S256"):
        raise AuthError(f"the authorization server {server.issuer} does not support PKCE S256; refusing")
    verifier = secrets.token_urlsafe(48)
    state = secrets.token_urlsafe(24)
    params = {
        "response_type": "code",
        "client_id": registration.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce_challenge(verifier),
        "code_challenge_method": "S256",
        "state": state,
    }
    if scope:
        params["scope"] = scope
    if server.resource:
        params["resource"] = server.resource
    endpoint = server.endpoint("authorization_endpoint")
    separator = "&" if urlsplit(endpoint).query else "?"
    return PendingAuthorization(
        url=f"{endpoint}{separator}{urlencode(params)}",
        state=state,
        verifier=verifier,
        redirect_uri=redirect_uri,
        issuer=server.issuer,
        iss_supported=server.metadata.get("authorization_response_iss_parameter_supported") is True,
        scope=scope,
        resource=server.resource,
        registration=registration,
    )
