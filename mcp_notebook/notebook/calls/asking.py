"""What servers ask of the notebook mid-call: elicitation, sampling, log messages (DESIGN decision 4).

Requests arrive on the runtime thread. Interactive, they become a card (``calls/widgets.py``) shown with the
running call they belong to (or on its own) and the handler awaits a future that the click resolves,
so no thread ever blocks on a person. Headless, nobody is asked: elicitation is declined and sampling
rejected, unless a Python sampling callback was registered (``mcp.on_sampling``). Every answer goes to
the audit log.
"""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...protocol.errors import JSONRPCError
from ..rendering.base import esc, pre_html, wrap
from .policy import AuditEntry, AuditLog

if TYPE_CHECKING:
    from .handle import CallHandle
    from .surface import Surface

__all__ = ["USER_REJECTED", "Asking"]

USER_REJECTED = -1  # "User rejected sampling request" (client/sampling, the spec's example code)


class Asking:
    """Answers a server's elicitation and sampling requests, and files its log messages."""

    def __init__(
        self,
        surface: Surface,
        audit: AuditLog,
        headless: Callable[[], bool],
        host: Callable[[str], CallHandle | None],
    ) -> None:
        self._surface, self._audit, self._headless, self._host = surface, audit, headless, host
        self.cards: list[Any] = []  # the cards waiting for a person
        self.sampling_callback: Callable[[dict[str, Any]], Any] | None = None

    def _record(
        self, server: str, kind: str, params: dict[str, Any], outcome: str, by: str, response: Any = None
    ) -> None:
        from .history import kept_response

        kept = None if response is None else kept_response(response)
        self._audit.add(AuditEntry(server, kind, params, outcome, by, outcome, kind=kind, response=kept))

    async def _ask_person(self, server: str, make: Callable[[Callable[[Any], None]], Any]) -> Any:
        """Show the widget ``make(answer)`` builds, with the running call or on its own; await the answer."""
        from .widgets import resolve_soon

        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        host = self._host(server)

        def on_answer(value: Any) -> None:  # on the clicking thread
            if host is not None:
                host.answered(card.widget)
            resolve_soon(loop, answer, value)

        card = make(on_answer)
        self.cards.append(card)
        display_id = None
        if host is not None:
            host.attach(card.widget)
        else:
            display_id = f"mcp-ask-{id(card)}"
            self._surface.publish(
                {**card.widget._repr_mimebundle_(), "text/plain": f"{server} is asking you something"},
                display_id,
            )
        try:
            return await answer
        finally:
            self.cards.remove(card)
            if host is not None:
                host.notes.append(card.summary())
                host.detach(card.widget)
            else:
                self._surface.publish(card.summary(), display_id, update=True)
            card.close()

    async def elicitation(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._headless():
            self._record(server, "elicitation", params, "decline", "headless: nobody to ask")
            return {"action": "decline"}
        from .widgets import ElicitationCard

        result: dict[str, Any] = await self._ask_person(
            server, lambda answer: ElicitationCard(server, params, answer)
        )
        self._record(server, "elicitation", params, str(result.get("action")), "you", result)
        return result

    async def sampling(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        callback = self.sampling_callback
        if callback is not None:
            try:
                value = (
                    await callback(params)
                    if inspect.iscoroutinefunction(callback)
                    else await asyncio.to_thread(callback, params)
                )
                result = _sampling_result(value)
            except Exception:
                self._show_traceback(server, "the sampling callback failed", traceback.format_exc())
                raise
            self._record(
                server,
                "sampling",
                params,
                "answered",
                f"callback {getattr(callback, '__name__', callback)!s}",
            )
            return result
        if self._headless():
            self._record(server, "sampling", params, "rejected", "headless: nobody to ask")
            raise JSONRPCError(
                USER_REJECTED, "User rejected sampling request (no one to answer: headless run)"
            )
        from .widgets import SamplingCard

        reply = await self._ask_person(server, lambda answer: SamplingCard(server, params, answer))
        self._record(server, "sampling", params, "answered" if reply else "rejected", "you")
        if reply is None:
            raise JSONRPCError(USER_REJECTED, "User rejected sampling request")
        return dict(reply)

    def _show_traceback(self, server: str, what: str, text: str) -> None:
        # STYLE rule 7: a failing user callback is shown where the person looks, and still raised
        html = wrap(
            f'<div class="mcpnb-error-header">{esc(server)}: {esc(what)}</div>' + pre_html(text, 20_000),
            error=True,
        )
        self._surface.publish({"text/html": html, "text/plain": f"{server}: {what}\n{text}"})

    def log(self, server: str, params: dict[str, Any]) -> None:
        host = self._host(server)
        if host is not None:
            host.logs.append(params)


def _sampling_result(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {
            "role": "assistant",
            "content": {"type": "text", "text": value},
            "model": "python-callback",
            "stopReason": "endTurn",
        }
    if isinstance(value, Mapping):
        result = dict(value)
        result.setdefault("role", "assistant")
        result.setdefault("model", "python-callback")
        if "content" not in result:
            raise ValueError("a sampling reply dict needs 'content'")
        return result
    raise TypeError(f"the sampling callback must return a str or a dict, not {type(value).__name__}")
