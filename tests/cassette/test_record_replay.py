"""Record a session into a cassette, replay it offline, verify it against a live server (issue 23).

One script of calls (plain, progress, a task, an elicitation / MRTR round, a resource, a secret argument)
runs against the sample server while a :class:`Recording` writes the cassette; the same script then runs
against :class:`Cassette` in memory and must get the same answers, in both eras. Verify re-sends the
cassette to the same server (no difference) and to a changed one (the changes, by path).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook import Client, JSONRPCError
from mcp_notebook.engine.cassette import Recording, exchanges, read_cassette
from mcp_notebook.engine.replay import Cassette
from mcp_notebook.engine.verify import verify
from tests.cassette.sample import make

ERAS = ["legacy", "modern"]
SECRET = "hunter2-very-secret"


async def elicit(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def client(target: Any, era: str) -> Client:
    return Client(target, era=era, elicitation_handler=elicit)  # type: ignore[arg-type]


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "_meta"}


async def script(c: Client) -> list[Any]:
    """The session both the recording and the replay run; what it saw, in order."""
    seen: list[Any] = []
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    seen.append(sorted(t["name"] for t in await c.list_tools()))
    seen.append(_plain(await c.call_tool("add", {"a": 2, "b": 3})))
    seen.append(_plain(await c.call_tool("count", {"n": 3}, progress_callback=on_progress)))
    seen.append(progress)
    seen.append(_plain(await c.call_tool("slow", {"seconds": 0.05}, task=True)))
    seen.append(_plain(await c.call_tool("greet", {})))
    seen.append(_plain(await c.call_tool("login", {"user": "ada", "password": SECRET})))
    seen.append(await c.read_resource("sample://readme"))
    return seen


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def record(path: Path, era: str) -> list[Any]:
    async with client(make(), era) as c, Recording(c, path):
        return await script(c)


async def test_replay_answers_as_recorded(tmp_path: Path, era: str) -> None:
    path = tmp_path / "session.jsonl"
    recorded = await record(path, era)
    assert recorded[3] == [1, 2, 3]  # progress arrived while recording
    async with client(Cassette(path), era) as c:
        assert c.is_modern is (era == "modern")
        replayed = await script(c)
    assert replayed == recorded


async def test_cassette_header_and_messages(tmp_path: Path, era: str) -> None:
    path = tmp_path / "session.jsonl"
    await record(path, era)
    text = path.read_text()
    assert SECRET not in text  # the trace's redaction: "password" values are blanked
    file = read_cassette(path)
    assert file.header["era"] == era and file.header["version"] == 1
    assert file.header["server"]["serverInfo"]["name"] == "cassette-sample"
    methods = [e.method for e in exchanges(file.messages)]
    assert methods[0] == ("initialize" if era == "legacy" else "server/discover")
    assert "tools/call" in methods
    if era == "legacy":
        assert "tasks/result" in methods or "tasks/get" in methods
        greet = next(e for e in exchanges(file.messages) if e.params.get("name") == "greet")
        assert [m.message["method"] for m in greet.during] == ["elicitation/create"]
        assert greet.during[0].answer is not None  # the client's answer is kept with the request
    else:  # the MRTR round: the same call twice, the retry with inputResponses
        greets = [e for e in exchanges(file.messages) if e.params.get("name") == "greet"]
        assert len(greets) == 2 and "inputResponses" in greets[1].params
        assert greets[0].response is not None
        assert greets[0].response["result"]["resultType"] == "input_required"
    count = next(e for e in exchanges(file.messages) if e.params.get("name") == "count")
    assert [m.message["method"] for m in count.during] == ["notifications/progress"] * 3


async def test_unmatched_request_names_the_nearest(tmp_path: Path, era: str) -> None:
    path = tmp_path / "session.jsonl"
    await record(path, era)
    async with client(Cassette(path), era) as c:
        with pytest.raises(JSONRPCError) as caught:
            await c.call_tool("add", {"a": 2, "b": 4})
        assert caught.value.code == -32602
        assert "no recorded answer for tools/call" in str(caught.value)
        assert "nearest recorded request is #" in str(caught.value)
        assert '"a": 2, "b": 3' in str(caught.value)
        with pytest.raises(JSONRPCError) as unknown:
            await c.request("prompts/list")
        assert unknown.value.code == -32601


async def test_recording_started_late_still_replays(tmp_path: Path) -> None:
    """A recording begun on an open connection carries its handshake and a fresh tools/list."""
    path = tmp_path / "late.jsonl"
    async with client(make(), "legacy") as c:
        await c.call_tool("add", {"a": 1, "b": 1})  # before the recording: not in the cassette
        async with Recording(c, path):
            expected = await c.call_tool("add", {"a": 5, "b": 5})
    async with client(Cassette(path), "legacy") as c:
        assert await c.call_tool("add", {"a": 5, "b": 5}) == expected
        with pytest.raises(JSONRPCError):
            await c.call_tool("add", {"a": 1, "b": 1})


async def test_verify_same_server_finds_nothing(tmp_path: Path, era: str) -> None:
    path = tmp_path / "session.jsonl"
    await record(path, era)
    report = await verify(path, make())
    assert report.ok, report.text()
    assert report.checked >= 7
    assert "all answered as recorded" in report.text()


async def test_verify_changed_server_reports_the_change(tmp_path: Path, era: str) -> None:
    path = tmp_path / "session.jsonl"
    await record(path, era)
    report = await verify(path, make(changed=True))
    assert not report.ok
    paths = {(d.where.split()[1], d.path) for d in report.differences}
    assert ("tools/list", "result.tools[echo].inputSchema.properties.loud") in paths
    assert ("tools/call", "result.structuredContent.result") in paths
    text = report.text()
    assert "recorded: 5" in text and "live:     6" in text


async def test_verify_update_accepts_the_change(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    await record(path, "legacy")
    first = await verify(path, make(changed=True), update=True)
    assert not first.ok
    again = await verify(path, make(changed=True))
    assert again.ok, again.text()
    assert json.loads(path.read_text().splitlines()[0])["cassette"] == "mcp-notebook"
