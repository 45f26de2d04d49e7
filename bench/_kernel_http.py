"""Benchmark 6: the in-kernel HTTP server (issue 5) vs the official SDK's HTTP server, 127.0.0.1 only.

A real ipykernel (jupyter_client) runs ``%load_ext mcp_notebook``, defines ``echo`` with ``@mcp.tool`` and
serves it with ``mcp.serve()`` (the defaults a user gets, as ``%mcp serve``: the HTTP limits, bearer token,
Host/Origin checks, the approval gate, the console, and sync tools run on the kernel's main thread, a hop
from the runtime thread that answers HTTP). The SDK server is
``bench/peers.py sdk http`` (``MCPServer.run(transport="streamable-http")``) hosting the same function.
Our plain ``StreamableHTTPServer`` in its own process (``bench/peers.py ours http``, worker-thread tools,
no token, no gate) is measured alongside, for the cost of living in a kernel.

Load: ``bench/loadgen.py``'s raw JSON-RPC client (the same for every server), one client sequential and
16 concurrent clients; rounds interleaved, the server order rotating each round.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from _common import (
    PEERS,
    PYTHON,
    ROOT,
    Ratio,
    Section,
    Settings,
    cell,
    fmt_ratio,
    free_port,
    median,
    port_open,
    started,
    wait_for_port,
)
from _http import CONCURRENCY, load

TARGET = 2.0
IMPLS = ["kernel", "sdk", "plain"]
LABELS = {
    "kernel": "ours, in-kernel (`mcp.serve`)",
    "sdk": "SDK server",
    "plain": "ours, plain process",
}

SERVE = '''
%load_ext mcp_notebook
import json, threading
CALLS = 0
OFF_MAIN = 0

@mcp.tool
def echo(text: str) -> str:
    """Return the text."""
    global CALLS, OFF_MAIN
    CALLS += 1
    if threading.current_thread() is not threading.main_thread():
        OFF_MAIN += 1
    return text

h = mcp.serve()
print(json.dumps({"url": h.url, "headers": h.headers}))
'''


STATE = """
_events = get_ipython().events.callbacks
print(json.dumps([CALLS, OFF_MAIN, len(_events["pre_execute"]) + len(_events["post_execute"])]))
"""


def available() -> str | None:
    import _notebook

    missing = _notebook.available()
    if missing is None and not _has("mcp_notebook.notebook.serving.server"):
        missing = "mcp_notebook/notebook/serving/server.py does not exist yet"
    return missing


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@contextlib.contextmanager
def kernel_server() -> Iterator[tuple[Any, str, dict[str, str]]]:
    """A kernel serving ``echo``; stopped (and its port checked closed) when the block ends."""
    from _kernel import kernel
    from _notebook import HEADLESS

    with kernel(HEADLESS) as k:
        info = k.run(SERVE).json()
        port = urlsplit(info["url"]).port
        try:
            yield k, info["url"], info["headers"]
        finally:
            k.run("h.stop()")
        if port is not None and port_open(port):
            raise RuntimeError(f"the in-kernel server's port {port} is still open after h.stop()")


@contextlib.contextmanager
def process_servers() -> Iterator[dict[str, str]]:
    ports = {"sdk": free_port(), "plain": free_port()}
    with contextlib.ExitStack() as stack:
        for impl, port in ports.items():
            peer = "sdk" if impl == "sdk" else "ours"
            proc = stack.enter_context(started([PYTHON, PEERS, peer, "http", str(port)], cwd=ROOT))
            wait_for_port(port, proc)
        yield {impl: f"http://127.0.0.1:{port}/mcp" for impl, port in ports.items()}
    still = [port for port in ports.values() if port_open(port)]
    if still:
        raise RuntimeError(f"ports still open after stopping the servers: {still}")


def run(settings: Settings) -> Section:
    section = Section(
        "kernel_http",
        "6. In-kernel Streamable HTTP server: tools/call echo throughput (calls/s, higher is better)",
    )
    missing = available()
    if missing is not None:
        section.unavailable = missing
        return section
    rates: dict[tuple[int, str], list[float]] = {}
    errors = 0
    kernels: list[list[int]] = []  # per round: echo calls, of them off the main thread, IPython callbacks
    with process_servers() as urls:
        for round_no in range(settings.rounds):
            # a fresh kernel each round, so a round does not inherit state that grows with every call
            with kernel_server() as (k, kernel_url, token_headers):
                urls["kernel"] = kernel_url
                order = IMPLS[round_no % len(IMPLS) :] + IMPLS[: round_no % len(IMPLS)]
                for impl in order:
                    headers = token_headers if impl == "kernel" else None
                    for result in load(urls[impl], "raw", settings, headers):
                        rate = result["calls"] / result["seconds"]
                        rates.setdefault((int(result["clients"]), impl), []).append(rate)
                        errors += int(result["errors"])
                kernels.append(k.run(STATE).json())
    calls = sum(c for c, _, _ in kernels)
    off_main = sum(o for _, o, _ in kernels)
    section.headers = ["load (raw JSON-RPC client)", *(LABELS[i] for i in IMPLS), "in-kernel / SDK"]
    for clients in CONCURRENCY:
        what = "1 client, sequential" if clients == 1 else f"{clients} concurrent clients"
        ours, sdk = median(rates[(clients, "kernel")]), median(rates[(clients, "sdk")])
        section.rows.append([what, *(cell(rates[(clients, impl)]) for impl in IMPLS), fmt_ratio(ours / sdk)])
        section.ratios.append(Ratio(f"kernel_http {what}", ours / sdk, TARGET))
    section.notes = [
        f"Median of {settings.rounds} round(s) of ~{settings.budget:g} s per server and load, after "
        "warm-up; rounds interleaved, the server order rotating. The load runs in its own process; the SDK "
        "and plain servers each in another (for the whole section); the in-kernel server inside a real "
        "ipykernel started with jupyter_client, a fresh kernel each round (headless, so the console updates "
        "a static display).",
        f"In the kernel, `echo` ran {calls:,} times, {calls - off_main:,} of them on the kernel's main "
        f"thread (DESIGN decision 6: sync notebook tools hop from the runtime thread to the main thread). "
        "The SDK and plain servers run sync tools in worker threads.",
        "The in-kernel server checks a bearer token, Host and Origin, and passes each tools/call through "
        "the approval gate (the policy allows `echo`) and the audit log, with the default HTTP limits (16 "
        'clients waiting for their answers are never throttled; README "Serving").',
        "IPython event callbacks (pre/post_execute) registered in each round's kernel after its load: "
        + ", ".join(f"{n:,} after {c:,} calls" for c, _, n in kernels)
        + " (a fresh kernel has a handful; more than that means something registers per tool call).",
        f"Failed calls during measurement: {errors}.",
    ]
    return section
