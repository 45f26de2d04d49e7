"""``%mcp`` and ``%%mcp_tool`` (DESIGN decision 13, STYLE rule 8): every subcommand, ``--help``, and the
errors a person sees (``UsageError``, never a traceback from the library). Each test: a fresh shell.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from IPython.core.error import UsageError

from mcp_notebook import Client
from mcp_notebook.notebook.api import NotebookMCP
from mcp_notebook.notebook.calls.handle import CallHandle
from mcp_notebook.notebook.calls.policy import Policy
from mcp_notebook.notebook.calls.widgets import ToolForm
from mcp_notebook.notebook.magics import MCPMagics, expand_env, load
from tests.notebook.ipyshell import WAIT, remote_server


def mcp(shell: Any, line: str) -> Any:
    return shell.run_line_magic("mcp", line)


def define_tools(shell: Any) -> None:
    result = shell.run_cell(
        "@mcp.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    '''Add two numbers.'''\n"
        "    return a + b\n"
        "@mcp.tool\n"
        "def greet(name: str, times: int = 1, loud: bool = False) -> str:\n"
        "    return ('HI ' if loud else 'hi ') * times + name\n"
    )
    assert result.success


# ------------------------------------------------------------------------------------------- basics


def test_load_is_idempotent_and_only_adds_mcp_and_the_magics(shell_factory: Any) -> None:
    shell = shell_factory(load=False)
    before = set(shell.user_ns)
    shell.run_line_magic("load_ext", "mcp_notebook")
    assert set(shell.user_ns) - before == {"mcp"}
    first = shell.user_ns["mcp"]
    assert isinstance(shell.user_ns["mcp"], NotebookMCP)
    del shell.user_ns["mcp"]
    assert load(shell) is first and shell.user_ns["mcp"] is first
    assert "mcp" in shell.magics_manager.magics["line"] and "mcp_tool" in shell.magics_manager.magics["cell"]
    shell.run_line_magic("unload_ext", "mcp_notebook")
    assert "mcp" not in shell.user_ns and "mcp" not in shell.magics_manager.magics["line"]


def test_bare_mcp_lists_every_subcommand(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert mcp(shell, "") is None
    out = capsys.readouterr().out
    magics = MCPMagics(shell, shell.user_ns["mcp"])
    for name in magics.subcommands:
        assert f"\n  {name} " in out
    assert "%%mcp_tool" in out


@pytest.mark.parametrize(
    "sub", ["tools", "call", "map", "form", "connect", "disconnect", "servers", "resources", "read",
            "prompts", "prompt", "trace", "history", "policy", "lint", "check", "app"],
)  # fmt: skip
def test_every_subcommand_has_help(shell: Any, sub: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert mcp(shell, f"{sub} --help") is None
    out = capsys.readouterr().out
    # argparse's usage line, not IPython's docstring markup ("::")
    assert out.split("\n")[0].split()[:3] == ["usage:", "%mcp", sub], out[:80]
    assert "::" not in out


def test_cell_magic_help(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_cell_magic("mcp_tool", "--help", "pass")
    out = capsys.readouterr().out
    assert "--destructive" in out and out.startswith("usage: %%mcp_tool ")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("frobnicate", "unknown subcommand 'frobnicate'"),
        ("call", "the following arguments are required: target"),
        ("call nope", "no tool 'nope'"),
        ("call add a", "expected key=value"),
        ('call add a=1 {"b": 2}', "not both"),
        ("call ghost.tool", "no tool 'ghost.tool'"),
        ("tools ghost", "no server named 'ghost'"),
        ("disconnect ghost", "no server named 'ghost'"),
        ("connect x", "give a URL or '-- COMMAND ARGS'"),
        ("connect x --", "nothing after '--'"),
        ("connect x http://h/mcp --header nocolon", "a header is 'Key: Value'"),
        ("connect x http://h/mcp --header 'Authorization: Bearer $MCPNB_SURELY_UNSET'", "is not set"),
        ("connect x --header 'A: b' -- python s.py", "--header is for HTTP"),
        ("connect a.b http://h/mcp", "invalid connection name"),
        ("policy set everything.echo maybe", "not one of allow, ask, deny"),
        ("policy set x", "takes 2 argument"),
        ("policy unset nothing.here", "there is no rule"),
        ("policy frob", "invalid choice"),
        ("trace --last many", "invalid int value"),
        ("call add 'unclosed", "cannot split"),
    ],
)
def test_usage_errors_are_clear(shell: Any, line: str, message: str) -> None:
    define_tools(shell)
    with pytest.raises(UsageError, match=message.replace("$", r"\$").replace("(", r"\(")):
        mcp(shell, line)


def test_run_cell_shows_a_usage_error_not_a_traceback(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    result = shell.run_cell("%mcp call nope")
    assert isinstance(result.error_in_exec, UsageError)
    captured = capsys.readouterr()
    assert "UsageError" in captured.err + captured.out
    assert "Traceback" not in captured.err + captured.out


# ------------------------------------------------------------------------------------------------ call


def test_call_with_kv_coerced_by_the_schema(shell: Any) -> None:
    define_tools(shell)
    handle = mcp(shell, "call greet name=007 times=2 loud=True")
    assert isinstance(handle, CallHandle) and handle.state == "done"
    assert handle.arguments == {"name": "007", "times": 2, "loud": True}
    assert handle.text == "HI HI 007"


def test_call_with_json_and_a_timeout_and_assignment(shell: Any) -> None:
    define_tools(shell)
    result = shell.run_cell('r = %mcp call --timeout 5 add {"a": 1, "b": 41}')
    assert result.success
    assert shell.user_ns["r"].structured == {"result": 42}


def test_call_expands_python_variables_like_other_magics(shell: Any) -> None:
    define_tools(shell)
    shell.user_ns["who"] = "Ada"
    assert mcp(shell, "call greet name=$who").text == "hi Ada"


def test_call_remote_needs_approval_and_history_copies_as_code(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_HEADLESS", "0")
    shell.user_ns["mcp"].connect("remote", remote_server())
    handle = mcp(shell, "call remote.echo message='hello there'")
    assert handle.state == "awaiting-approval"
    handle.approve()
    handle._settle(WAIT)
    assert handle.text == "hello there"
    history = mcp(shell, "history")
    entry = history[-1]
    assert entry.magic == "%mcp call remote.echo message='hello there'"
    assert entry.python == "mcp.call('remote.echo', {'message': 'hello there'})"
    again = mcp(shell, entry.magic.removeprefix("%mcp "))  # the copied line really runs
    assert again.arguments == {"message": "hello there"}
    assert len(mcp(shell, "history --last 1")) == 1


# ---------------------------------------------------------------------------------------- the others


def test_tools_servers_trace_form(shell: Any) -> None:
    define_tools(shell)
    assert [r["call as"] for r in mcp(shell, "tools").rows] == ["add", "greet"]
    assert [r["name"] for r in mcp(shell, "servers").rows] == ["local"]
    mcp(shell, "call add a=1 b=2")
    trace = mcp(shell, "trace local --last 4")
    assert len(trace.entries) == 4 and "tools/call" in trace._repr_mimebundle_()["text/plain"]
    diagram = mcp(shell, "trace local --last 4 --diagram")._repr_mimebundle_()
    assert '<svg class="mcpnb-seq"' in diagram["text/html"] and "<table" not in diagram["text/html"]
    assert isinstance(mcp(shell, "form add"), ToolForm)


def test_resources_read_prompts_prompt(shell: Any) -> None:
    shell.user_ns["mcp"].connect("remote", remote_server())
    assert [r["uri"] for r in mcp(shell, "resources").rows] == ["memo://greeting"]
    assert [r["uri"] for r in mcp(shell, "resources remote").rows] == ["memo://greeting"]
    view = mcp(shell, "read memo://greeting --server remote")
    assert "hello from the remote" in view._repr_mimebundle_()["text/plain"]
    assert "hello" in mcp(shell, "read memo://greeting")._repr_mimebundle_()["text/plain"]
    assert [r["call as"] for r in mcp(shell, "prompts").rows] == ["remote.review"]
    prompt = mcp(shell, "prompt remote.review code='x = 1'")
    assert "x = 1" in prompt._repr_mimebundle_()["text/plain"]
    assert "y" in mcp(shell, 'prompt remote.review {"code": "y"}')._repr_mimebundle_()["text/plain"]


def test_policy_subcommands(shell: Any) -> None:
    policy = mcp(shell, "policy")
    assert isinstance(policy, Policy)
    mcp(shell, "policy set everything.* deny")
    mcp(shell, "policy trust everything")
    assert policy.rules == {"everything.*": "deny"} and policy.is_trusted("everything")
    mcp(shell, "policy unset everything.*")
    mcp(shell, "policy untrust everything")
    assert policy.rules == {} and not policy.is_trusted("everything")
    assert "Approval policy" in mcp(shell, "policy show")._repr_mimebundle_()["text/plain"]


def test_connect_is_thin_over_the_api(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, ...]] = []
    api = shell.user_ns["mcp"]
    real_connect = api.connect

    def fake_connect(name: str, target: Any, **options: Any) -> Any:
        seen.append((name, target, options))
        return real_connect(name, remote_server())

    monkeypatch.setattr(api, "connect", fake_connect)
    monkeypatch.setenv("MCPNB_TOKEN", "s3cret")
    mcp(shell, "connect weather https://example.org/mcp --header 'Authorization: Bearer $MCPNB_TOKEN'")
    assert seen[-1] == (
        "weather",
        "https://example.org/mcp",
        {"headers": {"Authorization": "Bearer s3cret"}, "env": None, "cwd": None},
    )
    mcp(shell, "connect ev --env DEBUG=1 --cwd /tmp -- npx -y @modelcontextprotocol/server-everything --help")
    name, target, options = seen[-1]
    assert (name, target, options["cwd"]) == (
        "ev",
        ["npx", "-y", "@modelcontextprotocol/server-everything", "--help"],
        "/tmp",
    )
    assert options["env"]["DEBUG"] == "1"
    mcp(shell, "disconnect ev")
    assert "ev" not in api.connections()


def test_connect_era_reaches_the_client(shell: Any) -> None:
    """``%mcp connect --era legacy`` (and ``mcp.connect(..., era=)``): the handshake era, asked for."""
    mcp(shell, "connect old --era legacy -- " + f"{sys.executable} -m mcp_notebook.demo_server")
    api = shell.user_ns["mcp"]
    client = api.calls.client("old")
    assert client.aio.era == "legacy" and client.negotiated_version.name == "2025-11-25"
    assert [entry.message.get("method") for entry in list(client.trace)[:3]] == [
        "initialize",
        None,
        "notifications/initialized",
    ]
    default = api.connect("new", [sys.executable, "-m", "mcp_notebook.demo_server"])
    assert default.aio.era == "auto" and default.negotiated_version.name == "2026-07-28"
    assert api.connect("new", remote_server(), era="modern").aio.era == "modern"
    mcp(shell, "disconnect old")
    mcp(shell, "disconnect new")
    with pytest.raises(UsageError):
        mcp(shell, "connect bad --era medieval -- python server.py")


def test_connect_failure_is_a_usage_error(shell: Any) -> None:
    with pytest.raises(UsageError, match="could not connect 'bad'"):
        mcp(shell, "connect bad -- /nonexistent/server-binary")


def test_expand_env_braces_and_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPNB_A", "1")
    assert expand_env("x${MCPNB_A}y $MCPNB_A") == "x1y 1"
    monkeypatch.delenv("MCPNB_A")
    with pytest.raises(UsageError, match=r"\$MCPNB_A is not set"):
        expand_env("$MCPNB_A")


# ---------------------------------------------------------------------------------------------- %%mcp_tool


async def test_mcp_tool_cell_defines_and_redefines_with_list_changed(
    shell: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    api: NotebookMCP = shell.user_ns["mcp"]
    changes = asyncio.Queue[str]()

    def on_note(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changes.put_nowait(method)

    cell = (
        "import math\n"
        "def helper(x):\n"
        "    return x\n"
        "def area(r: float) -> float:\n"
        "    '''Area of a circle.'''\n"
        "    return math.pi * r * r\n"
    )
    async with Client(api.server, notification_handler=on_note) as client:
        shell.run_cell_magic("mcp_tool", "--read-only --title 'Circle area'", cell)
        await asyncio.wait_for(changes.get(), WAIT)
        [tool] = await client.list_tools()
        assert (tool["name"], tool["title"], tool["annotations"]) == (
            "area",
            "Circle area",
            {"readOnlyHint": True},
        )
        assert "helper" in shell.user_ns and "math" in shell.user_ns  # the cell ran in the user namespace
        shell.run_cell_magic("mcp_tool", "--name circle_area --destructive", cell.replace("math.pi", "3"))
        await asyncio.wait_for(changes.get(), WAIT)
        shell.run_cell_magic("mcp_tool", "--name circle_area --destructive", cell.replace("math.pi", "3"))
        await asyncio.wait_for(changes.get(), WAIT)
        names = sorted(t["name"] for t in await client.list_tools())
        assert names == ["area", "circle_area"]
        result = await client.call_tool("circle_area", {"r": 2})
        assert result["structuredContent"] == {"result": 12}
    out = capsys.readouterr().out
    assert "defined tool 'area'" in out and "updated tool 'circle_area'" in out


def test_mcp_tool_errors(shell: Any) -> None:
    with pytest.raises(UsageError, match="must define a function"):
        shell.run_cell_magic("mcp_tool", "", "x = 1\n")
    with pytest.raises(UsageError, match="not allowed with argument"):
        shell.run_cell_magic("mcp_tool", "--destructive --read-only", "def f():\n    pass\n")
    with pytest.raises(UsageError, match="Invalid tool name"):
        shell.run_cell_magic("mcp_tool", "--name 'bad name'", "def f():\n    pass\n")
    with pytest.raises(ZeroDivisionError):  # the user's own error stays the user's own traceback
        shell.run_cell_magic("mcp_tool", "", "def f():\n    pass\n1/0\n")
