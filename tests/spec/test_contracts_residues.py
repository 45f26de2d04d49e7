"""Issue 20 item 4: the residues of the spec read, each with a test that failed before."""

from __future__ import annotations

import pytest

from mcp_notebook import Server

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    "src", ["javascript:alert(1)", "file:///etc/passwd", "JAVASCRIPT:x", "ftp://a/b.png"]
)
def test_an_icon_that_is_not_http_https_or_data_is_refused(src: str) -> None:
    server = Server("icons")
    with pytest.raises(ValueError, match="https:, http: or data:"):  # was: accepted and listed

        @server.tool(icons=[{"src": src}])
        def f() -> str:
            return "x"


def test_http_https_and_data_icons_are_kept() -> None:
    server = Server("icons")
    icons = [
        {"src": "https://a.example/i.png"},
        {"src": "http://127.0.0.1/i.png"},
        {"src": "data:image/png;base64,AA=="},
    ]

    @server.tool(icons=icons)
    def f() -> str:
        return "x"

    tool = server.tools.get("f")
    assert tool is not None and tool.definition["icons"] == icons
