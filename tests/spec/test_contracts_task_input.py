"""Issue 20 item 2: inside a task, a tool asks the client only for what it declared, and the answers are
checked like everywhere else -- in both eras. Before, the task path (``TaskBackend.request``) skipped the
checks the request path makes: ``ctx.sample(tools=...)`` reached a client without ``sampling.tools``,
``ctx.elicit_url`` reached a form-only client (with the removed ``elicitationId`` in 2026-07-28), and an
accepted answer that did not fit ``requestedSchema`` reached the tool. Now both paths share one code path
(``_ContextBackend.input_request``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.protocol.errors import JSONRPCError
from mcp_notebook.protocol.modern import MISSING_CLIENT_CAPABILITY

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.requirement("tasks-input-same-checks", "mrtr-declared-only"),
]
WAIT = 30
TOOL = {"name": "lookup", "inputSchema": {"type": "object"}}
AGE = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}
ERAS = ["legacy", "modern"]


class FormOnlyClient(Client):
    """Elicitation in form mode only, sampling without tools."""

    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        caps["elicitation"] = {"form": {}}
        caps["sampling"] = {}
        return caps


def make_server() -> Server:
    server = Server("task-input")

    @server.tool(task="required")
    async def visit(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in", "https://example.com/login", "e-1", key="login")
        return str(answer["action"])

    @server.tool(task="required")
    async def ask_with_tools(ctx: Context) -> str:
        answer = await ctx.sample("Use a tool", max_tokens=10, tools=[TOOL], key="model")
        return str(answer["content"]["text"])

    @server.tool(task="required")
    async def age(ctx: Context) -> str:
        answer = await ctx.elicit("How old?", AGE, key="age")
        return repr(answer["content"]["age"])

    return server


class Peer:
    def __init__(self, age: Any = 40) -> None:
        self.asked: list[dict[str, Any]] = []
        self.age = age

    def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return (
            {"action": "accept", "content": {"age": self.age}}
            if "requestedSchema" in params
            else {"action": "accept"}
        )

    def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    def client(self, era: str, cls: type[Client] = FormOnlyClient) -> Client:
        return cls(
            make_server(),
            era=era,
            timeout=WAIT,
            elicitation_handler=self.elicit,
            sampling_handler=self.sample,
        )  # type: ignore[arg-type]


async def refusal(client: Client, era: str, name: str) -> str:
    """What the caller sees when the task's input request is refused: -32021 (2026-07-28) or the tool's
    failure (2025-11-25), as outside a task (tests/spec/test_audit_04_undeclared_input_modes.py)."""
    if era == "modern":
        with pytest.raises(JSONRPCError) as refused:
            await asyncio.wait_for(client.call_tool(name, task=True), WAIT)
        assert refused.value.code == MISSING_CLIENT_CAPABILITY
        return repr(refused.value.data)
    result = await asyncio.wait_for(client.call_tool(name, task=True), WAIT)
    assert result["isError"]
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("era", ERAS)
async def test_url_elicitation_in_a_task_needs_the_url_mode(era: str) -> None:
    peer = Peer()
    async with peer.client(era) as client:
        said = await refusal(client, era, "visit")
    assert ("'url'" in said) if era == "modern" else ("elicitation.url" in said)
    assert peer.asked == []  # was: the URL elicitation reached the form-only client


@pytest.mark.parametrize("era", ERAS)
async def test_sampling_tools_in_a_task_need_sampling_tools(era: str) -> None:
    peer = Peer()
    async with peer.client(era) as client:
        said = await refusal(client, era, "ask_with_tools")
    assert ("'tools'" in said) if era == "modern" else ("sampling.tools" in said)
    assert peer.asked == []


async def test_url_elicitation_in_a_2026_task_has_no_elicitation_id() -> None:
    peer = Peer()
    async with peer.client("modern", Client) as client:  # declares form and url
        result = await asyncio.wait_for(client.call_tool("visit", task=True), WAIT)
    assert result["content"][0]["text"] == "accept"
    assert peer.asked[0]["mode"] == "url" and "elicitationId" not in peer.asked[0]


@pytest.mark.parametrize("era", ERAS)
async def test_answers_in_a_task_are_checked_against_the_requested_schema(era: str) -> None:
    peer = Peer(age="forty")
    async with peer.client(era, Client) as client:
        result = await asyncio.wait_for(client.call_tool("age", task=True), WAIT)
    assert result["isError"], result  # was: the tool got {"age": "forty"}
    assert "does not match the requested schema" in result["content"][0]["text"]
    fitting = Peer(age=40)
    async with fitting.client(era, Client) as client:
        result = await asyncio.wait_for(client.call_tool("age", task=True), WAIT)
    assert result["content"][0]["text"] == "40"


async def test_a_quick_2026_task_is_seen_finished_without_waiting_for_the_poll_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task that ends before the listen stream honours it was pushed to nobody; the client looks once
    instead of waiting for a notification that never comes (it waited MAX_POLL, 5 s, per such task)."""
    from mcp_notebook.engine import client_tasks

    monkeypatch.setattr(client_tasks, "MAX_POLL", 3600.0)  # a wait for the bound would outlast the test
    server = Server("quick")

    @server.tool(task="required")
    def quick() -> str:
        return "done"

    async with Client(server, era="modern", timeout=WAIT) as client:
        result = await asyncio.wait_for(client.call_tool("quick", task=True), WAIT)
    assert result["content"][0]["text"] == "done"
