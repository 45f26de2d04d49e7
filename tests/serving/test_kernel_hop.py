"""Notebook tools run on the kernel's main thread (DESIGN decision 6), in a real ipykernel.

One kernel for the module (started and always shut down by the fixture); the notebook serves its tools
with ``mcp.serve()`` exactly as ``%mcp serve`` will. Every wait is bounded; the busy-cell test
orders events with a flag file, not with sleeps.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_notebook import connect
from mcp_notebook.engine.runtime import Runtime
from tests.interop._peers import Peers, node_env
from tests.serving._kernel import Kernel, kernel

WAIT = 30.0

SETUP = '''
%load_ext mcp_notebook
import asyncio, os, threading, time
from IPython.display import display
import matplotlib.pyplot as plt
%matplotlib inline

KERNEL_LOOP = asyncio.get_running_loop()
G = 41
PHASE = "idle"

@mcp.tool
def where() -> dict:
    """Where and how a tool runs."""
    return {"thread": threading.current_thread().name, "g": G + 1}

@mcp.tool
def chatty(word: str) -> str:
    """Print and display something."""
    print("printed by the tool:", word)
    display({"text/plain": f"displayed by the tool: {word}"}, raw=True)
    return word.upper()

@mcp.tool
def bars(n: int) -> "plt.Figure":
    """A bar chart (a figure returned: an image result, no stray display)."""
    fig, ax = plt.subplots(figsize=(2, 1), dpi=40)
    ax.bar([str(i) for i in range(n)], range(n))
    return fig

@mcp.tool
def phase() -> str:
    """The phase a cell left behind."""
    return PHASE

h = mcp.serve()
'''


@pytest.fixture(scope="module")
def nb() -> Iterator[Kernel]:
    with kernel() as k:
        k.run(SETUP)
        yield k


@pytest.fixture(scope="module")
def served(nb: Kernel) -> dict[str, Any]:
    info: dict[str, Any] = nb.value("{'url': h.url, 'headers': h.headers}")
    return info


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("kernel-test runtime")
    yield rt
    rt.stop()


def test_a_tool_sees_the_cells_globals_on_the_main_thread(
    nb: Kernel, served: dict[str, Any], runtime: Runtime
) -> None:
    with connect(served["url"], headers=served["headers"], runtime=runtime) as client:
        assert client.call_tool("where", {})["structuredContent"] == {"thread": "MainThread", "g": 42}
        nb.run("G = 99")
        assert client.call_tool("where", {})["structuredContent"]["g"] == 100


def test_print_and_display_go_to_the_console_and_the_client_not_a_cell(
    nb: Kernel, served: dict[str, Any], runtime: Runtime
) -> None:
    last = nb.run("'the last cell'")
    logs: list[dict[str, Any]] = []
    with connect(
        served["url"], headers=served["headers"], runtime=runtime, logging_handler=logs.append
    ) as client:
        assert client.call_tool("chatty", {"word": "hi"})["content"][0]["text"] == "HI"
    nb.drain(0.5)
    stray = json.dumps(nb.by_parent[last.msg_id], default=str)
    assert "by the tool" not in stray  # nothing landed under the unrelated last cell
    assert {(m["logger"], m["data"].strip()) for m in logs} >= {
        ("stdout", "printed by the tool: hi"),
        ("display", "displayed by the tool: hi"),
    }
    console = nb.run("print(h.console.text())").stdout
    assert (
        "chatty" in console
        and "printed by the tool: hi" in console
        and "displayed by the tool: hi" in console
    )


def test_a_returned_figure_is_the_result_not_a_stray_figure_log_line(
    nb: Kernel, served: dict[str, Any], runtime: Runtime
) -> None:
    """Issue 19: under every figure result the client's log (and the console) got "<Figure size ...>",
    the inline backend's display of the very figure the tool returned (failed before)."""
    logs: list[dict[str, Any]] = []
    with connect(
        served["url"], headers=served["headers"], runtime=runtime, logging_handler=logs.append
    ) as client:
        result = client.call_tool("bars", {"n": 3})
    assert [block["type"] for block in result["content"]] == ["image"]
    assert not [m for m in logs if "<Figure size" in str(m.get("data"))], logs
    console = nb.run("print(h.console.text())").stdout
    assert "bars" in console and "<Figure size" not in console


def test_the_self_call_does_not_deadlock(nb: Kernel) -> None:
    # a sync cell calling a notebook tool is itself the main thread: in memory and over the served URL
    local = nb.run(
        "r = mcp.call('where'); print(r.state, r.result['structuredContent']['g'] > 0)", timeout=WAIT
    )
    assert local.stdout.split() == ["done", "True"]
    over_http = nb.run(
        "from mcp_notebook import connect\n"
        "with connect(h.url, headers=h.headers) as c:\n"
        "    print(c.call_tool('chatty', {'word': 'self'})['content'][0]['text'])",
        timeout=WAIT,
    )
    assert over_http.stdout.strip() == "SELF"  # and the tool's own print did not land in this cell


def test_a_busy_cell_delays_calls_while_ping_answers(
    nb: Kernel, served: dict[str, Any], runtime: Runtime, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    busy = nb.start(
        f"PHASE = 'busy'\n"
        f"deadline = time.monotonic() + {WAIT}\n"
        f"while not os.path.exists({str(flag)!r}) and time.monotonic() < deadline:\n"
        f"    time.sleep(0.01)\n"
        f"PHASE = 'after the busy cell'"
    )
    results: list[Any] = []
    with connect(served["url"], headers=served["headers"], runtime=runtime) as client:
        caller = threading.Thread(target=lambda: results.append(client.call_tool("phase", {})))
        caller.start()
        client.send_ping()  # the network side answers while the cell holds the main thread
        assert client.list_tools()
        assert caller.is_alive() and not results  # the call waits its turn: the flag is not there yet
        flag.touch()
        nb.wait(busy, WAIT)
        caller.join(WAIT)
    assert results[0]["content"][0]["text"] == "after the busy cell"


def test_async_code_runs_on_the_kernel_loop(nb: Kernel) -> None:
    cell = nb.run(
        "from mcp_notebook.notebook.kernel_thread import KernelThread\n"
        "kt = KernelThread.current()\n"
        "async def co():\n"
        "    print('printed by an async tool')\n"
        "    await asyncio.sleep(0)\n"
        "    return threading.current_thread().name, asyncio.get_running_loop() is KERNEL_LOOP\n"
        "print(await asyncio.wrap_future(mcp.runtime.submit(kt.run_async(co()))))",
        timeout=WAIT,
    )
    assert cell.stdout.strip() == "('MainThread', True)"  # and its print was captured, not shown here


def test_the_inspector_calls_a_live_kernel_tool(
    nb: Kernel, served: dict[str, Any], peers: Peers, tmp_path: Path
) -> None:
    env = node_env()
    env["HOME"] = str(tmp_path)
    auth = f"Authorization: {served['headers']['Authorization']}"
    command = [str(peers.node), str(peers.inspector), "--cli", "-q", "--format", "json", served["url"]]
    command += [
        "--header",
        auth,
        "--method",
        "tools/call",
        "--tool-name",
        "chatty",
        "--tool-arg",
        "word=inspector",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, env=env, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["content"][0]["text"] == "INSPECTOR"


def test_capturing_tool_output_leaks_no_shell_callbacks(
    nb: Kernel, served: dict[str, Any], runtime: Runtime
) -> None:
    count = "len(get_ipython().events.callbacks['post_execute'])"
    before = nb.value(count)
    with connect(served["url"], headers=served["headers"], runtime=runtime) as client:
        for _ in range(5):
            client.call_tool("chatty", {"word": "x"})
    assert nb.value(count) == before


def test_stop_in_the_kernel_frees_the_port(nb: Kernel, served: dict[str, Any], runtime: Runtime) -> None:
    nb.run("h.stop()")
    port = urlsplit(served["url"]).port
    assert port is not None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
    assert "stopped" in nb.run("print(h.console.text())").stdout
    nb.run("h2 = mcp.serve(show=False)")
    assert nb.value("[h2 is not h, h.stopped, h2.stopped]") == [True, True, False]
    again: dict[str, Any] = nb.value("{'url': h2.url, 'headers': h2.headers}")
    with connect(again["url"], headers=again["headers"], runtime=runtime) as client:  # the new one serves
        assert client.call_tool("where", {})["structuredContent"]["thread"] == "MainThread"
