"""Workshop 08: the lesson's end-to-end design task, built, exercised and checked."""

from __future__ import annotations

from _cells import Cell, code, md

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"

CELLS: list[Cell] = [
    md(f"""
# 08 · Design exercise: a project assistant, end to end

The task: an MCP server that helps with one software project. Each need maps to the primitive whose
**controller** fits it (workshop 05), and to the client feature that keeps the person in charge:

| need | MCP piece | who controls it |
|---|---|---|
| stay inside the project | the client's [**roots**]({SPEC}/client/roots) | the user, via the host |
| the project's README as context | a **resource** `project://readme` | the application |
| a summary of the README | [**sampling**]({SPEC}/client/sampling): the host's model | the client, its user |
| the summary's language | [**form elicitation**]({SPEC}/client/elicitation): ask the person | the user |
| filing an issue | a **tool** `create_issue` (it changes something: say so) | the model, with approval |
| how reviews are written | a **prompt** `review_format` | the user |
| a long report | a tool that can run as a **task** (the caller polls, may cancel) | the model |

Design first, then build: the server below is one possible answer. Read it against the table.
"""),
    code("""
%load_ext mcp_notebook
"""),
    md("""
## 1. The project on disk

A throw-away folder with a README and a few source files stands in for the project.
"""),
    code("""
import tempfile
from pathlib import Path

project = Path(tempfile.mkdtemp(prefix="project-"))
(project / "README.md").write_text(
    "# Tidy\\n\\nTidy sorts the files of a folder into sub-folders by type.\\n"
    "Run `tidy PATH`. Nothing is deleted; a dry run shows the plan first.\\n"
)
(project / "src").mkdir()
(project / "src" / "tidy.py").write_text("def plan(path): ...\\n")
(project / "tests").mkdir()
(project / "tests" / "test_tidy.py").write_text("def test_plan(): ...\\n")
sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
"""),
    md("""
## 2. The server

One `Server`, each piece a few lines. Notice what each tool *promises* in its annotations, and that no
tool takes a path or a secret from the model: the project's scope comes from the client's roots.
"""),
    code('''
import asyncio
from typing import Annotated, Literal
from urllib.parse import unquote, urlparse

from mcp_notebook import Context, Field, Server, ToolError

assistant = Server("project", title="Project assistant")
ISSUES: list[dict[str, object]] = []


async def project_roots(ctx: Context) -> list[Path]:
    """The folders the client shared (file:// roots); nothing else is ever read."""
    if "roots" not in ctx.client_capabilities:
        raise ToolError("this client shares no roots: tell it which project folder to use")
    roots = await ctx.list_roots()
    return [Path(unquote(urlparse(r["uri"]).path)) for r in roots if r["uri"].startswith("file://")]


@assistant.resource("project://readme", mime_type="text/markdown")
def readme() -> str:
    """The project's README."""
    return (project / "README.md").read_text()


@assistant.tool(annotations={"readOnlyHint": True})
async def list_files(ctx: Context) -> dict[str, list[str]]:
    """List the files of the project the client shared (its roots)."""
    found = []
    for root in await project_roots(ctx):
        found += sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    return {"files": found}


LANGUAGES = {"type": "string", "title": "Language", "enum": ["en", "fr", "de"]}


@assistant.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
async def summarize_readme(ctx: Context) -> dict[str, str]:
    """Summarize the README in the language the person picks (they are asked)."""
    if "elicitation" not in ctx.client_capabilities or "sampling" not in ctx.client_capabilities:
        raise ToolError("a summary needs a client that can ask its user and its model")
    answer = await ctx.elicit(
        "Which language should the summary be in?",
        {"type": "object", "properties": {"language": LANGUAGES}, "required": ["language"]},
    )
    if answer.get("action") != "accept":
        raise ToolError(f"no summary: the person chose to {answer.get('action')}")
    language = answer["content"]["language"]
    reply = await ctx.sample(
        f"Summarize this README in one sentence, in language {language!r}:\\n\\n{readme()}",
        max_tokens=120,
        systemPrompt="You summarize software projects for their maintainers.",
    )
    return {"language": language, "summary": reply["content"]["text"]}


@assistant.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False})
def create_issue(
    title: Annotated[str, Field(min_length=5, max_length=120)],
    body: str,
    labels: list[Literal["bug", "docs", "feature"]] | None = None,
) -> dict[str, object]:
    """File an issue in the project's tracker.

    Args:
        title: A one-line summary, 5 to 120 characters.
        body: What happened, what was expected, how to reproduce.
        labels: Any of bug, docs, feature.
    """
    for issue in ISSUES:
        if issue["title"] == title:
            raise ToolError(f"an issue titled {title!r} exists already: #{issue['number']}")
    issue = {"number": len(ISSUES) + 1, "title": title, "labels": labels or []}
    ISSUES.append({**issue, "body": body})
    return issue


@assistant.prompt(title="Review format")
def review_format(kind: str = "code") -> str:
    """How reviews of this project are written.

    Args:
        kind: What is reviewed: code or docs.
    """
    return (
        f"Review this {kind} for the Tidy project. Answer in three parts: "
        "1. what is right, 2. what must change (with file and line), 3. what could be better later."
    )


@assistant.tool(annotations={"readOnlyHint": True}, execution={"taskSupport": "required"})
async def full_report(ctx: Context, seconds: Annotated[float, Field(ge=0, le=30)] = 1.0) -> dict[str, object]:
    """A long report on the whole project (slow: callers should run it as a task).

    Args:
        seconds: How long the (simulated) analysis takes.
    """
    steps = 4
    for step in range(1, steps + 1):
        await asyncio.sleep(seconds / steps)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return {"issues": len(ISSUES), "readme_lines": len(readme().splitlines()), "verdict": "tidy enough"}
'''),
    md("""
## 3. A client that shares the project, asks the person and owns the model

A host decides what to share and whom to ask. Here the "person" and the "model" are small functions, so
the notebook runs unattended; in a real host the elicitation is a form (try `%mcp form`) and sampling
goes to the host's model after the person agrees.
"""),
    code("""
from mcp_notebook import Client

asked: list[str] = []


def person(params: dict) -> dict:
    asked.append(params["message"])
    return {"action": "accept", "content": {"language": "fr"}}


def model(params: dict) -> dict:
    prompt = params["messages"][0]["content"]["text"]
    text = "Tidy range les fichiers d'un dossier par type, sans rien supprimer." if "'fr'" in prompt else "?"
    content = {"type": "text", "text": text}
    return {"role": "assistant", "content": content, "model": "stand-in", "stopReason": "endTurn"}


async with Client(
    assistant,
    roots=[{"uri": project.as_uri(), "name": "tidy"}],
    elicitation_handler=person,
    sampling_handler=model,
) as client:
    files = await client.call_tool("list_files")
    summary = await client.call_tool("summarize_readme")
    readme_text = await client.read_resource("project://readme")
    review = await client.get_prompt("review_format", {"kind": "docs"})
    capabilities = client.capabilities()

print(files["structuredContent"])
print(asked, "->", summary["structuredContent"])
print(readme_text["contents"][0]["text"].splitlines()[0], "|", review["messages"][0]["content"]["text"][:40])
print("the client declared:", sorted(capabilities))
"""),
    md("""
Each request the server sent (`roots/list`, `elicitation/create`, `sampling/createMessage`) went only
to a client that **declared** the capability: the server checks `ctx.client_capabilities` first and
otherwise says, as a tool error, what it needs. A client without roots gets exactly that:
"""),
    code("""
async with Client(assistant) as bare:
    refused = await bare.call_tool("list_files")
refused["isError"], refused["content"][0]["text"]
"""),
    md("""
## 4. The tools from the notebook: approval, history, lint

Connected to the notebook, the assistant's tools are called like any remote tool: through the approval
policy and into the history. `create_issue` changes something, so a call to it shows an approval card;
the cell below allows it first, because the next line reads the result (with **Run All** nobody has
clicked Approve yet, and reading a call that awaits approval raises "not finished: awaiting approval").
`create_issue` refuses a duplicate as a *tool error* the model can read and act on.
"""),
    code("""
mcp.connect("project", assistant)
mcp.policy.set("project.create_issue", "allow")  # the next lines read the results: no card to click
title = "Dry run hides moved files"
first = mcp.call("project.create_issue", title=title, body="Run tidy --dry-run ...", labels=["bug"])
again = mcp.call("project.create_issue", title=title, body="again")
first.structured, again.result["isError"], again.result["content"][0]["text"]
"""),
    md("""
**The long report.** `full_report` takes a while, so it declares `execution.taskSupport: "required"`: a
client must start it as a **task**, which answers at once with a task id; the client then polls the
task's status and fetches the result when it is done (or cancels it), instead of holding one request open
for minutes. The notebook does that for you: the call below runs as a task, and `%mcp tasks` lists it.
The lint's *long-calls* rule flags the opposite mistake, a slow tool that cannot run as a task:
"""),
    code('''
@assistant.tool(annotations={"readOnlyHint": True})
async def slow_scan(seconds: float = 0.6) -> dict[str, str]:
    """Scan everything, slowly."""
    await asyncio.sleep(seconds)
    return {"scan": "done"}


mcp.policy.set("project.full_report", "allow")
mcp.policy.set("project.slow_scan", "allow")
report = mcp.call("project.full_report", seconds=0.6)
mcp.call("project.slow_scan")
print(report.structured)
lint = mcp.lint("project", long_call=0.5)
print([f.problem for f in lint.findings if f.rule == "long-calls"])
lint
'''),
    code("""
%mcp tasks project
"""),
    md("""
## 5. Check the design

The contract of `create_issue`, checked point by point: a good issue is filed; a too-short title, a
label off the list and a missing body are refused as tool errors; it is not read-only and says it
destroys nothing.
"""),
    code("""
# the checker never clicks Approve for you: create_issue is allowed since section 4
mcp.check(
    "project.create_issue",
    samples=[
        (
            {"title": "Document the dry run", "body": "The README should say ...", "labels": ["docs"]},
            {"title": "Document the dry run", "labels": ["docs"]},
        )
    ],
    errors=[
        {"title": "bug", "body": "x"},
        {"title": "Crash on empty folders", "body": "x", "labels": ["urgent"]},
        {"title": "No body given"},
    ],
    required=["title", "body"],
    annotations={"readOnlyHint": False, "destructiveHint": False},
)
"""),
    md("""
The whole server, linted from what its calls really returned: no error and no warning (the notes are
advice; `full_report` answered with a task, whose result came by `tasks/result`).
"""),
    code("""
%mcp lint project
"""),
    md("""
## Your turn

Change the design and re-run the checks: add a `close_issue` tool (what should its annotations say?),
make the summary's length a second elicited field (never ask for a token or a password in a form:
the lint flags it), or let `list_files` refuse roots that are not `file://`. Then `%mcp lint project`
and `%mcp trace project --diagram` show what changed, and where.
"""),
]
