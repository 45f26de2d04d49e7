"""Prompts, completion and logging: the remaining server features.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/server/prompts (MCP-NOTES §7.8),
.../server/utilities/completion (§7.9), .../server/utilities/logging (§3.7).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.engine.server import Server
from mcp_notebook.protocol.errors import INVALID_PARAMS, JSONRPCError
from mcp_notebook.tools import Context
from tests.interaction._harness import Connect, Inbox

LANGUAGES = ["perl", "python", "pytorch", "rust"]


def review_server() -> Server:
    server = Server("reviewer")

    @server.prompt
    def review(code: str, language: str = "python") -> str:
        """Review some code.

        Args:
            code: The code to review.
            language: Its language.
        """
        return f"Please review this {language} code:\n{code}"

    @server.completion
    def complete(ref: dict[str, Any], argument: dict[str, str], arguments: dict[str, str]) -> list[str]:
        assert ref == {"type": "ref/prompt", "name": "review"}
        assert argument["name"] == "language"
        prefix = arguments.get("prefix_override", argument["value"])
        return [lang for lang in LANGUAGES if lang.startswith(prefix)]

    return server


# -- prompts -------------------------------------------------------------------------------------------------
async def test_list_prompts_with_arguments(connect: Connect) -> None:
    """server/prompts#listing-prompts: name, description?, arguments: [{name, description?, required?}]."""
    async with connect(review_server()) as client:
        prompts = await client.list_prompts()

    assert prompts == [
        {
            "name": "review",
            "description": "Review some code.",
            "arguments": [
                {"name": "code", "description": "The code to review.", "required": True},
                {"name": "language", "description": "Its language."},
            ],
        }
    ]


async def test_get_prompt_with_arguments(connect: Connect) -> None:
    """server/prompts#getting-a-prompt: arguments fill the template; messages are {role, content}."""
    async with connect(review_server()) as client:
        result = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})

    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Please review this rust code:\nx = 1"}}
    ]


async def test_get_prompt_missing_required_argument_is_32602(connect: Connect) -> None:
    """server/prompts#error-handling: missing required arguments -> -32602."""
    async with connect(review_server()) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.get_prompt("review", {"language": "rust"})

    assert info.value.code == INVALID_PARAMS
    assert "code" in info.value.message


async def test_get_unknown_prompt_is_32602(connect: Connect) -> None:
    """server/prompts#error-handling: invalid prompt name -> -32602."""
    async with connect(review_server()) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.get_prompt("nope")

    assert info.value.code == INVALID_PARAMS


# -- completion ----------------------------------------------------------------------------------------------
async def test_completion_with_a_registered_completer(connect: Connect) -> None:
    """server/utilities/completion: completion/complete returns {completion: {values, total?, hasMore?}}."""
    async with connect(review_server()) as client:
        completion = await client.complete(
            {"type": "ref/prompt", "name": "review"}, {"name": "language", "value": "py"}
        )

    assert completion == {"values": ["python", "pytorch"], "total": 2, "hasMore": False}


async def test_completion_receives_context_arguments(connect: Connect) -> None:
    """server/utilities/completion (2025-06-18+): context.arguments carries already-resolved arguments."""
    async with connect(review_server()) as client:
        completion = await client.complete(
            {"type": "ref/prompt", "name": "review"},
            {"name": "language", "value": "py"},
            context_arguments={"prefix_override": "r"},
        )

    assert completion["values"] == ["rust"]


# -- logging -------------------------------------------------------------------------------------------------
def chatty_server() -> Server:
    server = Server("chatty")

    @server.tool
    async def chatter(ctx: Context) -> str:
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.warning("w")
        await ctx.log("critical", {"disk": "full"}, logger="storage")
        await ctx.error("e")
        return "ok"

    return server


async def test_set_level_filters_log_notifications(connect: Connect) -> None:
    """server/utilities/logging: after logging/setLevel the server sends only that level and more severe."""
    inbox = Inbox()
    async with connect(chatty_server(), notification_handler=inbox) as client:
        await client.set_logging_level("warning")
        await client.call_tool("chatter")
        messages = await inbox.wait("notifications/message", count=3)

    assert messages == [
        {"level": "warning", "data": "w"},
        {"level": "critical", "data": {"disk": "full"}, "logger": "storage"},
        {"level": "error", "data": "e"},
    ]
    assert len(inbox.of("notifications/message")) == 3


async def test_logging_handler_receives_messages(connect: Connect) -> None:
    """server/utilities/logging: notifications/message {level, logger?, data}; without setLevel the server
    MAY send any level."""
    received: list[dict[str, Any]] = []
    inbox = Inbox()
    async with connect(
        chatty_server(), logging_handler=received.append, notification_handler=inbox
    ) as client:
        await client.call_tool("chatter")
        await inbox.wait("notifications/message", count=5)

    assert [m["level"] for m in received] == ["debug", "info", "warning", "critical", "error"]


@pytest.mark.parametrize("level", ["verbose", "WARNING", None, 3])
async def test_set_level_rejects_an_unknown_level_with_32602(connect: Connect, level: Any) -> None:
    """server/utilities/logging#error-handling: invalid log level -> -32602."""
    async with connect(chatty_server()) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.request("logging/setLevel", {"level": level})

    assert info.value.code == INVALID_PARAMS
