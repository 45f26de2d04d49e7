"""Every annotation of the type zoo (tests/contracts/zoo.py) as a parameter and as a return, in both eras,
through our Client (in memory, with format checks active) and the official SDK's client (over stdio, which
validates structuredContent against the outputSchema itself). Before issue 20, a naive datetime or
pd.Timestamp, a pydantic model with ``datetime | None``, ``Decimal`` from a string, ``bytes``,
``dict[int, str]`` and a ``NamedTuple`` failed here."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from mcp import Client as SDKClient
from mcp import StdioServerParameters

from mcp_notebook import Client
from tests.contracts.zoo import CASES, Case, argument, expected_structured, make_server

pytestmark = [pytest.mark.timeout(120), pytest.mark.requirement("tools-structured-conforms")]

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
ZOO = ROOT / "tests" / "contracts" / "zoo.py"


def test_the_zoo_holds_at_least_the_42_annotations_of_the_issue() -> None:
    assert len({case.id for case in CASES}) == len(CASES) >= 42


def _check_ours(case: Case, result: dict[str, Any]) -> str | None:
    if result.get("isError"):
        return f"{case.id}: {result['content'][0].get('text')}"
    if case.text_only and result["content"] != [{"type": "text", "text": case.wire}]:
        return f"{case.id}: content {result['content']!r}"
    if result.get("structuredContent") != expected_structured(case):
        return f"{case.id}: structuredContent {result.get('structuredContent')!r}"
    if case.id == "bytes_png" and result["content"][0]["type"] != "image":
        return f"{case.id}: an image's bytes were not shown as an image block"
    if case.id == "bytes" and result["content"][0]["type"] != "text":
        return f"{case.id}: bytes that are no image became a {result['content'][0]['type']} block"
    return None


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_our_client_round_trips_every_annotation(era: str) -> None:
    async with Client(make_server(), era=era, timeout=30) as client:
        assert client.is_modern == (era == "modern")
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert {f"t_{case.id}" for case in CASES} <= tools.keys()  # every annotation registered
        problems = []
        for case in CASES:
            result = await client.call_tool(f"t_{case.id}", {"x": argument(case)})
            problems.append(_check_ours(case, dict(result)))
    assert "\n".join(p for p in problems if p) == ""


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_sdk_client_round_trips_every_annotation(mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_notebook", "serve", str(ZOO)], cwd=str(ROOT)
    )
    problems = []
    async with SDKClient(params, mode=mode, read_timeout_seconds=30.0) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {f"t_{case.id}" for case in CASES} <= listed.keys()
        for case in CASES:
            # the SDK client validates structuredContent against the outputSchema (RuntimeError if not)
            result = await client.call_tool(f"t_{case.id}", {"x": argument(case)})
            if result.is_error or result.structured_content != expected_structured(case):
                text = getattr(result.content[0], "text", "") if result.content else ""
                problems.append(f"{case.id}: {result.structured_content!r} {text}")
    assert problems == []


async def test_a_form_shows_every_annotation_and_what_it_sends_is_accepted() -> None:
    from mcp_notebook.notebook.forms.form import SchemaForm

    async with Client(make_server(), era="legacy", timeout=30) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        problems = []
        for case in CASES:
            form = SchemaForm(tools[f"t_{case.id}"]["inputSchema"])
            form.set_value({"x": argument(case)})
            errors = form.validate()
            result = await client.call_tool(f"t_{case.id}", form.value)  # a default may be left out
            if errors or result.get("isError"):
                problems.append(f"{case.id}: {errors} {result['content']}")
    assert "\n".join(problems) == ""
