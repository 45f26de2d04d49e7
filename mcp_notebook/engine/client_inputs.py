"""What a server asks of the client's user side (elicitation, sampling, roots), in either era, and how the
client answers: with the handlers it was given (a mixin of :class:`.client.Client`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError

if TYPE_CHECKING:
    from .connection import IncomingRequest

__all__ = ["InputAnswers", "InputKind", "InputRequest"]

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


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class _Dispatches(Protocol):
    async def dispatch(self, method: str, params: dict[str, Any]) -> None: ...


class InputAnswers:
    """What the server sends the client: ping, the tasks it asks us to run, input requests, notifications."""

    if TYPE_CHECKING:  # provided by Client
        name: str
        roots: list[dict[str, Any]] | Callable[[], Any] | None
        elicitation_handler: Callable[[dict[str, Any]], Any] | None
        sampling_handler: Callable[[dict[str, Any]], Any] | None

        subscriptions: _Dispatches  # a modern_client.Subscriptions (which imports this module)
        _tools_stale: bool
        logging_handler: Callable[[dict[str, Any]], Any] | None
        notification_handler: Callable[[str, dict[str, Any]], Any] | None

        async def _on_task_request(self, request: IncomingRequest) -> dict[str, Any] | None: ...

    async def _on_request(self, request: IncomingRequest) -> dict[str, Any]:
        if request.method == "ping":
            return {}
        as_task = await self._on_task_request(request)
        if as_task is not None:
            return as_task
        kind = _INPUT_METHODS.get(request.method)
        if kind is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return await self.answer_input(InputRequest(kind, request.params, self.name))

    async def answer_input(self, request: InputRequest) -> dict[str, Any]:
        """Answer an elicitation, sampling or roots request with the registered handler."""
        if request.kind == "roots":
            roots = self.roots() if callable(self.roots) else self.roots
            if roots is None:
                raise JSONRPCError(METHOD_NOT_FOUND, "Roots are not supported by this client")
            return {"roots": list(await _maybe_await(roots))}
        handler = self.elicitation_handler if request.kind == "elicitation" else self.sampling_handler
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"This client does not support {request.kind}")
        if request.kind == "elicitation":
            mode = request.params.get("mode", "form")
            if mode not in ("form", "url"):
                raise JSONRPCError(INVALID_PARAMS, f"Unsupported elicitation mode: {mode!r}")
        result = await _maybe_await(handler(request.params))
        if not isinstance(result, dict):
            raise TypeError(f"the {request.kind} handler must return a dict, not {type(result).__name__}")
        return result

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        await self.subscriptions.dispatch(method, params)
        if method == "notifications/subscriptions/acknowledged":  # the listen stream's own
            return
        if method == "notifications/tools/list_changed":
            self._tools_stale = True
        elif method == "notifications/message" and self.logging_handler is not None:
            await _maybe_await(self.logging_handler(params))
        if self.notification_handler is not None:
            await _maybe_await(self.notification_handler(method, params))
