"""MCP Apps, kernel side: the sandbox policy, tool metadata, apps served by the notebook, the extension the
client declares, listings without app-only tools, and the bridge's routing (tools/call through approval and
the audit log, visibility, resources/read, ui/message, ui/update-model-context, unknown methods, result and
cancellation delivery). The front end runs in Chromium in ``tests/browser/test_apps.py``; here its comm
messages are the ones ``host.js`` sends, and what the kernel sends back is read from ``send``.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from mcp_notebook import Server
from mcp_notebook.notebook.apps import APP_MIME, EXTENSION, app_only, ui_meta, visibility
from mcp_notebook.notebook.apps.host import AppView, open_app
from mcp_notebook.notebook.apps.sandbox import allow_attribute, csp_policy, prepare_document
from mcp_notebook.protocol.modern import META_CLIENT_CAPABILITIES
from tests.notebook import ipyshell
from tests.notebook.ipyshell import WAIT

shell = ipyshell.shell
shell_factory = ipyshell.shell_factory

VIEW = "<!doctype html><html><head><title>v</title></head><body>hi</body></html>"


# ---- sandbox --------------------------------------------------------------------------------------------
def test_policy_denies_by_default_and_adds_declared_origins_only() -> None:
    policy = csp_policy(None)
    assert "default-src 'none'" in policy and "connect-src 'none'" in policy and "frame-src 'none'" in policy
    assert "script-src 'unsafe-inline' blob:;" in policy  # inline and the page's own blobs: no remote script
    policy = csp_policy(
        {
            "connectDomains": ["https://api.example.com", "wss://rt.example.com"],
            "resourceDomains": ["https://*.cdn.example.org", "https://x.org; script-src *", "javascript:x"],
            "frameDomains": ["https://www.youtube.com"],
        }
    )
    assert "connect-src https://api.example.com wss://rt.example.com" in policy
    assert "script-src 'unsafe-inline' blob: https://*.cdn.example.org;" in policy
    assert "script-src *" not in policy and "javascript" not in policy  # an injected directive is dropped
    assert "frame-src https://www.youtube.com" in policy


def test_policy_goes_first_in_the_document() -> None:
    doc = prepare_document(VIEW, None)
    assert doc.startswith('<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src')
    tricky = "<!-- <head> --><script>alert(1)</script><html><head></head></html>"
    assert prepare_document(tricky, None).startswith(
        "<meta http-equiv"
    )  # before any script, not in the comment
    assert allow_attribute({"camera": {}, "clipboardWrite": {}}) == "camera; clipboard-write"
    assert allow_attribute(None) == ""


# ---- metadata --------------------------------------------------------------------------------------------
def test_ui_meta_and_visibility() -> None:
    tool = {"name": "t", "_meta": {"ui": {"resourceUri": "ui://a/b.html", "visibility": ["app"]}}}
    assert ui_meta(tool)["resourceUri"] == "ui://a/b.html" and app_only(tool)
    assert ui_meta({"_meta": {"ui/resourceUri": "ui://old"}}) == {"resourceUri": "ui://old"}  # the older key
    assert ui_meta({"_meta": {"ui": {"resourceUri": "https://evil"}}}) == {}  # only ui:// resources
    assert visibility({"name": "plain"}) == ["model", "app"] and not app_only({"name": "plain"})


# ---- serving apps from the notebook ----------------------------------------------------------------------
def test_tool_with_app_serves_its_resource(shell: Any, tmp_path: Path) -> None:
    mcp = shell.user_ns["mcp"]

    @mcp.tool(app=VIEW, csp={"connectDomains": ["https://api.example.com"]}, prefers_border=True)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    page = tmp_path / "view.html"
    page.write_text("<p>one</p>")

    @mcp.tool(app=str(page), visibility=["app"], uri="ui://notebook/private.html")
    def secret_step() -> str:
        """Only the app calls this."""
        return "ok"

    definition = mcp.tool_def("add")
    assert definition["_meta"] == {"ui": {"resourceUri": "ui://notebook/add.html"}}
    contents = mcp.calls.client("local").read_resource("ui://notebook/add.html")["contents"][0]
    assert contents["mimeType"] == APP_MIME and contents["text"] == VIEW
    assert contents["_meta"] == {
        "ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}
    }
    # a file is read at every resources/read: edit it, the next read sees it
    page.write_text("<p>two</p>")
    assert (
        mcp.calls.client("local").read_resource("ui://notebook/private.html")["contents"][0]["text"]
        == "<p>two</p>"
    )
    # the app-only tool is callable but not listed
    assert [row["call as"] for row in mcp.tools().rows] == ["add"]
    assert mcp.call("secret_step").result["content"][0]["text"] == "ok"
    with pytest.raises(ValueError, match="ui://"):
        mcp.tool(app=VIEW, uri="https://x/y.html")(lambda: 1)
    with pytest.raises(ValueError, match="HTML document"):
        mcp.tool(app="not html")(lambda: 1)
    with pytest.raises(FileNotFoundError):
        mcp.tool(app=str(tmp_path / "missing.html"))(lambda: 1)


def test_client_declares_the_extension(shell_factory: Any) -> None:
    from traitlets.config import Config

    for enabled in (True, False):
        config = Config()
        config.MCPNotebook.apps = enabled
        mcp = shell_factory(config).user_ns["mcp"]
        mcp.servers()  # connects "local"
        # legacy: in initialize; 2026-07-28 (the default client's era here): in every request's _meta
        first = next(
            e["message"]
            for e in mcp.calls.client("local").trace.entries()
            if e["message"].get("method") in ("initialize", "server/discover")
        )
        params = first["params"]
        capabilities = params.get("capabilities") or params["_meta"][META_CLIENT_CAPABILITIES]
        declared = capabilities.get("extensions", {})
        assert (declared == {EXTENSION: {"mimeTypes": [APP_MIME]}}) is enabled


# ---- the bridge, kernel side -----------------------------------------------------------------------------
class FrontEnd:
    """Stands in for host.js at the comm boundary: sends what it sends, keeps what the kernel sends."""

    def __init__(self, view: AppView) -> None:
        self.view, self.got, self.event = view, [], threading.Event()
        view.send = self._receive  # type: ignore[method-assign]

    def _receive(self, content: dict[str, Any], buffers: Any = None) -> None:
        self.got.append(content)
        self.event.set()

    def ask(self, message: dict[str, Any], handled: bool = False) -> None:
        self.view._on_front_end(self.view, {"kind": "in", "message": message, "handled": handled}, [])

    def answer(self, request_id: Any) -> dict[str, Any]:
        """Wait (bounded) for the kernel's answer to ``request_id``."""

        def found() -> dict[str, Any] | None:
            for c in self.got:
                if c.get("kind") == "to_app" and c["message"].get("id") == request_id:
                    return c["message"]  # type: ignore[no-any-return]
            return None

        for _ in range(int(WAIT / 0.05)):
            if (message := found()) is not None:
                return message
            self.event.clear()
            self.event.wait(0.05)
        raise AssertionError(f"no answer to {request_id} in {WAIT} s: {self.got}")


def _apps_server() -> Server:
    server = Server("apps")
    server.add_resource(
        "ui://apps/view.html", {"uri": "ui://apps/view.html", "mimeType": APP_MIME, "text": VIEW}
    )

    @server.tool(meta={"ui": {"resourceUri": "ui://apps/view.html"}})
    def show(n: int = 1) -> str:
        """Show n."""
        return f"n={n}"

    @server.tool(meta={"ui": {"resourceUri": "ui://apps/view.html", "visibility": ["app"]}})
    def bump() -> str:
        """App only."""
        return "bumped"

    @server.tool(meta={"ui": {"resourceUri": "ui://apps/view.html", "visibility": ["model"]}})
    def model_only() -> str:
        """Not for apps."""
        return "no"

    @server.tool
    def plain() -> str:
        """No app at all."""
        return "plain"

    return server


def _view(shell: Any) -> tuple[Any, AppView, FrontEnd]:
    mcp = shell.user_ns["mcp"]
    mcp.connect("apps", _apps_server())
    view = open_app(mcp, "apps", mcp.tool_def("apps.show"))
    assert view is not None
    return mcp, view, FrontEnd(view)


def test_app_tool_calls_go_through_approval_and_the_audit_log(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")  # a person could click: remote calls ask
    mcp, view, front = _view(shell)
    front.ask(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "bump", "arguments": {}}}
    )
    handle = view.calls[-1]
    assert handle.state == "awaiting-approval"  # asked, not run
    shown = view.activity.outputs[-1]["data"]["application/vnd.jupyter.widget-view+json"]
    box, card = handle._widgets["box"], handle._widgets["approval"]  # the call's live view, its approval card
    assert shown["model_id"] == box.model_id and card.widget in box.children
    assert card.approve.description == "Approve"
    handle.approve()
    answer = front.answer(7)
    assert answer["result"]["content"][0]["text"] == "bumped"
    entry = mcp.audit.entries()[-1]
    assert (entry.tool, entry.decided_by, entry.status) == (
        "bump",
        "code: approved (from the app of apps.show)",  # the history names whose app asked
        "done",
    )
    # the saved/exported fallback says whose app it is and lists the calls it made (failed before: neither)
    fallback = view.fallback_bundle()["text/plain"]
    assert "sandboxed app · apps · show" in fallback and "the app called bump {}: done\nbumped" in fallback
    # denied: the app gets the isError result, nothing ran
    front.ask({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "bump"}})
    view.calls[-1].deny()
    assert front.answer(8)["result"]["isError"] is True


def test_bridge_refuses_what_the_app_may_not_do(shell: Any) -> None:
    front = _view(shell)[2]
    front.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "model_only"}})
    assert front.answer(1)["error"]["code"] == -32602  # visibility ["model"]: not from an app
    front.ask({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {}})
    assert front.answer(2)["error"]["code"] == -32601
    front.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}})
    assert "no tool 'nope'" in front.answer(3)["error"]["message"]


def test_bridge_reads_keeps_messages_and_records_the_conversation(shell: Any) -> None:
    mcp, view, front = _view(shell)
    front.ask(
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "ui://apps/view.html"}}
    )
    assert front.answer(1)["result"]["contents"][0]["text"] == VIEW
    said = {"role": "user", "content": [{"type": "text", "text": "double it"}]}
    front.ask({"jsonrpc": "2.0", "id": 2, "method": "ui/message", "params": said})
    front.ask(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "ui/update-model-context",
            "params": {"structuredContent": {"n": 2}},
        }
    )
    assert front.answer(2)["result"] == {} and front.answer(3)["result"] == {}
    assert view.app_messages == [said] and view.model_context == {"structuredContent": {"n": 2}}
    kinds = [e.kind for e in mcp.audit.entries()]
    assert kinds[-3:] == ["app-read", "app-message", "app-context"]
    assert "double it" in mcp.history()._repr_mimebundle_()["text/plain"]  # kept, and shown in the history
    front.ask(
        {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}, handled=True
    )  # answered by host.js
    directions = [
        (e["direction"], e["message"].get("method") or e["message"].get("id")) for e in view.messages
    ]
    assert directions[:2] == [("out", "resources/read"), ("in", 1)]
    assert ("out", "ui/notifications/initialized") in directions
    diagram = view.trace()._repr_mimebundle_()["text/html"]
    assert "ui/update-model-context" in diagram and "<svg" in diagram


def test_view_gets_the_document_input_and_result(shell: Any) -> None:
    mcp, view, _front = _view(shell)
    for _ in range(int(WAIT / 0.05)):  # the document is fetched on the runtime loop
        if view.html:
            break
        threading.Event().wait(0.05)
    assert view.html.startswith('<!doctype html><meta http-equiv="Content-Security-Policy"')
    mcp.policy.set("apps.show", "allow")
    handle = mcp.call("apps.show", n=3)  # headless: no app shown by the call itself
    view.follow(handle)
    assert view.tool_input == {"n": 3}
    assert view.tool_result is not None and view.tool_result["content"][0]["text"] == "n=3"
    assert "n=3" in view.fallback_bundle()["text/plain"]  # what a saved notebook shows
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "n=3" in bundle["text/html"]
    bad = AppView(mcp, "apps", {"name": "x"}, "ui://apps/view.html")
    bad.load({"contents": [{"uri": "ui://apps/view.html", "mimeType": "text/html", "text": VIEW}]})
    assert "not an MCP App" in bad.status and bad.html == ""


def test_app_opens_without_a_call(shell: Any) -> None:
    mcp = shell.user_ns["mcp"]
    mcp.connect("apps", _apps_server())
    view = shell.run_line_magic("mcp", "app apps.show")
    assert isinstance(view, AppView) and view.uri == "ui://apps/view.html"
    assert view.tool_info["tool"]["name"] == "show" and view.tool_input is None and view.tool_result is None
    assert not [e for e in mcp.audit.entries() if e.kind == "call"]  # nothing was called
    with pytest.raises(UsageError, match=r"apps\.plain has no app"):
        shell.run_line_magic("mcp", "app apps.plain")


def test_view_hears_of_a_cancelled_call(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """ui/notifications/tool-cancelled: a call that ends without a result tells the view why."""
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    mcp, view, _front = _view(shell)
    handle = mcp.prepare("apps.show", {"n": 1})  # awaiting approval: nothing sent yet
    view.follow(handle)
    assert view.tool_input == {"n": 1} and view.tool_cancelled is None
    handle.cancel()
    assert view.tool_cancelled == "the call cancelled" and view.tool_result is None


def _wait_for_document(view: AppView) -> None:
    for _ in range(int(WAIT / 0.05)):  # the document is fetched on the runtime loop
        if view.html or view.status.startswith(view.uri):
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"the app's document never came: {view.status!r}")


def test_resource_ui_meta_falls_back_to_the_listing_entry(shell: Any) -> None:
    """The Apps spec: a host reads ``_meta.ui`` from the content item, and from the resource's
    ``resources/list`` entry when the item has none (failed before: the listing was never read, so an app
    whose CSP sits on the listing got no network at all)."""
    mcp = shell.user_ns["mcp"]
    server = Server("listed")
    listing_ui = {"csp": {"connectDomains": ["https://listed.example"]}, "prefersBorder": True}
    server.add_resource("ui://listed/a.html", VIEW, mime_type=APP_MIME, meta={"ui": listing_ui})
    server.add_resource(
        "ui://listed/b.html",
        {
            "uri": "ui://listed/b.html",
            "mimeType": APP_MIME,
            "text": VIEW,
            "_meta": {"ui": {"csp": {"connectDomains": ["https://item.example"]}}},
        },
        meta={"ui": listing_ui},
    )

    @server.tool(meta={"ui": {"resourceUri": "ui://listed/a.html"}})
    def a() -> str:
        """A."""
        return "a"

    @server.tool(meta={"ui": {"resourceUri": "ui://listed/b.html"}})
    def b() -> str:
        """B."""
        return "b"

    mcp.connect("listed", server)
    item = mcp.calls.client("listed").read_resource("ui://listed/a.html")["contents"][0]
    assert "_meta" not in item  # the content item carries no _meta.ui
    first = open_app(mcp, "listed", mcp.tool_def("listed.a"))
    second = open_app(mcp, "listed", mcp.tool_def("listed.b"))
    assert first is not None and second is not None
    _wait_for_document(first)
    _wait_for_document(second)
    assert "connect-src https://listed.example;" in first.html and first.prefers_border
    assert first.resource_ui == listing_ui
    # the content item's own _meta.ui wins over the listing's
    assert "connect-src https://item.example;" in second.html and not second.prefers_border


def _sent(front: FrontEnd, method: str) -> dict[str, Any]:
    """The last request the kernel sent to the view for ``method``."""
    found = [
        c["message"] for c in front.got if c.get("kind") == "to_app" and c["message"].get("method") == method
    ]
    assert found, f"the kernel sent no {method}: {front.got}"
    return found[-1]  # type: ignore[no-any-return]


def test_app_lists_its_servers_tools_and_the_notebook_calls_the_apps_tools(shell: Any) -> None:
    """tools/list from the app (failed before: -32601), and the tools an app registers: listed once it is
    initialized, callable from the notebook, each call in the history (failed before: never asked)."""
    mcp, view, front = _view(shell)
    front.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    names = {t["name"] for t in front.answer(1)["result"]["tools"]}
    assert {"show", "bump", "plain"} <= names and "model_only" not in names  # visibility ["model"]: not its

    initialize = {"protocolVersion": "2026-01-26", "appCapabilities": {"tools": {"listChanged": True}}}
    front.ask({"jsonrpc": "2.0", "id": 2, "method": "ui/initialize", "params": initialize}, handled=True)
    front.ask({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}, handled=True)
    listing = _sent(front, "tools/list")
    reset = {"name": "reset", "description": "Reset the view", "inputSchema": {"type": "object"}}
    front.ask({"jsonrpc": "2.0", "id": listing["id"], "result": {"tools": [reset]}})
    assert view.app_tools == [reset]
    assert "tools the app registered" in view.activity.outputs[-1]["data"]["text/plain"]

    with pytest.raises(ValueError, match="the app has no tool 'nope'"):
        view.call_app_tool("nope")
    view.call_app_tool("reset", {"to": 0}, approved=True)
    call = _sent(front, "tools/call")
    assert call["params"] == {"name": "reset", "arguments": {"to": 0}}
    front.ask(
        {"jsonrpc": "2.0", "id": call["id"], "result": {"content": [{"type": "text", "text": "reset"}]}}
    )
    assert view.app_tool_results[-1]["result"]["content"][0]["text"] == "reset"
    entry = mcp.audit.entries()[-1]
    assert (entry.kind, entry.status, entry.decided_by) == ("app-tool", "done", "code")
    # the app says its tools changed: listed again
    front.ask({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    assert _sent(front, "tools/list")["id"] != listing["id"]


def test_sampling_from_the_app_is_answered_like_a_servers(shell: Any) -> None:
    """sampling/createMessage from the app (failed before: -32601 whatever the host declared): the
    mcp.on_sampling callback answers it, in the history under the app; headless without a callback it is
    rejected; a host that does not declare sampling refuses it."""
    mcp, view, front = _view(shell)
    ask = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "name a colour"}}],
        "maxTokens": 9,
    }
    assert mcp.headless  # the test shell: nobody to ask
    front.ask({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": ask})
    assert front.answer(1)["error"]["code"] == -1  # rejected: no callback, no person
    mcp.on_sampling(lambda params: "teal")
    front.ask({"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": ask})
    assert front.answer(2)["result"]["content"] == {"type": "text", "text": "teal"}
    entry = mcp.audit.entries()[-1]
    assert (entry.server, entry.kind, entry.status) == ("apps.show (app)", "sampling", "answered")
    view.host_capabilities = {k: v for k, v in view.host_capabilities.items() if k != "sampling"}
    front.ask({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": ask})
    assert front.answer(3)["error"]["code"] == -32601


def test_preview_a_file_with_a_fake_host_context(shell: Any, tmp_path: Path) -> None:
    """%mcp app --preview FILE (failed before: no such option): the file's app under the notebook's own
    server, controls that set the fake context and send what a host would, a panel of bridge messages."""
    from mcp_notebook.notebook.apps.preview import PreviewView

    page = tmp_path / "dash.html"
    page.write_text(VIEW)
    preview = shell.run_line_magic("mcp", f"app --preview {page}")
    assert isinstance(preview, PreviewView)
    view = preview.view
    assert view.server == "local" and view.uri == "ui://preview/dash.html" and "hi" in view.html
    preview.theme.value = "dark"
    preview.width.value = 320
    assert (view.theme_override, view.width_override) == ("dark", 320)
    preview.partial.value = '{"a": 7}'
    preview._guarded(preview._send_partial)
    assert view.tool_input_partial == {"a": 7}
    preview.input.value = "[1]"
    preview._guarded(preview._send_input)
    assert "tool input is a JSON object" in preview.problem.value and view.tool_input is None
    view._on_front_end(
        view, {"kind": "in", "message": {"jsonrpc": "2.0", "method": "ui/x"}, "handled": True}, []
    )
    assert "ui/x" in preview.panel.value and "app → host" in preview.panel.value
    with pytest.raises(UsageError):
        shell.run_line_magic("mcp", f"app --preview {tmp_path / 'missing.html'}")


def test_the_origin_server_serves_the_proxy_only_under_its_token() -> None:
    """apps/origin.py: one loopback port per domain; the proxy document with the app's policy as a header;
    anything else (another path, a wrong token) is 404."""
    from mcp_notebook.notebook.apps.origin import origin_for

    port, token = origin_for("a.example")
    assert origin_for("a.example") == (port, token) and origin_for("b.example")[0] != port
    policy = csp_policy({"connectDomains": ["https://api.example.com"]})
    url = f"http://127.0.0.1:{port}/{token}/proxy?policy={urllib.parse.quote(policy)}"
    with urllib.request.urlopen(url, timeout=WAIT) as response:
        assert response.headers["Content-Security-Policy"] == policy
        assert "proxy-ready" in response.read().decode()
    for wrong in (f"/{token}x/proxy", "/proxy", f"/{token}/other"):
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"http://127.0.0.1:{port}{wrong}", timeout=WAIT)


def test_a_domain_keeps_its_port_across_kernels() -> None:
    """apps/origin.py: a domain's proxy port comes from the domain, so a restarted kernel serves the app on
    the same origin (the browser keeps its storage per origin); a port in use moves it to the next
    candidate. Failed before: every kernel took a random port (a new origin, empty storage)."""
    import socket
    import uuid

    from mcp_notebook.notebook.apps.origin import PORTS, candidate_ports, origin_for

    # names of this run's own: another process running this test at the same time holds the same ports
    domain, fresh = f"kept-{uuid.uuid4().hex}.example", f"fresh-{uuid.uuid4().hex}.example"
    assert PORTS.stop <= 32768  # not in Linux's ephemeral range, where any outgoing connection may take one
    first, second = candidate_ports(domain)[:2]
    assert candidate_ports(domain) == candidate_ports(domain) and first != second
    assert candidate_ports("other.example")[0] != first
    with socket.socket() as taken:  # another process (another kernel) holds the first candidate
        taken.bind(("127.0.0.1", first))
        taken.listen()
        assert origin_for(domain)[0] == second
    port, _token = origin_for(fresh)
    assert port == candidate_ports(fresh)[0]
