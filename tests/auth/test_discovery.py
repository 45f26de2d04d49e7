"""The sans-IO OAuth pieces: challenge parsing, discovery URLs, resource and issuer checks, scope choice,
PKCE and the callback checks (state, RFC 9207 iss)."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_notebook.auth.discovery import (
    AuthError,
    ServerMetadata,
    as_metadata_urls,
    canonical_resource,
    check_issuer,
    check_resource,
    parse_www_authenticate,
    prm_urls,
    select_scope,
)
from mcp_notebook.auth.grant import ClientRegistration, client_auth, pkce_challenge, start_authorization


def test_challenge_params_quoted_and_bare() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://x/.well-known/oauth-protected-resource", realm=mcp'
    )
    challenge = parse_www_authenticate(header)
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "files:read files:write"
    assert challenge.resource_metadata == "https://x/.well-known/oauth-protected-resource"
    assert challenge.params["realm"] == "mcp"
    assert parse_www_authenticate('Basic realm="x"') is None
    assert parse_www_authenticate("Bearer") is not None


def test_prm_urls_challenge_then_path_then_root() -> None:
    challenge = parse_www_authenticate('Bearer resource_metadata="https://a/meta"')
    assert prm_urls("https://Host.example/mcp/", challenge) == [
        "https://a/meta",
        "https://host.example/.well-known/oauth-protected-resource/mcp",
        "https://host.example/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://h/", None) == ["https://h/.well-known/oauth-protected-resource"]


def test_as_metadata_urls_path_aware_order() -> None:
    assert as_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/mcp/#frag") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"


def test_resource_must_be_this_server() -> None:
    assert check_resource("https://h/mcp", "https://h/mcp") == "https://h/mcp"
    assert check_resource("https://h/mcp", "https://h") == "https://h"  # a parent path on the same origin
    with pytest.raises(AuthError):
        check_resource("http://localhost:1/mcp", "https://evil.example.com/mcp")
    with pytest.raises(AuthError):
        check_resource("https://h/mcp", "https://h/other")


def test_issuer_must_match() -> None:
    check_issuer("https://as.example", {"issuer": "https://as.example"})
    with pytest.raises(AuthError):
        check_issuer("https://as.example", {"issuer": "https://evil.example"})


def test_scope_selection_order() -> None:
    challenge = parse_www_authenticate('Bearer scope="a b"')
    prm = {"scopes_supported": ["x", "y"]}
    assert select_scope(challenge, prm, {}) == "a b"
    assert select_scope(None, prm, {}) == "x y"
    assert select_scope(None, {}, {}) is None
    assert select_scope(None, prm, {"scopes_supported": ["x", "offline_access"]}) == "x y offline_access"
    assert select_scope(None, {}, {"scopes_supported": ["offline_access"]}) is None
    step = parse_www_authenticate('Bearer error="insufficient_scope", scope="w"')
    assert select_scope(step, prm, {}, previous="x") == "x w"


def _server(**metadata: object) -> ServerMetadata:
    base = {
        "issuer": "https://as",
        "authorization_endpoint": "https://as/authorize",
        "token_endpoint": "https://as/token",
        "code_challenge_methods_supported": ["S256"],
    }
    return ServerMetadata("https://h/mcp", "https://as", {**base, **metadata})


def test_authorization_url_has_pkce_state_and_resource() -> None:
    pending = start_authorization(_server(), ClientRegistration("cid"), "http://127.0.0.1:9/callback", "a b")
    query = {k: v[0] for k, v in parse_qs(urlsplit(pending.url).query).items()}
    assert query["code_challenge_method"] == "S256"
    digest = hashlib.sha256(pending.verifier.encode()).digest()
    assert query["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert query["code_challenge"] == pkce_challenge(pending.verifier)
    assert query["resource"] == "https://h/mcp" and query["scope"] == "a b"
    assert query["state"] == pending.state
    form, headers = pending.token_request("the-code", _server())
    assert form["resource"] == "https://h/mcp" and form["code_verifier"] == pending.verifier
    assert form["client_id"] == "cid" and not headers


def test_refuses_without_s256() -> None:
    server = _server(code_challenge_methods_supported=["plain"])
    with pytest.raises(AuthError, match="S256"):
        start_authorization(server, ClientRegistration("cid"), "http://127.0.0.1:9/callback", None)
    without = _server()
    del without.metadata["code_challenge_methods_supported"]
    with pytest.raises(AuthError, match="S256"):
        start_authorization(without, ClientRegistration("cid"), "http://127.0.0.1:9/callback", None)


@pytest.mark.parametrize(
    ("iss_supported", "iss", "ok"),
    [
        (True, "https://as", True),
        (True, None, False),  # promised but missing
        (True, "https://as/", False),  # compared without normalisation
        (False, "https://evil", False),  # present: compared even when not promised
        (False, None, True),
    ],
)
def test_callback_iss_rules(iss_supported: bool, iss: str | None, ok: bool) -> None:
    server = _server(authorization_response_iss_parameter_supported=iss_supported)
    pending = start_authorization(server, ClientRegistration("cid"), "http://127.0.0.1:9/callback", None)
    url = f"http://127.0.0.1:9/callback?code=c&state={pending.state}" + (f"&iss={iss}" if iss else "")
    if ok:
        assert pending.code_from(url) == "c"
    else:
        with pytest.raises(AuthError, match="iss"):
            pending.code_from(url)


def test_callback_state_must_match() -> None:
    pending = start_authorization(_server(), ClientRegistration("cid"), "http://127.0.0.1:9/callback", None)
    with pytest.raises(AuthError, match="state"):
        pending.code_from("http://127.0.0.1:9/callback?code=c&state=other")


def test_client_authentication_methods() -> None:
    server = _server(token_endpoint_auth_methods_supported=["client_secret_post"])
    form, headers = client_auth(ClientRegistration("id", "s:e"), server)
    assert form == {"client_id": "id", "client_secret": "s:e"} and not headers
    form, headers = client_auth(ClientRegistration("id", "s:e", "client_secret_basic"), server)
    assert not form and headers["Authorization"] == "Basic " + base64.b64encode(b"id:s%3Ae").decode()
    form, headers = client_auth(ClientRegistration("id"), server)
    assert form == {"client_id": "id"} and not headers


@pytest.mark.parametrize(
    ("server", "url", "ok"),
    [
        ("https://mcp.example.com/mcp", "https://auth.example.com/.well-known/x", True),
        ("https://mcp.example.com/mcp", "http://169.254.169.254/latest/meta-data", False),  # cloud metadata
        ("https://mcp.example.com/mcp", "https://127.0.0.1:8080/x", False),
        ("https://mcp.example.com/mcp", "https://10.0.0.5/x", False),
        ("https://mcp.example.com/mcp", "https://localhost/x", False),
        ("https://mcp.example.com/mcp", "http://auth.example.com/x", False),  # no downgrade from https
        ("https://mcp.example.com/mcp", "file:///etc/passwd", False),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:9000/x", True),  # development on this machine
        ("http://localhost:8000/mcp", "http://localhost:9000/x", True),
    ],
)
def test_ssrf_guard(server: str, url: str, ok: bool) -> None:
    from mcp_notebook.auth.discovery import check_fetch

    if ok:
        check_fetch(server, url)
    else:
        with pytest.raises(AuthError, match="refusing"):
            check_fetch(server, url)
