"""The exercise that ends each workshop: a tool contract to design, and a cell that checks it.

Each exercise states a contract, gives a solution to start from (a learner rewrites or breaks it on
purpose), and ends with ``mcp.check(...)``: lint, required parameters, annotations, sample calls that must
succeed and match the outputSchema, bad calls that must come back as tool errors (``isError``).
"""

from __future__ import annotations

from _cells import Cell, code, md

_HOW = """
Write the tool in the next cell (a solution is there to start from: rewrite it, or break it on purpose)
and run the check after it. Each point passes or fails on its own, with what the checker saw; `%mcp lint
TOOL` explains a failing contract point, with the fix.
"""

REMOTE_SERVERS: list[Cell] = [
    md(f"""
## Exercise: a tool another notebook can call

Design `to_fahrenheit`, a tool a remote client could rely on. Its contract:

- one required parameter `celsius`, a number no lower than absolute zero (-273.15);
- a structured result `{{"fahrenheit": ...}}`, rounded to two decimals;
- it changes nothing, and says so (`readOnlyHint`);
- anything else (below absolute zero, not a number) is refused as a tool error the caller can read.
{_HOW}"""),
    code('''
from typing import Annotated

from mcp_notebook import Field


@mcp.tool(annotations={"readOnlyHint": True})
def to_fahrenheit(celsius: Annotated[float, Field(ge=-273.15)]) -> dict[str, float]:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: Degrees Celsius, no lower than absolute zero (-273.15).
    """
    return {"fahrenheit": round(celsius * 9 / 5 + 32, 2)}
'''),
    code("""
mcp.check(
    "to_fahrenheit",
    samples=[({"celsius": 100}, {"fahrenheit": 212.0}), ({"celsius": -40}, {"fahrenheit": -40.0})],
    errors=[{"celsius": -300}, {"celsius": "hot"}],
    required=["celsius"],
    annotations={"readOnlyHint": True},
)
"""),
]

FORMS_AND_APPROVALS: list[Cell] = [
    md(f"""
## Exercise: a form people can fill without help

Design `reserve_table`, whose form must guide a person. Its contract:

- `guests` is required, 1 to 12; `time` is required and one of 18:00, 19:30, 21:00 (a drop-down);
- `note` is optional text of at most 200 characters;
- it books something but destroys nothing: `readOnlyHint` false, `destructiveHint` false;
- a party of 0 or a time off the list is refused as a tool error.

Try `%mcp form reserve_table` too: the constraints become the form's widgets and its validation.
{_HOW}"""),
    code('''
from typing import Annotated, Literal

from mcp_notebook import Field


@mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False})
def reserve_table(
    guests: Annotated[int, Field(ge=1, le=12)],
    time: Literal["18:00", "19:30", "21:00"],
    note: Annotated[str, Field(max_length=200)] = "",
) -> dict[str, object]:
    """Reserve a table at the restaurant.

    Args:
        guests: How many people, 1 to 12.
        time: When to arrive.
        note: Anything the kitchen should know (allergies, a birthday).
    """
    return {"reserved": True, "guests": guests, "time": time}
'''),
    code("""
mcp.check(
    "reserve_table",
    samples=[({"guests": 2, "time": "19:30"}, {"reserved": True, "guests": 2})],
    errors=[{"guests": 0, "time": "19:30"}, {"guests": 2, "time": "17:00"}],
    required=["guests", "time"],
    annotations={"readOnlyHint": False, "destructiveHint": False},
)
"""),
]

TOOL_CONTRACTS: list[Cell] = [
    md(f"""
## Exercise: the two kinds of errors, on purpose

Design `split_bill`. Its contract:

- `total_eur` (required, not negative) and `people` (required, at least 1);
- the result `{{"share_eur": ...}}`, rounded to cents, checked against an outputSchema;
- a bill split more than 50 ways is refused with a `ToolError` whose message says the limit;
- every refusal is a tool error (`isError` with a message), never a protocol error.
{_HOW}"""),
    code('''
from typing import Annotated

from mcp_notebook import Field  # and ToolError, imported at the top of this notebook


@mcp.tool(annotations={"readOnlyHint": True})
def split_bill(
    total_eur: Annotated[float, Field(ge=0)], people: Annotated[int, Field(ge=1)]
) -> dict[str, float]:
    """Split a bill evenly.

    Args:
        total_eur: The whole bill, in euros.
        people: How many people share it.
    """
    if people > 50:
        raise ToolError(f"a bill can be split at most 50 ways, not {people}")
    return {"share_eur": round(total_eur / people, 2)}
'''),
    code("""
mcp.check(
    "split_bill",
    samples=[({"total_eur": 100, "people": 3}, {"share_eur": 33.33})],
    errors=[
        {"total_eur": 100, "people": 0},
        {"total_eur": -5, "people": 2},
        {"total_eur": 100, "people": 51},
    ],
    required=["total_eur", "people"],
)
"""),
]

TOOLS_RESOURCES_PROMPTS: list[Cell] = [
    md(f"""
## Exercise: when it should be a tool

A model needs to count the words of a text it was given: that is an action on input, so a tool (a
resource would be data the application picks; a prompt, a template the user picks). Design `count_words`:

- `text` is required and not empty;
- the result `{{"words": N}}`; it reads nothing and changes nothing (`readOnlyHint`).
{_HOW}"""),
    code('''
from typing import Annotated

from mcp_notebook import Field


@mcp.tool(annotations={"readOnlyHint": True})
def count_words(text: Annotated[str, Field(min_length=1)]) -> dict[str, int]:
    """Count the words of a text (runs of non-space characters).

    Args:
        text: The text to count, not empty.
    """
    return {"words": len(text.split())}
'''),
    code("""
mcp.check(
    "count_words",
    samples=[({"text": "the quick brown fox"}, {"words": 4})],
    errors=[{"text": ""}, {}],
    required=["text"],
    annotations={"readOnlyHint": True},
)
"""),
]

UNDER_THE_HOOD: list[Cell] = [
    md(f"""
## Exercise: a contract, and what it looks like on the wire

Design `shout`: `text` (required) comes back upper-cased as `{{"text": ...}}`; an empty text is a tool
error. Then look at the checker's own conversation with your tool as a sequence diagram: each sample call
is a request and its result; each refusal is a result with `isError` (not a red JSON-RPC error).
Click an arrow to see its JSON.
{_HOW}"""),
    code('''
from mcp_notebook import ToolError


@mcp.tool(annotations={"readOnlyHint": True})
def shout(text: str) -> dict[str, str]:
    """Upper-case a text.

    Args:
        text: What to shout; not empty.
    """
    if not text:
        raise ToolError("there is nothing to shout: text is empty")
    return {"text": text.upper()}
'''),
    code("""
mcp.check("shout", samples=[({"text": "hi"}, {"text": "HI"})], errors=[{"text": ""}], required=["text"])
"""),
    code("""
%mcp trace local --last 4 --diagram
"""),
]
