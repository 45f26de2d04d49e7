"""What a server may ask a client for, and whether the answer fits (both eras; audit items 4 and 5).

A server MUST NOT use an elicitation mode the client did not declare (client/elicitation#capabilities),
nor send sampling ``tools`` without ``sampling.tools`` (client/sampling). An accepted form elicitation's
``content`` must match the ``requestedSchema`` the server sent: the answer comes from outside, so it is
checked before the tool sees it.
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import LocalProtocolError
from ..protocol.modern import MissingClientCapability
from ..protocol.session import has_capability
from .content import ToolError
from .validation import schema_check

__all__ = ["check_declared", "check_elicit_answer", "client_elicits"]

_ACTIONS = ("accept", "decline", "cancel")


def client_elicits(capabilities: dict[str, Any], params: dict[str, Any]) -> bool:
    """Whether the client declared the elicitation mode ``params`` asks for ({} means form only)."""
    caps = capabilities.get("elicitation")
    mode = params.get("mode", "form")
    return isinstance(caps, dict) and (has_capability(caps, (mode,)) or (mode == "form" and not caps))


def check_declared(
    method: str, params: dict[str, Any], capabilities: dict[str, Any], *, modern: bool
) -> None:
    """Raise when ``method`` with ``params`` needs a part of a capability the client did not declare:
    ``MissingClientCapability`` (-32021) in 2026-07-28, a local error (the tool's failure) before."""
    missing: tuple[str, dict[str, Any]] | None = None
    elicits = "elicitation" in capabilities and client_elicits(capabilities, params)
    if method == "elicitation/create" and "elicitation" in capabilities and not elicits:
        missing = ("elicitation", {params.get("mode", "form"): {}})
    samples_tools = has_capability(capabilities, ("sampling", "tools"))
    if method == "sampling/createMessage" and params.get("tools") and not samples_tools:
        missing = ("sampling", {"tools": {}})
    if missing is None:
        return
    if modern:
        raise MissingClientCapability(*missing)
    raise LocalProtocolError(f"the client did not declare {missing[0]}.{next(iter(missing[1]))}")


def check_elicit_answer(params: dict[str, Any], answer: Any) -> None:
    """A ToolError (the tool's failure, with the reason) unless ``answer`` is a valid ElicitResult for
    ``params``: a known action and, for an accepted form, content matching ``requestedSchema``."""
    action = answer.get("action") if isinstance(answer, dict) else None
    if action not in _ACTIONS:
        raise ToolError(f"the elicitation answer has no valid action ({action!r})")
    schema = params.get("requestedSchema")
    if action != "accept" or params.get("mode", "form") != "form" or not isinstance(schema, dict):
        return
    content = answer.get("content", {})
    problems = schema_check(schema, strict=False).problems(content if content is not None else {})
    if problems:
        raise ToolError(f"the elicitation answer does not match the requested schema: {problems[0]}")
