"""A small server, written with the public API, that third-party clients are pointed at in the interop tests.

Serve it with the CLI: ``python -m mcp_notebook serve tests/interop/sample_server.py`` (stdio) or add
``--http 127.0.0.1:PORT``. Clients: the official Python SDK (``test_sdk_peer.py``) and the Inspector CLI
(``test_inspector.py``). Every payload is fixed so that the tests can check it exactly.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from mcp_notebook import Image, Server, ToolError

server = Server("mcp-notebook-sample", instructions="A sample server for interop tests.")

# A 1x1 red PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
NOTE_URI = "sample://note"
NOTE_TEXT = "A note kept by the sample server."


@dataclass
class Weather:
    city: str
    celsius: float
    sunny: bool


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers (structured output: ``{"result": a + b}``).

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@server.tool
def echo(message: str) -> str:
    """Echo a message back.

    Args:
        message: What to echo.
    """
    return f"echo: {message}"


@server.tool
def structured(city: str) -> Weather:
    """Made-up weather for a city: structuredContent checked against the outputSchema.

    Args:
        city: The city.
    """
    return Weather(city, 21.5, sunny=True)


@server.tool
def image() -> Image:
    """A 1x1 red PNG."""
    return Image(PIXEL_PNG, mime_type="image/png")


@server.tool
def fail(reason: str = "on purpose") -> str:
    """Always fails: a tool error (``isError: true``), not a protocol error.

    Args:
        reason: Why.
    """
    raise ToolError(f"failed {reason}")


server.add_resource(NOTE_URI, NOTE_TEXT, name="note", description="A fixed text note", mime_type="text/plain")


@server.resource("sample://items/{item_id}", name="item", mime_type="text/plain")
def item(item_id: str) -> str:
    """One item, from a resource template."""
    return f"item {item_id}"


@server.prompt
def greet(name: str, style: str = "plain") -> str:
    """A greeting prompt.

    Args:
        name: Who to greet.
        style: How.
    """
    return f"Say hello to {name} in a {style} style."
