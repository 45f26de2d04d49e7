"""Audit item 5 (MRTR): ``inputResponses`` were accepted on a first request that carried no
``requestState``, later answers overrode the sealed earlier ones, and answers to an elicitation were not
checked against its ``requestedSchema`` (either era). Now sealed answers stand, and every answer -- one sent
before the question too -- must fit the question's schema, or the tool fails with the reason. (Answers on a
first request are still taken when they fit: the official conformance suite requires it.)
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.protocol.errors import JSONRPCError

pytestmark = pytest.mark.timeout(60)
AGE = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}


def make_server() -> Server:
    server = Server("audit-5")

    @server.tool
    async def two(ctx: Context) -> str:
        first = await ctx.elicit("First?", AGE, key="first")
        second = await ctx.elicit("Second?", AGE, key="second")
        return f"{first['content']['age']} {second['content']['age']}"

    return server


def answer(age: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"age": age}}


async def raw(client: Client, params: dict[str, Any]) -> dict[str, Any]:
    return await client.connection.request("tools/call", client._with_meta(params), timeout=20)


async def test_audit_05_answers_on_a_first_request_are_checked_like_any_answer() -> None:
    """Answers sent before any question are taken (the official conformance suite expects a server to
    complete then: input-required-result-ignore-extra-params), but only if they fit the question."""
    async with Client(make_server(), era="modern", timeout=20, elicitation_handler=lambda p: answer(1)) as c:
        forged = {"first": answer("forty"), "second": answer(41)}
        refused = await raw(c, {"name": "two", "arguments": {}, "inputResponses": forged})
        fitting = await raw(c, {"name": "two", "arguments": {}, "inputResponses": {"first": answer(40)}})
    assert refused["isError"]  # was: complete, the tool got {"age": "forty"}
    assert "does not match the requested schema" in refused["content"][0]["text"]
    assert fitting["resultType"] == "input_required" and set(fitting["inputRequests"]) == {"second"}


async def test_audit_05_sealed_answers_are_not_overridden() -> None:
    async with Client(make_server(), era="modern", timeout=20, elicitation_handler=lambda p: answer(1)) as c:
        first = await raw(c, {"name": "two", "arguments": {}})
        second = await raw(
            c,
            {
                "name": "two",
                "arguments": {},
                "inputResponses": {"first": answer(1)},
                "requestState": first["requestState"],
            },
        )
        assert set(second["inputRequests"]) == {"second"}
        final = await raw(
            c,
            {
                "name": "two",
                "arguments": {},
                "inputResponses": {"first": answer(99), "second": answer(2)},  # tries to change "first"
                "requestState": second["requestState"],
            },
        )
    assert final["content"][0]["text"] == "1 2"  # was "99 2"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_05_an_answer_not_matching_the_schema_fails_the_tool(era: str) -> None:
    async with Client(make_server(), era=era, timeout=20, elicitation_handler=lambda p: answer("old")) as c:  # type: ignore[arg-type]
        result = await c.call_tool("two")
    assert result["isError"]  # was: the tool got {"age": "old"}
    assert "does not match the requested schema" in result["content"][0]["text"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_05_valid_answers_still_work(era: str) -> None:
    async with Client(make_server(), era=era, timeout=20, elicitation_handler=lambda p: answer(7)) as c:  # type: ignore[arg-type]
        assert (await c.call_tool("two"))["content"][0]["text"] == "7 7"


async def test_audit_05_a_tool_without_a_context_still_has_the_answers_a_request_brings_checked() -> None:
    """Its input round is made only when needed (it cannot ask), but answers and state it is sent are still
    read before it runs: malformed ``inputResponses`` and a forged ``requestState`` are refused."""
    server = make_server()

    @server.tool
    def plain(text: str) -> str:
        return text

    async with Client(server, era="modern", timeout=20) as c:
        assert (await raw(c, {"name": "plain", "arguments": {"text": "x"}}))["content"][0]["text"] == "x"
        with pytest.raises(JSONRPCError) as malformed:
            await raw(c, {"name": "plain", "arguments": {"text": "x"}, "inputResponses": "yes"})
        with pytest.raises(JSONRPCError) as forged:
            await raw(c, {"name": "plain", "arguments": {"text": "x"}, "requestState": "forged"})
    assert malformed.value.code == -32602
    assert forged.value.code == -32602
