"""``Context`` from a tool running on a loop other than its server's (a notebook tool on the kernel's loop,
called while the kernel is idle: an app's click, a served client). An ``async def`` tool awaits
``ctx.elicit``; a plain ``def`` tool called from that loop's callbacks gets the value. Before, both got
the value, so ``await ctx.elicit(...)`` raised "object dict can't be used in 'await' expression" (found by
tests/browser/test_app_live.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import Context


class _Backend:
    """The server's side of a call: its loop in its own thread, and a request that answers at once."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.request_id = 1
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.cancel_event = threading.Event()
        self.asked_on: list[asyncio.AbstractEventLoop] = []

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.asked_on.append(asyncio.get_running_loop())

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        self.asked_on.append(asyncio.get_running_loop())

    async def request(self, method: str, params: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        self.asked_on.append(asyncio.get_running_loop())
        return {"action": "accept", "content": {"guests": 4}}


@pytest.fixture
def backend() -> Iterator[_Backend]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield _Backend(loop)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_an_async_tool_on_another_loop_awaits(backend: _Backend) -> None:
    ctx = Context(backend)

    async def tool() -> Any:  # what the kernel's loop runs: the tool's coroutine, in a task
        return await ctx.elicit("How many guests?", {"type": "object"})

    assert asyncio.run(tool()) == {"action": "accept", "content": {"guests": 4}}
    assert backend.asked_on == [backend.loop]  # the request ran on the server's loop


def test_a_sync_tool_called_from_another_loops_callback_gets_the_value(backend: _Backend) -> None:
    ctx = Context(backend)
    answers: list[Any] = []

    async def kernel() -> None:  # the kernel's loop runs a sync tool as a callback, outside any task
        done = asyncio.get_running_loop().create_future()

        def job() -> None:
            answers.append(ctx.elicit("How many guests?", {"type": "object"}))
            done.set_result(None)

        asyncio.get_running_loop().call_soon(job)
        await done

    asyncio.run(kernel())
    assert answers == [{"action": "accept", "content": {"guests": 4}}]


def test_a_sync_tool_in_a_thread_gets_the_value(backend: _Backend) -> None:
    ctx = Context(backend)
    assert ctx.elicit("How many guests?", {"type": "object"})["content"] == {"guests": 4}
