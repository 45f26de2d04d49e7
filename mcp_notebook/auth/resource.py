"""Serving as an OAuth protected resource: ``StreamableHTTPServer(..., middlewares=[resource.middleware])``.

:class:`ProtectedResource` publishes the protected resource metadata (RFC 9728) at the path-inserted and root
well-known URIs, answers a request without a valid token with 401 + ``WWW-Authenticate`` naming that
metadata, and validates bearer tokens either as JWTs against the issuer's JWKS (signature, ``iss``, ``exp``
and ``aud`` = this resource) or by token introspection (RFC 7662). Tools can require scopes: a
``tools/call`` without them gets 403 ``insufficient_scope`` with the scope to step up to.
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#access-token-usage
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from .discovery import as_metadata_urls, canonical_resource

__all__ = [
    "AUTH_INFO",
    "MAX_DOCUMENT_BYTES",
    "InvalidToken",
    "KeysUnavailable",
    "ProtectedResource",
    "bounded_json",
]

log = logging.getLogger("mcp_notebook.auth.resource")

PRM_PATH = "/.well-known/oauth-protected-resource"
# Who the token says is calling (sub, client_id, scope), for handlers that want it.
AUTH_INFO: web.RequestKey[dict[str, Any]] = web.RequestKey("mcp_auth", dict)
_JWKS_REFRESH_SECONDS = 60.0  # an unknown key id refetches the key set at most this often
_JWKS_RETRY_SECONDS = 5.0  # after a failed fetch, requests needing new keys get 503 this long, no refetch
_FETCH_TIMEOUT = 10.0
MAX_DOCUMENT_BYTES = 1024 * 1024  # a key set or metadata document larger than this is refused


class InvalidToken(Exception):
    """The bearer token is not valid for this resource (the message is safe to log: no token in it)."""


class KeysUnavailable(Exception):
    """The issuer's key set (or its introspection endpoint) cannot be reached now: 503, retry later."""


class ProtectedResource:
    """``resource``: this server's public URL (the audience tokens must carry). ``issuer``: the
    authorization server; its metadata gives ``jwks_uri`` unless ``jwks_uri`` is passed. With
    ``introspection_endpoint`` (and ``client_id``/``client_secret`` to authenticate to it) tokens are
    introspected instead. ``required_scopes`` apply to every request; ``tool_scopes`` to a tool's calls."""

    def __init__(
        self,
        resource: str | None,
        issuer: str,
        *,
        jwks_uri: str | None = None,
        introspection_endpoint: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        algorithms: Sequence[str] = ("RS256", "ES256", "PS256", "EdDSA"),
        required_scopes: Iterable[str] = (),
        tool_scopes: Mapping[str, Iterable[str]] | None = None,
        scopes_supported: Iterable[str] | None = None,
        resource_name: str | None = None,
        leeway: float = 30.0,
    ) -> None:
        self.resource = canonical_resource(resource) if resource else ""  # see bind()
        self.issuer = issuer
        self.jwks_uri = jwks_uri
        self.introspection_endpoint = introspection_endpoint
        self._client_id, self._client_secret = client_id, client_secret
        self.algorithms = list(algorithms)
        self.required_scopes = set(required_scopes)
        self.tool_scopes = {name: set(scopes) for name, scopes in (tool_scopes or {}).items()}
        listed = set(scopes_supported or ()) | self.required_scopes
        for scopes in self.tool_scopes.values():
            listed |= scopes
        self.scopes_supported = sorted(listed)
        self.resource_name = resource_name
        self.leeway = leeway
        # How long the body of a POST may take to arrive when tool scopes need it read here (the HTTP
        # server's ``body_timeout``: ``serve_http`` and ``%mcp serve`` set it from their limits).
        self.body_timeout = 30.0
        self._jwks: Any = None
        self._jwks_fetched = 0.0
        self._jwks_failed = -_JWKS_RETRY_SECONDS  # monotonic time of the last failed fetch
        self._fetching: asyncio.Task[None] | None = None  # the one key-set fetch in flight

    def bind(self, url: str) -> None:
        """Set the resource URL once the server knows its address (a server started on port 0)."""
        self.resource = canonical_resource(url)

    # ---- metadata ----------------------------------------------------------------------------------------
    @property
    def metadata_url(self) -> str:
        parts = URL(self.resource)
        return str(parts.with_path(PRM_PATH + parts.path.rstrip("/")))

    def metadata(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        if self.resource_name:
            document["resource_name"] = self.resource_name
        return document

    def _challenge(self, error: str | None = None, scope: Iterable[str] = ()) -> str:
        parts = [f'resource_metadata="{self.metadata_url}"']
        wanted = " ".join(sorted(set(scope) or self.required_scopes))
        if wanted:
            parts.append(f'scope="{wanted}"')
        if error:
            parts.insert(0, f'error="{error}"')
        return "Bearer " + ", ".join(parts)

    # ---- the middleware ----------------------------------------------------------------------------------
    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if not self.resource:
            raise RuntimeError("ProtectedResource: call bind(url) once the server's URL is known")
        if request.method == "GET" and request.path.startswith(PRM_PATH):
            return web.json_response(self.metadata(), headers={"Access-Control-Allow-Origin": "*"})
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return self._unauthorized(None, "a bearer token is required")
        try:
            claims = await self.verify(token.strip())
        except InvalidToken as exc:
            log.info("rejected a token: %s", exc)
            return self._unauthorized("invalid_token", str(exc))
        except KeysUnavailable as exc:
            log.warning("cannot check tokens now: %s", exc)
            error = {"code": -32603, "message": "Service Unavailable: cannot check access tokens right now"}
            return web.json_response(
                {"jsonrpc": "2.0", "id": None, "error": error},
                status=503,
                headers={"Retry-After": str(max(1, math.ceil(_JWKS_RETRY_SECONDS)))},
            )
        granted = set(str(claims.get("scope", "")).split())
        needed = set(self.required_scopes)
        if request.method == "POST":
            needed |= await self._tool_scopes(request)
        if not needed <= granted:
            return web.json_response(
                {"error": "insufficient_scope", "error_description": "the token lacks a required scope"},
                status=403,
                headers={"WWW-Authenticate": self._challenge("insufficient_scope", needed | granted)},
            )
        request[AUTH_INFO] = {
            "sub": claims.get("sub"),
            "client_id": claims.get("client_id") or claims.get("azp"),
            "scope": granted,
        }
        response: web.StreamResponse = await handler(request)
        return response

    @staticmethod
    def identity(request: web.Request) -> str | None:
        """Who the validated token names, as the key the server binds sessions, tasks and sealed states to:
        ``oauth:["SUBJECT","CLIENT_ID"]`` (JSON, so no subject can pass for another). None before the
        middleware ran (``StreamableHTTPServer(identify=resource.identity)``)."""
        info = request.get(AUTH_INFO)
        if info is None:
            return None
        subject, client = info.get("sub"), info.get("client_id")
        return "oauth:" + json.dumps([subject, client], separators=(",", ":"), default=str)

    def _unauthorized(self, error: str | None, description: str) -> web.Response:
        body = {"error": error or "invalid_request", "error_description": description}
        return web.json_response(body, status=401, headers={"WWW-Authenticate": self._challenge(error)})

    async def _tool_scopes(self, request: web.Request) -> set[str]:
        """The scopes the POSTed message's tool calls need. The body is read here, before the transport's
        own read, so the transport's bounds apply here too: its size (aiohttp's ``client_max_size``) and
        ``body_timeout`` (a slow body is 408, never a connection held open)."""
        if not self.tool_scopes:
            return set()
        try:
            body = await asyncio.wait_for(
                request.read(), self.body_timeout
            )  # aiohttp keeps it for the handler
        except asyncio.TimeoutError:
            raise web.HTTPRequestTimeout(
                text=f"the body did not arrive within {self.body_timeout:g} s", content_type="text/plain"
            ) from None
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested too deep: the transport answers it
            return set()
        messages = message if isinstance(message, list) else [message]
        needed: set[str] = set()
        for item in messages:
            if isinstance(item, dict) and item.get("method") == "tools/call":
                params = item.get("params")
                name = params.get("name") if isinstance(params, dict) else None
                needed |= self.tool_scopes.get(name, set()) if isinstance(name, str) else set()
        return needed

    # ---- token validation --------------------------------------------------------------------------------
    async def verify(self, token: str) -> dict[str, Any]:
        """The token's claims, or :class:`InvalidToken` (wrong audience, issuer, signature, expired...)."""
        if self.introspection_endpoint is not None:
            return await self._introspect(token)
        return await self._verify_jwt(token)

    def _audience_ok(self, aud: object) -> bool:
        audiences = aud if isinstance(aud, list) else [aud]
        return any(isinstance(a, str) and canonical_resource(a) == self.resource for a in audiences)

    async def _verify_jwt(self, token: str) -> dict[str, Any]:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"not a JWT: {type(exc).__name__}") from None
        key = await self._signing_key(str(header.get("kid", "")))
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"], "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"{type(exc).__name__}: {exc}") from None
        if not self._audience_ok(claims.get("aud")):  # RFC 8707: issued for this server, nobody else
            raise InvalidToken(f"the token is for {claims.get('aud')!r}, not for {self.resource}")
        return claims

    async def _signing_key(self, kid: str) -> Any:
        """A cached key is used at once, even while a refresh is under way; a key not in the cache waits for
        the one fetch in flight (shared by every request that needs it), at most once a minute."""
        found = self._find(kid)
        if found is not None:
            return found
        now = time.monotonic()
        if self._jwks is not None and now - self._jwks_fetched <= _JWKS_REFRESH_SECONDS:
            raise InvalidToken("signed with an unknown key")
        if now - self._jwks_failed < _JWKS_RETRY_SECONDS:
            raise KeysUnavailable("the issuer's key set could not be fetched a moment ago")
        if self._fetching is None or self._fetching.done():
            self._fetching = asyncio.get_running_loop().create_task(self._fetch_jwks())
        try:
            await asyncio.shield(self._fetching)
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, OSError, InvalidToken) as exc:
            self._jwks_failed = time.monotonic()
            raise KeysUnavailable(f"fetching the issuer's key set failed: {type(exc).__name__}") from None
        found = self._find(kid)
        if found is None:
            raise InvalidToken("signed with an unknown key")
        return found

    def _find(self, kid: str) -> Any:
        if self._jwks is None:
            return None
        for key in self._jwks.keys:
            if not kid or key.key_id == kid:
                return key.key
        return None

    async def _fetch_jwks(self) -> None:
        import jwt

        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=_FETCH_TIMEOUT)) as http:
            uri = self.jwks_uri or await self._discover_jwks_uri(http)
            async with http.get(uri) as resp:
                if resp.status != 200:
                    raise InvalidToken(f"the key set at {uri} answered HTTP {resp.status}")
                data = await bounded_json(resp)
        try:
            self._jwks = jwt.PyJWKSet.from_dict(data)
        except jwt.PyJWTError as exc:
            raise ValueError(f"the key set is not usable: {type(exc).__name__}") from None
        self._jwks_fetched = time.monotonic()

    async def _discover_jwks_uri(self, http: aiohttp.ClientSession) -> str:
        for url in as_metadata_urls(self.issuer):
            async with http.get(url) as resp:
                if resp.status == 200:
                    metadata = await bounded_json(resp)
                    if isinstance(metadata, dict) and isinstance(metadata.get("jwks_uri"), str):
                        self.jwks_uri = metadata["jwks_uri"]
                        return self.jwks_uri
        raise InvalidToken(f"no jwks_uri in the metadata of {self.issuer}")

    async def _introspect(self, token: str) -> dict[str, Any]:
        assert self.introspection_endpoint is not None
        auth = aiohttp.BasicAuth(self._client_id, self._client_secret or "") if self._client_id else None
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=_FETCH_TIMEOUT)) as http,
                http.post(
                    self.introspection_endpoint,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=auth,
                    headers={"Accept": "application/json"},
                ) as resp,
            ):
                if resp.status >= 500:
                    raise KeysUnavailable(f"the introspection endpoint answered HTTP {resp.status}")
                data = await bounded_json(resp) if resp.status == 200 else None
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            raise KeysUnavailable(f"token introspection failed: {type(exc).__name__}") from None
        except ValueError:
            data = None
        if not isinstance(data, dict) or data.get("active") is not True:
            raise InvalidToken("the authorization server says the token is not active")
        if data.get("exp") is not None and float(data["exp"]) < time.time() - self.leeway:
            raise InvalidToken("the token has expired")
        if not self._audience_ok(data.get("aud")):
            raise InvalidToken(f"the token is for {data.get('aud')!r}, not for {self.resource}")
        return data


async def bounded_json(resp: aiohttp.ClientResponse) -> Any:
    """The JSON body of ``resp``, read up to :data:`MAX_DOCUMENT_BYTES` (ValueError past it)."""
    body = await resp.content.read(MAX_DOCUMENT_BYTES + 1)
    if len(body) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"the document is larger than {MAX_DOCUMENT_BYTES} bytes")
    return json.loads(body)
