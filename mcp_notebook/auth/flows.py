"""Registration and the grants of :class:`.OAuth`: authorization code with PKCE (a person signs in, the
browser comes back to a loopback listener or is pasted), client credentials (``client_secret`` or
``private_key_jwt``), enterprise-managed authorization (an ID-JAG as a JWT bearer grant) and refresh.

A :class:`Flow` is one sign-in (or refresh) at one MCP server: the OAuth's settings, read when used, its
secrets, the server the person chose (the SSRF guard's reference) and how to wait for the person. The OAuth
object keeps the state (tokens, the pending authorization) and makes a Flow per attempt."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from .discovery import AuthError, ScopeRefused, ServerMetadata, check_fetch
from .fetch import JSON, json_or_none
from .grant import ClientRegistration, PendingAuthorization, client_auth, start_authorization
from .loopback import CallbackListener
from .store import TokenStore
from .tokens import Tokens, token_request

__all__ = ["Flow", "Secrets", "Settings"]

log = logging.getLogger("mcp_notebook.auth")


class Settings(Protocol):
    """What a flow reads of :class:`.OAuth` (its public settings) and sets (``pending``)."""

    client_id: str | None
    token_endpoint_auth_method: str | None
    client_metadata_url: str | None
    client_name: str
    redirect_uri: str | None
    signing_algorithm: str
    idp_token_endpoint: str | None
    idp_client_id: str | None
    store: TokenStore
    pending: PendingAuthorization | None


@dataclass(frozen=True)
class Secrets:
    """What :class:`.OAuth` keeps private (never in its repr) and the grants present."""

    client_secret: str | None = None
    private_key: str | None = None  # for private_key_jwt
    id_token: str | None = None  # the identity provider's, for enterprise-managed authorization


@dataclass
class Flow:
    """One attempt at one MCP server (see the module's docstring)."""

    oauth: Settings
    secrets: Secrets
    server_url: str  # the MCP server the person chose: what every fetched URL is checked against
    wait_for_callback: Callable[[PendingAuthorization, CallbackListener | None], Awaitable[str]]

    def _registers_dynamically(self, server: ServerMetadata) -> bool:
        supported = server.metadata.get("client_id_metadata_document_supported") is True
        return self.oauth.client_id is None and not (self.oauth.client_metadata_url and supported)

    async def registration(
        self,
        http: aiohttp.ClientSession,
        server: ServerMetadata,
        redirect_uri: str | None,
        scope: str | None = None,
        *,
        fresh: bool = False,
    ) -> ClientRegistration:
        """Pre-registered, else a Client ID Metadata Document, else stored, else dynamic registration.

        Dynamic registration asks for the ``scope`` the client is about to request (RFC 7591 ``scope``):
        servers built on the official SDK register a client without it for no scope at all, and then
        refuse every authorization with ``invalid_scope``. ``fresh`` registers again, ignoring a stored
        registration."""
        if self.oauth.client_id is not None:
            return ClientRegistration(
                self.oauth.client_id,
                self.secrets.client_secret,
                self.oauth.token_endpoint_auth_method,
                server.issuer,
            )
        if (
            self.oauth.client_metadata_url
            and server.metadata.get("client_id_metadata_document_supported") is True
        ):
            return ClientRegistration(self.oauth.client_metadata_url, None, "none", server.issuer)
        key = f"client:{server.issuer}"
        stored = self.oauth.store.get(key) if not fresh else None
        if stored and (redirect_uri is None or redirect_uri in stored.get("redirect_uris", [])):
            return ClientRegistration.from_json(stored)
        endpoint = server.metadata.get("registration_endpoint")
        if isinstance(endpoint, str):
            check_fetch(self.server_url, endpoint)
        else:
            raise AuthError(
                f"the authorization server {server.issuer} offers no registration: pass OAuth(client_id=...)"
            )
        grants = ["authorization_code", "refresh_token"] if redirect_uri else ["client_credentials"]
        body: dict[str, Any] = {
            "client_name": self.oauth.client_name,
            "grant_types": grants,
            "response_types": ["code"] if redirect_uri else [],
            "token_endpoint_auth_method": "none",
        }
        if redirect_uri:
            body["redirect_uris"] = [redirect_uri]
            body["application_type"] = "native"  # a loopback redirect (2026: MUST be sent)
        if scope:
            body["scope"] = scope
        async with http.post(endpoint, json=body, headers=JSON) as resp:
            data = await json_or_none(resp) if resp.status < 300 else None
        if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
            raise AuthError(f"dynamic client registration at {server.issuer} failed")
        registered = ClientRegistration.from_json({**data, "issuer": server.issuer})
        self.oauth.store.set(key, registered.to_json())
        return registered

    async def authorization_code(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None
    ) -> Tokens:
        try:
            return await self._authorize_once(http, server, scope, fresh=False)
        except ScopeRefused:
            if not self._registers_dynamically(server):
                raise
            # a registration (stored, or made by a server that ignores scope) that does not cover the
            # scope: register again asking for it, once
            log.info("%s refused the scope %r: registering again", server.issuer, scope)
            return await self._authorize_once(http, server, scope, fresh=True)

    async def _authorize_once(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None, *, fresh: bool
    ) -> Tokens:
        listener = None
        redirect_uri = self.oauth.redirect_uri
        if redirect_uri is None:
            listener = await CallbackListener.start()  # one-shot: each attempt has its own
            redirect_uri = listener.redirect_uri
        try:
            registered = await self.registration(http, server, redirect_uri, scope, fresh=fresh)
            return await self._sign_in(http, server, registered, redirect_uri, scope, listener)
        finally:
            self.oauth.pending = None
            if listener is not None:
                await listener.stop()

    async def _sign_in(
        self,
        http: aiohttp.ClientSession,
        server: ServerMetadata,
        registered: ClientRegistration,
        redirect_uri: str,
        scope: str | None,
        listener: CallbackListener | None,
    ) -> Tokens:
        pending = start_authorization(server, registered, redirect_uri, scope)
        if listener is not None:
            listener.state = pending.state  # a redirect with another state is ignored
        try:
            callback_url = await self.wait_for_callback(pending, listener)
        finally:
            self.oauth.pending = None
        code = pending.code_from(callback_url)
        form, headers = pending.token_request(code, server)
        return await token_request(http, self.server_url, server, form, headers, scope)

    async def client_credentials(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None
    ) -> Tokens:
        form = {"grant_type": "client_credentials"}
        if scope:
            form["scope"] = scope
        if server.resource:
            form["resource"] = server.resource
        headers: dict[str, str] = {}
        if self.secrets.private_key is not None:
            if self.oauth.client_id is None:
                raise AuthError("private_key_jwt needs OAuth(client_id=...)")
            form["client_id"] = self.oauth.client_id
            form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            form["client_assertion"] = self._client_assertion(server)
        else:
            registered = await self.registration(http, server, None, scope)
            extra, headers = client_auth(registered, server)
            form.update(extra)
        return await token_request(http, self.server_url, server, form, headers, scope)

    async def enterprise(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None
    ) -> Tokens:
        """Enterprise-managed authorization (SEP-990, ext-auth): exchange the identity provider's ID token
        for an ID-JAG (RFC 8693 token exchange at the IdP), then present it as a JWT bearer grant
        (RFC 7523) to the MCP server's authorization server."""
        if not (self.oauth.idp_token_endpoint and self.secrets.id_token and self.oauth.client_id):
            raise AuthError("enterprise authorization needs idp_token_endpoint, id_token and client_id")
        exchange = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": self.secrets.id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": server.issuer,
            "resource": server.resource or "",
        }
        if self.oauth.idp_client_id:
            exchange["client_id"] = self.oauth.idp_client_id
        if scope:
            exchange["scope"] = scope
        async with http.post(self.oauth.idp_token_endpoint, data=exchange, headers=JSON) as resp:
            data = await json_or_none(resp) if resp.status < 300 else None
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            raise AuthError("the identity provider refused the token exchange")
        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "assertion": data["access_token"],
        }
        if server.resource:
            form["resource"] = server.resource
        if scope:
            form["scope"] = scope
        registered = ClientRegistration(
            self.oauth.client_id,
            self.secrets.client_secret,
            self.oauth.token_endpoint_auth_method,
            server.issuer,
        )
        extra, headers = client_auth(registered, server)
        return await token_request(http, self.server_url, server, {**form, **extra}, headers, scope)

    def _client_assertion(self, server: ServerMetadata) -> str:
        """RFC 7523 §3 client assertion for ``private_key_jwt``: issuer and subject are the client, the
        audience is the authorization server."""
        try:
            import jwt
        except ImportError as exc:  # pragma: no cover - the auth extra is missing
            raise AuthError("private_key_jwt needs the auth extra: pip install 'mcp-notebook[auth]'") from exc
        now = int(time.time())
        claims = {
            "iss": self.oauth.client_id,
            "sub": self.oauth.client_id,
            "aud": server.issuer,
            "iat": now,
            "exp": now + 300,
            "jti": str(uuid.uuid4()),
        }
        assert self.secrets.private_key is not None
        return str(jwt.encode(claims, self.secrets.private_key, algorithm=self.oauth.signing_algorithm))

    async def refresh(self, http: aiohttp.ClientSession, server: ServerMetadata, tokens: Tokens) -> Tokens:
        """New tokens for ``tokens`` from their refresh token (the caller stores them)."""
        assert tokens.refresh_token is not None
        registered = await self.registration(http, server, None) if self.oauth.client_id is None else None
        registered = registered or ClientRegistration(
            self.oauth.client_id or "",
            self.secrets.client_secret,
            self.oauth.token_endpoint_auth_method,
            server.issuer,
        )
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if server.resource:
            form["resource"] = server.resource
        extra, headers = client_auth(registered, server)
        fresh = await token_request(http, self.server_url, server, {**form, **extra}, headers, tokens.scope)
        if fresh.refresh_token is None:
            fresh.refresh_token = tokens.refresh_token  # RFC 6749 §6: the old one stays valid
        return fresh
