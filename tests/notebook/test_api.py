"""The ``mcp`` Python API: calls and handles, approval, progress, cancellation, elicitation, sampling and
forms (DESIGN decisions 3, 4, 10, 11); resources, prompts, servers, trace and connecting: test_api_servers.py.

Each test gets a fresh IPython shell with the extension loaded (``ipyshell.py``). Clicks are made as a
frontend would make them: ``button.click()`` on the widget. Every wait is bounded (``WAIT``).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import Annotated, Any

import pytest
from traitlets.config import Config

from mcp_notebook import Context, Field
from mcp_notebook.engine.runtime import get_runtime
from mcp_notebook.notebook.api import NotebookError, NotebookMCP
from mcp_notebook.notebook.calls.handle import CallHandle, NotFinished
from mcp_notebook.notebook.calls.handle_live import WIDGET_MIME
from mcp_notebook.notebook.calls.widgets import ElicitationCard, SamplingCard
from mcp_notebook.notebook.forms.form import FormInvalid
from tests.notebook.ipyshell import WAIT, add_tools, api, published, remote_server
from tests.waiting import wait_until

# ------------------------------------------------------------------------------------ calls and handles


def test_tool_decorator_bare_and_with_options_and_the_tools_table(shell: Any) -> None:
    mcp = api(shell)
    add_tools(mcp)
    mcp.connect("remote", remote_server())
    view = mcp.tools()
    names = [row["call as"] for row in view.rows]
    assert names == ["add", "shout", "remote.echo", "remote.peek", "remote.wipe"]
    assert view.rows[0]["parameters"] == "a*, b*"
    assert view.schema("remote.wipe")["annotations"] == {"destructiveHint": True}
    html = view._repr_mimebundle_()["text/html"]
    assert "schemas of remote.peek" in html and "<details>" in html
    assert [r["call as"] for r in mcp.tools("remote").rows] == ["remote.echo", "remote.peek", "remote.wipe"]


def test_a_sync_call_blocks_until_done_and_returns_the_completed_handle(shell: Any) -> None:
    mcp = api(shell)
    add_tools(mcp)
    handle = mcp.call("add", a=2, b=3)
    assert handle.state == "done" and handle.done()
    assert handle.structured == {"result": 5}
    assert handle.text == '{"result": 5}' and handle.structured == {"result": 5}
    assert handle.is_error is False and handle.error is None
    assert handle.result is not None and handle.result["content"] == handle.content
    assert mcp.call("local.shout", {"text": "hi"}).text == "HI"
    bundle = handle._repr_mimebundle_()
    assert "structuredContent" in bundle["text/plain"] and "local.add" not in bundle["text/plain"]
    assert published(shell) == []  # a call that finished before returning shows through its value only


def test_self_call_from_the_main_thread_and_from_inside_a_tool_does_not_deadlock(shell: Any) -> None:
    # DESIGN decision 6: when notebook tools move to the kernel's main thread, a cell that calls one
    # synchronously must not wait for itself. Bounded: a deadlock shows as a timeout, not a hang.
    mcp = api(shell)
    add_tools(mcp)

    @mcp.tool
    def add_twice(a: int) -> int:
        inner = mcp.call("add", a=a, b=a, call_timeout=WAIT)
        assert inner.state == "done", inner.error
        return int(inner.structured["result"]) * 2

    assert mcp.call("add", a=1, b=1, call_timeout=WAIT).structured == {"result": 2}
    outer = mcp.call("add_twice", a=3, call_timeout=WAIT)
    assert outer.state == "done", outer.error
    assert outer.structured == {"result": 12}


def test_tool_errors_are_results_and_protocol_failures_are_failed_handles(shell: Any) -> None:
    mcp = api(shell)

    @mcp.tool
    def boom() -> str:
        raise RuntimeError("kaput")

    @mcp.tool
    async def slow() -> str:
        await asyncio.sleep(30)
        return "late"

    broken = mcp.call("boom")
    assert broken.state == "done" and broken.is_error
    assert "kaput" in broken.text
    assert "ERROR" in broken._repr_mimebundle_()["text/plain"]
    timed_out = mcp.call("slow", call_timeout=0.2)
    assert timed_out.state == "failed" and timed_out.is_error
    assert isinstance(timed_out.error, TimeoutError)
    assert "FAILED" in timed_out._repr_mimebundle_()["text/plain"]
    assert mcp.history()[-1].status == "failed"


def test_unknown_servers_tools_and_bad_names_are_notebook_errors(shell: Any) -> None:
    mcp = api(shell)
    with pytest.raises(NotebookError, match="has no tool 'nope'"):
        mcp.call("nope")
    with pytest.raises(NotebookError, match="no server named 'ghost'"):
        mcp.tools("ghost")
    with pytest.raises(NotebookError, match="invalid connection name"):
        mcp.connect("local", remote_server())
    with pytest.raises(NotebookError, match="invalid connection name"):
        mcp.connect("a.b", remote_server())
    with pytest.raises(NotebookError, match="not an http"):
        mcp.connect("x", "python server.py")
    with pytest.raises(NotebookError, match="must be a dict"):
        mcp.call("add", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="stays connected"):
        mcp.disconnect("local")


# -------------------------------------------------------------------------------------------- approval


def test_a_remote_call_asks_returns_pending_at_once_and_runs_on_approve(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)
    remote = remote_server()
    mcp.connect("remote", remote)
    handle = mcp.call("remote.echo", message="hi")
    assert handle.state == "awaiting-approval"
    assert not handle.done()
    # issue 19 item 4: reading the result of a call awaiting approval says so (it was None, silently)
    with pytest.raises(NotFinished, match="not finished: awaiting approval"):
        _ = handle.result
    with pytest.raises(NotFinished, match="awaiting approval"):
        handle.to_pandas()
    shown = published(shell)
    assert len(shown) == 1
    display_id = shown[0]["transient"]["display_id"]
    assert WIDGET_MIME in shown[0]["data"]  # the approval card, for a frontend that renders widgets
    assert "awaiting approval: remote.echo" in shown[0]["data"]["text/plain"]  # and static, for the rest
    assert not any(e["message"].get("method") == "tools/call" for e in mcp.trace("remote").entries)

    with pytest.raises(RuntimeError, match="waiting for you"):
        handle.wait(WAIT)  # blocking the main thread could never receive the click
    handle.approve()
    handle._settle(WAIT)  # from the test's point of view: wait for the runtime thread
    assert handle.wait(WAIT).text == "hi"
    last = published(shell)[-1]
    assert last["update"] is True and last["transient"]["display_id"] == display_id
    assert WIDGET_MIME not in last["data"]  # the result replaced the card
    entry = mcp.history()[-1]
    assert (entry.decision, entry.decided_by, entry.status) == ("allow", "code: approved", "done")


def test_approval_card_buttons_and_callback_errors_are_shown(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    handle = mcp.call("remote.wipe", table="users")
    card = handle._widgets["approval"]
    html = card.widget.children[0].value
    assert "claims" in html and "destructiveHint" in html and "users" in html
    card.approve.click()
    handle.wait(WAIT)
    assert handle.text == "wiped users"
    card.approve.click()  # a second click: the error is shown in the card, not swallowed
    assert any("not awaiting approval" in o.get("text", "") for o in card.output.outputs)


def test_deny_gives_an_error_result_not_an_exception(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    handle = mcp.call("remote.echo", message="secret")
    handle._widgets["approval"].deny.click()
    assert handle.state == "denied" and handle.is_error
    assert handle.result is not None and handle.result["isError"] is True
    assert "denied" in handle.text
    assert not any(e["message"].get("method") == "tools/call" for e in mcp.trace("remote").entries)
    entry = mcp.history()[-1]
    assert (entry.decision, entry.decided_by, entry.status) == ("deny", "you: denied", "denied")


def test_always_allow_this_tool_lasts_for_the_session(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    first = mcp.call("remote.echo", message="one")
    first._widgets["approval"].always.click()
    first.wait(WAIT)
    second = mcp.call("remote.echo", message="two")
    assert second.state == "done" and second.text == "two"
    assert mcp.history()[-1].decided_by == "always allow (this session)"
    assert mcp.call("remote.peek").state == "awaiting-approval"  # per tool, not per server


def test_rules_from_config_and_from_the_policy_object(shell_factory: Any, interactive: None) -> None:
    config = Config()
    config.MCPNotebook.approval_rules = {"remote.echo": "allow", "remote.wipe": "deny"}
    config.MCPNotebook.default_timeout = 7.0
    shell = shell_factory(config)
    mcp = api(shell)
    assert mcp.config.default_timeout == 7.0
    mcp.connect("remote", remote_server())
    assert mcp.call("remote.echo", message="x").state == "done"
    assert mcp.call("remote.wipe", table="t").state == "denied"
    mcp.policy.set("remote.*", "deny")
    assert mcp.call("remote.peek").state == "denied"
    mcp.config.approval_rules = {"remote.peek": "allow"}  # changing the config at run time applies
    assert mcp.call("remote.peek").state == "done"


@pytest.mark.parametrize(("policy", "state"), [("allow", "done"), ("deny", "denied")])
def test_headless_policy_decides_and_nothing_waits(
    shell: Any, monkeypatch: pytest.MonkeyPatch, policy: str, state: str
) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "1")
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS_POLICY", policy)
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    handle = mcp.call("remote.echo", message="ci")
    assert handle.state == state
    assert mcp.history()[-1].decided_by == "headless policy (default: remote tool)"
    assert published(shell) == []


# --------------------------------------------------------------------------------------------- async


async def test_call_async_and_awaiting_a_pending_handle(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    add_tools(mcp)
    mcp.connect("remote", remote_server())
    done = await mcp.call_async("add", a=40, b=2)
    assert done.structured == {"result": 42}
    pending = mcp.call("remote.echo", message="later")
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, pending.approve)  # the click arrives while the cell awaits (DESIGN decision 4)
    finished = await asyncio.wait_for(pending, WAIT)
    assert finished is pending and pending.text == "later"


async def test_call_async_waits_through_approval(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    task = asyncio.ensure_future(mcp.call_async("remote.echo", message="async"))
    while not mcp.history() or mcp.history()[-1].status != "awaiting-approval":
        await asyncio.sleep(0.01)
    handle = mcp.calls.active[-1]
    handle._widgets["approval"].approve.click()
    result = await asyncio.wait_for(task, WAIT)
    assert result.text == "async"


# ----------------------------------------------------------------------------- progress and cancellation


def test_progress_drives_the_bar_and_the_handle_shows_itself(shell: Any, interactive: None) -> None:
    mcp = api(shell)

    @mcp.tool
    async def crunch(ctx: Context) -> str:
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        return "crunched"

    handle = mcp.call("crunch", call_timeout=WAIT)
    assert handle.text == "crunched"
    assert handle.progress == (3, 3, "step 3")
    shown = published(shell)
    assert shown and shown[0]["transient"]["display_id"].startswith("mcp-call-")
    assert "crunched" in shown[-1]["data"]["text/plain"]
    handle._ipython_display_()  # returned as the cell's value: already showing in this cell
    assert len(published(shell)) == len(shown)


def test_cancel_button_sends_notifications_cancelled(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    started, stopped = threading.Event(), threading.Event()

    @mcp.tool
    async def forever() -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.set()
            raise
        return "never"

    handle = mcp.start("forever")
    assert started.wait(WAIT)
    handle._box()  # what a frontend shows: the progress view with its Cancel button
    handle._widgets["progress"].cancel.click()
    assert handle.state == "cancelled" and handle.is_error
    assert stopped.wait(WAIT), "the server never heard of the cancellation"
    methods = [e["message"].get("method") for e in mcp.trace("local").entries]
    assert "notifications/cancelled" in methods
    assert handle.cancel() is False


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_interrupting_a_sync_call_cancels_it(shell: Any) -> None:
    """The tool itself interrupts the main thread (a kernel interrupt) as it starts. Before, a helper thread
    waited at most 10 s for the start and otherwise sent nothing, leaving the call to sleep into pytest's
    timeout under load; and a process-directed SIGINT may be taken by another thread."""
    mcp = api(shell)
    main = threading.main_thread().ident
    assert main is not None

    @mcp.tool
    async def hang() -> str:
        signal.pthread_kill(main, signal.SIGINT)
        await asyncio.sleep(60)
        return "never"

    with pytest.raises(KeyboardInterrupt):
        mcp.call("hang")
    assert mcp.history()[-1].status == "cancelled"


def test_an_interrupt_while_the_call_is_handed_to_the_runtime_still_cancels_it(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel interrupt can land inside ``Runtime.submit`` after the coroutine is queued on the runtime
    loop but before its future comes back (a SIGINT's handler runs right after the loop's wake-up write;
    under load the call has started by then). Before, nothing held that future: the handle said cancelled
    while the tool ran on to its end."""
    mcp = api(shell)
    started = threading.Event()
    ended: list[str] = []

    @mcp.tool
    async def hang() -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        ended.append("finished")
        return "never"

    loop = get_runtime().loop
    queue = loop.call_soon_threadsafe
    armed = threading.Event()

    def interrupted_once_running(callback: Any, *args: Any, **options: Any) -> Any:
        queued = queue(callback, *args, **options)
        if armed.is_set() and threading.current_thread() is threading.main_thread():
            armed.clear()
            assert started.wait(WAIT), "the tool never started"
            raise KeyboardInterrupt  # the SIGINT's handler, run after the wake-up write
        return queued

    launch = CallHandle._launch

    def armed_launch(handle: CallHandle) -> None:
        armed.set()
        launch(handle)

    monkeypatch.setattr(loop, "call_soon_threadsafe", interrupted_once_running)
    monkeypatch.setattr(CallHandle, "_launch", armed_launch)
    with pytest.raises(KeyboardInterrupt):
        mcp.call("hang")
    assert not armed.is_set()  # the interrupt came from the launch
    assert mcp.history()[-1].status == "cancelled"
    wait_until(lambda: ended, "the tool to end")
    assert ended == ["cancelled"]


# --------------------------------------------------------------------------------- elicitation, sampling


def elicit_tools(mcp: NotebookMCP) -> None:
    @mcp.tool
    def ask_name(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = ctx.elicit("Your name?", schema)
        return f"{answer['action']}:{(answer.get('content') or {}).get('name', '')}"

    @mcp.tool
    def visit(ctx: Context) -> str:
        return str(ctx.elicit_url("Sign in, please", "https://auth.example.com/start?x=1", "e-1")["action"])

    @mcp.tool
    def ask_model(ctx: Context) -> str:
        reply = ctx.sample("What is 2+2?", max_tokens=10)
        return str(reply["content"]["text"])


def test_elicitation_headless_declines(shell: Any) -> None:
    mcp = api(shell)
    elicit_tools(mcp)
    assert mcp.call("ask_name", call_timeout=WAIT).text == "decline:"
    assert mcp.history()[-1].kind == "elicitation"


def test_elicitation_form_returns_the_pending_handle_then_completes(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    elicit_tools(mcp)
    handle = mcp.call("ask_name", call_timeout=WAIT)
    assert handle.state == "running"  # the call came back so that the cell can end and the click arrive
    [card] = mcp.asking
    assert isinstance(card, ElicitationCard) and card.form is not None
    assert WIDGET_MIME in published(shell)[-1]["data"]
    card.form.set_value({"name": "Ada"})
    card.form.submit_button.click()
    assert handle.wait(WAIT).text == "accept:Ada"
    assert 'you accepted, sending name="Ada"' in handle._repr_mimebundle_()["text/plain"]
    assert mcp.asking == []


def test_elicitation_url_mode_shows_the_url_and_links_only_after_consent(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)
    elicit_tools(mcp)
    handle = mcp.call("visit", call_timeout=WAIT)
    [card] = mcp.asking
    shown = card.widget.children[1].children[0].value
    assert "https://auth.example.com/start?x=1" in shown and "auth.example.com" in shown
    assert "<a " not in shown and card.link.value == ""  # never a link (or a fetch) before consent
    card.open_button.click()
    assert handle.wait(WAIT).text == "accept"
    assert 'href="https://auth.example.com/start?x=1"' in handle._repr_mimebundle_()["text/html"]


def test_sampling_by_a_person_and_by_a_callback(shell: Any, interactive: None) -> None:
    mcp = api(shell)
    elicit_tools(mcp)
    handle = mcp.call("ask_model", call_timeout=WAIT)
    [card] = mcp.asking
    assert isinstance(card, SamplingCard)
    card.reply.value = "4"
    card.send.click()
    assert handle.wait(WAIT).text == "4"

    mcp.on_sampling(lambda params: "four, from Python")
    assert mcp.call("ask_model", call_timeout=WAIT).text == "four, from Python"

    @mcp.on_sampling
    async def fails(params: dict[str, Any]) -> str:
        raise ValueError("no model here")

    failed = mcp.call("ask_model", call_timeout=WAIT)
    assert failed.is_error  # the tool got a JSON-RPC error back
    traceback_shown = published(shell)[-2:]
    assert any("no model here" in o["data"]["text/plain"] for o in traceback_shown)


def test_sampling_headless_without_callback_is_rejected(shell: Any) -> None:
    mcp = api(shell)
    elicit_tools(mcp)
    handle = mcp.call("ask_model", call_timeout=WAIT)
    # legacy: the tool got the refusal as an error and failed with it; 2026-07-28: the client does not
    # retry the call (mrtr), so the call fails with the refusal itself
    assert handle.is_error and "rejected" in (handle.text or str(handle.error)).lower()


# ------------------------------------------------------------------------------------------------ form


def test_form_submit_calls_and_renders_the_result_under_it(shell: Any) -> None:
    mcp = api(shell)
    add_tools(mcp)
    form = mcp.form("add")
    handle = form.submit({"a": 20, "b": 22})
    assert isinstance(handle, CallHandle)
    handle.wait(WAIT)
    assert handle.structured == {"result": 42}
    outputs = published(shell)
    [*_, last] = [o for o in outputs if o["transient"]["display_id"] == form.result_display_id]
    assert "42" in last["data"]["text/plain"]  # the result is its own output, under the form
    [*_, snapshot] = [o for o in outputs if o["transient"]["display_id"] == form.display_id]
    assert "last call: add(a=20, b=22) — done" in snapshot["data"]["text/plain"]

    @mcp.tool
    def airport(code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]) -> str:
        return code

    checked = mcp.form("airport")
    with pytest.raises(FormInvalid, match=r"code: .paris. does not match"):  # shown next to the field too
        checked.submit({"code": "paris"})
    assert checked.handles == []


def test_form_for_a_remote_tool_shows_the_approval_card_in_its_result_area(
    shell: Any, interactive: None
) -> None:
    mcp = api(shell)
    mcp.connect("remote", remote_server())
    form = mcp.form("remote.echo")
    handle = form.submit({"message": "via form"})
    assert handle is not None and handle.state == "awaiting-approval"
    results = [o for o in published(shell) if o["transient"]["display_id"] == form.result_display_id]
    assert WIDGET_MIME in results[-1]["data"]
    handle.approve()
    handle.wait(WAIT)
    results = [o for o in published(shell) if o["transient"]["display_id"] == form.result_display_id]
    assert "via form" in results[-1]["data"]["text/plain"] and WIDGET_MIME not in results[-1]["data"]
    # only updates of the form's own outputs: nothing lands in whichever cell ran last
    assert all(o["update"] for o in published(shell))
