"""``mcp-notebook replay`` over stdio and Streamable HTTP, ``mcp-notebook verify`` and its exit status
(issue 23): real subprocesses, HTTP on 127.0.0.1 only."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_notebook import Client
from tests.cassette.sample import make
from tests.cassette.test_record_replay import client, record, script
from tests.interop._peers import ROOT, free_port, listening, serve_http

SAMPLE = ROOT / "tests" / "cassette" / "sample.py"
RUN_TIMEOUT = 120


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_notebook", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import asyncio

    folder = tmp_path_factory.mktemp("cassettes")
    paths = {}
    for era in ("legacy", "modern"):
        paths[era] = folder / f"{era}.jsonl"
        asyncio.run(record(paths[era], era))
    return paths


@pytest.fixture
def replay_http(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    def start(path: Path) -> str:
        port = free_port()
        command = [sys.executable, "-m", "mcp_notebook", "replay", str(path), "--http", f"127.0.0.1:{port}"]
        url, _ = started.enter_context(listening(command, port, tmp_path / "replay.log"))
        return url

    with contextlib.ExitStack() as started:
        yield start


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_replay_over_stdio(cassettes: dict[str, Path], era: str) -> None:
    async with client(make(), era) as live:
        expected = await script(live)
    command = [sys.executable, "-m", "mcp_notebook", "replay", str(cassettes[era])]
    async with client(command, era) as c:
        assert c.is_modern is (era == "modern")
        assert await script(c) == expected


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_replay_over_http(cassettes: dict[str, Path], era: str, replay_http: object) -> None:
    async with client(make(), era) as live:
        expected = await script(live)
    url = replay_http(cassettes[era])  # type: ignore[operator]
    async with client(url, era) as c:
        assert c.is_modern is (era == "modern")
        assert await script(c) == expected


def test_verify_exit_status_and_diff(cassettes: dict[str, Path]) -> None:
    same = cli("verify", str(cassettes["legacy"]), f"{SAMPLE}:server")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "all answered as recorded" in same.stdout
    changed = cli("verify", str(cassettes["modern"]), f"{SAMPLE}:changed")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "tools/call" in changed.stdout and "result.structuredContent.result" in changed.stdout
    assert "recorded: 5" in changed.stdout and "live:     6" in changed.stdout


def test_verify_against_a_command(cassettes: dict[str, Path]) -> None:
    run = cli(
        "verify", str(cassettes["legacy"]), "--", sys.executable, "-m", "mcp_notebook", "serve", str(SAMPLE)
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_verify_against_a_url(cassettes: dict[str, Path], tmp_path: Path) -> None:
    with serve_http(f"{SAMPLE}:changed", tmp_path / "serve.log") as url:
        run = cli("verify", str(cassettes["modern"]), url)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "tools[echo].inputSchema.properties.loud" in run.stdout


def test_verify_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"not": "a cassette"}\n')
    bad = cli("verify", str(tmp_path / "bad.jsonl"), f"{SAMPLE}:server")
    assert bad.returncode == 2 and "not an mcp-notebook cassette" in bad.stderr
    none = cli("verify", str(tmp_path / "bad.jsonl"))
    assert none.returncode == 2 and "name a server" in none.stderr
    gone = cli(
        "verify", str(ROOT / "tests/cassette/data/sample.jsonl"), "--", str(tmp_path / "no-such-server")
    )
    assert gone.returncode == 2, gone.stdout + gone.stderr
    assert "cannot verify against" in gone.stderr and "Traceback" not in gone.stderr


async def test_client_gets_cassette_directly(cassettes: dict[str, Path]) -> None:
    from mcp_notebook.engine.replay import Cassette

    async with Client(Cassette(cassettes["legacy"])) as c:  # era "auto": the probe falls back to legacy
        assert not c.is_modern
        assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
