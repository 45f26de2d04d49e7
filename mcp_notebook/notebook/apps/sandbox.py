"""The sandbox an app runs in: iframe ``sandbox``/``allow`` attributes and the Content-Security-Policy built
from the resource's ``_meta.ui.csp`` (ext-apps spec, "Security": deny by default, the server lists the
origins its app needs).

The app is an ``srcdoc`` iframe with ``sandbox="allow-scripts allow-forms"`` and *without*
``allow-same-origin``: its origin is opaque, so it can reach neither JupyterLab's DOM, cookies and storage,
nor the Jupyter server's API with the user's credentials. The policy goes in as the document's first
``<meta http-equiv>``; a policy the app adds itself can only narrow it (every policy applies).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

__all__ = ["SANDBOX", "allow_attribute", "csp_policy", "prepare_document", "proxy_document"]

SANDBOX = "allow-scripts allow-forms"
# an origin a policy may name: scheme://host[:port], host may start with *. ; nothing that ends a directive
_ORIGIN = re.compile(r"(https?|wss?)://(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?/?")
_PERMISSIONS = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation",
                "clipboardWrite": "clipboard-write"}  # fmt: skip


def _origins(csp: Mapping[str, Any], key: str) -> list[str]:
    values = csp.get(key)
    if not isinstance(values, Sequence) or isinstance(values, str):
        return []
    return [v.rstrip("/") for v in values if isinstance(v, str) and _ORIGIN.fullmatch(v)]


def csp_policy(csp: Mapping[str, Any] | None) -> str:
    """The policy for an app: inline code and data/blob media only, plus the origins ``csp`` declares.

    ``blob:`` scripts are code the page itself made (a blob URL answers only its own origin's document), so
    they add nothing to ``'unsafe-inline'``; an anywidget served as an app imports its module that way."""
    csp = csp or {}
    resources = " ".join(_origins(csp, "resourceDomains"))
    connect = " ".join(_origins(csp, "connectDomains")) or "'none'"
    frames = " ".join(_origins(csp, "frameDomains")) or "'none'"
    base = " ".join(_origins(csp, "baseUriDomains")) or "'self'"
    extra = f" {resources}" if resources else ""
    directives = [
        "default-src 'none'",
        f"script-src 'unsafe-inline' blob:{extra}",
        f"style-src 'unsafe-inline'{extra}",
        f"img-src data: blob:{extra}",
        f"font-src data:{extra}",
        f"media-src data: blob:{extra}",
        f"connect-src {connect}",
        f"frame-src {frames}",
        f"base-uri {base}",
        "form-action 'none'",
        "object-src 'none'",
    ]
    return "; ".join(directives)


_PROXY = resources.files(__package__).joinpath("proxy.html").read_text(encoding="utf-8")
_POLICY_CHARS = re.compile(r"[^A-Za-z0-9 :;/.*'_-]")


def proxy_document(policy: str) -> str:
    """The proxy document (``proxy.html``: it hosts the view and relays the bridge) under ``policy``, which
    its srcdoc view inherits; characters no policy of ours contains are dropped."""
    return _PROXY.replace("__POLICY__", _POLICY_CHARS.sub("", policy))


def allow_attribute(permissions: Mapping[str, Any] | None) -> str:
    """The iframe ``allow`` list for the permissions the resource asks for (the host may grant them)."""
    wanted = [
        name for key, name in _PERMISSIONS.items() if isinstance(permissions, Mapping) and key in permissions
    ]
    return "; ".join(wanted)


def prepare_document(html: str, csp: Mapping[str, Any] | None) -> str:
    """``html`` with the policy as its first element (before any script can run).

    Right after a leading doctype, never searched for inside the document (a ``<head>`` inside a comment or
    a script would fool a search): an HTML parser puts a ``<meta>`` met before ``<html>`` into the head it
    opens implicitly, and ignores the document's own ``<head>`` tag after it.
    """
    policy = csp_policy(csp).replace('"', "&quot;")
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
    doctype = re.match(r"\ufeff?\s*<!doctype[^>]*>", html, re.IGNORECASE)
    at = doctype.end() if doctype else 0
    return html[:at] + meta + html[at:]
