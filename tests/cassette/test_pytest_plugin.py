"""The pytest plugin (issue 23), used as a project test file uses it (``-p mcp_notebook.pytest_plugin`` in
the project's addopts): fixtures giving connected clients to a cassette, a server module and a notebook;
the ``mcp_verify`` marker and fixture; and, in inner pytest runs (pytester), that the entry point is inert
unless asked and that a failing verification prints the diff."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

from mcp_notebook import Cassette

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent
CASSETTE = "data/sample.jsonl"  # recorded by data/record_sample.py against sample.py:server


def test_client_to_a_cassette(mcp_client: Callable[..., Any]) -> None:
    client = mcp_client(CASSETTE)  # relative to this file's folder; replayed, no server runs
    assert client.server_info["name"] == "cassette-sample"
    assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}


def test_client_to_a_server_module(mcp_client: Callable[..., Any]) -> None:
    client = mcp_client("sample.py:changed")
    assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 6}


def test_client_to_a_notebook(mcp_client: Callable[..., Any], tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    source = "%load_ext mcp_notebook\n@mcp.tool\ndef twice(x: int) -> int:\n    return 2 * x"
    notebook.cells = [nbformat.v4.new_code_cell(source)]
    path = tmp_path / "twice.ipynb"
    nbformat.write(notebook, str(path))
    client = mcp_client(str(path))
    assert client.call_tool("twice", {"x": 21})["structuredContent"] == {"result": 42}


def test_client_takes_objects_too(mcp_client: Callable[..., Any]) -> None:
    client = mcp_client(Cassette(HERE / CASSETTE))
    assert client.call_tool("echo", {"text": "hello"})["content"][0]["text"] == "hello"


@pytest.mark.mcp_verify(CASSETTE, "sample.py:server")
def test_marker_verifies_the_cassette() -> None:
    """The marker ran verify before this body; reaching it means the server answered as recorded."""


def test_verify_fixture_reports(mcp_verify: Callable[..., Any]) -> None:
    report = mcp_verify(CASSETTE, "sample.py:server")
    assert report.ok and report.checked >= 4


# ---- inner runs -------------------------------------------------------------------------------------------
INNER = """
    import pytest

    CASSETTE = {cassette!r}
    SAMPLE = {sample!r}

    @pytest.mark.mcp_verify(CASSETTE, SAMPLE + ":changed")
    def test_changed():
        pass

    def test_uses_fixture(mcp_client):
        assert mcp_client(CASSETTE).call_tool("add", {{"a": 2, "b": 3}})["structuredContent"]["result"] == 5
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the entry point is given with -p below
    source = INNER.format(cassette=str(HERE / CASSETTE), sample=str(HERE / "sample.py"))
    pytester.makepyfile(test_inner=textwrap.dedent(source))
    return pytester


def test_entry_point_is_inert_unless_asked(inner: pytest.Pytester) -> None:
    result = inner.runpytest_subprocess("-p", "mcp_notebook._pytest_entry", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)  # no plugin: the marker only warns, verifies nothing
    result.stdout.fnmatch_lines(["*fixture 'mcp_client' not found*"])


def test_flag_loads_it_and_a_difference_prints_the_diff(inner: pytest.Pytester) -> None:
    result = inner.runpytest_subprocess("-p", "mcp_notebook._pytest_entry", "--mcp-notebook")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*differences in * requests against *sample.py:changed*", "*result.structuredContent.result:*"]
    )
    result.stdout.fnmatch_lines(["*recorded: 5*", "*live:     6*"])


def test_ini_loads_it(inner: pytest.Pytester) -> None:
    inner.makeini("[pytest]\nmcp_notebook = true\n")
    result = inner.runpytest_subprocess("-p", "mcp_notebook._pytest_entry", "-k", "uses_fixture")
    result.assert_outcomes(passed=1, deselected=1)
