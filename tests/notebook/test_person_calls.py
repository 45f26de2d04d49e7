"""Issue 11, "the notebook as a person meets it": calls, approval, cancel, elicitation, wording.

Each test names the issue item it shows fixed; each failed before the fix. Fresh shell per test
(``ipyshell.py``), every wait bounded.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest
from IPython.core.error import UsageError

from mcp_notebook import Context, Field
from mcp_notebook.notebook.api import InvalidArguments, NotebookMCP
from mcp_notebook.notebook.calls.handle import TERMINAL, TRANSITIONS
from mcp_notebook.notebook.calls.widgets import ApprovalCard, ElicitationCard
from tests.notebook.ipyshell import WAIT, api, published, remote_server
from tests.waiting import wait_until


def _sent_calls(mcp: NotebookMCP, server: str) -> list[Any]:
    return [e for e in mcp.trace(server, last=None).entries if e["message"].get("method") == "tools/call"]


# ---------------------------------------------------------------- the handle's states (issue 8 item 5)


def test_a_destructive_tools_card_is_a_warning_without_always_allow(shell: Any, interactive: None) -> None:
    """Issue 19: a destructive tool's card looked like any other and offered "Always allow" (failed
    before); a read-only tool's card keeps all three buttons."""
    mcp = api(shell)

    @mcp.tool(annotations={"destructiveHint": True})
    def wipe(folder: str) -> str:
        """Delete a folder."""
        return f"wiped {folder}"

    @mcp.tool(annotations={"readOnlyHint": True})
    def look(folder: str) -> str:
        """List a folder."""
        return folder

    mcp.policy.set("local.look", "ask")  # the notebook's destructive tools ask by default
    wipe_card = ApprovalCard(mcp.prepare("wipe", {"folder": "/tmp/x"}))
    look_card = ApprovalCard(mcp.prepare("look", {"folder": "/tmp/x"}))
    buttons = [b.description for b in wipe_card.widget.children[1].children]
    assert buttons == ["Approve", "Deny"]
    assert "may destroy or overwrite data" in wipe_card.widget.children[0].value
    assert "solid" in str(wipe_card.widget.layout.border)
    assert [b.description for b in look_card.widget.children[1].children] == [
        "Approve",
        "Deny",
        "Always allow this tool",
    ]
    assert "may destroy" not in look_card.widget.children[0].value and not look_card.widget.layout.border


def test_transitions_are_a_table_and_terminal_states_have_no_way_out() -> None:
    assert {new for new in TRANSITIONS.values()} <= {"running", *TERMINAL}
    assert not [move for move in TRANSITIONS if move[0] in TERMINAL]


def test_approve_racing_cancel_leaves_the_call_cancelled_and_unsent(shell: Any, interactive: None) -> None:
    """Before: approve() checked the state, then a cancel landed, then approve set "running" again and
    sent the call. Here the cancel lands exactly in that gap (while approve remembers "always allow")."""
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    handle = mcp.call("remote.echo", message="hi")
    assert handle.state == "awaiting-approval"
    handle._remember = handle.cancel  # runs between approve's state change and its launch
    handle.approve(always=True)
    assert handle.state == "cancelled"
    assert handle._future is None and handle.started is None
    assert _sent_calls(mcp, "remote") == []
    assert mcp.history()[-1].status == "cancelled"
    with pytest.raises(RuntimeError, match="cancelled, not awaiting approval"):
        handle.approve()


# --------------------------------------------------------------- item 4: validation before the card


def test_arguments_are_checked_before_the_approval_card(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    with pytest.raises(InvalidArguments, match="'message' is a required property"):
        mcp.call("remote.echo", mesage="typo")
    with pytest.raises(UsageError, match="'message' is a required property"):
        shell.run_line_magic("mcp", "call remote.echo mesage=typo")
    assert published(shell) == []  # no card was shown for a call that could not run
    assert len(mcp.history()) == 0
    assert _sent_calls(mcp, "remote") == []


def test_the_card_shows_the_effective_arguments_with_defaults(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    remote = remote_server()

    @remote.tool
    def forecast(city: str, days: Annotated[int, Field(ge=1, le=14)] = 3) -> str:
        return f"{city} {days}"

    mcp.connect("remote", remote)
    handle = mcp.call("remote.forecast", city="Paris")
    html = handle._widgets["approval"].widget.children[0].value
    assert "days" in html and ">3<" in html.replace("\n", "") and "default" in html
    assert 'defaults the tool applies: {\n  "days": 3\n}' in handle._repr_mimebundle_()["text/plain"]


def test_a_card_without_defaults_has_no_empty_note_column(shell: Any, interactive: None) -> None:
    """Issue 19 (seen in the gallery): a call that set every argument showed its arguments table with an
    empty third column and "defaults marked" with none to mark. Failed before."""
    mcp = api(shell)
    remote = remote_server()

    @remote.tool
    def sunrise(width: int = 64, height: int = 64) -> str:
        return f"{width}x{height}"

    mcp.connect("remote", remote)
    handle = mcp.call("remote.sunrise", width=240, height=144)
    html = handle._widgets["approval"].widget.children[0].value
    assert "<td><code>width</code></td><td><code>240</code></td></tr>" in html
    assert 'mcpnb-note"></td>' not in html.replace("'", '"') and "defaults marked" not in html


# ------------------------------------------------------------------ item 10: a cancel is not an error


def test_a_cancel_reads_as_a_choice_and_keeps_the_progress(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    reached = threading.Event()

    @mcp.tool
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(3, 100, "step 3 of 100")
        reached.set()
        await asyncio.sleep(60)
        return "never"

    handle = mcp.start("slow")
    assert reached.wait(WAIT)
    wait_until(lambda: handle.progress is not None, "the progress")  # set on the runtime thread
    handle.cancel()
    bundle = handle._repr_mimebundle_()
    assert 'class="mcpnb mcpnb-error"' not in bundle["text/html"]
    assert "CallCancelled" not in bundle["text/plain"]
    assert "Cancelled slow while it ran. Progress reached: 3 of 100 (step 3 of 100)." in bundle["text/plain"]


# --------------------------------------------------------------------- item 9: elicitation wording


def test_the_elicitation_card_has_one_cancel_and_its_note_shows_the_values(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)

    @mcp.tool
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"{answer.get('action')}:{(answer.get('content') or {}).get('name')}"

    handle = mcp.call("ask_name", call_timeout=WAIT)
    [card] = mcp.asking
    assert isinstance(card, ElicitationCard) and card.form is not None
    handle._box()
    labels = [
        w.description
        for w in _walk(handle._widgets["box"])
        if hasattr(w, "description") and type(w).__name__ == "Button"
    ]
    assert labels.count("Cancel") == 0 and "Cancel call" in labels and "Dismiss" in labels
    card.form.set_value({"name": "José"})
    card.form.submit_button.click()
    assert handle.wait(WAIT).text == "accept:José"
    assert 'you accepted, sending name="José"' in handle._repr_mimebundle_()["text/plain"]


def _walk(widget: Any) -> Any:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


# ------------------------------------------------------------- item 11: %mcp read SERVER.URI


def test_read_takes_server_dot_uri_like_server_dot_tool(shell: Any) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    shown = shell.run_line_magic("mcp", "read remote.memo://greeting")
    assert "hello from the remote" in shown._repr_mimebundle_()["text/plain"]
    assert "hello from the remote" in mcp.read("memo://greeting")._repr_mimebundle_()["text/plain"]


# ------------------------------------------------------------------------------- item 12: wording


def test_copy_as_code_keeps_text_readable_and_a_denial_by_code_is_not_you(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    handle = mcp.call("remote.echo", message="José")
    handle.deny()
    entry = mcp.history()[-1]
    assert entry.magic == "%mcp call remote.echo message=José"
    assert entry.decided_by == "code: denied" and "(you)" not in handle.text
    clicked = mcp.call("remote.echo", message="Jose Smith")
    clicked._widgets["approval"].deny.click()
    assert mcp.history()[-1].decided_by == "you: denied"
    assert mcp.history()[-1].magic == "%mcp call remote.echo message='Jose Smith'"


def test_the_servers_title_and_instructions_are_shown_and_no_empty_title_column(
    shell: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcp_notebook import Server

    mcp = api(shell)
    weather = Server("weather", title="Weather for everyone", instructions="Call forecast before alerts.")

    @weather.tool
    def forecast(city: str) -> str:
        return city

    mcp.connect("w", weather)
    shell.run_line_magic("mcp", "connect w2 -- " + _stdio_weather())
    printed = capsys.readouterr().out
    assert "Weather over stdio" in printed and "The server's instructions: Be brief." in printed
    row = next(r for r in mcp.servers().rows if r["name"] == "w")
    assert (row["title"], row["instructions"]) == ("Weather for everyone", "Call forecast before alerts.")
    html = mcp.tools("w")._repr_mimebundle_()["text/html"]
    assert "<th>title</th>" not in html  # no tool has a title: no empty column
    mcp.disconnect("w2")


def _stdio_weather() -> str:
    import shlex
    import sys

    code = (
        "from mcp_notebook import Server\n"
        "s = Server('w2', title='Weather over stdio', instructions='Be brief.')\n"
        "s.tool(lambda: 'x', name='now')\n"
        "s.run_stdio()\n"
    )
    return shlex.join([sys.executable, "-c", code])
