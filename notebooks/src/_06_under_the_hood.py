"""Workshop 06: the JSON-RPC conversation under every call, read from the trace."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
MODERN = "https://modelcontextprotocol.io/specification/2026-07-28"

CELLS: list[Cell] = [
    md(f"""
# 06 · The protocol under the hood

Everything in the earlier workshops was an exchange of [JSON-RPC 2.0](https://www.jsonrpc.org/specification)
messages. MCP uses three kinds ([Base Protocol > Messages]({SPEC}/basic#messages)):

- a **request** has an `id` and a `method`, and expects exactly one answer;
- a **response** carries the same `id` and either a `result` or an `error` (with a `code`);
- a **notification** has a `method` but no `id`, and is never answered.

Every connection keeps a **trace** of the messages it sent and received. `%mcp trace` shows it as a
table (open a row to see the JSON); in this workshop we read it step by step.
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
Three small helpers: the methods of a trace in order (`"result"` or `"error"` for a response), the last
message of one kind, and a message as pretty JSON:
"""),
    code('''
import json
import sys
import time


def methods(trace):
    """The method of each message in a trace, "result"/"error" for a response ("note": the client's own
    remark, not a message)."""
    names = []
    for entry in trace:
        message = entry.message
        if entry.direction not in ("in", "out"):
            names.append("note")
        else:
            names.append(message.get("method") or ("error" if "error" in message else "result"))
    return names


def last(trace, kind):
    """The last message of a trace with this method (or "result"/"error")."""
    entries = list(trace)
    return [entry for entry, name in zip(entries, methods(entries), strict=True) if name == kind][-1]


def show(entry):
    arrow = {"out": "→ sent", "in": "← received"}.get(entry.direction, "·")
    print(arrow, json.dumps(entry.message, indent=2))
'''),
    md(f"""
## 1. The handshake (protocol versions up to 2025-11-25)

MCP has two eras. Every version up to `2025-11-25` (the spec calls them *legacy*) starts a connection
with a handshake of three messages ([Lifecycle > Initialization]({SPEC}/basic/lifecycle#initialization)):

1. the client's `initialize` **request**: the protocol version it speaks, its capabilities, its name;
2. the server's **result**: the version they will use, the server's capabilities, its name, instructions;
3. the client's `notifications/initialized` **notification**: "ready", and no answer expected.

The newest version, `2026-07-28`, has no handshake at all (section 8 shows it). Our client speaks both:
by default (`era="auto"`) it first asks the server which versions it supports and, with a server as new
as the demo one, skips the handshake. Most servers deployed today still expect it, so this section asks
for the legacy era explicitly with `era="legacy"` (the magic: `%mcp connect demo --era legacy -- ...`):
"""),
    code("""
demo = mcp.connect("demo", [sys.executable, "-m", "mcp_notebook.demo_server"], era="legacy")
%mcp trace demo
"""),
    code("""
for entry in list(demo.trace)[:3]:
    show(entry)
"""),
    md(f"""
**Capability negotiation**
([Lifecycle > Capability Negotiation]({SPEC}/basic/lifecycle#capability-negotiation)): the client
said it can answer `elicitation` (a form for the user) and `sampling` (a model reply) requests from the
server; the server said it has `tools`, `resources`, `prompts`, `logging` and `completions`, and will
send `listChanged` notifications. Neither side may use a feature the other did not declare. The
version both sides settled on:
"""),
    code("""
demo.negotiated_version.name
"""),
    md(f"""
## 2. Listing and calling

`tools/list` and `tools/call` are plain request/response pairs
([Tools > Protocol Messages]({SPEC}/server/tools#protocol-messages)). The answer's `id` matches the
request's: that is how a client pairs answers with questions when several are in flight.
"""),
    code("""
%mcp policy set demo.* allow
%mcp call demo.greet name=Ada
%mcp trace demo --last 4
"""),
    md(f"""
## 3. Progress notifications

To get progress, the client adds `_meta.progressToken` to the request. The server then sends
`notifications/progress` carrying the same token, with `progress` growing each time, an optional
`total` and `message` ([Progress]({SPEC}/basic/utilities/progress)). Notifications go between the
request and its result:
"""),
    code("""
%mcp call demo.count_slowly steps=3 seconds_per_step=0.2
%mcp trace demo --last 5
"""),
    code("""
call, first_progress = list(demo.trace)[-5:-3]
show(call)
show(first_progress)
"""),
    md("""
The same exchange as a **sequence diagram**: the client's and the server's lifelines, one arrow per
message, in order (requests solid, results dashed, notifications dotted, progress green, errors red; the
left margin is the time in ms). Click an arrow to open its JSON. `%mcp trace` has the same picture a click
away, above its table; the picture is plain SVG, so it stays in a saved or exported notebook.
"""),
    code("""
%mcp trace demo --last 5 --diagram
"""),
    md(f"""
## 4. Cancellation

Either side may cancel a request it sent with `notifications/cancelled`, naming the request's `id`
([Cancellation]({SPEC}/basic/utilities/cancellation)). The receiver SHOULD stop working on it and SHOULD
NOT answer it. We start a long count, wait for its first progress notification, and cancel:
"""),
    code("""
counting = mcp.start("demo.count_slowly", steps=50, seconds_per_step=0.1)
deadline = time.monotonic() + 10
while not counting.progress and time.monotonic() < deadline:  # wait for the first progress
    time.sleep(0.05)
counting.cancel()
while "notifications/cancelled" not in methods(demo.trace) and time.monotonic() < deadline:
    time.sleep(0.05)  # the notification leaves from the connection's own thread
methods(demo.trace)[-4:]
"""),
    code("""
show(last(demo.trace, "notifications/cancelled"))
"""),
    md("""
The request's `id` in `requestId` says which request to stop. No result for it follows: the server
dropped the work.

## 5. Errors on the wire

An unknown tool is answered with a JSON-RPC `error` object (a *protocol error*), while a tool that
fails is answered with a normal `result` flagged `isError: true` (workshop 04 explains when to use which):
"""),
    code("""
import contextlib

from mcp_notebook import JSONRPCError

with contextlib.suppress(JSONRPCError):  # the client raises it; here we only want the message
    demo.call_tool("no_such_tool", {})
show(last(demo.trace, "error"))
"""),
    code("""
%mcp call demo.divide a=1 b=0
show(last(demo.trace, "result"))
"""),
    md(f"""
## 6. `list_changed`: when the tools change

A server whose tools can change declares `tools: {{"listChanged": true}}` and sends
`notifications/tools/list_changed` when they do; the client then lists them again
([Tools > List Changed Notification]({SPEC}/server/tools#list-changed-notification)). The notebook's own
server does that every time you redefine a tool. Define one, call it, redefine it, call it again:
"""),
    code('''
%%mcp_tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x
'''),
    code("""
%mcp call double x=21
"""),
    code('''
%%mcp_tool
def double(x: int, times: int = 2) -> int:
    """x, times times (the new version of the tool)."""
    return times * x
'''),
    code("""
%mcp call double x=21 times=3
"""),
    code("""
%mcp trace local
"""),
    md("""
After the redefinition the server sent `notifications/tools/list_changed`, and before the next call the
client fetched `tools/list` again: its copy of the tool's schemas (used, for one, to check the structured
result) is now the new one.

## 7. The same conversation from plain Python

None of this needs the notebook magics. `mcp_notebook.Client` speaks MCP from any `asyncio` code (a
script, a test, this async cell); give it a command for stdio, a URL for HTTP or a `Server` for in
memory. Its `trace` holds the raw text of every message:
"""),
    code("""
import asyncio

from mcp_notebook import Client

async with Client([sys.executable, "-m", "mcp_notebook.demo_server"]) as client:
    await client.list_tools()
    started = asyncio.Event()
    task = asyncio.create_task(
        client.call_tool(
            "count_slowly",
            {"steps": 50, "seconds_per_step": 0.1},
            progress_callback=lambda progress, total, message: started.set(),
        )
    )
    await asyncio.wait_for(started.wait(), timeout=10)
    task.cancel()  # cancelling the task sends notifications/cancelled
    with contextlib.suppress(asyncio.CancelledError):
        await task
    result = await client.call_tool("greet", {"name": "Python"})

for entry in client.trace:
    print("→" if entry.direction == "out" else "←", entry.raw[:160])
"""),
    code("""
result
"""),
    md(f"""
## 8. The 2026-07-28 era: no handshake, every request says who is asking

In `2026-07-28` ([changelog]({MODERN}/changelog)) the protocol became stateless: there is no `initialize`,
no `notifications/initialized` and no session. A client MAY first ask `server/discover` which versions and
capabilities the server has ([Discover]({MODERN}/server/discover)); then **every request** carries, in its
`params._meta`, the protocol version, the client's capabilities and its name
(`io.modelcontextprotocol/protocolVersion`, `.../clientCapabilities`, `.../clientInfo`), and every result
says `resultType`. Any request can go to any server process, which is what lets a server scale out.

This is what our client does by default (`era="auto"`): it probes `server/discover` and uses the modern
era when the server answers it, and falls back to the `initialize` handshake when it does not. Connect the
same demo server again without `era`:
"""),
    code("""
modern = mcp.connect("demo_modern", [sys.executable, "-m", "mcp_notebook.demo_server"])
modern.call_tool("greet", {"name": "Grace"})
modern.negotiated_version.name, methods(modern.trace)
"""),
    code("""
show(last(modern.trace, "server/discover"))
show(last(modern.trace, "tools/call"))
"""),
    md("""
The first message is `server/discover`, not `initialize`, and the `tools/call` request carries the
version and the capabilities itself, in `_meta`. Some features moved too: the server can no longer send
requests of its own (a form or a model reply is asked for in a result with `resultType: "input_required"`,
and the client retries with the answers), `ping` and `logging/setLevel` are gone, and list changes arrive
on a `subscriptions/listen` stream the client opens.
"""),
    code("""
%mcp disconnect demo
%mcp disconnect demo_modern
"""),
    md("""
## What you saw

- in the legacy era (up to 2025-11-25) connecting is `initialize` → result → `notifications/initialized`,
  agreeing on a version and on capabilities; in 2026-07-28 there is no handshake: `server/discover`, then
  the version and capabilities travel in each request's `_meta`;
- requests and responses are paired by `id`; notifications have none and get no answer;
- progress notifications carry the request's `progressToken`; cancellation names the request's `id`;
- protocol errors are `error` objects with a code, tool failures are results with `isError`;
- `list_changed` tells the client to list again;
- `Client` and `client.trace` show the same conversation without a notebook.
"""),
]
