"""An app served by mcp_notebook, seen by another host's client: the official Python SDK's ``Client``
spawns ``python -m mcp_notebook serve FILE`` over stdio, finds the tool's ``_meta.ui.resourceUri`` and
reads the ``ui://`` resource (type ``text/html;profile=mcp-app``, its CSP in the content's ``_meta.ui``),
as any MCP Apps host would before rendering it."""

from __future__ import annotations

import contextlib
import json
import re
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


WIDGET_SERVER = textwrap.dedent('''
    from typing import TypedDict

    import anywidget
    import traitlets

    from mcp_notebook import Server
    from mcp_notebook.notebook.apps.serve import add_app_tool

    server = Server("served-widget")


    class Counter(anywidget.AnyWidget):
        _esm = (
            "function render({ model, el }) { el.textContent = model.get('count'); }\\n"
            "export default { render };"
        )
        _css = ".count { color: green }"
        count = traitlets.Int(0).tag(sync=True)


    class Counted(TypedDict):
        count: int


    def counter(start: int) -> Counted:
        """Show a counter."""
        return {"count": start}


    add_app_tool(server, counter, Counter)
''')


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_sdk_client_reads_a_served_widget_app(tmp_path: Path, transport: str) -> None:
    """``@mcp.tool(app=Counter)``'s page, as the SDK's client gets it over stdio and Streamable HTTP."""
    from tests.interop._peers import serve_http

    module = tmp_path / "widget.py"
    module.write_text(WIDGET_SERVER)
    with contextlib.ExitStack() as stack:
        if transport == "http":
            target: StdioServerParameters | str = stack.enter_context(serve_http(module, tmp_path / "log"))
        else:
            args = ["-m", "mcp_notebook", "serve", str(module)]
            target = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT))
        async with SDKClient(target, mode="legacy", read_timeout_seconds=20) as client:
            [tool] = (await client.list_tools()).tools
            assert (tool.meta or {})["ui"] == {"resourceUri": "ui://notebook/counter.html"}
            [content] = (await client.read_resource("ui://notebook/counter.html")).contents
            dumped = content.model_dump(by_alias=True, exclude_none=True)
            assert dumped["mimeType"] == "text/html;profile=mcp-app"
            page = dumped["text"]
            found = re.search(r'<script type="application/json" id="mcpnb-widget">(.*?)</script>', page, re.S)
            assert found is not None
            config = json.loads(found.group(1))
            assert config["esm"].startswith("function render({ model, el })") and config["state"] == {
                "count": 0
            }
            assert not re.search(r"https?://", page)  # nothing to fetch
            result = await client.call_tool("counter", {"start": 41})
            assert result.structured_content == {"count": 41}  # the key the page sets its trait from
