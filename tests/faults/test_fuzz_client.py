"""Hypothesis-generated results from a lying server against our client: every call either returns a result
of its method's shape or raises one of our errors (``MCPError``), never a KeyError or TypeError from deep
inside the client, and never a malformed result handed to the user.

The server is hand-written on the other end of an in-memory transport (see test_malformed_results.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_notebook import Client
from mcp_notebook.protocol.errors import MCPError
from mcp_notebook.protocol.shapes import RESULT_TYPES, problem
from mcp_notebook.transports.base import TransportClosed
from mcp_notebook.transports.memory import MemoryTransport, memory_pair

WAIT = 10.0
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}},
    "serverInfo": {"name": "liar", "version": "1"},
}
FUZZ = settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
kinds = st.sampled_from(["text", "image", "audio", "resource", "resource_link", "video"])
blocks = st.fixed_dictionaries(
    {"type": kinds},
    optional={"text": values, "data": values, "mimeType": values, "uri": values, "resource": values},
)
almost = st.fixed_dictionaries(  # results near the right shape reach further into the client
    {},
    optional={
        "content": st.lists(blocks, max_size=3) | values,
        "isError": st.booleans() | values,
        "structuredContent": values,
        "tools": st.lists(
            st.fixed_dictionaries(
                {"name": st.text(max_size=6) | values},
                optional={"inputSchema": values | st.just({"type": "object"}), "outputSchema": values},
            ),
            max_size=3,
        ),
        "nextCursor": values,
        "messages": st.lists(values, max_size=2),
        "contents": st.lists(values, max_size=2) | values,
        "completion": values,
        "_meta": values,
    },
)
results = almost | values
CALLS = {
    "tools/call": lambda c: c.call_tool("t", {}),
    "tools/list": lambda c: c.list_tools(),
    "prompts/get": lambda c: c.get_prompt("p"),
    "resources/read": lambda c: c.read_resource("x://y"),
    "completion/complete": lambda c: c.complete(
        {"type": "ref/prompt", "name": "p"}, {"name": "a", "value": ""}
    ),
}


async def lying_server(transport: MemoryTransport, answers: dict[str, Any]) -> None:
    try:
        while True:
            message = json.loads(await transport.receive())
            if "id" in message and "method" in message:
                result = answers.get(message["method"], {"content": []})
                await transport.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
    except TransportClosed:
        pass


async def one_call(method: str, result: Any) -> tuple[Any, BaseException | None]:
    ours, theirs = memory_pair()
    listed = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    answers = {"initialize": INITIALIZE, "tools/list": listed, method: result}
    server = asyncio.ensure_future(lying_server(theirs, answers))
    try:
        async with Client(ours, timeout=WAIT, era="legacy") as client:
            try:
                return await asyncio.wait_for(CALLS[method](client), WAIT), None
            except MCPError as exc:
                return None, exc
    finally:
        await asyncio.wait_for(server, WAIT)


@FUZZ
@given(method=st.sampled_from(sorted(CALLS)), result=results)
def test_the_client_returns_well_shaped_results_or_raises_its_own_errors(method: str, result: Any) -> None:
    returned, error = asyncio.run(one_call(method, result))  # anything but MCPError fails the test here
    if error is None and method in ("tools/call", "prompts/get", "resources/read"):
        assert problem(RESULT_TYPES[method], returned) is None, returned
    if error is None and not isinstance(result, dict):
        raise AssertionError(f"a {type(result).__name__} result was accepted for {method}")
