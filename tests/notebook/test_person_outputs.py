"""Issue 11, "the notebook as a person meets it": what the outputs hold (items 1 and 2).

A saved notebook, nbconvert HTML and GitHub show only what the outputs hold: a form must carry a static
snapshot beside its widget view, a call made with it must be its own output, and the ``%mcp serve``
block must be shown once and never hold the token.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_notebook import ResourceLink, Server
from mcp_notebook.notebook.calls.handle_live import WIDGET_MIME
from mcp_notebook.notebook.calls.widgets import TokenView
from mcp_notebook.tools.content import ToolResult
from tests.notebook.ipyshell import WAIT, api, published


def test_item1_a_form_shows_a_snapshot_beside_its_widget_and_its_call_as_its_own_output(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    shell.run_cell("%mcp form add")
    form_out, result_out = published(shell)
    assert WIDGET_MIME in form_out["data"]  # live where widgets render ...
    html = form_out["data"]["text/html"]  # ... and static HTML for everything else
    assert ">add</h4>" in html and "Add two numbers." in html and "no call made yet" in html.lower()
    assert "VBox(" not in form_out["data"]["text/plain"]
    assert result_out["transient"]["display_id"].endswith("-result")
    form = mcp.form("add")
    form._surface = mcp.calls.surface
    form.display_id, form.result_display_id = (
        form_out["transient"]["display_id"],
        result_out["transient"]["display_id"],
    )
    handle = form.submit({"a": 20, "b": 22})
    handle.wait(WAIT)
    outputs = published(shell)
    results = [o for o in outputs if o["transient"]["display_id"] == form.result_display_id]
    assert WIDGET_MIME not in results[-1]["data"] and "42" in results[-1]["data"]["text/html"]
    snapshots = [o for o in outputs[2:] if o["transient"]["display_id"] == form.display_id]
    assert snapshots and "<code>20</code>" in snapshots[-1]["data"]["text/html"]  # the values sent


def _serve_cell(shell: Any) -> list[dict[str, Any]]:
    before = len(published(shell))
    result = shell.run_cell("h = %mcp serve\nh")
    assert result.success, result.error_in_exec
    return published(shell)[before:]


def test_item2_serve_shows_its_block_once_and_the_token_nowhere(shell: Any, interactive: None) -> None:
    mcp = api(shell)

    @mcp.tool
    def ping() -> str:
        return "pong"

    try:
        shown = _serve_cell(shell)
        token = mcp.serving.token
        assert len(token) >= 32
        saved = json.dumps(shown)  # everything the cell's outputs hold, as a saved notebook would
        assert token not in saved and token[:12] not in saved
        # not even its first characters (they were shown and saved before)
        assert f"{token[:4]}…" not in json.dumps(shown, ensure_ascii=False)
        blocks = [o for o in shown if "Client configuration" in o["data"].get("text/plain", "")]
        assert len(blocks) == 1  # printed once, though the cell also returns the handle
        text = blocks[0]["data"]["text/plain"]
        assert "${MCP_NOTEBOOK_TOKEN}" in text and "mcp.serving.token" in text and "hidden" in text
        assert "os.environ['MCP_NOTEBOOK_TOKEN']" in text
        assert WIDGET_MIME in blocks[0]["data"]  # Reveal / Copy, for a person at a live notebook
        view = TokenView(mcp.serving)
        assert token not in view.secret.value
        view.reveal.click()
        assert token in view.secret.value and "Copy" in view.secret.value
        view.reveal.click()
        assert view.secret.value == ""
    finally:
        mcp.stop_serving()


def test_item3_history_is_narrow_copyable_and_summarises_requests_and_responses(
    shell: Any, interactive: None
) -> None:
    from mcp_notebook import Context

    mcp = api(shell)

    @mcp.tool
    def greet(name: str) -> str:
        return f"hello {name}"

    @mcp.tool
    async def ask_name(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}}
        answer = await ctx.elicit("Your name?", schema)
        return str((answer.get("content") or {}).get("name"))

    mcp.call("greet", name="José")
    handle = mcp.call("ask_name", call_timeout=WAIT)
    [card] = mcp.asking
    card.form.set_value({"name": "Ada"})
    card.form.submit_button.click()
    handle.wait(WAIT)
    bundle = mcp.history()._repr_mimebundle_()
    html, text = bundle["text/html"], bundle["text/plain"]
    assert html.count("<th>") == 5  # was 12 columns, 1,482 px wide
    assert "%mcp call greet name=José" in text and "hello José" in text  # the response, summarised
    assert 'class="mcpnb-copy"' in html and "navigator.clipboard.writeText" in html
    [row] = [line for line in text.splitlines() if ": elicitation" in line]  # not its JSON Schema
    assert "asked: Your name? (fields: name)" in row and "maxLength" not in row
    assert "accept" in row and "Ada" in row
    assert "<details>" in html and "response (JSON)" in html


def test_item13_results_have_a_raw_json_toggle_and_resource_links_open_inline(shell: Any) -> None:
    mcp = api(shell)
    remote = Server("docs")

    @remote.resource("docs://guide", mime_type="text/plain")
    def guide() -> str:
        return "the whole guide, inline"

    @remote.tool
    def find_docs() -> ToolResult:
        return ToolResult(["See:", ResourceLink("docs://guide", "guide")])

    mcp.connect("docs", remote)
    mcp.policy.set("docs.*", "allow")
    handle = mcp.call("docs.find_docs")
    html = handle._repr_mimebundle_()["text/html"]
    assert "open the linked resource <code>docs://guide</code>" in html
    assert "the whole guide, inline" in html  # read from the same server, collapsed under the link
    assert '<details class="mcpnb-raw">' in html and "&quot;resource_link&quot;" in html
    read = mcp.read("docs://guide")._repr_mimebundle_()["text/html"]
    assert '<details class="mcpnb-raw">' in read  # every result, resources too


def test_item13_a_live_log_pane_and_a_live_trace_follow_the_server(shell: Any) -> None:
    import threading

    from mcp_notebook import Context

    mcp = api(shell)
    remote = Server("chatty")

    @remote.tool
    async def work(ctx: Context) -> str:
        await ctx.info("warming up")
        return "done"

    mcp.connect("chatty", remote)
    mcp.policy.set("chatty.*", "allow")
    pane = mcp.log("chatty")
    live_trace = shell.run_line_magic("mcp", "trace chatty --live")
    pane._ipython_display_()
    live_trace._ipython_display_()
    updated = threading.Event()
    wanted = {pane.display_id: "[info] warming up", live_trace.display_id: "tools/call"}
    seen: set[str] = set()
    real = mcp.calls.surface.publish

    def spy(bundle: dict[str, Any], display_id: str | None = None, *, update: bool = False) -> None:
        real(bundle, display_id, update=update)
        if update and display_id in wanted and wanted[display_id] in bundle["text/plain"]:
            seen.add(display_id)
            if seen == set(wanted):
                updated.set()

    mcp.calls.surface.publish = spy  # type: ignore[method-assign]
    mcp.call("chatty.work")
    assert updated.wait(WAIT), "the live views were not republished"
    log = [o for o in published(shell) if o["transient"]["display_id"] == pane.display_id][-1]
    assert "[info] warming up" in log["data"]["text/plain"]
    trace = [o for o in published(shell) if o["transient"]["display_id"] == live_trace.display_id][-1]
    assert "tools/call" in trace["data"]["text/plain"]


def test_item1_when_the_kernel_shuts_down_live_displays_become_their_snapshots(
    shell: Any, interactive: None
) -> None:
    """ipykernel sets ``shell.exit_now`` first thing on a shutdown or restart request: the form and a call
    still waiting for approval are republished without their widget view, so JupyterLab shows their
    static HTML instead of a widget it can no longer find."""
    from tests.notebook.ipyshell import remote_server

    mcp = api(shell)

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    mcp.connect("remote", remote_server())
    shell.run_cell("%mcp form add")
    shell.run_cell("pending = %mcp call remote.echo message=hi")
    live = {o["transient"]["display_id"] for o in published(shell) if WIDGET_MIME in o["data"]}
    assert len(live) == 2
    before = len(published(shell))
    shell.exit_now = True
    last = {o["transient"]["display_id"]: o for o in published(shell)[before:]}
    assert set(last) >= live
    for display_id in live:
        assert last[display_id]["update"] and WIDGET_MIME not in last[display_id]["data"]
    assert (
        "Add two numbers." in last[min(live, key=lambda d: not d.startswith("mcp-form"))]["data"]["text/html"]
    )
    shell.exit_now = False
