"""Audit item 8 (issue 10): the MRTR ``requestState`` key was random per process, so a restart or a second
worker rejected live states; it is now configurable (like the C++ SDK's ``request_state_key``), bound to
the principal where there is one, and every rejection says why in ``data.reason``.

Spec 2026-07-28 basic/patterns/mrtr (the state is attacker-controlled: integrity-protect it)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.engine.sealed_state import StateSealer
from mcp_notebook.protocol import modern
from mcp_notebook.protocol.errors import JSONRPCError

KEY = "the workers' shared requestState key"
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


def make_server(**options: Any) -> Server:
    server = Server("audit-8", **options)
    # Workers stand in for each other for one caller: the same identity everywhere, as a shared bearer token
    # gives (two anonymous in-memory connections are two principals: tests/serving/test_principals.py).
    server.principal_of = lambda session, request: "token:caller"

    @server.tool
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME, key="name")
        return f"Hello, {(answer.get('content') or {}).get('name')}"

    return server


async def first_round(server: Server) -> tuple[Client, dict[str, Any]]:
    client = Client(server, era="modern", elicitation_handler=lambda p: {"action": "accept"})
    await client.connect()
    params = client._with_meta({"name": "greet", "arguments": {}})
    return client, await client.connection.request("tools/call", params)


async def retry_on(server: Server, state: str) -> dict[str, Any]:
    async with Client(server, era="modern", elicitation_handler=lambda p: {"action": "accept"}) as client:
        params = {
            "name": "greet",
            "arguments": {},
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": state,
        }
        return await client.connection.request("tools/call", client._with_meta(params))


async def test_a_shared_key_lets_another_server_take_the_retry() -> None:
    client, first = await first_round(make_server(state_key=KEY))
    await client.aclose()
    assert first["resultType"] == "input_required"
    done = await retry_on(make_server(state_key=KEY), first["requestState"])  # a restart, or another worker
    assert done["content"][0]["text"] == "Hello, Ada"


async def test_another_key_is_rejected_with_a_reason() -> None:
    client, first = await first_round(make_server(state_key=KEY))
    await client.aclose()
    with pytest.raises(JSONRPCError) as rejected:
        await retry_on(make_server(state_key="some other key, long enough"), first["requestState"])
    assert rejected.value.code == -32602 and rejected.value.data == {"reason": "tampered"}


async def test_state_is_bound_to_the_principal() -> None:
    """With an authorization context (``Server.principal_of``), a state sealed for one principal is
    refused to another."""
    who = {"name": "alice"}
    server = make_server(state_key=KEY)
    server.principal_of = lambda session, request: who["name"]
    client, first = await first_round(server)
    await client.aclose()
    who["name"] = "mallory"
    with pytest.raises(JSONRPCError) as rejected:
        await retry_on(server, first["requestState"])
    assert rejected.value.data == {"reason": "other-principal"}
    who["name"] = "alice"
    assert (await retry_on(server, first["requestState"]))["content"][0]["text"] == "Hello, Ada"


def test_every_rejection_names_its_reason() -> None:
    sealer = StateSealer(modern.state_key(KEY))
    params = {"name": "greet", "arguments": {}}
    state = sealer.seal("tools/call", params, {}, now=1000.0, principal="alice")
    cases = {
        "malformed": ("not a state", params, "alice", 1001.0),
        "tampered": (state[:-1] + ("0" if state[-1] != "0" else "1"), params, "alice", 1001.0),
        "other-request": (state, {"name": "other"}, "alice", 1001.0),
        "other-principal": (state, params, "bob", 1001.0),
        "expired": (state, params, "alice", 1000.0 + sealer.lifetime + 1),
    }
    for reason, (given, request, principal, now) in cases.items():
        with pytest.raises(JSONRPCError) as rejected:
            sealer.open(given, "tools/call", request, now=now, principal=principal)
        assert rejected.value.code == -32602 and rejected.value.data == {"reason": reason}, reason
    assert sealer.open(state, "tools/call", params, now=1001.0, principal="alice") == {}


def test_keys_must_be_long_enough() -> None:
    with pytest.raises(ValueError):
        modern.state_key("short")
    assert modern.state_key(KEY) == modern.state_key(KEY) != modern.state_key(KEY + "!")


def test_sealed_state_round_trips_and_resists_tampering() -> None:
    sealer = StateSealer(b"k" * 32)
    params = {"name": "t", "arguments": {"a": 1}}
    state = sealer.seal("tools/call", params, {"step1": {"action": "accept"}}, now=1000.0)
    retry = {**params, "inputResponses": {}, "requestState": state, "_meta": {"x": 1}}
    assert sealer.open(state, "tools/call", retry, now=1001.0) == {"step1": {"action": "accept"}}
    flipped = state[:20] + ("A" if state[20] != "A" else "B") + state[21:]
    for tampered in (flipped, state + "0", state[:-1], "garbage", None):
        with pytest.raises(JSONRPCError) as raised:
            sealer.open(tampered, "tools/call", retry, now=1001.0)
        assert raised.value.code == -32602
    with pytest.raises(JSONRPCError):  # bound to the request it was minted for
        sealer.open(state, "tools/call", {**params, "arguments": {"a": 2}}, now=1001.0)
    with pytest.raises(JSONRPCError, match="expired"):
        sealer.open(state, "tools/call", retry, now=1000.0 + sealer.lifetime + 1)
    with pytest.raises(JSONRPCError):  # another server's key
        StateSealer(b"x" * 32).open(state, "tools/call", retry, now=1001.0)


def test_a_sealed_state_carries_no_readable_answer() -> None:
    """Issue 18: the state was base64 JSON + HMAC, so anyone holding it read the answers (a PIN). It is
    AEAD now: neither the answer nor the principal appears in any decoding of it, and two seals of the
    same answers differ (a fresh nonce each)."""
    sealer = StateSealer(b"k" * 32)
    answers = {"pin": {"action": "accept", "content": {"pin": "493817"}}}
    state = sealer.seal("tools/call", {"name": "t"}, answers, principal="alice")
    raw = base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
    for secret in (b"493817", b"alice", b"pin"):
        assert secret not in raw and secret.decode() not in state
    for part in state.split("."):
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        assert b"493817" not in decoded
    assert sealer.seal("tools/call", {"name": "t"}, answers, principal="alice") != state
