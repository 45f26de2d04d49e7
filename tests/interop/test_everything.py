"""Our client against server-everything (@modelcontextprotocol/server-everything), over stdio and HTTP.

server-everything is the reference TypeScript server: every test body runs over both transports. With
roots, sampling and elicitation declared it lists 17 tools (``notifications/tools/list_changed`` follows
``notifications/initialized``); with tasks (our client declares 2025-11-25 ``tasks`` for the requests it
can answer) 19. Every one is called and its result checked for the right content, the task-only
``simulate-research-query`` as a task (with its ``input_required`` turn), and the two ``*-async`` tools
that make OUR client run their elicitation/sampling as a task. See the interop runbook for the peer's quirks.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from mcp_notebook import Client, MCPError
from tests.interop._peers import (
    HERE,
    LOOPBACK,
    Peers,
    free_port,
    listening,
    node_env,
)

pytestmark = pytest.mark.timeout(90)

WAIT = 15.0  # seconds for anything the server sends on its own (notifications, log messages)
CALL_TIMEOUT = 20.0  # seconds for any request
CLOSE_BOUND = 8.0  # seconds: stdin EOF, then SIGTERM, then SIGKILL, each bounded by the transport (2 s)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ENV_MARKER = ("MCP_NOTEBOOK_INTEROP_MARKER", "everything-42")
ROOT_URI, ROOT_NAME = "file:///tmp/mcp-notebook-interop", "interop-root"
ELICITED_NAME = "Ada Lovelace"
SAMPLED_TEXT = "sampled reply from the mcp_notebook test handler"


def expected_tool_names() -> set[str]:
    """The 19-tool list of the runbook (a tasks-capable client), copied into tests/interop/data."""
    listing = json.loads((HERE / "data" / "everything-tools.json").read_text())
    return {tool["name"] for tool in listing["result"]["tools"]}


# ---- the peer, over both transports ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def everything_url(peers: Peers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """server-everything's Streamable HTTP mode on 127.0.0.1 (pinned by the loopback preload)."""
    port = free_port()
    log = tmp_path_factory.mktemp("everything") / "everything.log"
    env = {**node_env(), "PORT": str(port), ENV_MARKER[0]: ENV_MARKER[1]}
    command = [str(peers.node), "-r", str(LOOPBACK), str(peers.everything), "streamableHttp"]
    with listening(command, port, log, env=env) as (url, _):
        yield url


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, peers: Peers) -> list[str] | str:
    """A command list (stdio) or a URL (Streamable HTTP): the same test body runs over both."""
    if request.param == "stdio":
        return [str(peers.node), str(peers.everything), "stdio"]
    url: str = request.getfixturevalue("everything_url")
    return url


class Recorder:
    """What the server sends besides results, and what our handlers answered; waits are bounded."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self.logs: list[dict[str, Any]] = []
        self.elicitations: list[dict[str, Any]] = []
        self.samplings: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    def _poke(self) -> None:
        self._changed.set()

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((method, params))
        self._poke()

    async def on_log(self, params: dict[str, Any]) -> None:
        self.logs.append(params)
        self._poke()

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.elicitations.append(params)
        if params.get("mode") == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": {"name": ELICITED_NAME, "check": True}}

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.samplings.append(params)
        content = {"type": "text", "text": SAMPLED_TEXT}
        return {
            "role": "assistant",
            "content": content,
            "model": "interop-test-model",
            "stopReason": "endTurn",
        }

    async def wait_for(self, what: str, found: Callable[[], Any], timeout: float = WAIT) -> Any:
        """Return ``found()`` once it is truthy; fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not (value := found()):
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"no {what} within {timeout:g} s; notifications: {self.notifications[-10:]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=left)
            except asyncio.TimeoutError:
                continue
        return value

    def log_matching(self, pattern: str) -> Callable[[], list[dict[str, Any]]]:
        return lambda: [entry for entry in self.logs if re.search(pattern, str(entry.get("data", "")))]

    def notified(self, method: str, **params: Any) -> Callable[[], list[dict[str, Any]]]:
        return lambda: [
            p for m, p in self.notifications if m == method and all(p.get(k) == v for k, v in params.items())
        ]


@pytest.fixture
async def connected(target: list[str] | str) -> AsyncIterator[tuple[Client, Recorder]]:
    """A client declaring roots, sampling and elicitation, after the server's tools/list_changed."""
    recorder = Recorder()
    client = Client(
        target,
        env=dict([ENV_MARKER]),
        timeout=CALL_TIMEOUT,
        roots=[{"uri": ROOT_URI, "name": ROOT_NAME}],
        sampling_handler=recorder.sample,
        elicitation_handler=recorder.elicit,
        logging_handler=recorder.on_log,
        notification_handler=recorder.on_notification,
    )
    async with client:
        if isinstance(target, list):
            # Over HTTP the peer sends it on the standalone GET stream before any client can have opened
            # it, and drops it (see test_tool_list_after_list_changed); over stdio it always arrives.
            await recorder.wait_for(
                "notifications/tools/list_changed", recorder.notified("notifications/tools/list_changed")
            )
        yield client, recorder


# ---- the tool list ---------------------------------------------------------------------------------------
async def test_tool_list_after_list_changed(connected: tuple[Client, Recorder]) -> None:
    """19 tools for roots+sampling+elicitation+tasks: the runbook's list.

    server-everything registers those tools when ``notifications/initialized`` arrives and announces them
    with ``notifications/tools/list_changed``. Over stdio the fixture waited for it. Over HTTP the TS
    server answers that POST 202 and then sends the notification on the standalone GET stream, which no
    client can have opened yet (clients open it after the 202); the TS SDK drops messages for a missing
    stream, so nobody receives it (the official Python SDK's client does not either). The list is complete
    by then, which is what re-listing checks.
    """
    client, _ = connected
    assert client.negotiated_version is not None and client.negotiated_version.name == "2025-11-25"
    names = [tool["name"] for tool in await client.list_tools()]
    assert len(names) == len(set(names)) == 19, names
    assert set(names) == expected_tool_names()


# ---- every tool, with the right content -------------------------------------------------------------------
Check = Callable[[Client, Recorder], Awaitable[None]]
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[name] = fn
        return fn

    return register


def kinds(result: dict[str, Any]) -> list[str]:
    return [block["type"] for block in result["content"]]


def texts(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), f"tool error: {texts(result)}"
    return result


def png(data: str) -> bytes:
    raw = base64.b64decode(data, validate=True)
    assert raw.startswith(PNG_SIGNATURE), raw[:16]
    return raw


@check("echo")
async def _echo(client: Client, _: Recorder) -> None:
    result = ok(await client.call_tool("echo", {"message": "hello, everything"}))
    assert result["content"] == [{"type": "text", "text": "Echo: hello, everything"}]


@check("get-sum")
async def _sum(client: Client, _: Recorder) -> None:
    result = ok(await client.call_tool("get-sum", {"a": 2, "b": 3.5}))
    assert texts(result) == "The sum of 2 and 3.5 is 5.5."


@check("get-env")
async def _env(client: Client, _: Recorder) -> None:
    # Over stdio the marker proves Client(env=...) reached the child; over HTTP the fixture set it.
    environment = json.loads(texts(ok(await client.call_tool("get-env", {}))))
    assert environment.get(ENV_MARKER[0]) == ENV_MARKER[1]


@check("get-tiny-image")
async def _image(client: Client, _: Recorder) -> None:
    result = ok(await client.call_tool("get-tiny-image", {}))
    assert kinds(result) == ["text", "image", "text"]
    image = result["content"][1]
    assert image["mimeType"] == "image/png"
    png(image["data"])


@check("get-annotated-message")
async def _annotated(client: Client, _: Recorder) -> None:
    result = ok(
        await client.call_tool("get-annotated-message", {"messageType": "error", "includeImage": True})
    )
    first = result["content"][0]
    assert first["type"] == "text" and first["annotations"] == {
        "priority": 1,
        "audience": ["user", "assistant"],
    }
    images = [block for block in result["content"] if block["type"] == "image"]
    assert len(images) == 1 and isinstance(images[0].get("annotations"), dict)
    png(images[0]["data"])
    debug = ok(await client.call_tool("get-annotated-message", {"messageType": "debug"}))
    annotations = debug["content"][0]["annotations"]
    assert annotations["audience"] == ["assistant"] and 0 <= annotations["priority"] <= 1


@check("get-resource-links")
async def _links(client: Client, _: Recorder) -> None:
    result = ok(await client.call_tool("get-resource-links", {"count": 3}))
    assert kinds(result) == ["text", "resource_link", "resource_link", "resource_link"]
    for link in result["content"][1:]:
        assert link["uri"].startswith("demo://resource/dynamic/") and link["name"]
        contents = (await client.read_resource(link["uri"]))["contents"]
        assert contents and contents[0]["uri"] == link["uri"]


@check("get-resource-reference")
async def _reference(client: Client, _: Recorder) -> None:
    result = ok(await client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 2}))
    embedded = [block["resource"] for block in result["content"] if block["type"] == "resource"]
    assert len(embedded) == 1
    assert embedded[0]["uri"] == "demo://resource/dynamic/text/2" and "Resource 2" in embedded[0]["text"]
    blob = ok(await client.call_tool("get-resource-reference", {"resourceType": "Blob", "resourceId": 1}))
    [resource] = [block["resource"] for block in blob["content"] if block["type"] == "resource"]
    assert resource["uri"] == "demo://resource/dynamic/blob/1"
    assert b"Resource 1" in base64.b64decode(resource["blob"], validate=True)


@check("get-structured-content")
async def _structured(client: Client, _: Recorder) -> None:
    # call_tool already validated structuredContent against the outputSchema; check it independently too.
    result = ok(await client.call_tool("get-structured-content", {"location": "Chicago"}))
    schema = (client.cached_tool("get-structured-content") or {}).get("outputSchema")
    assert isinstance(schema, dict), "the cached tool has no outputSchema"
    import jsonschema  # imported late: mcp_notebook has imported it without its slow grammar build

    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    validator(schema).validate(result["structuredContent"])
    assert set(result["structuredContent"]) >= {"temperature", "conditions", "humidity"}
    # The same data as JSON text, for clients without structured output (server/tools#structured-content)
    assert json.loads(texts(result)) == result["structuredContent"]


@check("gzip-file-as-resource")
async def _gzip(client: Client, _: Recorder) -> None:
    original = b"mcp_notebook interop\n" * 50
    data_uri = "data:text/plain;base64," + base64.b64encode(original).decode()
    inline = ok(
        await client.call_tool(
            "gzip-file-as-resource", {"name": "inline.txt.gz", "data": data_uri, "outputType": "resource"}
        )
    )
    [block] = inline["content"]
    assert block["type"] == "resource" and block["resource"]["mimeType"] == "application/gzip"
    assert gzip.decompress(base64.b64decode(block["resource"]["blob"], validate=True)) == original
    linked = ok(
        await client.call_tool(
            "gzip-file-as-resource", {"name": "linked.txt.gz", "data": data_uri, "outputType": "resourceLink"}
        )
    )
    [link] = linked["content"]
    assert link["type"] == "resource_link"
    [contents] = (await client.read_resource(link["uri"]))["contents"]
    assert gzip.decompress(base64.b64decode(contents["blob"], validate=True)) == original


@check("toggle-simulated-logging")
async def _logging(client: Client, recorder: Recorder) -> None:
    await client.set_logging_level("debug")  # its levels are random: let every one through
    started = ok(await client.call_tool("toggle-simulated-logging", {}))
    assert texts(started).startswith("Started simulated")
    # It sends one at once, then one every 5 s; over HTTP these arrive on the GET stream.
    found = await recorder.wait_for("simulated log message", recorder.log_matching(r"[Ll]evel[- ]message"))
    levels = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
    assert found[0]["level"] in levels
    stopped = ok(await client.call_tool("toggle-simulated-logging", {}))
    assert texts(stopped).startswith("Stopped simulated")


@check("toggle-subscriber-updates")
async def _updates(client: Client, recorder: Recorder) -> None:
    uri = "demo://resource/dynamic/text/3"
    await client.subscribe_resource(uri)
    await recorder.wait_for("log acknowledging the subscription", recorder.log_matching(re.escape(uri)))
    started = ok(await client.call_tool("toggle-subscriber-updates", {}))
    assert texts(started).startswith("Started simulated")
    updated = recorder.notified("notifications/resources/updated", uri=uri)
    await recorder.wait_for(f"notifications/resources/updated for {uri}", updated)
    stopped = ok(await client.call_tool("toggle-subscriber-updates", {}))
    assert texts(stopped).startswith("Stopped simulated")
    await client.unsubscribe_resource(uri)


@check("trigger-long-running-operation")
async def _progress(client: Client, _: Recorder) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    result = ok(
        await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 4},
            progress_callback=lambda progress, total, message: seen.append((progress, total, message)),
        )
    )
    assert "completed" in texts(result)
    values = [progress for progress, _, _ in seen]
    assert values == sorted(set(values)) and len(values) == 4, seen  # strictly increasing
    assert values[-1] == 4 and all(total == 4 for _, total, _ in seen), seen


@check("get-roots-list")
async def _roots(client: Client, _: Recorder) -> None:
    text = texts(ok(await client.call_tool("get-roots-list", {})))
    assert "(1 total)" in text and ROOT_URI in text and ROOT_NAME in text


@check("trigger-elicitation-request")
async def _elicitation(client: Client, recorder: Recorder) -> None:
    text = texts(ok(await client.call_tool("trigger-elicitation-request", {})))
    [asked] = [p for p in recorder.elicitations if p.get("mode", "form") == "form"]
    assert asked["requestedSchema"]["type"] == "object" and "name" in asked["requestedSchema"]["properties"]
    assert "User provided the requested information" in text and ELICITED_NAME in text


@check("trigger-url-elicitation")
async def _url_elicitation(client: Client, recorder: Recorder) -> None:
    url = "https://example.com/mcp-notebook/verify"
    text = texts(ok(await client.call_tool("trigger-url-elicitation", {"url": url})))
    [asked] = [p for p in recorder.elicitations if p.get("mode") == "url"]
    assert asked["url"] == url and asked["elicitationId"]
    assert "completed the URL elicitation" in text and asked["elicitationId"] in text


@check("trigger-sampling-request")
async def _sampling(client: Client, recorder: Recorder) -> None:
    text = texts(
        ok(await client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20}))
    )
    [asked] = recorder.samplings
    assert "say hi" in json.dumps(asked["messages"]) and asked["maxTokens"] == 20
    assert SAMPLED_TEXT in text


def _task_only(tool: dict[str, Any]) -> bool:
    return (tool.get("execution") or {}).get("taskSupport") == "required"


async def test_every_tool(connected: tuple[Client, Recorder]) -> None:
    """Every listed tool (but the task-only ones, below) is called; all failures are reported together."""
    client, recorder = connected
    tools = await client.list_tools()
    callable_now = [tool["name"] for tool in tools if not _task_only(tool)]
    unchecked = sorted(set(callable_now) - set(CHECKS))
    assert not unchecked, f"server-everything lists tools this test does not check: {unchecked}"
    failures: dict[str, str] = {}
    for name in callable_now:
        try:
            await CHECKS[name](client, recorder)
        except (AssertionError, MCPError, KeyError, ValueError, TypeError) as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
    assert not failures, "\n".join(f"{name}: {problem}" for name, problem in failures.items())


async def test_task_only_tool_runs_as_task(connected: tuple[Client, Recorder]) -> None:
    """``simulate-research-query`` (``execution.taskSupport: "required"``) runs as a task automatically:
    CreateTaskResult, tasks/get polling at the server's pollInterval, ``input_required`` -> tasks/result,
    whose stream carries the server's elicitation (tagged with related-task), then the report.
    Spec 2025-11-25 server/tools#tool-execution and basic/utilities/tasks."""
    client, recorder = connected
    task_only = [tool["name"] for tool in await client.list_tools() if _task_only(tool)]
    assert task_only == ["simulate-research-query"]
    statuses: list[str] = []
    result = await asyncio.wait_for(
        client.call_tool(
            "simulate-research-query",
            {"topic": "interop", "ambiguous": True},
            on_task=lambda task: statuses.append(task["status"]),
        ),
        timeout=60,
    )
    assert "Research Report: interop" in texts(ok(result)), texts(result)
    assert statuses[0] == "working" and "input_required" in statuses and statuses[-1] == "completed"
    [asked] = [e for e in recorder.elicitations if "interop" in e.get("message", "")]
    assert asked["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
    sent = [entry.message for entry in client.trace if entry.direction == "out"]
    [call] = [m for m in sent if m.get("method") == "tools/call"]
    assert "task" in call["params"]
    assert any(m.get("method") == "tasks/get" for m in sent)
    assert any(m.get("method") == "tasks/result" for m in sent)


@check("trigger-elicitation-request-async")
async def _elicitation_async(client: Client, recorder: Recorder) -> None:
    """The server task-augments its elicitation to us: we answer CreateTaskResult and serve tasks/*."""
    before = len(recorder.elicitations)
    text = texts(ok(await client.call_tool("trigger-elicitation-request-async", {}, timeout=60)))
    assert "[COMPLETED]" in text and ELICITED_NAME in text, text
    assert len(recorder.elicitations) == before + 1
    received = [entry.message for entry in client.trace if entry.direction == "in"]
    assert any(m.get("method") == "tasks/get" for m in received)


@check("trigger-sampling-request-async")
async def _sampling_async(client: Client, recorder: Recorder) -> None:
    text = texts(
        ok(await client.call_tool("trigger-sampling-request-async", {"prompt": "hi", "maxTokens": 20}))
    )
    assert "[COMPLETED]" in text and SAMPLED_TEXT in text, text


# ---- resources, prompts, completion ----------------------------------------------------------------------
async def test_resources_and_templates(connected: tuple[Client, Recorder]) -> None:
    client, _ = connected
    resources = await client.list_resources()
    documents = [r for r in resources if r["uri"].startswith("demo://resource/static/document/")]
    assert documents and all(r["uri"].endswith(".md") and r["name"] for r in documents)
    [contents] = (await client.read_resource(documents[0]["uri"]))["contents"]
    assert contents["uri"] == documents[0]["uri"] and contents["mimeType"] == "text/markdown"
    assert contents["text"].strip()
    templates = {t["uriTemplate"] for t in await client.list_resource_templates()}
    assert templates == {
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    }
    [text] = (await client.read_resource("demo://resource/dynamic/text/7"))["contents"]
    assert "Resource 7" in text["text"]
    [blob] = (await client.read_resource("demo://resource/dynamic/blob/7"))["contents"]
    assert b"Resource 7" in base64.b64decode(blob["blob"], validate=True)


async def test_prompts_and_completion(connected: tuple[Client, Recorder]) -> None:
    client, _ = connected
    prompts = {p["name"]: p for p in await client.list_prompts()}
    assert set(prompts) == {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
    assert [a["name"] for a in prompts["args-prompt"]["arguments"]] == ["city", "state"]

    simple = await client.get_prompt("simple-prompt")
    assert simple["messages"][0]["role"] == "user" and simple["messages"][0]["content"]["type"] == "text"
    with_args = await client.get_prompt("args-prompt", {"city": "Lyon", "state": "Rhone"})
    assert "Lyon, Rhone" in with_args["messages"][0]["content"]["text"]
    with_resource = await client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
    [intro, embedded] = with_resource["messages"]
    assert intro["content"]["type"] == "text" and embedded["content"]["type"] == "resource"
    assert embedded["content"]["resource"]["uri"] == "demo://resource/dynamic/text/2"

    ref = {"type": "ref/prompt", "name": "completable-prompt"}
    department = await client.complete(ref, {"name": "department", "value": "E"})
    assert department["values"] == ["Engineering"]
    names = await client.complete(ref, {"name": "name", "value": ""}, {"department": "Sales"})
    assert names["values"] == ["David", "Eve", "Frank"]
    lead = await client.get_prompt("completable-prompt", {"department": "Sales", "name": "Eve"})
    assert lead["messages"][0]["content"]["text"] == "Please promote Eve to the head of the Sales team."


# ---- stdio shutdown ----------------------------------------------------------------------------------------
async def test_stdio_close_terminates_a_server_ignoring_eof(peers: Peers) -> None:
    """basic/lifecycle#stdio: close stdin, then SIGTERM, then SIGKILL. server-everything keeps running after
    stdin EOF while a timer is live (simulated logging), so closing must escalate, within a bounded time."""
    client = Client(
        [str(peers.node), str(peers.everything), "stdio"],
        timeout=CALL_TIMEOUT,
        roots=[{"uri": ROOT_URI, "name": ROOT_NAME}],
        logging_handler=lambda params: None,
    )
    await client.connect()
    try:
        transport: Any = client.connection.transport
        pid = transport.pid
        ok(await client.call_tool("toggle-simulated-logging", {}))  # a 5 s interval keeps node alive
    finally:
        started = time.monotonic()
        await asyncio.wait_for(client.aclose(), timeout=CLOSE_BOUND + 5)
        elapsed = time.monotonic() - started
    assert elapsed < CLOSE_BOUND, f"closing took {elapsed:.1f} s"
    assert transport.returncode == -signal.SIGTERM, f"exit status {transport.returncode}"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone and reaped
