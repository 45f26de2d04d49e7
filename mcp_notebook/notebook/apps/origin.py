"""A real origin for an app that asks for one (``_meta.ui.domain``): the spec's sandbox proxy, served by the
kernel on a loopback port, so the view runs with ``allow-scripts allow-same-origin`` on an origin that is
not JupyterLab's, and same-origin storage (``localStorage``, IndexedDB) works.

Why not always: an opaque ``srcdoc`` frame (the default) is stricter, and it works wherever JupyterLab is
served. This one needs the browser to reach the kernel's machine on loopback, so it is used only when
JupyterLab itself is on loopback (the front end checks), and on the *other* loopback name: JupyterLab on
``127.0.0.1`` gets apps on ``localhost`` and the reverse, because cookies are shared across ports of one
host name, and the view must not see JupyterLab's (``_xsrf``, the login cookie). Each ``domain`` gets its
own port, so two apps with different domains do not share storage; apps of one domain do, as on the web.
The port is derived from the domain (``candidate_ports``), so the origin, and the storage the browser keeps
for it, survives a kernel restart; a second kernel serving the same domain at the same time gets the next
free candidate (another origin, its own storage).

The server answers one path, ``/<token>/proxy?policy=...`` (the token is random per kernel: a web page
elsewhere cannot frame the proxy to read an app's storage), with the proxy document and the app's policy
as a ``Content-Security-Policy`` header, which the view's ``srcdoc`` inherits. Everything else is 404.
"""

from __future__ import annotations

import hashlib
import http.server
import secrets
import threading
import urllib.parse
from typing import Any

from .sandbox import proxy_document

__all__ = ["origin_for"]

_lock = threading.Lock()
_servers: dict[str, tuple[http.server.ThreadingHTTPServer, str]] = {}  # domain -> (server, token)


class _Handler(http.server.BaseHTTPRequestHandler):
    token = ""

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path != f"/{self.token}/proxy":
            self.send_error(404)
            return
        policy = urllib.parse.parse_qs(url.query).get("policy", ["default-src 'none'"])[0]
        body = proxy_document(policy).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Security-Policy", proxy_policy(policy))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def proxy_policy(policy: str) -> str:
    """The header form of the policy the document also carries (the same characters are kept)."""
    return proxy_document(policy).split('content="', 1)[1].split('"', 1)[0]


PORTS = range(20000, 32768)  # where a domain's port is looked for: below Linux's ephemeral range (32768+)
TRIES = 8


def candidate_ports(domain: str) -> list[int]:
    """The ports ``domain``'s proxy tries, first to last: the same on every kernel and every restart, so
    the app's origin (and with it its storage) stays the same; a port in use moves it to the next."""
    start = int.from_bytes(hashlib.sha256(domain.encode("utf-8")).digest()[:4], "big") % len(PORTS)
    return [PORTS[(start + i) % len(PORTS)] for i in range(TRIES)]


def _bind(domain: str, handler: type[_Handler]) -> http.server.ThreadingHTTPServer:
    for port in candidate_ports(domain):
        try:
            return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError:  # taken (another kernel serving this domain, or anything else): the next one
            continue
    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)  # a new origin: storage starts empty


def origin_for(domain: str) -> tuple[int, str]:
    """The port and token of the loopback server for ``domain``, started on first use (a daemon thread)."""
    with _lock:
        found = _servers.get(domain)
        if found is None:
            token = secrets.token_urlsafe(24)
            handler = type("Handler", (_Handler,), {"token": token})
            server = _bind(domain, handler)
            server.daemon_threads = True
            threading.Thread(
                target=server.serve_forever, name=f"mcp-app-origin-{domain}", daemon=True
            ).start()
            found = _servers[domain] = (server, token)
        server, token = found
        return int(server.server_address[1]), token
