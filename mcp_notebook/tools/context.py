"""The context object a tool can ask for.

A tool function that declares a parameter annotated with :class:`Context` gets one injected per call; the
parameter is left out of the tool's inputSchema. Through it the tool reports progress, logs, asks the user
for input (elicitation), asks the client's model (sampling), reads the client's roots and checks for
cancellation.

Every method works from both kinds of tool: in an ``async def`` tool, ``await ctx.report_progress(...)``;
in a plain ``def`` tool (which runs off the server's event loop), ``ctx.report_progress(...)`` blocks until
done and returns the value. That is decided by where the call is made from: a coroutine (on the server's
loop, or on another loop such as the kernel's, which runs notebook tools) gets an awaitable.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, Protocol, TypeVar

__all__ = ["Context", "ContextBackend", "ToolCancelled"]

T = TypeVar("T")


class ToolCancelled(Exception):
    """Raised by :meth:`Context.check_cancelled` once the caller has cancelled the request."""


class ContextBackend(Protocol):
    """What the server provides behind a Context; one per incoming request."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...
    @property
    def request_id(self) -> str | int: ...
    @property
    def client_info(self) -> dict[str, Any]: ...
    @property
    def client_capabilities(self) -> dict[str, Any]: ...
    @property
    def cancel_event(self) -> threading.Event: ...

    async def progress(self, progress: float, total: float | None, message: str | None) -> None: ...
    async def log(self, level: str, data: Any, logger: str | None) -> None: ...
    async def request(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]: ...


class Context:
    """Per-call access to the protocol from a tool: progress, logging, elicitation, sampling, roots."""

    def __init__(self, backend: ContextBackend) -> None:
        self._backend = backend

    # -- facts about the call ------------------------------------------------------------------------------
    @property
    def request_id(self) -> str | int:
        return self._backend.request_id

    @property
    def principal(self) -> str | None:
        """Who is calling, as the connection authenticated it: ``"token:NAME"``, ``"oauth:SUBJECT
        client:ID"``, this connection (``"connection:..."``), or None (an anonymous one-request caller).
        Never what the client says about itself."""
        return getattr(self._backend, "principal", None)

    @property
    def client_info(self) -> dict[str, Any]:
        """The calling client's ``clientInfo`` (name, version, ...), as it introduced itself."""
        return self._backend.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared: for a 2026-07-28 request, in that request's own ``_meta``."""
        return self._backend.client_capabilities

    @property
    def cancelled(self) -> bool:
        """True once the client sent ``notifications/cancelled`` for this call (or the connection closed)."""
        return self._backend.cancel_event.is_set()

    def check_cancelled(self) -> None:
        """Raise :class:`ToolCancelled` if the call was cancelled; a cheap check for long loops."""
        if self.cancelled:
            raise ToolCancelled("the client cancelled this call")

    # -- the protocol ----------------------------------------------------------------------------------------
    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> Any:
        """Send ``notifications/progress`` if the caller asked for progress (it sent a progressToken)."""
        return self._bridge(self._backend.progress(progress, total, message))

    def log(self, level: str, data: Any, logger: str | None = None) -> Any:
        """Send ``notifications/message`` at ``level`` (RFC 5424 names), subject to the client's log level."""
        return self._bridge(self._backend.log(level, data, logger))

    def debug(self, data: Any) -> Any:
        return self.log("debug", data)

    def info(self, data: Any) -> Any:
        return self.log("info", data)

    def warning(self, data: Any) -> Any:
        return self.log("warning", data)

    def error(self, data: Any) -> Any:
        return self.log("error", data)

    # ``key`` names the input request in a 2026-07-28 (MRTR) ``input_required`` result; by default the
    # requests of one call are numbered in order. Legacy sessions ignore it.
    def elicit(self, message: str, requested_schema: dict[str, Any], *, key: str | None = None) -> Any:
        """Ask the user for structured input (form mode). Returns the ElicitResult dict: action, content."""
        params = {"mode": "form", "message": message, "requestedSchema": requested_schema}
        return self._bridge(self._backend.request("elicitation/create", params, key))

    def elicit_url(self, message: str, url: str, elicitation_id: str, *, key: str | None = None) -> Any:
        """Ask the user to visit ``url`` (URL mode, 2025-11-25). Returns the ElicitResult dict."""
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        return self._bridge(self._backend.request("elicitation/create", params, key))

    def sample(
        self,
        messages: list[dict[str, Any]] | str,
        max_tokens: int = 512,
        *,
        key: str | None = None,
        **extra: Any,
    ) -> Any:
        """Ask the client's model for a completion (``sampling/createMessage``). Returns the result dict.

        ``messages`` may be a plain string (one user text message). ``extra`` takes the other request fields
        in wire spelling (``systemPrompt``, ``temperature``, ``modelPreferences``, ``tools``, ...).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params = {"messages": messages, "maxTokens": max_tokens, **extra}
        return self._bridge(self._backend.request("sampling/createMessage", params, key))

    def list_roots(self, *, key: str | None = None) -> Any:
        """The client's roots (``roots/list``): a list of ``{"uri", "name"?}`` dicts."""

        async def roots() -> list[dict[str, Any]]:
            result = await self._backend.request("roots/list", {}, key)
            return list(result.get("roots", []))

        return self._bridge(roots())

    def start_task(self) -> Any:
        """Go on as a task from here: the 2026 client gets its ``CreateTaskResult`` now, and what the tool
        asked before this (through MRTR, on the original request) stays answered. Only for tools registered
        with ``task_start="explicit"``; anywhere else (a 2025-11-25 task, a plain call) it does nothing."""

        async def start() -> None:
            starter = getattr(self._backend, "start_task", None)
            if starter is not None:
                await starter()

        return self._bridge(start())

    def _bridge(self, coro: Coroutine[Any, Any, T]) -> Awaitable[T] | T:
        """Return the coroutine to an async caller on the loop; run it to completion for a sync caller."""
        loop = self._backend.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return coro
        if running is not None and asyncio.current_task(running) is not None:
            # an async tool running on another loop (a notebook tool on the kernel's loop, called while
            # the kernel is idle): awaited there, without blocking that loop; a sync tool is called from
            # a callback or a thread, never from inside a task, so it still gets the value below
            return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop), loop=running)
        return asyncio.run_coroutine_threadsafe(coro, loop).result()
