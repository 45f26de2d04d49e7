"""What a server asks of the client's user side (elicitation, sampling, roots), in either era."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["InputKind", "InputRequest"]

InputKind = Literal["elicitation", "sampling", "roots"]

_INPUT_METHODS: dict[str, InputKind] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


@dataclass(frozen=True)
class InputRequest:
    """Something the server needs from the user side: elicitation, sampling or roots.

    Legacy servers ask with a server->client request; modern (2026-07-28) ones with an ``input_required``
    result. Both arrive here, so handlers are written once (DESIGN decision 1).
    """

    kind: InputKind
    params: dict[str, Any]
    server: str
