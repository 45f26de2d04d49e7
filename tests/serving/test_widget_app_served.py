"""``%mcp serve`` in a real kernel serves ``@mcp.tool(app=MyWidget)``: a client over HTTP finds the tool's
``_meta.ui.resourceUri``, reads the widget's page (``text/html;profile=mcp-app``) with the instance's
current traits as its state, and calls the tool (run on the kernel's main thread)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import connect
from mcp_notebook.engine.runtime import Runtime
from tests.serving._kernel import kernel

SETUP = '''
%load_ext mcp_notebook
import anywidget, traitlets

class Counter(anywidget.AnyWidget):
    _esm = "function render({ model, el }) { el.textContent = model.get('count') } export default { render };"
    count = traitlets.Int(0).tag(sync=True)

shown = Counter(count=5)

@mcp.tool(app=shown)
def counter(start: int) -> dict[str, int]:
    """Show a counter."""
    return {"count": start}
'''


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("widget-app serve test runtime")
    yield rt
    rt.stop()


def test_serve_magic_serves_a_widget_app(runtime: Runtime) -> None:
    with kernel() as k:
        setup = k.run(SETUP)
        assert setup.error is None, setup.error
        served = k.run("h = %mcp serve")
        assert served.error is None, served.error
        info: dict[str, Any] = k.value("{'url': h.url, 'headers': h.headers}")
        assert k.run("shown.count = 6").error is None  # an instance: its traits when the page is read
        with connect(info["url"], headers=info["headers"], runtime=runtime) as client:
            [tool] = client.list_tools()
            assert tool["_meta"] == {"ui": {"resourceUri": "ui://notebook/counter.html"}}
            [item] = client.read_resource("ui://notebook/counter.html")["contents"]
            assert item["mimeType"] == "text/html;profile=mcp-app"
            found = re.search(r'id="mcpnb-widget">(.*?)</script>', item["text"], re.DOTALL)
            assert found is not None
            assert json.loads(found.group(1))["state"] == {"count": 6}
            assert client.call_tool("counter", {"start": 41})["structuredContent"] == {"count": 41}
        k.run("%mcp serve --stop")
