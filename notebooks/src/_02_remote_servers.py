"""Workshop 02: calling remote servers, over stdio and over Streamable HTTP."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
MODERN = "https://modelcontextprotocol.io/specification/2026-07-28"

CELLS: list[Cell] = [
    md(f"""
# 02 · Calling remote servers

An MCP **host** (a chat app, an IDE, this notebook) runs one **client** per **server** it talks to. The
server can be a program on your machine or a service on the web; the messages are the same JSON-RPC
either way, only the *transport* changes ([Transports]({SPEC}/basic/transports)):

- **stdio**: the client starts the server as a subprocess and writes messages to its stdin, one per line;
  the answers come back on its stdout.
- **Streamable HTTP**: the server listens at one URL; the client POSTs each message and reads the answer
  as JSON or as a stream of server-sent events.

In this workshop you will connect to a server over each transport, call its tools, and look at every kind
of content a tool can return. Everything runs on this machine; nothing goes over the network.
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
## 1. Connect over stdio

`mcp_notebook` ships a small demo server, `python -m mcp_notebook.demo_server`. The magic
`%mcp connect demo -- python -m mcp_notebook.demo_server` starts it, but `python` on your `PATH` may
not be the Python running this notebook. `sys.executable` always is, so we connect from Python:
"""),
    code("""
import sys

demo = mcp.connect("demo", [sys.executable, "-m", "mcp_notebook.demo_server"])
demo.server_info
"""),
    md(f"""
Connecting first settled which protocol version to speak. MCP has two eras:

- up to `2025-11-25`, a connection starts with the
  [initialization]({SPEC}/basic/lifecycle#initialization) handshake: the client sends `initialize` with
  the version it speaks, the server answers with its name, version and **capabilities** (what it offers),
  and the client confirms with `notifications/initialized`;
- since `2026-07-28` there is no handshake: the client may ask [`server/discover`]({MODERN}/server/discover)
  for the server's versions and capabilities, and then every request carries the version and the client's
  own capabilities in its `_meta`.

Our client speaks both. By default (`era="auto"`) it asks `server/discover` and falls back to the
handshake if the server does not answer it; the demo server is dual-era, so this connection is a
`2026-07-28` one. (`mcp.connect(..., era="legacy")`, or `%mcp connect demo --era legacy -- ...`, asks for
the handshake: workshop 06 shows both on the wire.) Either way the client now knows the version and the
capabilities, and only uses what the server declared:
"""),
    code("""
demo.negotiated_version.name, demo.server_capabilities
"""),
    md("""
## 2. What can it do?

`tools/list` asks the server for its tools. Each comes with a name, a description for the model and an
input schema; `readOnly` in the *hints* column is the server's claim that the tool changes nothing.
"""),
    code("""
%mcp tools demo
"""),
    md(f"""
## 3. Call a tool, and say who may

Tools are *model-controlled*: in a chat app the model decides to call them. The spec asks hosts to keep
a human in the loop: show what is about to run and let the person deny it
([Tools > User Interaction Model]({SPEC}/server/tools#user-interaction-model)). So a remote call
shows an approval card first: press **Approve**.
"""),
    code("""
%mcp call demo.greet name=Ada
"""),
    md("""
Clicking for every call gets old. An approval **policy** decides ahead of time: here, every tool of
`demo` runs without asking (workshop 03 goes through the policy in detail).
"""),
    code("""
%mcp policy set demo.* allow
"""),
    md("""
`r = %mcp call ...` keeps a **handle** on the call: `r.text` is the text the tool returned,
`r.structured` its structured result (checked against the tool's output schema), `r.result` the whole
`CallToolResult` as it came over the wire.
"""),
    code("""
r = %mcp call demo.forecast city=Oslo days=3
r.structured
"""),
    code("""
r.result
"""),
    md(f"""
## 4. Every kind of content

A tool result is a list of **content blocks** ([Tools > Tool Result]({SPEC}/server/tools#tool-result)).
Besides text there are images and audio (base64 data with a MIME type) ...
"""),
    code("""
%mcp call demo.sunrise width=240 height=144
"""),
    code("""
%mcp call demo.tone frequency=660 seconds=0.4
"""),
    md(f"""
... and two ways of pointing at a **resource** (a piece of data the server can read out):

- a **resource link** (`resource_link`) only names it by URI; the client reads it later with
  `resources/read` if it wants to ([Resource Links]({SPEC}/server/tools#resource-links)),
- an **embedded resource** (`resource`) carries the contents inline
  ([Embedded Resources]({SPEC}/server/tools#embedded-resources)).

`demo.find_docs` returns one of each, after a line of text:
"""),
    code("""
docs = %mcp call demo.find_docs topic=transports
docs
"""),
    code("""
[block["type"] for block in docs.content]
"""),
    md("""
Following the link means reading the resource by its URI (in the live notebook the link also has a
button that does this):
"""),
    code("""
%mcp read demo://guide
"""),
    md(f"""
## 5. Progress and cancellation

A slow tool can report **progress**: the client puts a `progressToken` in the request and the server
sends `notifications/progress` with that token as it works
([Progress]({SPEC}/basic/utilities/progress)). The notebook turns them into a progress bar with a
**Cancel call** button (the call ends as cancelled, with the progress it reached).
"""),
    code("""
%mcp call demo.count_slowly steps=5 seconds_per_step=0.3
"""),
    md(f"""
`mcp.start(...)` starts a call and returns at once. Cancelling it sends `notifications/cancelled` with
the request's id; the server stops, and by the spec it does not answer the cancelled request
([Cancellation]({SPEC}/basic/utilities/cancellation)).
"""),
    code("""
import time

slow = mcp.start("demo.count_slowly", steps=50, seconds_per_step=0.1)
for _ in range(100):  # wait (at most 10 s) for the first progress notification
    if slow.progress:
        break
    time.sleep(0.1)
slow.cancel()
slow.state, slow.progress
"""),
    md("""
## 6. Your connections

`%mcp servers` lists every connection: its transport, the server at the other end, the protocol
version you agreed on, and whether you trust it. `local` is this notebook's own server (workshop 04
puts tools on it).
"""),
    code("""
%mcp servers
"""),
    md(f"""
## 7. The same over HTTP

A server on the web listens at a URL instead. To try that without the network, we define a tiny server
right here and put it behind a [Streamable HTTP]({SPEC}/basic/transports#streamable-http) endpoint on
`127.0.0.1` (only this machine can reach it, as the spec's security warning recommends for local
servers). It wants a **bearer token**, as a real service would
([Authorization]({SPEC}/basic/authorization)).
"""),
    code('''
import secrets

from mcp_notebook import Server
from mcp_notebook.transports import StreamableHTTPServer

weather = Server("weather", title="Weather over HTTP")


@weather.tool(annotations={"readOnlyHint": True})
def temperature(city: str) -> float:
    """Today's temperature in a city, in °C (made up).

    Args:
        city: City name.
    """
    return round(8.0 + 1.5 * (len(city) % 7), 1)


token = secrets.token_urlsafe(16)
endpoint = StreamableHTTPServer(weather, token=token)
url = mcp.runtime.run(endpoint.start("127.0.0.1", 0))  # port 0: any free port
url
'''),
    md("""
Without the token the server refuses us with HTTP 401, before any MCP message is read:
"""),
    code("""
try:
    mcp.connect("weather", url)
except Exception as error:
    print(error)
"""),
    md("""
With an `Authorization` header it works. (The magic form is
`%mcp connect weather URL --header "Authorization: Bearer $WEATHER_TOKEN"`, where `$WEATHER_TOKEN` is
read from the environment so the secret stays out of the notebook.)
"""),
    code("""
mcp.connect("weather", url, headers={"Authorization": f"Bearer {token}"})
mcp.policy.set("weather.*", "allow")
%mcp call weather.temperature city=Lima
"""),
    md("""
The conversation over HTTP has the same messages as over stdio: `server/discover`, `tools/list`,
`tools/call`. Only the envelope differs: each message is an HTTP POST, whose headers repeat what the
server routes by (`Mcp-Method`, and `Mcp-Name` for a call). There is no session to keep: any request
could go to another copy of the server. (A `2025-11-25` server would see `initialize` and
`notifications/initialized` first, and a session id in an `Mcp-Session-Id` header.) Workshop 06 reads
such traces in detail.
"""),
    code("""
%mcp trace weather
"""),
    md(f"""
`%mcp serve` does the same for the notebook's *own* tools, with a random token, Host/Origin checks and
a console showing every incoming call. It prints a ready-to-paste configuration for other MCP clients
(Claude, an IDE, the MCP Inspector, another notebook). Stop it with `%mcp serve --stop`.

## 8. Hang up

Disconnecting ends the connection ([Lifecycle > Shutdown]({SPEC}/basic/lifecycle#shutdown)): for stdio
the client closes the server's stdin and the server exits; for HTTP in the `2025-11-25` era the client
sends a `DELETE` with its session id, and in `2026-07-28`, where there is no session, it just stops.
"""),
    code("""
%mcp disconnect demo
%mcp disconnect weather
mcp.runtime.run(endpoint.stop())
%mcp servers
"""),
    md("""
## What you saw

- a client talks to a server over **stdio** (a subprocess) or **Streamable HTTP** (a URL, often with
  a token in a header), with the same JSON-RPC messages either way;
- the client and the server agree on a protocol version and capabilities first: with the `initialize`
  handshake up to `2025-11-25`, with `server/discover` and per-request `_meta` since `2026-07-28`;
- tool results are content blocks: text, image, audio, resource links and embedded resources, plus an
  optional structured value;
- long calls report progress and can be cancelled;
- a person (or a policy they set) approves what runs.

Next: **03 · Forms and approvals**.
"""),
]
