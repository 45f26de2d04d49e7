"""A serving loop whose task factory starts tasks eagerly (``asyncio.eager_task_factory``, Python 3.12+,
which an application may set): a handler that needs no wait runs to its end inside ``create_task``, before
the connection has recorded it. The connection must not then keep it (h7review, round 7: after 47ec199 each
such request left its finished task in the connection's tasks, and since earlier its entry in ``_running``:
two objects per request for the connection's life, 102 of each after 100 legacy calls)."""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Coroutine, Generator
from typing import Any

import pytest

from mcp_notebook.engine.server import Server
from tests.interaction.test_interaction_progress_cancel import HandClient, handler_tasks

pytestmark = pytest.mark.interaction


class _Finished(asyncio.Future[Any]):
    """A task that ran to its end while being created (what an eager task is by then)."""

    _name = "eager"

    def get_name(self) -> str:
        return self._name

    def set_name(self, name: object) -> None:
        self._name = str(name)


@types.coroutine
def _resumed(coro: Coroutine[Any, Any, Any], waiting: Any) -> Generator[Any, Any, Any]:
    """The rest of ``coro``, whose first steps ran already, as a task runs it."""
    while True:
        try:
            sent = yield waiting
        except BaseException as exc:  # a cancel: into the coroutine
            try:
                waiting = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                waiting = coro.send(sent)
            except StopIteration as stop:
                return stop.value


def eager(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **options: Any) -> Any:
    """``asyncio.eager_task_factory`` where there is one; before 3.12 the same start: the coroutine runs
    until it first waits, and one that never waits is a finished task when created."""
    factory = getattr(asyncio, "eager_task_factory", None)
    if factory is not None and sys.version_info >= (3, 12):
        return factory(loop, coro, **options)
    try:
        waiting = coro.send(None)
    except StopIteration as stop:
        finished = _Finished(loop=loop)
        finished.set_result(stop.value)
        return finished
    return asyncio.Task(_resumed(coro, waiting), loop=loop, **options)


async def test_handlers_run_to_their_end_at_creation_are_not_kept() -> None:
    server = Server("s")

    @server.tool
    async def echo(text: str) -> str:
        return text

    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    hand = await HandClient.initialized(server)
    (session,) = server.sessions
    loop.set_task_factory(eager)  # type: ignore[arg-type]
    try:
        for i in range(20):
            await hand.send({"id": i, "method": "ping"})
            await hand.answer(i)
            call = {"name": "echo", "arguments": {"text": "x"}}
            await hand.send({"id": 100 + i, "method": "tools/call", "params": call})
            assert (await hand.answer(100 + i))["result"]["content"][0]["text"] == "x"
    finally:
        loop.set_task_factory(previous)
    assert handler_tasks(session.connection) == []
    assert session.connection._running == {}
    await hand.close()
