"""Workshop 04: a tool's contract (schemas from type hints) and the two kinds of errors."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"

CELLS: list[Cell] = [
    md(f"""
# 04 · Designing a tool contract, and the two kinds of errors

A model never sees your code. It sees the tool's **contract**: a `name`, a `description`, an
`inputSchema` saying which arguments are allowed, optionally an `outputSchema` describing the structured
result, and `annotations` hinting at its behaviour ([Tools > Tool]({SPEC}/server/tools#tool)). A good
contract lets the model call the tool right the first time, and a good error lets it fix a wrong call by
itself.

In this workshop you will write a tool whose contract comes from Python type hints, then meet both kinds
of errors the spec distinguishes ([Tools > Error Handling]({SPEC}/server/tools#error-handling)).
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
## 1. Type hints are the contract

- a parameter's **type** becomes its JSON Schema type (`Literal[...]` an `enum`, a dataclass an object),
- `Annotated[int, Field(ge=1, le=30)]` adds **constraints** (`minimum`, `maximum`, `pattern`, ...),
- a **default** makes a parameter optional; no default makes it `required`,
- the **docstring** gives the description, and its `Args:` section describes each parameter,
- the **return type** becomes the `outputSchema`,
- `ToolError` is how the tool says "no" in words the model can act on.

We put the tools on a small server of their own, `hotel`, and connect to it in memory (a `Server` object
instead of a command or a URL; the messages are still serialized JSON-RPC).
"""),
    code('''
from dataclasses import dataclass
from typing import Annotated, Literal

from mcp_notebook import Field, Server, ToolError

hotel = Server("hotel", title="Hotel front desk")
PRICES = {"single": 80.0, "double": 110.0, "suite": 300.0}


@dataclass
class Quote:
    room: str
    nights: int
    total_eur: float


@hotel.tool(title="Price a stay", annotations={"readOnlyHint": True})
def quote(
    room: Literal["single", "double", "suite"],
    nights: Annotated[int, Field(ge=1, le=30)],
    breakfast: bool = False,
) -> Quote:
    """Price a hotel stay in euros. Suites can be booked for at most 7 nights.

    Args:
        room: Kind of room.
        nights: How many nights, 1 to 30.
        breakfast: Add breakfast, 15 EUR a night.
    """
    if room == "suite" and nights > 7:
        raise ToolError(
            f"a suite can be booked for at most 7 nights, not {nights}: use nights=7 or another room"
        )
    total = (PRICES[room] + (15.0 if breakfast else 0.0)) * nights
    return Quote(room, nights, total)


@hotel.tool(annotations={"readOnlyHint": True})
def occupancy(day: str) -> float:
    """Share of rooms taken on a day, 0 to 1.

    Args:
        day: A date, YYYY-MM-DD.
    """
    booked = {"2026-05-01": 31, "2026-05-02": 12}
    return booked[day] / 40  # a bug: a day nobody booked is missing from the dict


desk = mcp.connect("hotel", hotel)
mcp.policy.set("hotel.*", "allow")  # our own server: no approval cards in this workshop
'''),
    md("""
Here is the contract the model receives for `quote`, exactly as `tools/list` sends it:
"""),
    code("""
import json

print(json.dumps(mcp.tool_def("hotel.quote"), indent=2))
"""),
    md(f"""
Things to notice:

- `room` is an `enum`: the model can only pick a listed value;
- `nights` has a `minimum` and a `maximum`, and its description repeats them in words;
- `additionalProperties: false`: an argument the function does not take is refused, not ignored;
- the `outputSchema` comes from `Quote` ([Tools > Output Schema]({SPEC}/server/tools#output-schema));
  in 2025-11-25 its root is an object (`type: "object"`), as `structuredContent` is a JSON object.

## 2. A good call: structured content

With an output schema, the result carries the value twice: as `structuredContent` (for programs, and
checked against the schema: servers MUST conform, clients SHOULD validate) and as a JSON text block for
clients that only read text ([Tools > Structured Content]({SPEC}/server/tools#structured-content)).
"""),
    code("""
good = %mcp call hotel.quote room=double nights=2 breakfast=true
good.result
"""),
    md("""
## 3. Tool execution errors: results the model can read

When a call is understood but cannot be carried out, the server answers with a normal **result**
marked `isError: true`, and the reason goes in the content, where the model reads it and can correct
itself. Since 2025-11-25 this includes **input validation errors** (values outside the schema): they
are tool execution errors, not protocol errors.

A value the schema forbids never reaches the function:
"""),
    code("""
invalid = %mcp call hotel.quote room=penthouse nights=40
invalid.result
"""),
    md("""
A rule the schema cannot say (suites: at most 7 nights) is the function's job: `raise ToolError(...)`
with a message that says what to do instead.
"""),
    code("""
refused = %mcp call hotel.quote room=suite nights=9
refused.result
"""),
    md("""
Any other exception is a bug in the tool. It still becomes an `isError` result (the connection survives
and the model is told something went wrong) but the message is only as good as the exception:
`KeyError: '2026-06-01'` does not tell the model what to do. Catch what you can foresee and raise a
`ToolError` with advice instead.
"""),
    code("""
crashed = %mcp call hotel.occupancy day=2026-06-01
crashed.is_error, crashed.text
"""),
    md("""
A result that is not a number is not an error either. JSON has no NaN or Infinity, so mcp_notebook maps
them one way everywhere: `null` in `structuredContent` (a generated `outputSchema` lets every float be
`null`), spelled out (`NaN`, `Infinity`, `-Infinity`) in the text copy, and NaN again when a `null`
comes back into a float column. A value JSON cannot hold at all (a complex number) is an `isError`
result that names where in the result it sits.
"""),
    code('''
@hotel.tool(annotations={"readOnlyHint": True})
def average_rating(ratings: list[float]) -> float:
    """The mean guest rating; NaN while there are no ratings yet."""
    return sum(ratings) / len(ratings) if ratings else float("nan")


unrated = mcp.call("hotel.average_rating", ratings=[])
unrated.structured, unrated.text
'''),
    md(f"""
## 4. Protocol errors: the request itself was wrong

A **protocol error** is a JSON-RPC `error` object instead of a result: the server could not even try.
Asking for a tool that does not exist is one: `-32602` (*Invalid params*, "Unknown tool")
([Tools > Error Handling]({SPEC}/server/tools#error-handling)). `%mcp call` refuses unknown tools before
sending anything, so we use the connection's client directly, which sends whatever we ask:
"""),
    code("""
from mcp_notebook import JSONRPCError

try:
    desk.call_tool("book_room", {"room": "double"})
except JSONRPCError as error:
    print("code:", error.code)
    print("message:", error.message)
"""),
    md("""
So is a request that breaks the shape of `tools/call`, such as one without a tool `name`:
"""),
    code("""
try:
    desk.request("tools/call", {"arguments": {"room": "double"}})
except JSONRPCError as error:
    print("code:", error.code)
    print("message:", error.message)
"""),
    md("""
On the wire the two kinds look different: a tool execution error is a `result` (flagged `isError`), a
protocol error is an `error` with a code. Clients SHOULD pass tool execution errors to the model so it
can self-correct; protocol errors they MAY pass on.
"""),
    code("""
%mcp trace hotel --last 10
"""),
    md("""
## 5. A checklist for your own tools

| the model needs ... | write ... | it becomes ... |
|---|---|---|
| which values are allowed | `Literal`, `Annotated[int, Field(ge=1)]`, dataclasses | `inputSchema` |
| what a parameter means | a docstring with an `Args:` section | `description`s |
| what it gets back | a return type (dataclass, TypedDict, ...) | `outputSchema` + `structuredContent` |
| how to recover from "no" | `raise ToolError("what went wrong, and what to try")` | `isError: true` result |
| whether it is safe | `annotations={"readOnlyHint": True}` or `destructiveHint` | `annotations` (hints) |

Next: **05 · Choosing between tools, resources and prompts**.
"""),
]
