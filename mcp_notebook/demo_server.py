"""A small MCP server bundled for the quickstart and the workshops; it needs nothing from the network.

Each tool shows one thing a server can send: plain text, structured output (checked against an
outputSchema), a tool error, an image and a sound made in code, a resource link and an embedded resource,
progress notifications with cancellation, and an elicitation (the server asking the user a question).

Run it over stdio: ``python -m mcp_notebook.demo_server``; from a notebook:
``%mcp connect demo -- python -m mcp_notebook.demo_server``.
"""

from __future__ import annotations

import asyncio
import io
import math
import struct
import wave
import zlib
from dataclasses import dataclass
from typing import Annotated, Any

from mcp_notebook import Audio, Context, EmbeddedResource, Field, Image, ResourceLink, Server, ToolError
from mcp_notebook.tools import ToolResult

__all__ = ["make_server", "png_bytes", "server", "wav_bytes"]

GUIDE_URI = "demo://guide"
GUIDE = """\
# The demo server

A server exposes **tools** (the model calls them), **resources** (the application reads them) and
**prompts** (the user picks them). This text is a resource: `resources/read` with uri `demo://guide`.
"""


# -- media made in code, so the demo needs no files and no imaging library ---------------------------------
def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(width: int, height: int, pixel: Any) -> bytes:
    """An 8-bit RGB PNG whose pixel (x, y) is ``pixel(x, y) -> (r, g, b)`` (PNG spec: filter 0 per row)."""
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(rows, 9))
        + _png_chunk(b"IEND", b"")
    )


def _sunrise_pixel(width: int, height: int) -> Any:
    horizon = int(height * 0.7)
    sun_x, sun_r = width / 2, height * 0.28

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        if y >= horizon:  # the sea, darker further down
            shade = (y - horizon) / max(1, height - horizon)
            return (20, int(60 - 30 * shade), int(110 - 40 * shade))
        if math.hypot(x - sun_x, y - horizon) <= sun_r:
            return (255, 200, 60)
        t = y / horizon  # the sky, from night blue at the top to orange at the horizon
        return (int(30 + 225 * t), int(40 + 110 * t), int(110 - 40 * t))

    return pixel


def wav_bytes(frequency: float, seconds: float, rate: int = 8000) -> bytes:
    """A mono 16-bit WAV of a sine tone, faded in and out so it does not click."""
    count = int(rate * seconds)
    fade = max(1, rate // 50)
    samples = []
    for i in range(count):
        envelope = min(1.0, i / fade, (count - i) / fade)
        samples.append(int(12000 * envelope * math.sin(2 * math.pi * frequency * i / rate)))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(struct.pack(f"<{count}h", *samples))
    return buffer.getvalue()


# -- the server ---------------------------------------------------------------------------------------------
@dataclass
class Forecast:
    city: str
    days: int
    temperatures: list[float]
    summary: str


def make_server() -> Server:
    """A fresh demo server (a new object each time, so tests can change one without touching another)."""
    demo = Server(
        "demo",
        title="mcp_notebook demo server",
        instructions="A demonstration server: made-up weather, pictures and sounds made in code.",
    )

    @demo.tool(annotations={"readOnlyHint": True})
    def greet(name: str) -> str:
        """Say hello.

        Args:
            name: Who to greet.
        """
        return f"Hello, {name}! This answer came from the demo MCP server."

    @demo.tool(annotations={"readOnlyHint": True})
    def forecast(city: str, days: Annotated[int, Field(ge=1, le=7)] = 3) -> Forecast:
        """Made-up weather: a structured result, checked against the tool's outputSchema.

        Args:
            city: City name.
            days: How many days ahead (1 to 7).
        """
        temperatures = [round(11.0 + 3.5 * ((len(city) + day) % 4), 1) for day in range(days)]
        return Forecast(city, days, temperatures, f"{days} made-up days in {city}")

    @demo.tool(annotations={"readOnlyHint": True})
    def divide(a: float, b: float) -> float:
        """Divide a by b; dividing by zero is a tool error the caller can read (isError: true).

        Args:
            a: The dividend.
            b: The divisor.
        """
        if b == 0:
            raise ToolError("cannot divide by zero: pass a non-zero b")
        return a / b

    @demo.tool(annotations={"readOnlyHint": True})
    def sunrise(
        width: Annotated[int, Field(ge=16, le=480)] = 240,
        height: Annotated[int, Field(ge=16, le=320)] = 144,
    ) -> Image:
        """Draw a small sunrise: an image content block (a PNG made in code).

        Args:
            width: Width in pixels.
            height: Height in pixels.
        """
        return Image(png_bytes(width, height, _sunrise_pixel(width, height)), mime_type="image/png")

    @demo.tool(annotations={"readOnlyHint": True})
    def tone(
        frequency: Annotated[float, Field(ge=110, le=1760)] = 440.0,
        seconds: Annotated[float, Field(gt=0, le=2)] = 0.5,
    ) -> Audio:
        """Play a sine tone: an audio content block (a WAV made in code).

        Args:
            frequency: Pitch in hertz.
            seconds: Length of the sound.
        """
        return Audio(wav_bytes(frequency, seconds), mime_type="audio/wav")

    @demo.resource(GUIDE_URI, mime_type="text/markdown")
    def guide() -> str:
        """What tools, resources and prompts are."""
        return GUIDE

    @demo.tool(annotations={"readOnlyHint": True})
    def find_docs(topic: str = "basics") -> ToolResult:
        """Point to the server's guide: a resource link (read it on demand) and the same text embedded.

        Args:
            topic: What you want to read about.
        """
        link = ResourceLink(GUIDE_URI, "guide", title="The demo server guide", mime_type="text/markdown")
        embedded = EmbeddedResource(GUIDE_URI, text=GUIDE, mime_type="text/markdown")
        return ToolResult([f"Docs about {topic!r}:", link, embedded])

    @demo.tool(annotations={"readOnlyHint": True})
    async def count_slowly(
        ctx: Context,
        steps: Annotated[int, Field(ge=1, le=100)] = 5,
        seconds_per_step: Annotated[float, Field(ge=0, le=10)] = 0.5,
    ) -> str:
        """Count, slowly, reporting progress after every step; cancel it to stop it early.

        Args:
            steps: How many steps.
            seconds_per_step: How long each step takes.
        """
        for step in range(1, steps + 1):
            await asyncio.sleep(seconds_per_step)  # a cancelled call stops here (CancelledError)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"Counted to {steps}."

    @demo.tool
    async def book_table(ctx: Context, restaurant: str = "Chez MCP") -> str:
        """Book a table: the server asks the user for details (elicitation) before answering.

        Args:
            restaurant: Where to book.
        """
        schema = {
            "type": "object",
            "properties": {
                "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 12, "default": 2},
                "time": {"type": "string", "title": "Time", "enum": ["19:00", "20:00", "21:00"]},
                "terrace": {"type": "boolean", "title": "On the terrace?", "default": False},
            },
            "required": ["guests", "time"],
        }
        answer = await ctx.elicit(f"Booking at {restaurant}: how many guests, and when?", schema)
        if answer.get("action") != "accept":
            return f"No booking made (you chose {answer.get('action')!r})."
        details = answer.get("content") or {}
        where = "on the terrace" if details.get("terrace") else "inside"
        return f"Booked {restaurant} for {details.get('guests')} at {details.get('time')}, {where}."

    return demo


server = make_server()


def main() -> None:
    server.run_stdio()


if __name__ == "__main__":
    main()
