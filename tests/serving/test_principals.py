"""Issue 18: one principal per request, from the connection, bound everywhere (in memory, no identity).

Two clients of one in-memory server that authenticated nobody are two principals (each its connection):
before, the second listed and read the first's tasks (``tasks/list`` was declared without requestor
identity) and could finish the first's MRTR call. The approval hook and the tool's ``ctx`` see the same
principal the tasks are bound to.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server
from mcp_notebook.engine.approval import IncomingCall
from mcp_notebook.protocol.errors import JSONRPCError

pytestmark = pytest.mark.timeout(60)
WAIT = 20.0
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


def make_server() -> Server:
    server = Server("principals")
    server.tasks.poll_interval_ms = 20

    @server.tool(task="optional")
    async def job(ctx: Context) -> str:
        """Runs until cancelled; says who it runs for."""
        for _ in range(2000):
            if ctx.cancelled:
                return "stopped"
            await asyncio.sleep(0.01)
        return f"for {ctx.principal}"

    @server.tool
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME, key="name")
        return f"Hello, {(answer.get('content') or {}).get('name')}"

    return server


async def test_a_second_anonymous_client_sees_nothing_of_the_first() -> None:
    server = make_server()
    async with Client(server, era="legacy") as alice, Client(server, era="legacy") as bob:
        seen: list[dict[str, Any]] = []
        call = asyncio.ensure_future(alice.call_tool("job", task=True, on_task=seen.append))
        for _ in range(500):
            if seen:
                break
            await asyncio.sleep(0.01)
        task_id = seen[0]["taskId"]
        assert await bob.list_tasks() == []
        for attempt in (bob.get_task(task_id), bob.cancel_task(task_id), bob.task_result(task_id)):
            with pytest.raises(JSONRPCError, match="Unknown task") as refused:
                await asyncio.wait_for(attempt, WAIT)
            assert refused.value.code == -32602
        assert [t["taskId"] for t in await alice.list_tasks()] == [task_id]
        assert (await alice.get_task(task_id))["status"] == "working"
        await alice.cancel_task(task_id)
        with pytest.raises(Exception):  # noqa: B017 - the caller's own task ends cancelled
            await asyncio.wait_for(call, WAIT)


async def test_another_connection_cannot_finish_an_mrtr_call() -> None:
    server = make_server()
    ask = {"name": "greet", "arguments": {}}
    answer = {"elicitation_handler": lambda params: {"action": "accept"}}
    async with Client(server, era="modern", **answer) as alice, Client(server, era="modern", **answer) as bob:
        first = await alice.connection.request("tools/call", alice._with_meta(ask))
        assert first["resultType"] == "input_required"
        answers = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        retry = {**ask, "inputResponses": answers, "requestState": first["requestState"]}
        with pytest.raises(JSONRPCError) as refused:
            await bob.connection.request("tools/call", bob._with_meta(retry))
        assert refused.value.data == {"reason": "other-principal"}
        done = await alice.connection.request("tools/call", alice._with_meta(retry))
        assert done["content"][0]["text"] == "Hello, Ada"


async def test_the_approval_hook_and_ctx_see_the_principal_tasks_are_bound_to() -> None:
    server = make_server()
    calls: list[IncomingCall] = []

    async def approve(call: IncomingCall) -> bool:
        calls.append(call)
        return True

    server.approve = approve
    async with Client(server, era="legacy") as client:
        seen: list[dict[str, Any]] = []
        call = asyncio.ensure_future(client.call_tool("job", task=True, on_task=seen.append))
        for _ in range(500):
            if seen:
                break
            await asyncio.sleep(0.01)
        principal = calls[0].principal
        assert principal is not None and principal.startswith("connection:")
        record = server.tasks.store.get(seen[0]["taskId"])
        assert record is not None and record.owner == principal
        await client.cancel_task(seen[0]["taskId"])
        with pytest.raises(Exception):  # noqa: B017
            await asyncio.wait_for(call, WAIT)


async def test_listing_needs_an_identified_caller() -> None:
    """A hook that cannot say who is asking (None) gets no listing of everyone's tasks."""
    server = make_server()
    server.principal_of = lambda session, request: None
    async with Client(server, era="legacy") as client:
        with pytest.raises(JSONRPCError, match="identified"):
            await client.list_tasks()


def test_always_allow_is_this_principals_in_the_stateless_era() -> None:
    """2026-07-28 calls have no session: "always allow" was remembered for the transport ("http"), so one
    OAuth user's choice let every later caller through. Now it is the principal's, and an anonymous
    stateless caller's choice covers that call only."""
    from mcp_notebook.notebook.calls.policy import IncomingPolicy
    from mcp_notebook.transports.base import Peer

    destructive = {"annotations": {"destructiveHint": True}}

    def call(identity: str | None) -> IncomingCall:
        peer = Peer("http", None, None, identity, lasting=False)
        return IncomingCall(peer, "wipe", {}, destructive, 1, principal=identity)

    policy = IncomingPolicy()
    alice, bob = 'oauth:["alice","nb"]', 'oauth:["bob","nb"]'
    policy.always_allow_call(call(alice))
    assert policy.decide_call(call(alice)).verdict == "allow"
    assert policy.decide_call(call(bob)).verdict == "ask"
    policy.always_allow_call(call(None))
    assert policy.decide_call(call(None)).verdict == "ask"


async def test_a_listen_stream_hears_nothing_of_another_principals_task() -> None:
    """Before, bob's ``subscriptions/listen`` naming alice's task id received its status and inlined
    result (``notifications/tasks``). Now task notifications reach only their owner's streams."""
    server = Server("listen-binding")
    release = asyncio.Event()

    @server.tool(task="optional")
    async def secret_job() -> str:
        """Finishes when the test says so."""
        await release.wait()
        return "alice's secret result"

    async with Client(server, era="modern") as alice, Client(server, era="modern") as bob:
        seen: list[dict[str, Any]] = []
        call = asyncio.ensure_future(alice.call_tool("secret_job", on_task=seen.append))
        for _ in range(500):
            if seen:
                break
            await asyncio.sleep(0.01)
        task_id = seen[0]["taskId"]
        listen = {"notifications": {"taskIds": [task_id]}}
        spying = asyncio.ensure_future(bob.connection.request("subscriptions/listen", bob._with_meta(listen)))
        for _ in range(500):
            if any("acknowledged" in entry.raw and task_id in entry.raw for entry in bob.trace):
                break
            await asyncio.sleep(0.01)
        release.set()
        result = await asyncio.wait_for(call, WAIT)
        assert result["content"][0]["text"] == "alice's secret result"
        await bob.list_tools()  # one more round trip on bob's connection: anything sent to it has arrived
        heard = [entry.raw for entry in bob.trace if entry.direction == "in"]
        assert not any("notifications/tasks" in raw or "secret result" in raw for raw in heard)
        spying.cancel()


async def test_the_unnamed_token_sees_nothing_of_a_named_tokens_tasks() -> None:
    """Before, the unnamed token's callers had no principal (None), so ``tasks/list`` showed them every
    task, named principals' included. Now the unnamed token is a principal of its own ("token")."""
    from mcp_notebook.transports.http_server import StreamableHTTPServer

    server = make_server()
    http_server = StreamableHTTPServer(server, token="shared-secret", tokens={"ci": "ci-secret"})
    url = await http_server.start()
    try:
        ci = Client(url, era="legacy", headers={"Authorization": "Bearer ci-secret"})
        shared = Client(url, era="legacy", headers={"Authorization": "Bearer shared-secret"})
        async with ci, shared:
            seen: list[dict[str, Any]] = []
            call = asyncio.ensure_future(ci.call_tool("job", task=True, on_task=seen.append))
            for _ in range(500):
                if seen:
                    break
                await asyncio.sleep(0.01)
            task_id = seen[0]["taskId"]
            assert await shared.list_tasks() == []
            with pytest.raises(JSONRPCError, match="Unknown task"):
                await shared.get_task(task_id)
            assert [t["taskId"] for t in await ci.list_tasks()] == [task_id]
            await ci.cancel_task(task_id)
            with pytest.raises(Exception):  # noqa: B017
                await asyncio.wait_for(call, WAIT)
    finally:
        await http_server.stop()
