"""Workshop 03: schema-driven forms, approval cards, the policy, the audit log, and headless runs."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"

CELLS: list[Cell] = [
    md(f"""
# 03 · Forms and approvals

Two questions come before any tool call: **what** to send, and **whether** to send it.

- *What*: every tool publishes an `inputSchema`, a JSON Schema of its arguments
  ([Tools > Tool]({SPEC}/server/tools#tool)). The notebook turns that schema into a form, and checks
  the values against it before anything leaves.
- *Whether*: the spec says there SHOULD always be a human in the loop who can deny a tool call
  ([Tools > User Interaction Model]({SPEC}/server/tools#user-interaction-model)). The notebook asks
  with an approval card, lets you write a policy instead, and records every decision.
"""),
    code("""
%load_ext mcp_notebook
"""),
    code("""
import sys

demo = mcp.connect("demo", [sys.executable, "-m", "mcp_notebook.demo_server"])
"""),
    md("""
## 1. A form from a schema

`%mcp form TOOL` builds a form from the tool's input schema. The demo server's `forecast` takes a
required `city` and a `days` between 1 and 7 (default 3). Fill it in and press **Call** (an approval card
appears under the form, since `demo` is a remote server).
"""),
    code("""
%mcp form demo.forecast
"""),
    md("""
## 2. A richer schema

Real tools take more than a string and a number. This notebook tool has a nested object (`Traveller`),
an array of objects (`stops`), an enum (`travel_class`), string formats (`email`, `date`), an optional
value and bounds. Python type hints say all of it, and the schema is derived from them:
"""),
    code('''
import datetime as dt
import json
from dataclasses import dataclass
from typing import Annotated, Literal

from mcp_notebook import Field


@dataclass
class Traveller:
    name: str
    email: Annotated[str, Field(format="email")]
    age: Annotated[int, Field(ge=0, le=120)] = 30


@dataclass
class Stop:
    city: str
    nights: Annotated[int, Field(ge=1, le=14)] = 1


@mcp.tool(annotations={"readOnlyHint": True})
def plan_trip(
    traveller: Traveller,
    start: dt.date,
    stops: Annotated[list[Stop], Field(min_items=1)],
    travel_class: Literal["economy", "business", "first"] = "economy",
    notes: str | None = None,
) -> str:
    """Plan a trip: how many nights, and when it ends.

    Args:
        traveller: Who travels.
        start: First day of the trip.
        stops: Where to stay, in order.
        travel_class: Seat class.
        notes: Anything else.
    """
    nights = sum(stop.nights for stop in stops)
    end = start + dt.timedelta(days=nights)
    cities = ", ".join(stop.city for stop in stops)
    return f"{traveller.name}: {cities}; {nights} nights from {start} to {end}, {travel_class}"


print(json.dumps(mcp.tool_def("plan_trip")["inputSchema"], indent=2))
'''),
    md("""
Note `$defs` and `$ref`: a named type is described once and referred to wherever it is used. The form
follows the references, adds a row per stop, offers the enum as a choice and marks required fields:
"""),
    code("""
form = %mcp form plan_trip
form
"""),
    md("""
Values are checked with JSON Schema **before** anything is sent, and each message is shown next to its
field. A number outside its bounds is kept as you typed it and flagged at once, while you type; a count
of the problems sits next to the **Call** button, in case the field is scrolled out of view. The same
check from code, with an email that is not one and a stop without its required city:
"""),
    code("""
form.form.set_value(
    {
        "traveller": {"name": "Ada", "email": "ada-at-example"},
        "start": "2026-05-01",
        "stops": [{"nights": 2}],
    }
)
[(".".join(map(str, problem.path)), problem.message) for problem in form.form.validate()]
"""),
    md("""
`form.submit(values)` does what the **Call** button does: invalid values raise `FormInvalid` with the
same messages (nothing is sent); valid ones start the call, whose result shows under the form above. The
handle is returned here too:
"""),
    code("""
trip = form.submit(
    {
        "traveller": {"name": "Ada", "email": "ada@example.org"},
        "start": "2026-05-01",
        "stops": [{"city": "Lyon", "nights": 2}, {"city": "Nice"}],
    }
)
trip.wait(30).text
"""),
    md(f"""
## 3. Approval cards

A call to a remote tool shows a card: the server, the tool, its annotations and the exact arguments,
with **Approve**, **Deny** and **Always allow this tool**. The cell does not wait for your click (a
cell that blocked could never receive it): `%mcp call` returns a pending handle at once, and `await`
waits for it in the next cell. Annotations such as `readOnlyHint` are shown as *claims*: clients MUST
treat them as untrusted unless the server is trusted ([Tools > Tool]({SPEC}/server/tools#tool)).
"""),
    code("""
hello = %mcp call demo.greet name=Ada
"""),
    md("""
The card above is the handle's live output: it turns into the result once you click. A value printed
now would stay as it was printed, so ask the handle after the call ended:
"""),
    code("""
await hello
hello.state, hello.entry.decided_by, hello.text
"""),
    md("""
From code, a waiting handle is answered with `handle.approve()`, `handle.approve(always=True)` or
`handle.deny()`. A denial is not an exception: the handle ends `denied` with an error *result*, just as
a model would see it. Run this cell and leave the card alone; the code denies it. (Run headless there is
no card: the policy has already decided, see section 7.)
"""),
    code("""
quotient = mcp.call("demo.divide", a=1, b=4)
if quotient.state == "awaiting-approval":
    quotient.deny()
quotient.state, quotient.text
"""),
    md("""
## 4. The policy: deciding ahead of time

`%mcp policy` shows the rules. A call is decided by, in order:

1. a rule for exactly `SERVER.TOOL`,
2. the most specific matching pattern (`demo.*`, `*.delete_*`); an `allow` pattern never covers a tool
   that declares `destructiveHint: true`,
3. your "always allow" clicks in this session,
4. the defaults: the notebook's own tools run unless they declare `destructiveHint`; remote tools ask.
"""),
    code("""
%mcp policy
"""),
    code("""
%mcp policy set demo.divide deny
%mcp call demo.divide a=1 b=4
"""),
    md("""
**Always allow** on a card adds the tool to this session's list; from code:
"""),
    code("""
mcp.policy.always_allow("demo", "greet")
%mcp call demo.greet name=Grace
"""),
    md("""
Trust is separate from rules: `%mcp policy trust demo` says you believe what `demo` claims about its
tools. With `auto_allow_read_only` on, a trusted server's read-only tools then run without asking.
`mcp.policy.decide` tells you what would happen, without calling anything:
"""),
    code("""
%mcp policy trust demo
mcp.config.auto_allow_read_only = True
mcp.policy.decide("demo", "sunrise", mcp.tool_def("demo.sunrise"))
"""),
    md("""
A tool that says it is destructive is treated with care even on your own server, and even when a
pattern allows everything:
"""),
    code('''
@mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": True})
def cancel_trip(traveller: str) -> str:
    """Cancel every booking of a traveller.

    Args:
        traveller: Who cancels.
    """
    return f"cancelled all trips of {traveller}"


mcp.policy.set("local.*", "allow")
mcp.policy.decide("local", "cancel_trip", mcp.tool_def("cancel_trip"))
'''),
    md("""
## 5. The audit log

Every call and every decision lands in the audit log: who decided, how it went, how long it took.
Each row also has the call as code, a `%mcp call` line and a Python call, ready to copy into a cell:
"""),
    code("""
%mcp history
"""),
    code("""
history = mcp.history()
calls = [entry for entry in history if entry.kind == "call"]
print(calls[0].magic)
print(calls[0].python)
"""),
    md(f"""
## 6. When the server asks you: elicitation

Forms also work the other way round. With **elicitation** a server asks the *user* for input in the
middle of a call, sending a JSON Schema of what it needs
([Elicitation]({SPEC}/client/elicitation)). `demo.book_table` does that: approve the call, then answer
its form with **Accept**, **Decline** or **Dismiss** (MCP's `cancel` answer: undecided).
"""),
    code("""
booking = %mcp call demo.book_table restaurant=Chez-MCP
"""),
    code("""
await booking
booking.text
"""),
    md("""
## 7. Headless: nobody to click

A notebook run by `nbclient`, `papermill` or a CI job has no one to click. Then
`MCP_NOTEBOOK_HEADLESS=1` says so, and `MCP_NOTEBOOK_HEADLESS_POLICY=allow` (or `deny`, the default)
says what happens to every call that would have asked: the policy decides, the decision is logged as
"headless policy", a server's elicitation is declined, a sampling request is rejected, and nothing ever
waits. Explicit rules still apply: `demo.divide` stays denied. This is how this notebook runs in the
project's tests.
"""),
    code("""
mcp.headless, mcp.config.effective_headless_policy()
"""),
    code("""
%mcp disconnect demo
"""),
    md("""
## What you saw

- a tool's `inputSchema` drives a form, and values are validated before they are sent;
- remote calls wait for approval without blocking the notebook; denials are results, not exceptions;
- a policy (rules, always-allow, trust) decides ahead of time, and is careful with destructive tools;
- every decision is in the audit log, with the call as code;
- elicitation is the server asking you, through the same kind of form;
- headless runs decide by a declared policy and never hang.

Next: **04 · Designing a tool contract and the two kinds of errors**.
"""),
]
