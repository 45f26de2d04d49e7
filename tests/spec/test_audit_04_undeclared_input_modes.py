"""Audit item 4 (MRTR and legacy): ``ctx.elicit_url(...)`` went out in URL mode (with the removed
``elicitationId`` in 2026-07-28) to a client that declared form-only elicitation, and ``ctx.sample(...,
tools=[...])`` went out without ``sampling.tools``, in both eras. Now: -32021 with the missing part in
2026-07-28, the tool's failure in the legacy era; and no ``elicitationId`` in 2026-07-28."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.protocol.errors import JSONRPCError
from mcp_notebook.protocol.modern import MISSING_CLIENT_CAPABILITY

pytestmark = pytest.mark.timeout(60)
TOOL = {"name": "lookup", "inputSchema": {"type": "object"}}


class FormOnlyClient(Client):
    """A client whose elicitation capability is form mode only (and sampling without tools)."""

    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        caps["elicitation"] = {"form": {}}
        return caps


def make_server() -> Server:
    server = Server("audit-4")

    @server.tool
    async def visit(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in", "https://example.com/login", "e-1", key="login")
        return str(answer["action"])

    @server.tool
    async def ask_with_tools(ctx: Context) -> str:
        answer = await ctx.sample("Use a tool", max_tokens=10, tools=[TOOL], key="model")
        return str(answer["content"]["text"])

    return server


def accept(params: dict[str, Any]) -> dict[str, Any]:
    seen.append(params)
    return {"action": "accept"}


def reply(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}


seen: list[dict[str, Any]] = []


def client(era: str, cls: type[Client] = FormOnlyClient) -> Client:
    return cls(make_server(), era=era, timeout=20, elicitation_handler=accept, sampling_handler=reply)  # type: ignore[arg-type]


async def test_audit_04_url_elicitation_to_a_form_only_client_modern() -> None:
    seen.clear()
    async with client("modern") as c:
        with pytest.raises(JSONRPCError) as refused:
            await c.call_tool("visit")
    assert refused.value.code == MISSING_CLIENT_CAPABILITY
    assert refused.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    assert seen == []  # was: the URL elicitation reached the form-only client


async def test_audit_04_url_elicitation_to_a_form_only_client_legacy() -> None:
    seen.clear()
    async with client("legacy") as c:
        result = await c.call_tool("visit")
    assert result["isError"] and "elicitation.url" in result["content"][0]["text"]
    assert seen == []


async def test_audit_04_no_elicitation_id_in_2026() -> None:
    seen.clear()
    async with client("modern", Client) as c:  # declares form and url
        assert (await c.call_tool("visit"))["content"][0]["text"] == "accept"
    assert seen and seen[0]["mode"] == "url" and "elicitationId" not in seen[0]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_audit_04_sampling_tools_need_sampling_tools(era: str) -> None:
    async with client(era) as c:
        if era == "modern":
            with pytest.raises(JSONRPCError) as refused:
                await c.call_tool("ask_with_tools")
            assert refused.value.data == {"requiredCapabilities": {"sampling": {"tools": {}}}}
        else:
            result = await c.call_tool("ask_with_tools")
            assert result["isError"] and "sampling.tools" in result["content"][0]["text"]
