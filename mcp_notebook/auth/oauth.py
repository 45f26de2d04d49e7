"""The OAuth client of an MCP connection: ``Client(url, auth=OAuth(...))``.

:class:`OAuth` plugs into the HTTP transport as an aiohttp client middleware (:meth:`OAuth.middleware`): it
puts ``Authorization: Bearer`` on every request, and on a 401 (or a 403 ``insufficient_scope``, the step-up)
it discovers the server's authorization server, registers if needed, obtains a token and sends the request
again. The waiting for a person happens on the connection's event loop, never on the kernel's thread.
It keeps the state (tokens, the pending authorization); the HTTP behind the SSRF guard is in :mod:`.fetch`,
registration and the grants in :mod:`.flows`, the token request in :mod:`.tokens`.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization and 2026-07-28.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal

import aiohttp

from .discovery import (
    AuthError,
    Challenge,
    ServerMetadata,
    canonical_resource,
    parse_www_authenticate,
    select_scope,
)
from .fetch import discover, guarded_session
from .flows import Flow, Secrets
from .grant import PendingAuthorization
from .loopback import CallbackListener
from .store import MemoryTokenStore, TokenStore, default_store
from .tokens import Tokens

__all__ = ["AuthorizationFailed", "OAuth"]

log = logging.getLogger("mcp_notebook.auth")

OnAuthorize = Callable[[str], "Awaitable[str | None] | str | None"]


class AuthorizationFailed(aiohttp.ClientError):
    """Raised into the HTTP request that needed authorization, so the transport turns it into an error
    answer for that request (an :class:`aiohttp.ClientError`, the kind it already handles)."""


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
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.scopes = list(scopes) if scopes else None
        self.grant = grant
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
        self._tokens: dict[str, Tokens | None] = {}
        self.offline_access = offline_access
        self.max_step_ups = max_step_ups
        self.callback_timeout = callback_timeout
        self.http_timeout = http_timeout
        self.idp_token_endpoint, self.idp_client_id = idp_token_endpoint, idp_client_id
        self._secrets = Secrets(client_secret, private_key, id_token)
        self.pending: PendingAuthorization | None = None  # what the person is asked to open, right now
        self.subject: str | None = None  # who signed in, when the server says (id_token / introspection)
        self._callback: asyncio.Future[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._step_ups = 0
        self._server_url = ""
        self.listeners: list[Callable[[str, OAuth], None]] = []  # (event, self): "pending", "authorized"

    def __repr__(self) -> str:  # never the secret
        secret = ", client_secret=***" if self._secrets.client_secret else ""
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
    def _load_tokens(self, resource: str) -> Tokens | None:
        """Read the store (and remember what it holds for the next requests)."""
        data = self.store.get(f"token:{resource}")
        if not data or not isinstance(data.get("access_token"), str):
            self._tokens[resource] = None
            return None
        self._tokens[resource] = tokens = Tokens(
            access_token=data["access_token"],
            issuer=str(data.get("issuer", "")),
            refresh_token=data.get("refresh_token"),
            expires_at=data.get("expires_at"),
            scope=data.get("scope"),
        )
        return tokens

    def _save_tokens(self, resource: str, tokens: Tokens) -> None:
        self.store.set(f"token:{resource}", tokens.to_json())
        self._tokens[resource] = tokens

    def logout(self, server_url: str) -> None:
        """Forget the tokens for this server (registrations stay: they are not a sign-in)."""
        resource = canonical_resource(server_url)
        self.store.delete(f"token:{resource}")
        self._tokens[resource] = None

    def has_token(self, server_url: str) -> bool:
        return self._load_tokens(canonical_resource(server_url)) is not None

    async def _usable_tokens(self, resource: str) -> Tokens | None:
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
        # every name is resolved through the SSRF guard, against the server the person chose
        return guarded_session(lambda: self._server_url, self.http_timeout)

    async def authenticate(
        self,
        server_url: str,
        challenge: Challenge | None = None,
        *,
        step_up: bool = False,
        stale: Tokens | None = None,
    ) -> Tokens:
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
                tokens = await self._flow().client_credentials(http, server, scope)
            elif self.grant == "enterprise":
                tokens = await self._flow().enterprise(http, server, scope)
            else:
                tokens = await self._flow().authorization_code(http, server, scope)
        self._save_tokens(resource, tokens)
        self._notify("authorized")
        return tokens

    async def _discover(
        self, http: aiohttp.ClientSession, server_url: str, challenge: Challenge | None
    ) -> ServerMetadata:
        self._server_url = server_url  # what check_fetch compares every discovered URL with
        return await discover(http, server_url, challenge)

    async def _refresh(
        self, http: aiohttp.ClientSession, server: ServerMetadata, tokens: Tokens, resource: str
    ) -> Tokens:
        fresh = await self._flow().refresh(http, server, tokens)
        self._save_tokens(resource, fresh)
        return fresh

    def _flow(self) -> Flow:
        """Registration and the grants, at the server :meth:`_discover` was last asked about."""
        return Flow(self, self._secrets, self._server_url, self._wait_for_callback)

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

    def _notify(self, event: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(event, self)
            except Exception:  # a display callback must not break the flow; it is logged, not swallowed
                log.exception("an OAuth listener failed on %r", event)


def _print_url(url: str) -> None:
    print(f"Open this address to authorize the MCP connection:\n  {url}", file=sys.stderr)
