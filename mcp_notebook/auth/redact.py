"""Blank out credentials in text meant for people (errors, logs, history): bearer and basic credentials,
JWTs, and the OAuth parameters that carry secrets (``access_token``, ``refresh_token``, ``code``,
``client_secret``, ``client_assertion``, ``code_verifier``, ``id_token``, ``assertion``, ``subject_token``).
Stdlib only."""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact"]

REDACTED = "[redacted]"

_SECRET_NAMES = (
    "access_token|refresh_token|id_token|code|client_secret|client_assertion|code_verifier|assertion|"
    "subject_token|token|password"
)
_PATTERNS = [
    # Authorization: Bearer xxx / Basic xxx (header lines, or the value alone)
    (re.compile(r"(?i)\b(bearer|basic|dpop)\s+[A-Za-z0-9\-._~+/]+=*"), r"\1 " + REDACTED),
    # a JWT anywhere: three base64url parts, the first two starting like JSON
    (re.compile(r"\beyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"), REDACTED),
    # "name": "value" in JSON
    (re.compile(rf'(?i)("(?:{_SECRET_NAMES})"\s*:\s*")[^"]*(")'), rf"\1{REDACTED}\2"),
    # name=value in a query string or form body
    (re.compile(rf"(?i)([?&;\s](?:{_SECRET_NAMES})=)[^&\s#\"']+"), rf"\1{REDACTED}"),
]


def redact(text: str) -> str:
    """``text`` with every credential it recognises replaced by ``[redacted]``."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
