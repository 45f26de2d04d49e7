"""``%mcp connect NAME URL --auth`` in an IPython shell: the card appears at once (nothing blocks), the
sign-in completes through the loopback listener or the pasted address, the card says who is signed in and
the server is connected; ``%mcp logout``/``%mcp auth``; and no token, code or secret reaches any output,
trace, history or error."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.auth.redact import redact
from mcp_notebook.notebook.authorizing import AuthorizationCard
from tests.auth._servers import Servers, running
from tests.auth.local_as import SUBJECT
from tests.notebook import ipyshell
from tests.notebook.ipyshell import published
from tests.serving._http import INIT
from tests.waiting import wait_until

shell_factory = ipyshell.shell_factory
shell = ipyshell.shell

WAIT = 30.0


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Servers]:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))  # token files go there
    with running() as found:
        yield found


def _mcp(shell: Any, line: str) -> Any:
    shell.user_ns["mcp"].policy.set("*.add", "allow")  # the approval card is another test's subject
    return shell.run_line_magic("mcp", line)


def _wait_pending(card: AuthorizationCard) -> str:
    pending = wait_until(lambda: card.oauth.pending, "the card's authorization link", WAIT, every=0.05)
    return str(pending.url)


def _browser_follows(url: str) -> None:
    """A person who clicks Authorize: the browser follows the redirects to the loopback listener."""
    with urllib.request.urlopen(url, timeout=WAIT) as resp:
        assert b"close this tab" in resp.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _redirect_target(url: str) -> str:
    """Where the authorization server sends the browser (a browser that cannot reach the kernel)."""
    try:
        urllib.request.build_opener(_NoRedirect).open(url, timeout=WAIT)
    except urllib.error.HTTPError as exc:
        assert exc.code == 302
        return str(exc.headers["Location"])
    raise AssertionError("no redirect")


def _everything_shown(shell: Any, card: AuthorizationCard) -> str:
    api = shell.user_ns["mcp"]
    parts = [json.dumps(published(shell), default=str)]
    for view in (api.trace("prot"), api.history(), api.servers(), card):
        bundle = view._repr_mimebundle_() if hasattr(view, "_repr_mimebundle_") else {}
        parts.append(json.dumps(bundle, default=str))
        parts.append(repr(view))
    parts.extend(json.dumps(entry.__dict__, default=str) for entry in api.audit.entries())
    parts.append(json.dumps(card.box.get_state(), default=str))
    parts.append(repr(card.oauth))
    return "\n".join(parts)


def test_card_then_loopback_then_connected_and_nothing_leaks(shell: Any, servers: Servers) -> None:
    card = _mcp(shell, f"connect prot {servers.mcp_url} --auth")
    assert isinstance(card, AuthorizationCard)  # returned at once: the cell did not wait for a person
    url = _wait_pending(card)
    assert 'class="mcp-authorize"' in card.link.value and "Authorize" in card.link.value
    _browser_follows(url)
    assert card.wait(WAIT) is not None, card.error
    assert card.state == "connected" and card.subject == SUBJECT
    assert f"authorized as <b class='mcp-auth-subject'>{SUBJECT}</b>" in card.status.value
    result = _mcp(shell, "call prot.add a=2 b=3")
    assert result.wait(WAIT).structured == {"result": 5}, result.result

    oauth = card.oauth
    token = oauth.access_token(servers.mcp_url)
    assert token
    stored = oauth.store.get(f"token:{servers.mcp_url}") or {}
    code = next(r["code"] for r in servers.auth.requests if r["grant_type"] == "authorization_code")
    verifier = next(
        r["code_verifier"] for r in servers.auth.requests if r["grant_type"] == "authorization_code"
    )
    secrets_ = [token, stored.get("refresh_token"), code, verifier]
    shown = _everything_shown(shell, card)
    for secret in secrets_:
        assert secret and secret not in shown

    _mcp(shell, "logout prot")
    assert oauth.access_token(servers.mcp_url) is None
    again = _mcp(shell, "auth prot")
    assert isinstance(again, AuthorizationCard)
    _browser_follows(_wait_pending(again))
    assert again.wait(WAIT) is not None, again.error


def test_pasted_address_completes_the_sign_in(shell: Any, servers: Servers) -> None:
    card = _mcp(shell, f"connect prot {servers.mcp_url} --auth")
    target = _redirect_target(_wait_pending(card))
    card.paste.value = target
    card.complete_button.click()
    assert card.wait(WAIT) is not None, card.error
    assert card.paste.value == ""  # the one-time code does not stay in the widget
    assert _mcp(shell, "call prot.add a=1 b=1").wait(WAIT).structured == {"result": 2}


def test_stored_token_connects_without_a_card(shell: Any, servers: Servers) -> None:
    card = _mcp(shell, f"connect prot {servers.mcp_url} --auth")
    _browser_follows(_wait_pending(card))
    assert card.wait(WAIT) is not None, card.error
    assert _mcp(shell, f"connect prot2 {servers.mcp_url} --auth") is None  # the stored token: no card
    assert "prot2" in shell.user_ns["mcp"].connections()
    assert _mcp(shell, "call prot2.add a=1 b=2").wait(WAIT).structured == {"result": 3}


def test_redact() -> None:
    text = (
        'Authorization: Bearer abc.def-ghi {"access_token": "AT", "refresh_token":"RT"} '
        "cb?code=XYZ&state=s client_secret=SEC eyJhbGciOi.eyJzdWIiOi.c2ln"
    )
    cleaned = redact(text)
    for secret in ("abc.def-ghi", '"AT"', '"RT"', "XYZ", "SEC", "eyJhbGciOi"):
        assert secret not in cleaned
    assert "state=s" in cleaned


def test_trace_notes_are_redacted() -> None:
    from mcp_notebook.engine.trace import Trace

    trace = Trace()
    trace.record("note", "[stderr] using Authorization: Bearer sekrit-token-123")
    assert "sekrit-token-123" not in json.dumps(trace.entries())


def test_serve_auth_in_the_kernel(shell: Any, servers: Servers) -> None:
    """``%mcp serve --auth ISSUER``: the notebook's server accepts tokens for itself only."""
    api = shell.user_ns["mcp"]

    @api.tool
    def double(x: int) -> int:
        """Double it."""
        return 2 * x

    handle = shell.run_line_magic("mcp", f"serve --auth {servers.auth.issuer}")
    try:
        assert handle.auth is not None and "Bearer" not in json.dumps(handle.shown_entry)
        assert "clients sign in" in handle._text() and "auth=OAuth()" in handle.shown_python_snippet
        init = json.dumps(INIT).encode()
        for audience, status in (("http://127.0.0.1:1/mcp", 401), (handle.url, 200)):
            request = urllib.request.Request(handle.url, data=init, method="POST")
            request.add_header("Content-Type", "application/json")
            request.add_header("Accept", "application/json, text/event-stream")
            request.add_header("Authorization", f"Bearer {servers.auth.mint(audience)}")
            try:
                with urllib.request.urlopen(request, timeout=WAIT) as resp:
                    got = resp.status
            except urllib.error.HTTPError as exc:
                got = exc.code
            assert got == status
    finally:
        handle.stop()
