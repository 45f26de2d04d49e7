"""Signing in to OAuth-protected servers from a notebook: ``%mcp connect NAME URL --auth``.

Nothing blocks the kernel while a person signs in (DESIGN decision 4): the magic shows an
:class:`AuthorizationCard` at once and returns. The sign-in runs on the runtime loop; its redirect lands on
the OAuth client's one-shot listener on 127.0.0.1, or the person pastes the address their browser was sent
to (kernels whose browser cannot reach the kernel's loopback). A worker thread then connects the server
under its name and the card says who is signed in. With a stored token, a headless ``on_authorize`` or the
client-credentials grant, nobody has to act and ``connect`` returns the connected client as usual.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .rendering.base import esc

if TYPE_CHECKING:
    from ..auth.oauth import OAuth
    from ..engine.runtime import Runtime
    from ..engine.sync import SyncClient

__all__ = ["AuthorizationCard", "Authorizations", "subject_of"]

log = logging.getLogger("mcp_notebook.notebook")

Connect = Callable[[], "SyncClient"]


def subject_of(token: str | None) -> str | None:
    """Who a JWT access token says it is for (``email``, ``preferred_username`` or ``sub``), for display
    only: nothing is decided on it, so its signature is not checked here (the server checks it)."""
    if not token or token.count(".") != 2:
        return None
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(claims, dict):
        return None
    for key in ("email", "preferred_username", "sub", "client_id"):
        if isinstance(claims.get(key), str):
            return str(claims[key])
    return None


class AuthorizationCard:
    """The card: the authorization link, a paste field, then "authorized as ..." (or the error)."""

    def __init__(self, name: str, url: str, oauth: OAuth) -> None:
        import ipywidgets as w

        self.name, self.url, self.oauth = name, url, oauth
        self.state = "starting"
        self.subject: str | None = None
        self.error: str | None = None
        self.client: SyncClient | None = None
        self._done = threading.Event()
        self.status = w.HTML(self._status_html("finding the server's authorization server…"))
        self.link = w.HTML("")
        self.paste = w.Text(
            placeholder="…or paste here the address your browser was sent to, then Complete",
            layout=w.Layout(width="70%"),
        )
        self.complete_button = w.Button(description="Complete", layout=w.Layout(width="auto"))
        self.complete_button.on_click(self._on_complete)
        self.paste_row = w.HBox([self.paste, self.complete_button], layout=w.Layout(display="none"))
        self.output = w.Output()
        self.box = w.VBox([self.status, self.link, self.paste_row, self.output])
        self.box.add_class("mcp-auth-card")

    def _status_html(self, text: str) -> str:
        return (
            f"<div class='mcp-auth-status'><b>Sign in to {esc(self.name)}</b> "
            f"<code>{esc(self.url)}</code>: {esc(text)}</div>"
        )

    # ---- called on the runtime thread (trait changes are comm messages, sent from any thread) ------------
    def show_url(self, url: str) -> None:
        """``on_authorize``: show the link; the answer comes from the listener or the paste field."""
        if not url.startswith(("https://", "http://")):  # never a javascript: or data: link
            raise ValueError("the authorization URL is not http(s)")
        self.state = "pending"
        self.status.value = self._status_html("waiting for you to authorize")
        self.link.value = (
            f'<a class="mcp-authorize" href="{esc(url)}" target="_blank" rel="noopener noreferrer" '
            'style="display:inline-block;padding:4px 14px;border-radius:4px;background:#1976d2;'
            'color:white;text-decoration:none">Authorize</a>'
        )
        self.paste_row.layout.display = "flex"

    def connected(self, client: SyncClient, subject: str | None) -> None:
        self.client, self.subject, self.state = client, subject, "connected"
        who = subject or "(the server did not say who)"
        self.status.value = (
            f"<div class='mcp-auth-status mcp-auth-done'>✔ <b>{esc(self.name)}</b>: authorized as "
            f"<b class='mcp-auth-subject'>{esc(who)}</b>; connected. Tools: <code>%mcp tools "
            f"{esc(self.name)}</code></div>"
        )
        self._finish()

    def failed(self, message: str) -> None:
        from ..auth.redact import redact

        self.error, self.state = redact(message), "failed"
        self.status.value = (
            f"<div class='mcp-auth-status mcp-auth-failed'>✘ signing in to <b>{esc(self.name)}</b> failed: "
            f"{esc(self.error)}. Try again: <code>%mcp auth {esc(self.name)}</code></div>"
        )
        self._finish()

    def _finish(self) -> None:
        self.link.value = ""
        self.paste_row.layout.display = "none"
        self._done.set()

    # ---- on the kernel thread --------------------------------------------------------------------------
    def _on_complete(self, _button: Any) -> None:
        try:
            self.oauth.complete(self.paste.value)
            self.paste.value = ""  # the address holds the one-time code: do not keep it in the widget
        except Exception:
            self.output.append_stderr(traceback.format_exc())

    def wait(self, timeout: float | None = None) -> SyncClient | None:
        """Block until signed in and connected (or failed); the client, or None. For scripts and tests."""
        self._done.wait(timeout)
        return self.client

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = self.box._repr_mimebundle_(**kwargs) or {}
        text = f"Sign in to {self.name} ({self.url}): {self.state}"
        if self.state == "connected":
            text = f"{self.name}: authorized as {self.subject or '?'}; connected"
        return {**bundle, "text/plain": text}


class Authorizations:
    """The OAuth clients of the notebook's connections, by connection name."""

    def __init__(self, runtime: Callable[[], Runtime]) -> None:
        self._runtime = runtime
        self.clients: dict[str, tuple[OAuth, str]] = {}

    def oauth_for(self, name: str, url: str, auth: Any) -> OAuth:
        from ..auth.oauth import OAuth

        oauth = auth if isinstance(auth, OAuth) else OAuth(**(auth if isinstance(auth, dict) else {}))
        self.clients[name] = (oauth, url)
        return oauth

    def needs_person(self, oauth: OAuth, url: str) -> bool:
        return oauth.grant == "authorization_code" and oauth.on_authorize is None and not oauth.has_token(url)

    def start(self, name: str, url: str, oauth: OAuth, connect: Connect) -> AuthorizationCard:
        """Show the card now; sign in on the runtime loop; connect from a worker thread."""
        card = AuthorizationCard(name, url, oauth)
        oauth.on_authorize = card.show_url
        future = self._runtime().submit(oauth.sign_in(url))

        def finish() -> None:
            try:
                future.result(timeout=oauth.callback_timeout + 60)
                client = connect()
            except Exception as exc:
                card.failed(f"{type(exc).__name__}: {exc}")
                return
            finally:
                oauth.on_authorize = None  # later 401s (expired refresh) must not wait for a stale card
            card.connected(client, subject_of(oauth.access_token(url)))

        threading.Thread(target=finish, name=f"mcp sign-in {name}", daemon=True).start()
        return card

    def forget(self, name: str) -> tuple[OAuth, str]:
        """Drop the stored tokens of connection ``name`` (its client registration stays)."""
        from .calls.connections import NotebookError

        found = self.clients.get(name)
        if found is None:
            raise NotebookError(f"{name!r} was not connected with --auth")
        found[0].logout(found[1])
        return found
