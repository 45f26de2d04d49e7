"""Audit item 11: annotation and icon values were not checked (``readOnlyHint: "yes"``, ``priority: 7``,
``audience: ["robot"]``, an icon without ``src``); ``ResourceLink`` had no ``icons``; the renderer ignored
annotations placed inside an embedded ``resource`` (as the spec's own examples do)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Image, ResourceLink, Server
from mcp_notebook.notebook.rendering.results import content_html

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
ICON = {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}


@pytest.mark.parametrize(
    "annotations",
    [{"readOnlyHint": "yes"}, {"destructiveHint": 1}, {"title": 3}],
)
def test_audit_11_tool_annotations_are_checked(annotations: dict[str, Any]) -> None:
    server = Server("audit-11")
    with pytest.raises(ValueError, match="annotation"):
        server.add_tool(lambda: "x", name="t", annotations=annotations)


def test_audit_11_an_icon_needs_src() -> None:
    server = Server("audit-11")
    with pytest.raises(ValueError, match="src"):
        server.add_tool(lambda: "x", name="t", icons=[{"mimeType": "image/png"}])
    with pytest.raises(ValueError, match="src"):
        server.add_resource("note://a", "a", icons=[{"sizes": ["48x48"]}])
    server.add_tool(lambda: "x", name="ok", icons=[ICON], annotations={"readOnlyHint": True})


@pytest.mark.parametrize(
    "annotations",
    [
        {"priority": 7},
        {"priority": "high"},
        {"audience": ["robot"]},
        {"audience": "user"},
        {"lastModified": 5},
    ],
)
def test_audit_11_content_annotations_are_checked(annotations: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="annotation"):
        Image(PNG, annotations=annotations).to_wire()
    with pytest.raises(ValueError, match="annotation"):
        Server("audit-11").add_resource("note://a", "a", annotations=annotations)


def test_audit_11_valid_annotations_pass() -> None:
    block = Image(PNG, annotations={"audience": ["user"], "priority": 0.5}).to_wire()
    assert block["annotations"] == {"audience": ["user"], "priority": 0.5}


def test_audit_11_a_resource_link_has_icons() -> None:
    link = ResourceLink("file:///a.txt", name="a.txt", icons=[ICON]).to_wire()
    assert link["icons"] == [ICON]
    with pytest.raises(ValueError, match="src"):
        ResourceLink("file:///a.txt", name="a.txt", icons=[{}]).to_wire()


def test_audit_11_annotations_inside_an_embedded_resource_are_shown() -> None:
    inner = {"uri": "note://a", "text": "hi", "annotations": {"audience": ["assistant"], "priority": 0.9}}
    html = content_html({"type": "resource", "resource": inner})
    assert "audience: assistant" in html and "priority: 0.9" in html  # was: not shown
