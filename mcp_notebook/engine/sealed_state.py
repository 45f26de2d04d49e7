"""Sealing MRTR ``requestState`` (2026-07-28): encrypted and authenticated, bound to request and principal.

A state goes to the client and comes back on the retry (basic/patterns/mrtr), so it is attacker-controlled
and readable by anyone who sees it (mrtr#security). It carries the answers given so far (a PIN, an
approval...), so it is sealed with an AEAD (AES-256-GCM from ``cryptography``, a random 96-bit nonce per
state): nobody without the server's key can read it, and any change fails its tag. Inside: the digest of the
request it was issued for, the principal it was issued to, and a deadline. A retry that fails a check is
-32602 with ``data.reason``: ``malformed``, ``tampered``, ``other-request``, ``other-principal`` or
``expired``.

Why ``cryptography``: AEAD is not in the standard library, and hand-made encryption is not an option; it is
the library PyJWT's signing and the OAuth extra already use. It is a core dependency, imported on the first
seal (``import mcp_notebook`` stays light).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol.modern import request_digest, state_error

__all__ = ["StateSealer"]

_AAD = b"mcp_notebook requestState v2"
_NONCE = 12


def _aead(key: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as exc:  # a broken install: it is a declared dependency
        raise RuntimeError(
            "sealing MRTR requestState needs the 'cryptography' package: pip install cryptography"
        ) from exc
    # The configured key may be any length >= 16: derive the AES-256 key from it, for this use only.
    return AESGCM(hmac.new(key, b"mcp_notebook requestState AES-256-GCM", hashlib.sha256).digest())


@dataclass(frozen=True)
class StateSealer:
    """Seals and opens MRTR ``requestState`` with ``key`` (workers behind one balancer share it)."""

    key: bytes
    lifetime: float = 600.0
    _cipher: Any = field(default=None, init=False, repr=False, compare=False)

    def _aead(self) -> Any:
        if self._cipher is None:
            object.__setattr__(self, "_cipher", _aead(self.key))
        return self._cipher

    def seal(
        self,
        method: str,
        params: Mapping[str, Any],
        responses: dict[str, Any],
        now: float | None = None,
        *,
        principal: str | None = None,
    ) -> str:
        body: dict[str, Any] = {
            "d": request_digest(method, params),
            "r": responses,
            "x": (now or time.time()) + self.lifetime,
            "p": principal,
        }
        nonce = os.urandom(_NONCE)
        sealed = self._aead().encrypt(nonce, json.dumps(body, separators=(",", ":")).encode(), _AAD)
        return base64.urlsafe_b64encode(nonce + sealed).decode().rstrip("=")

    def open(
        self,
        state: Any,
        method: str,
        params: Mapping[str, Any],
        now: float | None = None,
        *,
        principal: str | None = None,
    ) -> dict[str, Any]:
        """The answers sealed in ``state``; JSONRPCError(-32602, data.reason) unless it is intact, fresh and
        sealed for this request and this principal."""
        if not isinstance(state, str) or not state:
            raise state_error("malformed", "requestState is not a state this server issued")
        try:
            raw = base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
        except (binascii.Error, ValueError):
            raise state_error("malformed", "requestState is not a state this server issued") from None
        if len(raw) <= _NONCE + 16:
            raise state_error("malformed", "requestState is not a state this server issued")
        if base64.urlsafe_b64encode(raw).decode().rstrip("=") != state:  # bits base64 would ignore
            raise state_error("tampered", "requestState failed its integrity check")
        from cryptography.exceptions import InvalidTag

        try:
            plain = self._aead().decrypt(raw[:_NONCE], raw[_NONCE:], _AAD)
        except InvalidTag:
            raise state_error("tampered", "requestState failed its integrity check") from None
        body = json.loads(plain)
        if not isinstance(body, dict) or body.get("d") != request_digest(method, params):
            raise state_error("other-request", "requestState was issued for another request")
        if body.get("p") != principal:
            raise state_error("other-principal", "requestState was issued to another principal")
        if not isinstance(body.get("x"), (int, float)) or body["x"] < (now or time.time()):
            raise state_error("expired", "requestState has expired; start again")
        responses = body.get("r")
        return responses if isinstance(responses, dict) else {}
