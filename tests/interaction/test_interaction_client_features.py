"""What a tool asks of the client while it runs: elicitation, sampling, roots (server->client requests).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation (MCP-NOTES §7.5),
.../client/sampling (§7.4), .../client/roots (§7.6).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.engine.server import Server
from mcp_notebook.tools import Context
from tests.interaction._harness import Connect

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Your name"}},
    "required": ["name"],
}


def text_of(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    return str(block["text"])


def asking_server() -> Server:
    server = Server("asker")

    @server.tool
    async def greet(ctx: Context) -> dict[str, Any]:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA)
        return {"answer": answer}

    @server.tool
    async def think(question: str, ctx: Context) -> dict[str, Any]:
        return {"reply": await ctx.sample(question, max_tokens=20, systemPrompt="Be brief.")}

    @server.tool
    async def where(ctx: Context) -> dict[str, Any]:
        return {"roots": await ctx.list_roots()}

    return server


# -- elicitation ---------------------------------------------------------------------------------------------
async def test_tool_gets_the_clients_elicitation_answer(connect: Connect) -> None:
    """client/elicitation#creating-elicitation-requests: the server sends elicitation/create {mode?, message,
    requestedSchema}; the client answers {action, content}."""
    asked: list[dict[str, Any]] = []

    def on_elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(asking_server(), elicitation_handler=on_elicit) as client:
        assert client.capabilities()["elicitation"] == {"form": {}, "url": {}}
        result = await client.call_tool("greet")

    assert result["structuredContent"] == {"answer": {"action": "accept", "content": {"name": "Ada"}}}
    (params,) = asked
    assert params["message"] == "What is your name?"
    assert params["requestedSchema"] == NAME_SCHEMA
    assert params.get("mode", "form") == "form"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_tool_sees_a_declined_or_cancelled_elicitation(connect: Connect, action: str) -> None:
    """client/elicitation#response-actions: decline and cancel come back without content."""

    async def on_elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": action}

    async with connect(asking_server(), elicitation_handler=on_elicit) as client:
        result = await client.call_tool("greet")

    assert result["structuredContent"] == {"answer": {"action": action}}


async def test_elicitation_without_a_client_handler_is_a_tool_error(connect: Connect) -> None:
    """client/elicitation#capabilities: servers MUST NOT send elicitation to a client that did not declare it;
    the tool's failure is a tool execution error (isError), not a hang or a protocol error."""
    async with connect(asking_server()) as client:
        assert "elicitation" not in client.capabilities()
        result = await client.call_tool("greet")
        sent_to_client = [e for e in client.trace if e.message.get("method") == "elicitation/create"]

    assert result["isError"] is True
    assert "elicitation" in text_of(result)
    assert sent_to_client == []


# -- sampling ------------------------------------------------------------------------------------------------
async def test_tool_gets_the_clients_sampling_answer(connect: Connect) -> None:
    """client/sampling#creating-messages: sampling/createMessage {messages, maxTokens, systemPrompt?}; the
    result is a SamplingMessage plus model and stopReason."""
    requests: list[dict[str, Any]] = []
    reply = {
        "role": "assistant",
        "content": {"type": "text", "text": "4"},
        "model": "fake-1",
        "stopReason": "endTurn",
    }

    async def on_sample(params: dict[str, Any]) -> dict[str, Any]:
        requests.append(params)
        return reply

    async with connect(asking_server(), sampling_handler=on_sample) as client:
        result = await client.call_tool("think", {"question": "What is 2+2?"})

    assert result["structuredContent"] == {"reply": reply}
    (params,) = requests
    assert params["messages"] == [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}]
    assert params["maxTokens"] == 20 and params["systemPrompt"] == "Be brief."


async def test_sampling_without_a_client_handler_is_a_tool_error(connect: Connect) -> None:
    """client/sampling#capabilities: only clients that declare sampling receive sampling/createMessage."""
    async with connect(asking_server()) as client:
        result = await client.call_tool("think", {"question": "?"})

    assert result["isError"] is True
    assert "sampling" in text_of(result)


# -- roots ---------------------------------------------------------------------------------------------------
async def test_tool_lists_the_clients_roots(connect: Connect) -> None:
    """client/roots#listing-roots: roots/list -> {roots: [{uri: file://..., name?}]}."""
    roots = [{"uri": "file:///work/project", "name": "project"}, {"uri": "file:///data"}]
    async with connect(asking_server(), roots=roots) as client:
        assert client.capabilities()["roots"] == {"listChanged": True}
        result = await client.call_tool("where")

    assert result["structuredContent"] == {"roots": roots}


async def test_roots_can_come_from_a_callable(connect: Connect) -> None:
    """The client answers roots/list at the time it is asked (client/roots#root-list-changes)."""
    current = [{"uri": "file:///a"}]
    async with connect(asking_server(), roots=lambda: current) as client:
        first = await client.call_tool("where")
        current = [{"uri": "file:///b"}]
        await client.send_roots_list_changed()
        second = await client.call_tool("where")

    assert first["structuredContent"] == {"roots": [{"uri": "file:///a"}]}
    assert second["structuredContent"] == {"roots": [{"uri": "file:///b"}]}


async def test_roots_without_client_support_is_a_tool_error(connect: Connect) -> None:
    """client/roots#capabilities: a server sends roots/list only to clients that declared roots."""
    async with connect(asking_server()) as client:
        result = await client.call_tool("where")

    assert result["isError"] is True
    assert "roots" in text_of(result)
