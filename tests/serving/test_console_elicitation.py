"""A served notebook tool asks for input (ctx.elicit) that its calling client cannot give: the notebook's
own user answers it in the server console (issue 5: "ask the notebook user for input (elicitation rendered
in the console)"). A client that can elicit is still asked itself (client/elicitation)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import Context, Server, connect
from mcp_notebook.engine.runtime import Runtime
from mcp_notebook.notebook.serving.console import ServerConsole
from mcp_notebook.notebook.serving.server import serve

WAIT = 10.0


def make_server() -> Server:
    server = Server("asking")

    @server.tool
    async def book(ctx: Context) -> str:
        """Ask who the table is for."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("Who is the table for?", schema)
        if answer.get("action") != "accept":
            return f"not booked ({answer.get('action')})"
        return f"booked for {answer['content']['name']}"

    return server


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("console elicitation test runtime")
    yield rt
    rt.stop()


def test_the_notebook_user_answers_in_the_console(runtime: Runtime) -> None:
    console = ServerConsole(interactive=True)
    with serve(make_server(), runtime=runtime, console=console) as handle:
        results: list[Any] = []
        with connect(handle.url, headers=handle.headers, runtime=runtime) as client:  # no elicitation
            caller = threading.Thread(target=lambda: results.append(client.call_tool("book", {})))
            caller.start()
            deadline = time.monotonic() + WAIT
            while not console.questions and time.monotonic() < deadline:
                time.sleep(0.01)
            (card,) = console.questions.values()
            assert card.form is not None and "Who is the table for?" in str(card.widget.children[0].value)
            card.answer({"action": "accept", "content": {"name": "Ada"}})
            caller.join(WAIT)
        assert results[0]["content"][0]["text"] == "booked for Ada"
        assert not console.questions  # the card is gone once answered


def test_headless_console_declines_and_a_capable_client_is_asked_itself(runtime: Runtime) -> None:
    with serve(make_server(), runtime=runtime, console=ServerConsole(interactive=False)) as handle:
        with connect(handle.url, headers=handle.headers, runtime=runtime) as client:
            assert client.call_tool("book", {})["content"][0]["text"] == "not booked (decline)"
        asked = connect(
            handle.url,
            headers=handle.headers,
            runtime=runtime,
            elicitation_handler=lambda params: {"action": "accept", "content": {"name": "Grace"}},
        )
        with asked:
            assert asked.call_tool("book", {})["content"][0]["text"] == "booked for Grace"
