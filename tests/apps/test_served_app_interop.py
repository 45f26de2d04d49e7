"""An app served by mcp_notebook, seen by another host's client: the official Python SDK's ``Client``
spawns ``python -m mcp_notebook serve FILE`` over stdio, finds the tool's ``_meta.ui.resourceUri`` and
reads the ``ui://`` resource (type ``text/html;profile=mcp-app``, its CSP in the content's ``_meta.ui``),
as any MCP Apps host would before rendering it."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from mcp import Client as SDKClient
from mcp import StdioServerParameters

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]

SERVER = textwrap.dedent('''
    from mcp_notebook import Server
    from mcp_notebook.notebook.apps.serve import add_app_tool

    server = Server("served-apps")
    VIEW = "<!doctype html><p>the view</p>"


    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


    CSP = {"connectDomains": ["https://api.example.com"]}
    add_app_tool(server, add, VIEW, csp=CSP, visibility=["model", "app"])
''')


async def test_sdk_client_finds_and_reads_a_served_app(tmp_path: Path) -> None:
    module = tmp_path / "served.py"
    module.write_text(SERVER)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_notebook", "serve", str(module)], cwd=str(ROOT)
    )
    async with SDKClient(params, mode="legacy", read_timeout_seconds=20) as client:
        extensions = client.server_capabilities.extensions if client.server_capabilities else None
        assert extensions == {"io.modelcontextprotocol/ui": {}}  # the server says it speaks MCP Apps
        [tool] = (await client.list_tools()).tools
        ui = (tool.meta or {})["ui"]
        assert ui == {"resourceUri": "ui://notebook/add.html", "visibility": ["model", "app"]}
        read = await client.read_resource(ui["resourceUri"])
        [content] = read.contents
        dumped = content.model_dump(by_alias=True, exclude_none=True)
        assert dumped["mimeType"] == "text/html;profile=mcp-app"
        assert dumped["text"] == "<!doctype html><p>the view</p>"
        assert dumped["_meta"] == {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}}
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
