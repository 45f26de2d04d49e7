"""The trace as a sequence diagram, in a real JupyterLab and in the notebook exported to static HTML:
the SVG shows, and clicking an arrow opens that message's JSON (issue 14, item 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from playwright.sync_api import expect

from .conftest import Notebook, write_notebook
from .test_lab import ADD_TOOL

if TYPE_CHECKING:
    from playwright.sync_api import Page

OpenNotebook = Callable[..., Notebook]
CELLS = [
    "%load_ext mcp_notebook",
    ADD_TOOL,
    "%mcp call add a=2 b=3",
    "%mcp trace local --diagram",
    "%mcp trace",
]


def _click_opens_json(where: object, page: Page) -> None:
    from playwright.sync_api import Locator

    assert isinstance(where, Locator)
    svg = where.locator("svg.mcpnb-seq").first
    expect(svg).to_be_visible()
    call = svg.locator('g.mcpnb-seq-msg[data-kind="request"]').filter(has_text="tools/call").first
    n = call.get_attribute("data-seq-n")
    assert n is not None
    details = where.locator("details[data-seq-json]").nth(int(n) - 1)
    expect(details).not_to_have_attribute("open", "")
    call.click()
    expect(details).to_have_attribute("open", "")
    expect(details).to_contain_text('"name": "add"')


def test_diagram_click_shows_json_in_lab(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook(CELLS)
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    _click_opens_json(notebook.output(3), notebook.page)
    # the toggle above the plain trace table: open it, click the result arrow, the table row opens
    table_output = notebook.output(4)
    table_output.locator("details.mcpnb-seq-toggle > summary").first.click()
    result = table_output.locator('g.mcpnb-seq-msg[data-kind="result"]').filter(has_text="tools/call").first
    n = int(result.get_attribute("data-seq-n") or 0)
    row_json = table_output.locator("table.mcpnb-table details").nth(n - 1)
    result.click()
    expect(row_json).to_have_attribute("open", "")
    expect(row_json).to_contain_text('"structuredContent"')


def test_diagram_survives_html_export(tmp_path: Path, page: Page) -> None:
    path = write_notebook(tmp_path / "trace.ipynb", CELLS[:4])
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    body, _resources = HTMLExporter().from_notebook_node(notebook)
    exported = tmp_path / "trace.html"
    exported.write_text(body, encoding="utf-8")
    page.goto(exported.as_uri())
    _click_opens_json(page.locator("body"), page)
