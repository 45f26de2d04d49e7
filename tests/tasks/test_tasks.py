"""Tasks in both eras and both roles: our Client against our Server (memory and Streamable HTTP).

2025-11-25 (basic/utilities/tasks): capability negotiation, ``params.task`` -> nested CreateTaskResult,
tasks/get, tasks/result (blocking), tasks/list, tasks/cancel, notifications/tasks/status, ttl/pollInterval,
``execution.taskSupport`` forbidden/optional/required (-32601). 2026-07-28 with the Tasks extension
(SEP-2663): the server decides, flat CreateTaskResult, tasks/get with inlined result/error/inputRequests,
tasks/update, tasks/cancel as an empty ack, -32021 without the extension. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_notebook import Client, Context, Server, ToolError
from mcp_notebook.engine.client_tasks import TaskCancelledError
from mcp_notebook.protocol import tasks as wire
from mcp_notebook.protocol.errors import JSONRPCError, LocalProtocolError
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.waiting import wait_until_async

pytestmark = pytest.mark.timeout(60)
WAIT = 20.0
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def make_server() -> Server:
    server = Server("tasks-demo")
    server.tasks.poll_interval_ms = 20
    release = asyncio.Event()
    server.release = release  # type: ignore[attr-defined]

    @server.tool
    def plain(x: int) -> int:
        """Never a task."""
        return x + 1

    @server.tool(task="optional")
    async def maybe(x: int) -> int:
        """A task if the client wants one."""
        await asyncio.sleep(0.05)
        return x * 2

    @server.tool(task="required")
    async def must(x: int) -> str:
        """Only as a task."""
        return f"done {x}"

    @server.tool(task="optional")
    async def wait_for_cancel(ctx: Context) -> str:
        """Runs until cancelled (cooperatively)."""
        for _ in range(2000):
            if ctx.cancelled:
                return "stopped"
            await asyncio.sleep(0.01)
        return "ran out"

    @server.tool(task="optional")
    async def broken() -> str:
        """A tool error (isError)."""
        raise ToolError("nope")

    @server.tool(task="optional")
    async def ask(ctx: Context) -> str:
        """Asks the user during the task."""
        answer = await ctx.elicit("Sure?", CONFIRM, key="sure")
        return f"answer {answer.get('action')} {(answer.get('content') or {}).get('ok')}"

    return server


@asynccontextmanager
async def connected(
    era: str, transport: str, server: Server | None = None, **options: Any
) -> AsyncIterator[Client]:
    server = server or make_server()
    options.setdefault("elicitation_handler", lambda params: {"action": "accept", "content": {"ok": True}})
    if transport == "memory":
        async with Client(server, era=era, **options) as client:  # type: ignore[arg-type]
            yield client
        return
    http = StreamableHTTPServer(server)
    url = await http.start("127.0.0.1", 0)
    try:
        async with Client(url, era=era, **options) as client:  # type: ignore[arg-type]
            yield client
    finally:
        await http.stop()


ERAS = [("legacy", "memory"), ("legacy", "http"), ("modern", "memory"), ("modern", "http")]


# ---- negotiation -----------------------------------------------------------------------------------------
async def test_capabilities_per_era() -> None:
    async with connected("legacy", "memory") as client:
        assert client.server_capabilities["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
        assert client.session.capabilities["tasks"]["requests"] == {"elicitation": {"create": {}}}
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert tools["must"]["execution"] == {"taskSupport": "required"}
        assert tools["maybe"]["execution"] == {"taskSupport": "optional"}
        assert "execution" not in tools["plain"]
    async with connected("modern", "memory") as client:
        caps = client.server_capabilities
        assert "tasks" not in caps and caps["extensions"] == {wire.EXTENSION: {}}
        # audit item 3: execution does not exist in 2026-07-28 tools/list
        assert all("execution" not in tool for tool in await client.list_tools())


async def test_legacy_execution_rules_on_the_wire() -> None:
    """-32601 for a required tool called without a task and for a forbidden tool called with one."""
    async with connected("legacy", "memory") as client:
        await client.list_tools()
        with pytest.raises(JSONRPCError) as required:
            await client.request("tools/call", {"name": "must", "arguments": {"x": 1}})
        assert required.value.code == -32601
        with pytest.raises(JSONRPCError) as forbidden:
            await client.request("tools/call", {"name": "plain", "arguments": {"x": 1}, "task": {}})
        assert forbidden.value.code == -32601
        # and our client refuses locally what the server would refuse
        with pytest.raises(LocalProtocolError):
            await client.call_tool("plain", {"x": 1}, task=True)
        with pytest.raises(LocalProtocolError):
            await client.call_tool("must", {"x": 1}, task=False)


async def test_required_without_tasks_capability_is_not_advertised_as_runnable() -> None:
    """Audit item 3: a server with tasks turned off has no tasks capability and refuses a required tool."""
    server = make_server()
    server.tasks_enabled = False
    async with connected("legacy", "memory", server) as client:
        assert "tasks" not in client.server_capabilities
        assert all("execution" not in tool for tool in await client.list_tools())
        with pytest.raises(JSONRPCError, match="needs tasks"):
            await client.call_tool("must", {"x": 1})
        with pytest.raises(JSONRPCError) as refused:
            await client.request("tools/call", {"name": "must", "arguments": {"x": 1}})
        assert refused.value.code == -32601


# ---- running tasks ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_call_as_task_reports_statuses(era: str, transport: str) -> None:
    seen: list[dict[str, Any]] = []
    async with connected(era, transport) as client:
        result = await asyncio.wait_for(client.call_tool("must", {"x": 7}, on_task=seen.append), WAIT)
        assert result["content"][0]["text"] == "done 7"
        assert seen and seen[0]["status"] == "working" and seen[-1]["status"] == "completed"
        task_id = seen[0]["taskId"]
        again = await client.task_result(task_id)
        assert again["content"][0]["text"] == "done 7"
        task = await client.get_task(task_id)
        assert task["status"] == "completed"
        if era == "legacy":
            assert task["ttl"] == 3_600_000 and task["pollInterval"] == 20
            assert again["_meta"][wire.META_RELATED_TASK] == {"taskId": task_id}
            assert task_id in {t["taskId"] for t in await client.list_tasks()}
        else:
            assert task["ttlMs"] == 3_600_000 and task["pollIntervalMs"] == 20 and "ttl" not in task


@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_optional_tool(era: str, transport: str) -> None:
    seen: list[dict[str, Any]] = []
    async with connected(era, transport) as client:
        result = await asyncio.wait_for(client.call_tool("maybe", {"x": 4}, on_task=seen.append), WAIT)
        assert result["structuredContent"] == {"result": 8}
        # legacy: a plain call unless asked; modern: the server decides (a task, the extension being declared)
        assert bool(seen) is (era == "modern")
        if era == "legacy":
            result = await asyncio.wait_for(
                client.call_tool("maybe", {"x": 5}, task={"ttl": 1000}, on_task=seen.append), WAIT
            )
            assert result["structuredContent"] == {"result": 10}
            assert seen[0]["ttl"] == 1000


@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_tool_error_in_a_task(era: str, transport: str) -> None:
    seen: list[dict[str, Any]] = []
    async with connected(era, transport) as client:
        result = await asyncio.wait_for(client.call_tool("broken", task=True, on_task=seen.append), WAIT)
        assert result["isError"] and "nope" in result["content"][0]["text"]
        # 2025-11-25: failed covers isError; the extension: completed with result.isError
        assert seen[-1]["status"] == ("failed" if era == "legacy" else "completed")


@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_input_during_a_task(era: str, transport: str) -> None:
    asked: list[dict[str, Any]] = []
    seen: list[str] = []

    def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"ok": True}}

    async with connected(era, transport, elicitation_handler=handler) as client:
        result = await asyncio.wait_for(
            client.call_tool("ask", task=True, on_task=lambda t: seen.append(t["status"])), WAIT
        )
        assert result["content"][0]["text"] == "answer accept True"
        assert len(asked) == 1 and asked[0]["message"] == "Sure?"
        if era == "legacy":
            assert asked[0]["_meta"][wire.META_RELATED_TASK]["taskId"]
        assert "input_required" in seen and seen[-1] == "completed"


@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_cancel_by_cancelling_the_call(era: str, transport: str) -> None:
    """Cancelling the awaiting coroutine sends tasks/cancel; the tool sees ctx.cancelled and stops."""
    seen: list[dict[str, Any]] = []
    async with connected(era, transport) as client:
        call = asyncio.ensure_future(client.call_tool("wait_for_cancel", task=True, on_task=seen.append))
        for _ in range(1000):
            if seen:
                break
            await asyncio.sleep(0.01)
        assert seen, "no task was created"
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, WAIT)
        sent = [e.message.get("method") for e in client.trace if e.direction == "out"]
        assert "tasks/cancel" in sent
        assert (await client.get_task(seen[0]["taskId"]))["status"] == "cancelled"


@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_cancel_task_from_elsewhere(era: str, transport: str) -> None:
    seen: list[dict[str, Any]] = []
    server = make_server()
    # Another connection of the same principal (as one bearer token gives); an anonymous second connection
    # is another principal and finds nothing (tests/serving/test_principals.py).
    server.principal_of = lambda session, request: "token:same"
    async with connected(era, transport, server) as client, connected(era, transport, server) as other:
        call = asyncio.ensure_future(client.call_tool("wait_for_cancel", task=True, on_task=seen.append))
        for _ in range(1000):
            if seen:
                break
            await asyncio.sleep(0.01)
        ack = await other.cancel_task(seen[0]["taskId"])
        assert ack.get("status") == "cancelled" if era == "legacy" else ack.get("resultType") == "complete"
        with pytest.raises(TaskCancelledError):
            await asyncio.wait_for(call, WAIT)
        # cancelling a terminal task: -32602 in 2025-11-25, the same empty ack in the extension
        if era == "legacy":
            with pytest.raises(JSONRPCError) as again:
                await other.cancel_task(seen[0]["taskId"])
            assert again.value.code == -32602
        else:
            assert (await other.cancel_task(seen[0]["taskId"])).get("resultType") == "complete"


@pytest.mark.parametrize(("era", "transport"), ERAS)
async def test_unknown_task(era: str, transport: str) -> None:
    async with connected(era, transport) as client:
        with pytest.raises(JSONRPCError) as unknown:
            await client.get_task("no-such-task")
        assert unknown.value.code == -32602


async def test_status_notifications_legacy() -> None:
    heard: list[dict[str, Any]] = []

    async def note(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tasks/status":
            heard.append(params)

    async with connected("legacy", "memory", notification_handler=note) as client:
        await asyncio.wait_for(client.call_tool("must", {"x": 1}), WAIT)
        for _ in range(500):
            if any(n["status"] == "completed" for n in heard):
                break
            await asyncio.sleep(0.01)
        assert heard and heard[-1]["status"] == "completed" and "createdAt" in heard[-1]


async def test_modern_required_without_extension_is_32021() -> None:
    async with connected("modern", "memory") as client:
        await client.list_tools()
        params = {"name": "must", "arguments": {"x": 1}}
        sent = client._with_meta(params)
        del sent["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        with pytest.raises(JSONRPCError) as refused:
            await client.connection.request("tools/call", sent)
        assert refused.value.code == -32021
        assert refused.value.data == {"requiredCapabilities": {"extensions": {wire.EXTENSION: {}}}}


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_modern_status_comes_through_subscriptions_listen(transport: str) -> None:
    """2026: the client names the task in its listen filter (``taskIds``) and hears ``notifications/tasks``;
    with a long poll interval, a call that finishes quickly proves no polling was needed."""
    server = make_server()
    server.tasks.poll_interval_ms = 4000
    seen: list[str] = []
    async with connected("modern", transport, server) as client:
        result = await asyncio.wait_for(
            client.call_tool("maybe", {"x": 3}, on_task=lambda t: seen.append(t["status"])), 3.5
        )
        assert result["structuredContent"] == {"result": 6} and seen == ["working", "completed"]
        sent = [e.message for e in client.trace if e.direction == "out"]
        heard = [e.message for e in client.trace if e.direction == "in"]
        listens = [m for m in sent if m.get("method") == "subscriptions/listen"]
        assert any("taskIds" in m["params"]["notifications"] for m in listens)
        assert any(m.get("method") == "notifications/tasks" for m in heard)
        assert not [m for m in sent if m.get("method") == "tasks/get"]


async def test_modern_without_listen_polls() -> None:
    seen: list[str] = []
    async with connected("modern", "memory", listen=False) as client:
        await asyncio.wait_for(
            client.call_tool("maybe", {"x": 3}, on_task=lambda t: seen.append(t["status"])), WAIT
        )
        sent = [e.message.get("method") for e in client.trace if e.direction == "out"]
        assert "tasks/get" in sent and "subscriptions/listen" not in sent and seen[-1] == "completed"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_tasks_are_bound_to_the_principal(era: str) -> None:
    """With an authorization context, another principal cannot see, list or cancel a task (-32602)."""
    server = make_server()
    who = {"name": "alice"}
    server.principal_of = lambda session, request: who["name"]
    async with connected(era, "memory", server) as client:
        seen: list[dict[str, Any]] = []
        await asyncio.wait_for(client.call_tool("must", {"x": 2}, on_task=seen.append), WAIT)
        task_id = seen[0]["taskId"]
        who["name"] = "mallory"
        for attempt in (client.get_task(task_id), client.cancel_task(task_id)):
            with pytest.raises(JSONRPCError) as refused:
                await attempt
            assert refused.value.code == -32602
        if era == "legacy":
            assert await client.list_tasks() == []
        who["name"] = "alice"
        assert (await client.get_task(task_id))["status"] == "completed"
        if era == "legacy":
            assert [t["taskId"] for t in await client.list_tasks()] == [task_id]


def _listens(client: Client) -> list[asyncio.Task[Any]]:
    name = f"{client.name} subscriptions/listen"
    return [t for t in asyncio.all_tasks() if t.get_name() == name and not t.done()]


@pytest.mark.parametrize("moment", ["the old stream closes", "the new stream is acknowledged"])
async def test_a_cancel_as_the_call_listens_for_its_task_is_not_lost(moment: str) -> None:
    """2026: a task call re-listens with its task in the filter (``taskIds``): the new stream, its
    acknowledgement awaited, then the old one closed. A cancel during that close was swallowed (the close
    suppressed CancelledError): the call ran on, no ``tasks/cancel`` (the notebook's Cancel then waited for
    it in vain, tests/notebook/test_notebook_tasks.py). A cancel while awaiting the acknowledgement left
    the new stream listening beside the old one. Either way the task stayed in the filter for good."""
    async with connected("modern", "memory") as client:
        seen: list[dict[str, Any]] = []
        call = asyncio.ensure_future(client.call_tool("wait_for_cancel", on_task=seen.append))

        def cancel_at_the_moment(entry: Any) -> None:
            message = entry.message
            if entry.direction != "out" or call.done():
                return
            if moment == "the old stream closes":
                hit = message.get("method") == "notifications/cancelled"
            else:
                hit = "taskIds" in (message.get("params") or {}).get("notifications", {})
            if hit:
                call.cancel()

        client.trace.listen(cancel_at_the_moment)
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, WAIT)  # swallowed: the call ran on and this timed out
        client.trace.unlisten(cancel_at_the_moment)
        sent = [e.message.get("method") for e in client.trace if e.direction == "out"]
        assert "tasks/cancel" in sent
        assert (await client.get_task(seen[0]["taskId"]))["status"] == "cancelled"

        async def one_stream_without_the_task() -> bool:
            current = client.subscriptions.current
            return (
                "taskIds" not in client.subscriptions.wanted()
                and current is not None
                and _listens(client) == [current.task]
            )

        await wait_until_async(one_stream_without_the_task, "one listen stream, the task not in it", WAIT)
