"""``%mcp serve`` in a real kernel: the magic serves the notebook's tools, which run on the kernel's main
thread from the moment the notebook server exists; ``%mcp serve --stop`` frees the port (issue 5)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook import ConnectionClosedError, connect
from mcp_notebook.engine.runtime import Runtime
from tests.serving._kernel import kernel

SETUP = """
%load_ext mcp_notebook
import threading

@mcp.tool
def where() -> str:
    '''Which thread runs this tool.'''
    return threading.current_thread().name
"""


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("serve-magic test runtime")
    yield rt
    rt.stop()


def test_serve_magic_serves_stops_and_tools_run_on_the_main_thread(runtime: Runtime) -> None:
    with kernel() as k:
        k.run(SETUP)
        # A cell calling a notebook tool blocks the main thread: the call completes (no deadlock), run by
        # the stand-in that acts for the parked main thread (DESIGN decision 6, the self-call).
        local = k.run("r = %mcp call where\nprint(r.state, r.text)")
        assert local.stdout.split()[0] == "done" and "stand-in" in local.stdout

        served = k.run("h = %mcp serve\nprint(h.url)")
        assert served.error is None, served.error
        info: dict[str, Any] = k.value("{'url': h.url, 'headers': h.headers}")
        assert info["url"].startswith("http://127.0.0.1:")
        with connect(info["url"], headers=info["headers"], runtime=runtime) as client:
            assert [t["name"] for t in client.list_tools()] == ["where"]
            assert client.call_tool("where", {})["content"][0]["text"] == "MainThread"

        stopped = k.run("%mcp serve --stop")
        assert stopped.stdout.strip() == "stopped serving"
        port = int(info["url"].rsplit(":", 1)[1].split("/")[0])
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # nothing listens any more
        with pytest.raises(ConnectionClosedError):
            connect(info["url"], headers=info["headers"], runtime=runtime, timeout=5)


def test_serve_magic_rejects_a_malformed_address() -> None:
    with kernel() as k:
        k.run("%load_ext mcp_notebook")
        bad = k.run("%mcp serve --http nowhere")
        # IPython reports a UsageError as one line on stderr, without a traceback
        stderr = "".join(
            m["content"]["text"] for m in bad.outputs("stream") if m["content"]["name"] == "stderr"
        )
        assert "UsageError" in stderr and "HOST:PORT" in stderr


def test_redefining_a_tool_in_a_cell_reaches_connected_clients_and_shutdown_frees_the_port(
    runtime: Runtime,
) -> None:
    import threading

    changed = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    with kernel() as k:
        k.run(SETUP)
        k.run("h = %mcp serve")
        info: dict[str, Any] = k.value("{'url': h.url, 'headers': h.headers}")
        port = int(info["url"].rsplit(":", 1)[1].split("/")[0])
        with connect(
            info["url"], headers=info["headers"], runtime=runtime, notification_handler=on_notification
        ) as client:
            assert [t["name"] for t in client.list_tools()] == ["where"]
            k.run("@mcp.tool\ndef where() -> str:\n    '''Now says where, loudly.'''\n    return 'HERE'")
            assert changed.wait(10), "no notifications/tools/list_changed over HTTP"
            assert client.list_tools()[0]["description"] == "Now says where, loudly."
            assert client.call_tool("where", {})["content"][0]["text"] == "HERE"
    # the kernel is gone: so is its server
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
