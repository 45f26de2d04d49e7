"""A modern client's per-request ``_meta`` fields are made once (engine/modern_client.py MetaBlock) and made
again when what they are made of changes: the next request sees every change."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.engine import modern_client
from mcp_notebook.protocol.modern import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL

WAIT = 10.0
PARAMS = {"name": "echo", "arguments": {"text": "x"}}


def make_server() -> Server:
    server = Server("meta-block")

    @server.tool
    async def caps(ctx: Context) -> str:
        """The client capabilities this request declared."""
        return json.dumps(ctx.client_capabilities)

    return server


def meta(client: Client, params: dict[str, Any] | None = None) -> dict[str, Any]:
    sent: dict[str, Any] = client._with_meta(dict(params or PARAMS))["_meta"]
    return sent


async def test_the_block_is_made_once_and_each_request_gets_its_own_meta(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = 0
    real = modern_client._built_meta

    def counted(*args: Any) -> dict[str, Any]:
        nonlocal made
        made += 1
        return real(*args)

    async with Client(make_server(), era="modern") as client:
        monkeypatch.setattr(modern_client, "_built_meta", counted)
        first, second = meta(client), meta(client)
        assert made <= 1 and first == second and first is not second
        own = meta(client, {**PARAMS, "_meta": {"progressToken": 7, META_LOG_LEVEL: "debug"}})
        assert own["progressToken"] == 7 and own[META_CLIENT_CAPABILITIES] == first[META_CLIENT_CAPABILITIES]
        assert own[META_LOG_LEVEL] == "debug"  # the caller's own, as before (no level set on the client)
        assert META_LOG_LEVEL not in meta(client)


async def test_every_change_reaches_the_next_request() -> None:
    async with Client(make_server(), era="modern") as client:
        before = meta(client)
        client.extensions["example/ext"] = {"v": 1}
        assert meta(client)[META_CLIENT_CAPABILITIES]["extensions"]["example/ext"] == {"v": 1}
        client.extensions["example/ext"]["v"] = 2  # a change inside the dict counts too
        assert meta(client)[META_CLIENT_CAPABILITIES]["extensions"]["example/ext"] == {"v": 2}
        assert "sampling" not in before[META_CLIENT_CAPABILITIES]
        client.sampling_handler = lambda request: {
            "role": "assistant",
            "content": {"type": "text", "text": ""},
        }
        assert "sampling" in meta(client)[META_CLIENT_CAPABILITIES]
        client.roots = [{"uri": "file:///tmp", "name": "tmp"}]
        assert meta(client)[META_CLIENT_CAPABILITIES]["roots"] == {}
        client.client_info["version"] = "9.9"
        assert meta(client)[META_CLIENT_INFO]["version"] == "9.9"
        await client.set_logging_level("warning")
        assert meta(client)[META_LOG_LEVEL] == "warning"
        # and the server sees it on the next call
        result = await asyncio.wait_for(client.call_tool("caps", {}), WAIT)
        seen = json.loads(result["content"][0]["text"])
        assert seen["extensions"]["example/ext"] == {"v": 2} and "sampling" in seen and "roots" in seen


class OwnCapabilities(Client):
    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        caps["experimental"] = {"calls": self.calls}
        self.calls += 1
        return caps

    calls = 0


async def test_a_client_class_with_its_own_capabilities_gets_them_per_request() -> None:
    async with OwnCapabilities(make_server(), era="modern") as client:
        first, second = meta(client), meta(client)
    assert first[META_CLIENT_CAPABILITIES]["experimental"] != second[META_CLIENT_CAPABILITIES]["experimental"]


async def test_capabilities_set_on_one_client_instance_reach_each_request() -> None:
    """Before: the block looked only at the class, so ``client.capabilities = ...`` on one instance was never
    called once the block was made (the review of 34c918b)."""
    async with Client(make_server(), era="modern") as client:
        plain = client.capabilities
        meta(client)  # the block is made from the class's capabilities()
        client.capabilities = lambda: {**plain(), "experimental": {"mine": True}}  # type: ignore[method-assign]
        sent = meta(client)
    assert sent[META_CLIENT_CAPABILITIES]["experimental"] == {"mine": True}


async def test_a_value_equal_in_python_but_not_in_json_reaches_the_next_request() -> None:
    """``True == 1 == 1.0`` in Python, not in JSON: an extension's setting or a clientInfo field changed from
    one to the other is sent as changed (before, the block compared by ``==`` and kept the old value)."""
    async with Client(make_server(), era="modern") as client:
        client.extensions["example/ext"] = {"on": 1, "rate": 2}
        client.client_info["build"] = 0
        meta(client)
        client.extensions["example/ext"] = {"on": True, "rate": 2.0}
        client.client_info["build"] = False
        sent = json.loads(json.dumps(meta(client)))
        result = await asyncio.wait_for(client.call_tool("caps", {}), WAIT)
    assert sent[META_CLIENT_CAPABILITIES]["extensions"]["example/ext"] == {"on": True, "rate": 2.0}
    assert type(sent[META_CLIENT_CAPABILITIES]["extensions"]["example/ext"]["on"]) is bool
    assert type(sent[META_CLIENT_CAPABILITIES]["extensions"]["example/ext"]["rate"]) is float
    assert sent[META_CLIENT_INFO]["build"] is False
    seen = json.loads(result["content"][0]["text"])["extensions"]["example/ext"]
    assert seen["on"] is True and type(seen["rate"]) is float
