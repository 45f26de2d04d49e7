"""Workshop 05: tools, resources and prompts, and who controls each."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
MODERN = "https://modelcontextprotocol.io/specification/2026-07-28"

CELLS: list[Cell] = [
    md(f"""
# 05 · Choosing between tools, resources and prompts

A server can offer three kinds of things. The difference is **who decides to use them**:

| primitive | controlled by | what it is | example |
|---|---|---|---|
| **tool** | the model | an action the model may take, with arguments | search the catalogue |
| **resource** | the application | data the host may read and give as context | the catalogue itself |
| **prompt** | the user | a template the person picks, like a slash command | "recommend me a book" |

In the spec's words (each page's *User Interaction Model* section): tools are
[model-controlled]({SPEC}/server/tools#user-interaction-model), resources are
[application-driven]({SPEC}/server/resources#user-interaction-model), prompts are
[user-controlled]({SPEC}/server/prompts#user-interaction-model).

So ask: *should the model decide to do this, mid-conversation?* Make it a tool. *Is it data the app or
the person chooses to attach?* A resource. *Is it a recipe a person starts on purpose?* A prompt.
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
## 1. A small bookshop server with one of each

- a **tool** `search` (the model looks for books),
- a **resource** `shop://catalogue` (a fixed URI) and a **resource template** `shop://books/{book_id}`
  (a family of URIs, [RFC 6570](https://www.rfc-editor.org/rfc/rfc6570) style),
- a **prompt** `recommend` with a required and an optional argument,
- **completion**: suggestions for a prompt's or a template's arguments as the user types.
"""),
    code('''
from mcp_notebook import EmbeddedResource, JSONRPCError, Server

shop = Server("bookshop", title="A tiny bookshop")
BOOKS = {
    "dune": "Dune, by Frank Herbert (1965). Desert planet, politics, giant worms.",
    "emma": "Emma, by Jane Austen (1815). A matchmaker who misreads everyone.",
    "hobbit": "The Hobbit, by J. R. R. Tolkien (1937). A reluctant burglar and a dragon.",
}
MOODS = ["adventurous", "curious", "happy", "homesick", "hopeful"]


@shop.tool(annotations={"readOnlyHint": True})
def search(words: str) -> list[str]:
    """Find books whose description mentions all the words; returns book ids.

    Args:
        words: Words to look for, separated by spaces.
    """
    wanted = words.lower().split()
    return [book for book, text in BOOKS.items() if all(word in text.lower() for word in wanted)]


@shop.resource("shop://catalogue", mime_type="text/plain")
def catalogue() -> str:
    """Every book in the shop, one per line."""
    return "\\n".join(f"{book}: {text}" for book, text in BOOKS.items())


@shop.resource("shop://books/{book_id}", mime_type="text/plain")
def book(book_id: str) -> str:
    """One book, by id."""
    if book_id not in BOOKS:  # nothing behind this URI: "Resource not found" (sent in each era's code)
        raise JSONRPCError(-32002, "Resource not found", {"uri": f"shop://books/{book_id}"})
    return BOOKS[book_id]


@shop.prompt(title="Recommend a book")
def recommend(mood: str, length: str = "any") -> list:
    """Ask the assistant for a book from this shop that suits your mood.

    Args:
        mood: How you feel today.
        length: short, long or any.
    """
    return [
        f"I feel {mood}. Recommend one book of {length} length from this catalogue, in two sentences.",
        EmbeddedResource("shop://catalogue", text=catalogue(), mime_type="text/plain"),
    ]


@shop.completion
def suggest(ref, argument, arguments):
    typed = argument["value"]
    if ref["type"] == "ref/resource":  # the {book_id} of shop://books/{book_id}
        return [book for book in BOOKS if book.startswith(typed)]
    if argument["name"] == "mood":
        return [mood for mood in MOODS if mood.startswith(typed)]
    return []


shelf = mcp.connect("shop", shop)
shelf.server_capabilities
'''),
    md("""
The server declared `tools`, `resources`, `prompts` and `completions` in its capabilities, in its answer
to `server/discover` (this connection speaks `2026-07-28`; in `2025-11-25` they come in the answer to
`initialize`); a client only uses what was declared.

## 2. The tool: the model's choice

In a chat app the model would call this on its own. Here we play the model:
"""),
    code("""
mcp.policy.set("shop.*", "allow")
found = %mcp call shop.search words=dragon
found.structured
"""),
    md("""
The function returns a list, but up to 2025-11-25 structured content (and its output schema) must be a
JSON object, so the list is wrapped as `{"result": [...]}`. 2026-07-28 allows any JSON value there; the
server wraps it in that era too, so a tool's result has one shape whichever era a client speaks.
"""),
    md(f"""
## 3. Resources: the application's choice

`resources/list` shows fixed resources; `resources/templates/list` shows templates. The host decides
what to read, for example when the person attaches a file in the UI
([Resources]({SPEC}/server/resources)).
"""),
    code("""
%mcp resources shop
"""),
    code("""
%mcp read shop://catalogue
"""),
    md("""
A template is read by filling in its variables: any URI that matches it is readable, though none is
listed.
"""),
    code("""
%mcp read shop://books/hobbit
"""),
    md(f"""
A URI with nothing behind it is a protocol error, *Resource not found*, with the URI in `data`
([Resources > Error Handling]({SPEC}/server/resources#error-handling)). Its code depends on the era:
`-32002` up to `2025-11-25`, and `-32602` (*Invalid params*) in `2026-07-28`, which must not send
`-32002` any more ([Resources > Error Handling]({MODERN}/server/resources#error-handling); clients
accept both). The server answers so for a URI that matches nothing, and our `book` function raises the
`-32002` error for a book the shop does not have; the server sends it in the code of the era each request
was made in. Here is the same shop read in both eras (a second connection asks for the legacy one):
"""),
    code("""
shelf_2025 = mcp.connect("shop_2025", shop, era="legacy")
for client in [shelf, shelf_2025]:
    for uri in ["shop://authors/austen", "shop://books/moby-dick"]:
        try:
            client.read_resource(uri)
        except JSONRPCError as error:
            print(client.negotiated_version.name, error.code, error.message, error.data)
mcp.disconnect("shop_2025")
"""),
    md(f"""
## 4. Prompts: the user's choice

A prompt is offered to the person (say, as `/recommend` in a chat box). Getting it fills in the
arguments and returns **messages** ready to send to the model; a message can carry a resource too
([Prompts]({SPEC}/server/prompts)). Prompt arguments are always strings.
"""),
    code("""
%mcp prompts shop
"""),
    code("""
%mcp prompt shop.recommend mood=curious length=short
"""),
    md("""
A missing required argument is a protocol error, `-32602`:
"""),
    code("""
try:
    shelf.get_prompt("recommend", {"length": "short"})
except JSONRPCError as error:
    print(error.code, error.message)
"""),
    md(f"""
## 5. Completion: help while typing

While the person types a prompt argument or a template variable, the host can ask the server for
suggestions with `completion/complete`; a reference says which prompt or template is meant
([Completion]({SPEC}/server/utilities/completion)).
"""),
    code("""
shelf.complete({"type": "ref/prompt", "name": "recommend"}, {"name": "mood", "value": "ho"})
"""),
    code("""
shelf.complete({"type": "ref/resource", "uri": "shop://books/{book_id}"}, {"name": "book_id", "value": "h"})
"""),
    md("""
## 6. Try it: which one would you make?

For each, decide: tool, resource or prompt? (One answer each, but arguing is the point.)

1. the shop's opening hours;
2. "order this book for me";
3. "write a review of the last book I read, in my usual style";
4. today's price of a book, which changes every hour.

*Suggested answers:* 1 a resource (data the app can attach); 2 a tool (an action, with a human approving
it); 3 a prompt (the person starts it on purpose); 4 a resource if the app shows it, or a tool if the
model should look it up when a question needs it: both are fine, and servers often offer both.
"""),
    code("""
%mcp disconnect shop
"""),
    md("""
Next: **06 · The protocol under the hood**.
"""),
]
