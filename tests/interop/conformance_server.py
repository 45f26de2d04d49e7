"""The fixture server for the MCP conformance suite's server scenarios, built only with the public API.

Serve it with the CLI and point the suite at it::

    python -m mcp_notebook serve tests/interop/conformance_server.py --http 127.0.0.1:8765 --sse-polling
    conformance server --url http://127.0.0.1:8765/mcp --suite all

Every name and payload below is fixed by the suite (@modelcontextprotocol/conformance 0.1.16,
``src/scenarios/server/*.ts``); the scenario text is in the interop runbook. The file doubles as a tour of
the API: plain functions become tools, prompts and resources; a ``Context`` parameter gives a tool the
protocol (logging, progress, elicitation, sampling); content objects and ``ToolError`` shape the result.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import wave
from typing import Annotated, Any

from mcp_notebook import Audio, Context, EmbeddedResource, Field, Image, Server, ToolError, ToolResult
from mcp_notebook.protocol.errors import JSONRPCError
from mcp_notebook.tools import Tool

server = Server("mcp-notebook-conformance", instructions="Fixtures for the MCP conformance suite.")

# A 1x1 red PNG: the smallest image the suite accepts ("a minimal test image").
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _silent_wav(milliseconds: int = 10, rate: int = 8000) -> bytes:
    """A short mono 8-bit silence, written with the standard library (a "minimal test audio file")."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * (rate * milliseconds // 1000))
    return buffer.getvalue()


# ---- tools: results --------------------------------------------------------------------------------------
# A ``str`` return is one text block; content objects (Image, Audio, EmbeddedResource) are content blocks.
@server.tool
def test_simple_text() -> str:
    """Return a fixed text block."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> Image:
    """Return a 1x1 red PNG (the MIME type is sniffed from the bytes)."""
    return Image(RED_PIXEL_PNG)


@server.tool
def test_audio_content() -> Audio:
    """Return a few milliseconds of silence as WAV."""
    return Audio(_silent_wav())


@server.tool
def test_embedded_resource() -> EmbeddedResource:
    """Return a text resource inline."""
    return EmbeddedResource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool
def test_multiple_content_types() -> ToolResult:
    """Return text, an image and an embedded resource in one result."""
    # ToolResult is the escape hatch for full control over the content list (and structuredContent, isError).
    return ToolResult(
        [
            "Multiple content types test:",
            Image(RED_PIXEL_PNG),
            EmbeddedResource(
                "test://mixed-content-resource",
                text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
                mime_type="application/json",
            ),
        ]
    )


@server.tool
def test_error_handling() -> str:
    """Always fail: a ToolError becomes a result with ``isError: true`` and this message."""
    raise ToolError("This tool intentionally returns an error for testing")


# ---- tools: talking to the client while running ----------------------------------------------------------
# An ``async def`` tool awaits Context methods; a plain ``def`` tool may call them too (they block).
@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Send three info-level log notifications, 50 ms apart (filtered by the client's logging/setLevel)."""
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Report progress 0, 50 and 100 out of 100 (sent only if the caller gave a progressToken)."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(0.05)
        await ctx.report_progress(progress, total=100)
    return "Tool with progress executed successfully"


@server.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Ask the client's model to answer ``prompt`` (sampling/createMessage).

    Args:
        prompt: The prompt to send to the LLM.
    """
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.get("content", {})
    # A sampling result holds one content block, or a list of them since 2025-11-25.
    blocks = content if isinstance(content, list) else [content]
    text = " ".join(block.get("text", "") for block in blocks if block.get("type") == "text")
    return f"LLM response: {text}"


@server.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Ask the user for a username and an email (elicitation/create, form mode).

    Args:
        message: The message to show the user.
    """
    result = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return f"User response: action={result.get('action')}, content={json.dumps(result.get('content', {}))}"


# SEP-1034: every primitive type may carry a default the client pre-fills.
SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}

# SEP-1330: the five ways to spell a choice in an elicitation form.
SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {  # deprecated spelling, still allowed
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


def _elicitation_summary(result: dict[str, Any]) -> str:
    content = json.dumps(result.get("content", {}))
    return f"Elicitation completed: action={result.get('action')}, content={content}"


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicit a form whose fields all have defaults (SEP-1034)."""
    return _elicitation_summary(await ctx.elicit("Please review and update the form fields", SEP1034_SCHEMA))


@server.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicit a form with every enum variant (SEP-1330)."""
    return _elicitation_summary(
        await ctx.elicit("Please select options from the enum fields", SEP1330_SCHEMA)
    )


@server.tool
async def test_reconnection() -> str:
    """Answer only after a pause, so that a server in SSE-polling mode closes the stream first.

    Served with ``--sse-polling``, the HTTP server starts the POST's SSE stream with a priming event (an id
    and a ``retry:`` delay) and ends the connection when the answer takes longer than its polling window
    (0.25 s by default); the client reconnects with GET + ``Last-Event-ID`` and receives this result there
    (SEP-1699, basic/transports#resumability-and-redelivery).
    """
    await asyncio.sleep(0.5)
    return "Reconnection test completed successfully"


# An explicit wire definition, for a schema that type hints cannot say. JSON Schema 2020-12 keywords must
# reach the client untouched: $schema, $defs, additionalProperties (SEP-1613); $anchor, allOf/anyOf and
# if/then/else (SEP-2106, checked by the 0.2 suite, whose schema is a superset of 0.1.16's).
JSON_SCHEMA_2020_12_INPUT: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _describe_contact(**arguments: Any) -> str:
    """The arguments arrive already validated against JSON_SCHEMA_2020_12_INPUT."""
    return f"Received: {json.dumps(arguments, sort_keys=True)}"


server.add_tool(
    Tool(
        _describe_contact,
        {
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features",
            "inputSchema": JSON_SCHEMA_2020_12_INPUT,
        },
        context_param=None,
        wrapped=False,
    )
)


# ---- tools: tasks (2025-11-25 core tasks; the 2026 Tasks extension, io.modelcontextprotocol/tasks) -------
# ``task="optional"``: a 2025-11-25 client may ask for a task; a 2026 client that declares the extension
# always gets one. ``task="required"``: only ever as a task. Names and payloads are fixed by the suite's
# tasks-* scenarios (0.2.0-alpha.12).
@server.tool
def greet(name: str) -> str:
    """Greet someone (never a task)."""
    return f"Hello, {name}!"


@server.tool(task="optional")
async def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
    """Wait ``seconds`` (cooperatively: a cancelled task stops waiting), then answer."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        ctx.check_cancelled()
        await asyncio.sleep(min(0.05, max(0.0, deadline - asyncio.get_running_loop().time())))
    return f"computed {label or 'result'} after {seconds} s"


@server.tool(task="required")
async def failing_job() -> str:
    """Fail as a tool (isError), after a short while."""
    await asyncio.sleep(0.5)
    raise ToolError("failing_job failed, as it always does")


@server.tool(task="optional")
async def protocol_error_job() -> str:
    """Fail at the protocol level: the task ends ``failed`` with a JSON-RPC error."""
    raise JSONRPCError(-32603, "protocol_error_job: internal failure")


CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@server.tool(task="optional")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Ask the user to confirm (the task waits ``input_required``), then report."""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA, key="confirm_delete")
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
    return f"{filename}: {'deleted' if confirmed else 'kept'}"


@server.tool(task="optional")
async def multi_input(ctx: Context) -> str:
    """Two questions at once: the task waits with two input requests pending."""
    first, second = await asyncio.gather(
        ctx.elicit("First?", NAME_SCHEMA, key="first"), ctx.elicit("Second?", NAME_SCHEMA, key="second")
    )
    names = [(answer.get("content") or {}).get("name") for answer in (first, second)]
    return "answers: " + ", ".join(str(name) for name in names)


@server.tool(task="required", task_start="explicit")
async def test_tool_with_task(ctx: Context) -> str:
    """Ask for a name first (2026: an MRTR round on the request), then go on as a task and greet."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.1)
    return f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}, from a task!"


# ---- tools: protocol 2026-07-28 (stateless requests, MRTR, subscriptions) ----------------------------------
# In a modern request ``ctx.elicit``/``ctx.sample``/``ctx.list_roots`` end the call with an ``input_required``
# result; the client's retry re-runs the function with the answers replayed in order. ``key=`` names each
# input request on the wire (the suite checks the names).
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """MRTR: ask for a name (elicitation), then greet."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}!"


@server.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """MRTR: ask the client's model a question (sampling), return its answer."""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model said: {answer.get('content', {}).get('text', '')}"


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """MRTR: ask for the client's roots, list them."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)


@server.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """MRTR with requestState: the (sealed) state is verified before the tool runs again."""
    await ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return "state-ok: the request state was verified"


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """MRTR: three input requests in one round (requested concurrently)."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    text = greeting.get("content", {}).get("text", "")
    return f"{text} {name.get('content', {}).get('name')} ({len(roots)} roots)"


@server.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """MRTR over two rounds: the first answer travels in requestState while the second is asked."""
    name = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    color_schema = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
    color = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
    return f"{name.get('content', {}).get('name')} likes {color.get('content', {}).get('color')}"


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """MRTR: a tampered requestState is rejected (-32602) before the tool runs."""
    await ctx.elicit("Please confirm", NAME_SCHEMA, key="confirm")
    return "state-ok"


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """MRTR: only ask for what the client declared on this request."""
    if "elicitation" in ctx.client_capabilities:
        await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    elif "sampling" in ctx.client_capabilities:
        await ctx.sample("Say hello", max_tokens=20, key="hello")
    return "done"


@server.tool
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: without the capability declared the request fails with -32021."""
    await ctx.sample("Say hello", max_tokens=20)
    return "sampled"


@server.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks for input: a modern request gets input_required, never a server->client request."""
    await ctx.elicit("What is your name?", NAME_SCHEMA)
    return "done"


@server.tool
async def test_logging_tool(ctx: Context) -> str:
    """Logs twice: without a logLevel in the request's _meta nothing is sent."""
    await ctx.info("first log message")
    await ctx.info("second log message")
    return "logged"


def _temporary() -> str:
    """A tool or prompt that comes and goes."""
    return "temporary"


@server.tool
def test_header_param(region: Annotated[str, Field(header="Region")]) -> str:
    """Echo a parameter that HTTP clients also send as the Mcp-Param-Region header (SEP-2243)."""
    return f"region: {region}"


@server.tool
def test_trigger_tool_change() -> str:
    """Add (or remove) a tool: listeners hear notifications/tools/list_changed."""
    if not server.remove_tool("temporary_tool"):
        server.add_tool(_temporary, name="temporary_tool")
    return "tools changed"


@server.tool
def test_trigger_prompt_change() -> str:
    """Add (or remove) a prompt: listeners hear notifications/prompts/list_changed."""
    if not server.remove_prompt("temporary_prompt"):
        server.add_prompt(_temporary, name="temporary_prompt")
    return "prompts changed"


# ---- resources -------------------------------------------------------------------------------------------
server.add_resource(
    "test://static-text",
    "This is the content of the static text resource.",
    name="static-text",
    description="A static text resource for testing",
    mime_type="text/plain",
)
server.add_resource(
    "test://static-binary",
    RED_PIXEL_PNG,  # bytes are sent base64-encoded as a blob
    name="static-binary",
    description="A static binary resource (a PNG) for testing",
    mime_type="image/png",
)
server.add_resource(
    "test://watched-resource",
    "A resource clients can subscribe to.",
    name="watched-resource",
    description="A resource for subscription tests; call server.notify_resource_updated(uri) when it changes",
    mime_type="text/plain",
)


# A URI with {variables} makes a resource template; the variables arrive as keyword arguments.
@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for one id, from a resource template."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


# ---- prompts ---------------------------------------------------------------------------------------------
# Parameters are the prompt's arguments (required unless they have a default); the docstring describes them.
@server.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:  # the wire name
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    # A list is one user message per item; strings and content objects both work.
    return [
        EmbeddedResource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"),
        "Please process the embedded resource above.",
    ]


@server.prompt
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [Image(RED_PIXEL_PNG), "Please analyze the image above."]


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """MRTR on prompts/get (2026-07-28): ask for context first, then build the prompt."""
    schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
    return f"Use this context: {answer.get('content', {}).get('context', '')}"


# ---- completion ------------------------------------------------------------------------------------------
SUGGESTIONS = {"arg1": ["paris", "park", "party", "test", "testing"], "arg2": ["world", "word", "work"]}


@server.completion
def complete(ref: dict[str, Any], argument: dict[str, str], arguments: dict[str, str]) -> list[str]:
    """Suggest values for the arguments of ``test_prompt_with_arguments`` that start with what was typed."""
    if ref.get("type") != "ref/prompt" or ref.get("name") != "test_prompt_with_arguments":
        return []
    typed = argument.get("value", "")
    return [value for value in SUGGESTIONS.get(argument.get("name", ""), []) if value.startswith(typed)]
