"""A small but real OAuth 2.1 authorization server for tests, on 127.0.0.1 (aiohttp + PyJWT).

RFC 8414 metadata, a JWKS, dynamic registration, ``/authorize`` (approves at once, or shows an "Approve"
page when ``consent=True``, for the browser test), ``/token`` (authorization_code with PKCE S256 checked,
refresh_token, client_credentials), RFC 7662 ``/introspect``. Access tokens are ES256 JWTs whose ``aud`` is
the ``resource`` the client asked for; :meth:`LocalAS.mint` makes one for any audience.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec

from tests.local_http import serving

SUBJECT = "alice@example.org"


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    scope: str | None
    resource: str | None


@dataclass
class LocalAS:
    consent: bool = False
    expires_in: int = 600  # seconds an access token lives
    scopes: list[str] = field(default_factory=lambda: ["mcp:tools", "offline_access"])
    # like the official SDK's auth server (and FastMCP's in-memory provider): a client may only ask for the
    # scopes it registered with (its registration's ``scope``, else ``default_scopes``); others are
    # ``invalid_scope``. Off by default: this AS then grants any scope.
    registered_scopes_only: bool = False
    default_scopes: str | None = None
    issuer: str = ""
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, str]] = field(default_factory=list)  # every token request's form, for checks
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _refresh: dict[str, _Grant] = field(default_factory=dict)
    _pending: dict[str, dict[str, str]] = field(default_factory=dict)
    _served: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    def __post_init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._kid = uuid.uuid4().hex[:8]

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/.well-known/oauth-authorization-server", self._metadata)
        app.router.add_get("/jwks", self._jwks)
        app.router.add_post("/register", self._register)
        app.router.add_get("/authorize", self._authorize)
        app.router.add_post("/approve", self._approve)
        app.router.add_post("/token", self._token)
        app.router.add_post("/introspect", self._introspect)
        self.issuer = await self._served.enter_async_context(serving(app, access_log=None))
        return self.issuer

    async def stop(self) -> None:
        await self._served.aclose()

    def mint(self, audience: str, scope: str = "mcp:tools", *, expires_in: int = 600, **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": self.issuer, "sub": SUBJECT, "aud": audience, "scope": scope, "iat": now}
        payload.update(exp=now + expires_in, jti=uuid.uuid4().hex, **claims)
        return jwt.encode(payload, self._key, algorithm="ES256", headers={"kid": self._kid})

    # ---- endpoints -------------------------------------------------------------------------------------
    async def _metadata(self, request: web.Request) -> web.Response:
        i = self.issuer
        return web.json_response(
            {
                "issuer": i,
                "authorization_endpoint": f"{i}/authorize",
                "token_endpoint": f"{i}/token",
                "registration_endpoint": f"{i}/register",
                "introspection_endpoint": f"{i}/introspect",
                "jwks_uri": f"{i}/jwks",
                "scopes_supported": self.scopes,
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": [
                    "none",
                    "client_secret_basic",
                    "client_secret_post",
                ],
                "authorization_response_iss_parameter_supported": True,
            }
        )

    async def _jwks(self, request: web.Request) -> web.Response:
        jwk = jwt.algorithms.ECAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        return web.json_response({"keys": [{**jwk, "kid": self._kid, "use": "sig", "alg": "ES256"}]})

    async def _register(self, request: web.Request) -> web.Response:
        body = await request.json()
        client_id = "client-" + secrets.token_hex(6)
        self.clients[client_id] = {**body, "client_id": client_id}
        if self.registered_scopes_only:
            scope = body.get("scope") or self.default_scopes
            self.clients[client_id].pop("scope", None)
            if scope:
                self.clients[client_id]["scope"] = scope
        return web.json_response(self.clients[client_id], status=201)

    async def _authorize(self, request: web.Request) -> web.Response:
        q = dict(request.query)
        client = self.clients.get(q.get("client_id", ""))
        if client is None or q.get("redirect_uri") not in client.get("redirect_uris", []):
            return web.Response(status=400, text="unknown client or redirect_uri")
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return web.Response(status=400, text="PKCE S256 required")
        allowed = set(str(client.get("scope") or "").split())
        if self.registered_scopes_only and not set(q.get("scope", "").split()) <= allowed:
            error = urlencode({"error": "invalid_scope", "state": q.get("state", ""), "iss": self.issuer})
            raise web.HTTPFound(f"{q['redirect_uri']}?{error}")
        if not self.consent:
            return self._redirect(q)
        ticket = secrets.token_urlsafe(12)
        self._pending[ticket] = q
        name = html.escape(str(client.get("client_name", q["client_id"])))
        page = (
            f"<!doctype html><title>Local AS</title><h1>Sign in as {html.escape(SUBJECT)}</h1>"
            f"<p>{name} asks for: {html.escape(q.get('scope', '(no scope)'))}</p>"
            f'<form method="post" action="/approve"><input type="hidden" name="ticket" value="{ticket}">'
            '<button id="approve" type="submit">Approve</button></form>'
        )
        return web.Response(text=page, content_type="text/html")

    async def _approve(self, request: web.Request) -> web.Response:
        form = await request.post()
        q = self._pending.pop(str(form.get("ticket", "")), None)
        if q is None:
            return web.Response(status=400, text="unknown ticket")
        return self._redirect(q)

    def _redirect(self, q: dict[str, str]) -> web.Response:
        code = secrets.token_urlsafe(16)
        self._codes[code] = _Grant(
            q["client_id"], q["redirect_uri"], q["code_challenge"], q.get("scope"), q.get("resource")
        )
        query = urlencode({"code": code, "state": q.get("state", ""), "iss": self.issuer})
        raise web.HTTPFound(f"{q['redirect_uri']}?{query}")

    async def _token(self, request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        self.requests.append(form)
        kind = form.get("grant_type")
        if kind == "authorization_code":
            grant = self._codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            if grant is None or digest != grant.challenge or form.get("redirect_uri") != grant.redirect_uri:
                return web.json_response({"error": "invalid_grant"}, status=400)
        elif kind == "refresh_token":
            grant = self._refresh.pop(form.get("refresh_token", ""), None)
            if grant is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
        elif kind == "client_credentials":
            grant = _Grant(form.get("client_id", "machine"), "", "", form.get("scope"), form.get("resource"))
        else:
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        resource = form.get("resource") or grant.resource or ""
        scope = grant.scope or "mcp:tools"
        refresh = secrets.token_urlsafe(16)
        self._refresh[refresh] = grant
        token = self.mint(resource, scope, expires_in=self.expires_in, client_id=grant.client_id)
        body = {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in, "scope": scope}
        if kind != "client_credentials":
            body["refresh_token"] = refresh
        return web.json_response(body)

    async def _introspect(self, request: web.Request) -> web.Response:
        form = await request.post()
        try:
            claims = jwt.decode(
                str(form.get("token", "")),
                self._key.public_key(),
                algorithms=["ES256"],
                options={"verify_aud": False},
            )
        except jwt.PyJWTError:
            return web.json_response({"active": False})
        return web.json_response({"active": True, **claims})
