"""The OAuth client of an MCP connection: ``Client(url, auth=OAuth(...))``.

:class:`OAuth` plugs into the HTTP transport as an aiohttp client middleware (:meth:`OAuth.middleware`): it
puts ``Authorization: Bearer`` on every request, and on a 401 (or a 403 ``insufficient_scope``, the step-up)
it discovers the server's authorization server, registers if needed, obtains a token and sends the request
again. The waiting for a person happens on the connection's event loop, never on the kernel's thread.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization and 2026-07-28.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp
import yarl

from .discovery import (
    AuthError,
    Challenge,
    ScopeRefused,
    ServerMetadata,
    as_metadata_urls,
    canonical_resource,
    check_fetch,
    check_issuer,
    check_resource,
    fallback_endpoints,
    is_local_address,
    parse_www_authenticate,
    prm_urls,
    refuses_local,
    select_scope,
)
from .grant import ClientRegistration, PendingAuthorization, client_auth, start_authorization
from .loopback import CallbackListener
from .resource import bounded_json
from .store import MemoryTokenStore, TokenStore, default_store

__all__ = ["AuthorizationFailed", "OAuth"]

log = logging.getLogger("mcp_notebook.auth")

OnAuthorize = Callable[[str], "Awaitable[str | None] | str | None"]
_JSON = {"Accept": "application/json"}
_MAX_REDIRECTS = 5
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


class _LocalAddress(OSError):
    """A name resolved to a local address while the server is public (the SSRF guard)."""


class _GuardedResolver(aiohttp.ThreadedResolver):
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
            raise _LocalAddress(f"{host} resolves to a local address")
        return found


async def _json_or_none(resp: aiohttp.ClientResponse) -> Any:
    try:
        return await bounded_json(resp)
    except ValueError:
        return None


_MCP_PROTOCOL = "2025-11-25"  # sent on discovery requests (spec: protocol version header on metadata)


class AuthorizationFailed(aiohttp.ClientError):
    """Raised into the HTTP request that needed authorization, so the transport turns it into an error
    answer for that request (an :class:`aiohttp.ClientError`, the kind it already handles)."""


@dataclass
class _Tokens:
    access_token: str
    issuer: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None

    def expired(self) -> bool:
        return self.expires_at is not None and time.time() > self.expires_at - 30

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class OAuth:
    """OAuth 2.1 for MCP servers.

    ``grant``: "authorization_code" (a person signs in; ``on_authorize(url)`` is called with the URL to
    open and may return the address the browser was sent back to) or "client_credentials" (a machine:
    ``client_secret`` or ``private_key`` for ``private_key_jwt``). Registration, in the spec's order:
    ``client_id`` (pre-registered), ``client_metadata_url`` (a Client ID Metadata Document, when the server
    supports it), dynamic registration. Tokens go to ``store`` (default: the keyring or 0600 files in the
    Jupyter data directory)."""

    def __init__(
        self,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcp-notebook",
        scopes: Sequence[str] | None = None,
        grant: Literal["authorization_code", "client_credentials", "enterprise"] = "authorization_code",
        private_key: str | None = None,
        signing_algorithm: str = "RS256",
        on_authorize: OnAuthorize | None = None,
        redirect_uri: str | None = None,
        store: TokenStore | Literal["memory"] | None = None,
        offline_access: bool = True,
        max_step_ups: int = 2,
        callback_timeout: float = 600.0,
        http_timeout: float = 30.0,
        idp_token_endpoint: str | None = None,
        idp_client_id: str | None = None,
        id_token: str | None = None,
    ) -> None:
        self.client_id = client_id
        self._client_secret = client_secret
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.scopes = list(scopes) if scopes else None
        self.grant = grant
        self._private_key = private_key
        self.signing_algorithm = signing_algorithm
        self.on_authorize = on_authorize
        self.redirect_uri = redirect_uri
        if store == "memory":
            store = MemoryTokenStore()
        self.store: TokenStore = store if store is not None else default_store()
        # resource -> its tokens as last read from or written to the store (None: none there). Each request
        # uses this, not the store (a file or the keyring, per request): the store is read again when the
        # tokens expire, when the server refuses them (401/403: another process may have signed in or
        # refreshed), and by the public has_token/access_token.
        self._tokens: dict[str, _Tokens | None] = {}
        self.offline_access = offline_access
        self.max_step_ups = max_step_ups
        self.callback_timeout = callback_timeout
        self.http_timeout = http_timeout
        self.idp_token_endpoint, self.idp_client_id, self._id_token = (
            idp_token_endpoint,
            idp_client_id,
            id_token,
        )
        self.pending: PendingAuthorization | None = None  # what the person is asked to open, right now
        self.subject: str | None = None  # who signed in, when the server says (id_token / introspection)
        self._callback: asyncio.Future[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._step_ups = 0
        self._server_url = ""
        self.listeners: list[Callable[[str, OAuth], None]] = []  # (event, self): "pending", "authorized"

    def __repr__(self) -> str:  # never the secret
        secret = ", client_secret=***" if self._client_secret else ""
        return f"OAuth(grant={self.grant!r}, client_id={self.client_id!r}{secret})"

    # ---- the middleware the HTTP transport runs every request through ------------------------------------
    async def middleware(
        self, request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        """aiohttp client middleware: bearer token on, authorize on 401/403 insufficient_scope, retry."""
        server_url = str(request.url.with_query(None).with_fragment(None))
        resource = canonical_resource(server_url)
        tokens = await self._usable_tokens(resource)
        if tokens is not None:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        response = await handler(request)
        challenge = parse_www_authenticate(response.headers.get("WWW-Authenticate"))
        step_up = response.status == 403 and challenge is not None and challenge.error == "insufficient_scope"
        if response.status != 401 and not step_up:
            if response.status < 400:
                self._step_ups = 0
            return response
        sent = tokens.access_token if tokens is not None else None
        async with self._guard():
            current = self._load_tokens(resource)
            if current is None or current.access_token == sent or current.expired():
                if step_up:
                    self._step_ups += 1
                    if self._step_ups > self.max_step_ups:
                        log.warning(
                            "%s: still insufficient scope after %d step-ups", resource, self.max_step_ups
                        )
                        return response
                try:
                    current = await self.authenticate(server_url, challenge, step_up=step_up, stale=current)
                except AuthError as exc:
                    raise AuthorizationFailed(f"authorization for {server_url} failed: {exc}") from None
        # Closed, not released to the pool: the sign-in may have taken longer than the server keeps an idle
        # connection, and re-sending on a connection the server has just dropped fails with a reset.
        response.close()
        request.headers["Authorization"] = f"Bearer {current.access_token}"
        return await handler(request)

    def _guard(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
        return self._lock

    # ---- tokens ------------------------------------------------------------------------------------------
    def _load_tokens(self, resource: str) -> _Tokens | None:
        """Read the store (and remember what it holds for the next requests)."""
        data = self.store.get(f"token:{resource}")
        if not data or not isinstance(data.get("access_token"), str):
            self._tokens[resource] = None
            return None
        self._tokens[resource] = tokens = _Tokens(
            access_token=data["access_token"],
            issuer=str(data.get("issuer", "")),
            refresh_token=data.get("refresh_token"),
            expires_at=data.get("expires_at"),
            scope=data.get("scope"),
        )
        return tokens

    def _save_tokens(self, resource: str, tokens: _Tokens) -> None:
        self.store.set(f"token:{resource}", tokens.to_json())
        self._tokens[resource] = tokens

    def logout(self, server_url: str) -> None:
        """Forget the tokens for this server (registrations stay: they are not a sign-in)."""
        resource = canonical_resource(server_url)
        self.store.delete(f"token:{resource}")
        self._tokens[resource] = None

    def has_token(self, server_url: str) -> bool:
        return self._load_tokens(canonical_resource(server_url)) is not None

    async def _usable_tokens(self, resource: str) -> _Tokens | None:
        tokens = self._tokens[resource] if resource in self._tokens else self._load_tokens(resource)
        if tokens is not None and tokens.expired():
            tokens = self._load_tokens(resource)  # perhaps already refreshed by another process
        if tokens is None or not tokens.expired():
            return tokens
        if tokens.refresh_token:
            async with self._guard():
                current = self._load_tokens(resource)
                if current is not None and current.access_token != tokens.access_token:
                    return current
                try:
                    async with self._session() as http:
                        server = await self._discover(http, resource, None)
                        if server.issuer == tokens.issuer:
                            return await self._refresh(http, server, tokens, resource)
                except (AuthError, aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    log.info("refreshing the token for %s failed: %s", resource, type(exc).__name__)
        return None  # an expired token is not sent; the 401 starts a new authorization

    def access_token(self, server_url: str) -> str | None:
        """The stored access token for ``server_url`` (to hand to code that needs it; never shown)."""
        tokens = self._load_tokens(canonical_resource(server_url))
        return tokens.access_token if tokens is not None else None

    async def sign_in(
        self, server_url: str, *, force: bool = False, headers: Mapping[str, str] | None = None
    ) -> None:
        """Make sure a token for ``server_url`` is stored: unless one is usable (or ``force``), send an
        unauthenticated request, read the server's challenge and authorize (``%mcp auth`` does this)."""
        resource = canonical_resource(server_url)
        if not force and await self._usable_tokens(resource) is not None:
            return
        self._server_url = server_url  # the SSRF guard's reference: the server the person chose
        async with self._session() as http:
            ping = b'{"jsonrpc":"2.0","id":0,"method":"ping"}'
            sent = {**(headers or {}), "Content-Type": "application/json"}
            sent["Accept"] = "application/json, text/event-stream"
            try:
                async with http.post(server_url, data=ping, headers=sent) as resp:
                    challenge = parse_www_authenticate(resp.headers.get("WWW-Authenticate"))
                    status = resp.status
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError):
                return  # unreachable: connecting will say so, in the transport's words
            if status not in (401, 403) and not force:
                return  # the server lets us in without a token
        async with self._guard():
            await self.authenticate(server_url, challenge)

    # ---- the flow ----------------------------------------------------------------------------------------
    def _session(self) -> aiohttp.ClientSession:
        # Every name is resolved through the SSRF guard: a public server's documents may not lead us to a
        # name that resolves to a local address (checked at connect time, so DNS cannot change its mind).
        connector = aiohttp.TCPConnector(resolver=_GuardedResolver(lambda: self._server_url))
        return aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.http_timeout), connector=connector
        )

    async def authenticate(
        self,
        server_url: str,
        challenge: Challenge | None = None,
        *,
        step_up: bool = False,
        stale: _Tokens | None = None,
    ) -> _Tokens:
        """Obtain a token for ``server_url`` now (what a 401 triggers; ``%mcp auth`` calls it directly)."""
        resource = canonical_resource(server_url)
        async with self._session() as http:
            server = await self._discover(http, server_url, challenge)
            if stale is not None and stale.refresh_token and stale.issuer == server.issuer and not step_up:
                try:
                    return await self._refresh(http, server, stale, resource)
                except AuthError as exc:
                    log.info("refresh for %s refused (%s); signing in again", resource, exc)
            previous = stale.scope if step_up and stale is not None else None
            scope = select_scope(
                challenge,
                server.prm,
                server.metadata,
                requested=self.scopes if not step_up else None,
                previous=previous,
                offline_access=self.offline_access and self.grant == "authorization_code",
            )
            if self.grant == "client_credentials":
                tokens = await self._client_credentials(http, server, scope)
            elif self.grant == "enterprise":
                tokens = await self._enterprise(http, server, scope)
            else:
                tokens = await self._authorization_code(http, server, scope)
        self._save_tokens(resource, tokens)
        self._notify("authorized")
        return tokens

    async def _get_json(self, http: aiohttp.ClientSession, url: str) -> dict[str, Any] | None:
        """A discovery document: every redirect hop passes the SSRF guard, the body is bounded."""
        headers = {**_JSON, "MCP-Protocol-Version": _MCP_PROTOCOL}
        for _ in range(_MAX_REDIRECTS + 1):
            check_fetch(self._server_url, url)
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
                if isinstance(exc.os_error, _LocalAddress):
                    raise AuthError(f"refusing to fetch {url!r}: {exc.os_error}") from None
                raise
            return data if isinstance(data, dict) else None
        raise AuthError(f"too many redirects fetching discovery documents (at most {_MAX_REDIRECTS})")

    async def _discover(
        self, http: aiohttp.ClientSession, server_url: str, challenge: Challenge | None
    ) -> ServerMetadata:
        self._server_url = server_url  # what check_fetch compares every discovered URL with
        prm: dict[str, Any] | None = None
        for url in prm_urls(server_url, challenge):
            prm = await self._get_json(http, url)
            if prm is not None:
                break
        if prm is None:  # a 2025-03-26 server: its origin is the authorization server
            issuer = fallback_endpoints(server_url)["issuer"]
            metadata = await self._as_metadata(http, issuer, strict=False)
            legacy = metadata is None
            return ServerMetadata(None, issuer, metadata or fallback_endpoints(server_url), None, legacy)
        resource = check_resource(server_url, prm.get("resource"))
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise AuthError("the protected resource metadata names no authorization server")
        issuer = servers[0]
        metadata = await self._as_metadata(http, issuer, strict=True)
        if metadata is None:
            raise AuthError(f"no authorization server metadata found for {issuer}")
        return ServerMetadata(resource, str(metadata.get("issuer", issuer)), metadata, prm)

    async def _as_metadata(
        self, http: aiohttp.ClientSession, issuer: str, *, strict: bool
    ) -> dict[str, Any] | None:
        for url in as_metadata_urls(issuer):
            metadata = await self._get_json(http, url)
            if metadata is not None:
                if strict:
                    check_issuer(issuer, metadata)
                return metadata
        return None

    def _registers_dynamically(self, server: ServerMetadata) -> bool:
        supported = server.metadata.get("client_id_metadata_document_supported") is True
        return self.client_id is None and not (self.client_metadata_url and supported)

    async def _registration(
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
        if self.client_id is not None:
            return ClientRegistration(
                self.client_id, self._client_secret, self.token_endpoint_auth_method, server.issuer
            )
        if self.client_metadata_url and server.metadata.get("client_id_metadata_document_supported") is True:
            return ClientRegistration(self.client_metadata_url, None, "none", server.issuer)
        key = f"client:{server.issuer}"
        stored = self.store.get(key) if not fresh else None
        if stored and (redirect_uri is None or redirect_uri in stored.get("redirect_uris", [])):
            return ClientRegistration.from_json(stored)
        endpoint = server.metadata.get("registration_endpoint")
        if isinstance(endpoint, str):
            check_fetch(self._server_url, endpoint)
        else:
            raise AuthError(
                f"the authorization server {server.issuer} offers no registration: pass OAuth(client_id=...)"
            )
        grants = ["authorization_code", "refresh_token"] if redirect_uri else ["client_credentials"]
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "grant_types": grants,
            "response_types": ["code"] if redirect_uri else [],
            "token_endpoint_auth_method": "none",
        }
        if redirect_uri:
            body["redirect_uris"] = [redirect_uri]
            body["application_type"] = "native"  # a loopback redirect (2026: MUST be sent)
        if scope:
            body["scope"] = scope
        async with http.post(endpoint, json=body, headers=_JSON) as resp:
            data = await _json_or_none(resp) if resp.status < 300 else None
        if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
            raise AuthError(f"dynamic client registration at {server.issuer} failed")
        registration = ClientRegistration.from_json({**data, "issuer": server.issuer})
        self.store.set(key, registration.to_json())
        return registration

    async def _authorization_code(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None
    ) -> _Tokens:
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
    ) -> _Tokens:
        listener = None
        redirect_uri = self.redirect_uri
        if redirect_uri is None:
            listener = await CallbackListener.start()  # one-shot: each attempt has its own
            redirect_uri = listener.redirect_uri
        try:
            registration = await self._registration(http, server, redirect_uri, scope, fresh=fresh)
            return await self._sign_in(http, server, registration, redirect_uri, scope, listener)
        finally:
            self.pending = None
            if listener is not None:
                await listener.stop()

    async def _sign_in(
        self,
        http: aiohttp.ClientSession,
        server: ServerMetadata,
        registration: ClientRegistration,
        redirect_uri: str,
        scope: str | None,
        listener: CallbackListener | None,
    ) -> _Tokens:
        pending = start_authorization(server, registration, redirect_uri, scope)
        if listener is not None:
            listener.state = pending.state  # a redirect with another state is ignored
        try:
            callback_url = await self._wait_for_callback(pending, listener)
        finally:
            self.pending = None
        code = pending.code_from(callback_url)
        form, headers = pending.token_request(code, server)
        return await self._token_request(http, server, form, headers, scope)

    async def _wait_for_callback(
        self, pending: PendingAuthorization, listener: CallbackListener | None
    ) -> str:
        loop = asyncio.get_running_loop()
        self._callback = loop.create_future()
        self._loop = loop
        self.pending = pending
        waiters: list[asyncio.Future[str]] = [self._callback]
        if listener is not None:
            waiters.append(listener.result)
        self._notify("pending")
        handler = self.on_authorize or _print_url
        answer = handler(pending.url)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, str) and answer:
            return answer
        done, _ = await asyncio.wait(
            waiters, timeout=self.callback_timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            raise AuthError(f"nobody completed the authorization within {self.callback_timeout:.0f} s")
        return done.pop().result()

    def complete(self, callback_url: str) -> None:
        """Finish the pending authorization with the address the browser was sent to (the "paste" path for
        kernels whose browser cannot reach the kernel's loopback). Safe to call from any thread."""
        future, loop = self._callback, self._loop
        if future is None or loop is None:
            raise AuthError("no authorization is waiting")

        def resolve() -> None:
            if not future.done():
                future.set_result(callback_url)

        loop.call_soon_threadsafe(resolve)

    async def _client_credentials(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None
    ) -> _Tokens:
        form = {"grant_type": "client_credentials"}
        if scope:
            form["scope"] = scope
        if server.resource:
            form["resource"] = server.resource
        headers: dict[str, str] = {}
        if self._private_key is not None:
            if self.client_id is None:
                raise AuthError("private_key_jwt needs OAuth(client_id=...)")
            form["client_id"] = self.client_id
            form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            form["client_assertion"] = self._client_assertion(server)
        else:
            registration = await self._registration(http, server, None, scope)
            extra, headers = client_auth(registration, server)
            form.update(extra)
        return await self._token_request(http, server, form, headers, scope)

    async def _enterprise(
        self, http: aiohttp.ClientSession, server: ServerMetadata, scope: str | None
    ) -> _Tokens:
        """Enterprise-managed authorization (SEP-990, ext-auth): exchange the identity provider's ID token
        for an ID-JAG (RFC 8693 token exchange at the IdP), then present it as a JWT bearer grant
        (RFC 7523) to the MCP server's authorization server."""
        if not (self.idp_token_endpoint and self._id_token and self.client_id):
            raise AuthError("enterprise authorization needs idp_token_endpoint, id_token and client_id")
        exchange = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": self._id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": server.issuer,
            "resource": server.resource or "",
        }
        if self.idp_client_id:
            exchange["client_id"] = self.idp_client_id
        if scope:
            exchange["scope"] = scope
        async with http.post(self.idp_token_endpoint, data=exchange, headers=_JSON) as resp:
            data = await _json_or_none(resp) if resp.status < 300 else None
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
        registration = ClientRegistration(
            self.client_id, self._client_secret, self.token_endpoint_auth_method, server.issuer
        )
        extra, headers = client_auth(registration, server)
        return await self._token_request(http, server, {**form, **extra}, headers, scope)

    def _client_assertion(self, server: ServerMetadata) -> str:
        """RFC 7523 §3 client assertion for ``private_key_jwt``: issuer and subject are the client, the
        audience is the authorization server."""
        try:
            import jwt
        except ImportError as exc:  # pragma: no cover - the auth extra is missing
            raise AuthError("private_key_jwt needs the auth extra: pip install 'mcp-notebook[auth]'") from exc
        now = int(time.time())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": server.issuer,
            "iat": now,
            "exp": now + 300,
            "jti": str(uuid.uuid4()),
        }
        assert self._private_key is not None
        return str(jwt.encode(claims, self._private_key, algorithm=self.signing_algorithm))

    async def _refresh(
        self, http: aiohttp.ClientSession, server: ServerMetadata, tokens: _Tokens, resource: str
    ) -> _Tokens:
        assert tokens.refresh_token is not None
        registration = await self._registration(http, server, None) if self.client_id is None else None
        registration = registration or ClientRegistration(
            self.client_id or "", self._client_secret, self.token_endpoint_auth_method, server.issuer
        )
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if server.resource:
            form["resource"] = server.resource
        extra, headers = client_auth(registration, server)
        fresh = await self._token_request(http, server, {**form, **extra}, headers, tokens.scope)
        if fresh.refresh_token is None:
            fresh.refresh_token = tokens.refresh_token  # RFC 6749 §6: the old one stays valid
        self._save_tokens(resource, fresh)
        return fresh

    async def _token_request(
        self,
        http: aiohttp.ClientSession,
        server: ServerMetadata,
        form: Mapping[str, str],
        headers: Mapping[str, str],
        scope: str | None,
    ) -> _Tokens:
        endpoint = server.endpoint("token_endpoint")
        check_fetch(self._server_url, endpoint)
        async with http.post(endpoint, data=dict(form), headers={**_JSON, **headers}) as resp:
            data = await _json_or_none(resp)
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
        return _Tokens(
            access_token=data["access_token"],
            issuer=server.issuer,
            refresh_token=data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else None,
            expires_at=time.time() + float(expires_in) if isinstance(expires_in, int | float) else None,
            scope=data.get("scope") if isinstance(data.get("scope"), str) else scope,
        )

    def _notify(self, event: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(event, self)
            except Exception:  # a display callback must not break the flow; it is logged, not swallowed
                log.exception("an OAuth listener failed on %r", event)


def _print_url(url: str) -> None:
    print(f"Open this address to authorize the MCP connection:\n  {url}", file=sys.stderr)
