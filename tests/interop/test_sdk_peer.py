"""The official Python SDK (``mcp`` 2.x) as a peer, in both directions, over stdio and Streamable HTTP.

* Its client against OUR server (``sample_server.py`` served by ``python -m mcp_notebook serve``): list and
  call tools (structured output, image, tool errors), read resources, get prompts. Mode "legacy" forces
  the ``initialize`` handshake; the SDK's default ("auto") probes ``server/discover`` first, which our
  dual-era server answers, so that conversation is 2026-07-28 (stateless, per-request ``_meta``).
* Our client against ITS server (an ``MCPServer`` script written into tmp_path): list and call tools,
  structured output checked against the outputSchema, errors.

The SDK is only ever used here, as a peer.
"""

from __future__ import annotations

import base64
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client as SDKClient
from mcp import StdioServerParameters

from mcp_notebook import Client
from tests.interop._peers import HERE, ROOT, free_port, listening, serve_http

pytestmark = pytest.mark.timeout(60)

CALL_TIMEOUT = 20.0
SAMPLE = HERE / "sample_server.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def wire(model: Any) -> dict[str, Any]:
    """An SDK result as it was on the wire (camelCase, no unset fields)."""
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


# ---- the SDK's client against our server -----------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("sample") / "server.log"
    with serve_http(SAMPLE, log) as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def our_server(request: pytest.FixtureRequest) -> StdioServerParameters | str:
    """Our sample server as the SDK's client reaches it: a command it spawns (and stops), or a URL."""
    if request.param == "stdio":
        command = ["-m", "mcp_notebook", "serve", str(SAMPLE)]
        return StdioServerParameters(command=sys.executable, args=command, cwd=str(ROOT))
    url: str = request.getfixturevalue("sample_url")
    return url


def sdk_client(server: StdioServerParameters | str, mode: str = "legacy") -> SDKClient:
    return SDKClient(server, mode=mode, read_timeout_seconds=CALL_TIMEOUT)


async def test_sdk_client_lists_and_calls_tools(our_server: StdioServerParameters | str) -> None:
    async with sdk_client(our_server) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None and client.server_info.name == "mcp-notebook-sample"
        tools = {tool.name: wire(tool) for tool in (await client.list_tools()).tools}
        assert set(tools) == {"add", "echo", "structured", "image", "fail"}
        assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
        assert tools["add"]["description"].startswith("Add two integers")
        assert "outputSchema" in tools["structured"]

        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert not added.is_error
        assert wire(added)["content"] == [{"type": "text", "text": '{"result": 5}'}]
        assert added.structured_content == {"result": 5}
        echoed = wire(await client.call_tool("echo", {"message": "hi"}))
        assert echoed["content"] == [{"type": "text", "text": "echo: hi"}]

        # The SDK's client itself validates structuredContent against the outputSchema.
        weather = await client.call_tool("structured", {"city": "Oslo"})
        assert not weather.is_error
        assert weather.structured_content == {"city": "Oslo", "celsius": 21.5, "sunny": True}

        image = wire(await client.call_tool("image", {}))
        [block] = image["content"]
        assert block["type"] == "image" and block["mimeType"] == "image/png"
        assert base64.b64decode(block["data"], validate=True).startswith(PNG_SIGNATURE)

        failed = await client.call_tool("fail", {"reason": "for the SDK"})
        assert failed.is_error
        assert wire(failed)["content"] == [{"type": "text", "text": "failed for the SDK"}]
        # Invalid arguments are a tool execution error too since 2025-11-25 (server/tools#error-handling).
        invalid = await client.call_tool("add", {"a": "two", "b": 3})
        assert invalid.is_error


async def test_sdk_client_reads_resources(our_server: StdioServerParameters | str) -> None:
    async with sdk_client(our_server) as client:
        resources = [wire(r) for r in (await client.list_resources()).resources]
        assert resources == [
            {
                "uri": "sample://note",
                "name": "note",
                "description": "A fixed text note",
                "mimeType": "text/plain",
                "size": len("A note kept by the sample server."),
            }
        ]
        note = wire(await client.read_resource("sample://note"))
        assert note["contents"] == [
            {"uri": "sample://note", "mimeType": "text/plain", "text": "A note kept by the sample server."}
        ]
        templates = [wire(t) for t in (await client.list_resource_templates()).resource_templates]
        assert [t["uriTemplate"] for t in templates] == ["sample://items/{item_id}"]
        item = wire(await client.read_resource("sample://items/7"))
        assert item["contents"][0]["text"] == "item 7"


async def test_sdk_client_gets_prompts(our_server: StdioServerParameters | str) -> None:
    async with sdk_client(our_server) as client:
        [prompt] = [wire(p) for p in (await client.list_prompts()).prompts]
        assert prompt["name"] == "greet"
        assert [(a["name"], a.get("required", False)) for a in prompt["arguments"]] == [
            ("name", True),
            ("style", False),
        ]
        got = wire(await client.get_prompt("greet", {"name": "Ada", "style": "formal"}))
        assert got["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Say hello to Ada in a formal style."}}
        ]


async def test_sdk_client_default_mode_speaks_2026_07_28(our_server: StdioServerParameters | str) -> None:
    """The SDK's default probes ``server/discover``; our dual-era server answers it, so the whole
    conversation is stateless 2026-07-28 (versioning#dual-era): lists, calls, resources, prompts."""
    async with sdk_client(our_server, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        assert len((await client.list_tools()).tools) == 5
        assert wire(await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
        failed = wire(await client.call_tool("fail", {}))
        assert failed["isError"] is True
        note = wire(await client.read_resource("sample://note"))
        assert note["contents"][0]["text"] == "A note kept by the sample server."
        got = wire(await client.get_prompt("greet", {"name": "Ada"}))
        assert "Ada" in got["messages"][0]["content"]["text"]


# ---- our client against the SDK's server -----------------------------------------------------------------
SDK_SERVER = '''
    """A tiny server written with the official SDK (a test peer)."""
    import sys

    from pydantic import BaseModel

    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("sdk-peer")


    class Weather(BaseModel):
        city: str
        celsius: float


    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


    @mcp.tool()
    def weather(city: str) -> Weather:
        """Made-up weather."""
        return Weather(city=city, celsius=12.5)


    @mcp.tool()
    def boom() -> str:
        """Always raises."""
        raise ValueError("boom from the SDK")


    if __name__ == "__main__":
        if len(sys.argv) > 1:
            mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
        else:
            mcp.run()
'''


@pytest.fixture(scope="module")
def sdk_server_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sdk") / "sdk_server.py"
    path.write_text(textwrap.dedent(SDK_SERVER))
    return path


@pytest.fixture(scope="module")
def sdk_server_url(sdk_server_script: Path) -> Iterator[str]:
    port = free_port()
    log = sdk_server_script.with_suffix(".log")
    command = [sys.executable, str(sdk_server_script), str(port)]
    with listening(command, port, log, cwd=sdk_server_script.parent) as (url, _):
        yield url


@pytest.fixture(params=["stdio", "http"])
def sdk_server(request: pytest.FixtureRequest, sdk_server_script: Path) -> list[str] | str:
    if request.param == "stdio":
        return [sys.executable, str(sdk_server_script)]
    url: str = request.getfixturevalue("sdk_server_url")
    return url


async def test_our_client_against_sdk_server(sdk_server: list[str] | str) -> None:
    async with Client(sdk_server, timeout=CALL_TIMEOUT) as client:
        assert client.server_info["name"] == "sdk-peer"
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools) == {"add", "weather", "boom"}
        assert set(tools["add"]["inputSchema"]["required"]) == {"a", "b"}

        added = await client.call_tool("add", {"a": 20, "b": 22})
        assert not added.get("isError")
        assert added["content"] == [{"type": "text", "text": "42"}]
        assert added["structuredContent"] == {"result": 42}

        # Our client checks structuredContent against the outputSchema before returning it.
        schema = tools["weather"]["outputSchema"]
        assert schema["type"] == "object" and set(schema["properties"]) == {"city", "celsius"}
        weather = await client.call_tool("weather", {"city": "Oslo"})
        assert weather["structuredContent"] == {"city": "Oslo", "celsius": 12.5}

        failed = await client.call_tool("boom", {})
        assert failed["isError"] is True
        # The SDK hides the message of an unexpected exception; only the tool's name reaches the client.
        assert "boom" in failed["content"][0]["text"]
