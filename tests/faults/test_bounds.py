"""Issue 18 item 2: resources a caller could blow up are bounded, with a clear error.

- A ``PIL.Image`` parameter: a decompression bomb (a small PNG whose header says 8,000 x 8,000) is refused
  from its header, before any pixel is decoded. Before, it decoded (447 KiB -> ~340 MiB in the report).
"""

from __future__ import annotations

import base64
import struct
import zlib

import pytest
from PIL import Image

from mcp_notebook import Client, Context, Server

pytestmark = pytest.mark.timeout(60)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bomb(side: int = 8000) -> bytes:
    """A valid grayscale PNG of ``side`` x ``side`` black pixels, a few dozen KiB compressed."""
    packer = zlib.compressobj(9)
    row = b"\0" * (side + 1)  # filter byte + one byte a pixel
    body = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


async def test_an_image_parameter_bomb_is_refused_before_decoding() -> None:
    server = Server("bomb")

    @server.tool
    def size(image: Image.Image) -> str:
        """The image's size."""
        return f"{image.size[0]}x{image.size[1]}"

    bomb = png_bomb()
    assert len(bomb) < 200_000
    async with Client(server) as client:
        refused = await client.call_tool("size", {"image": base64.b64encode(bomb).decode()})
        assert refused["isError"] is True
        text = refused["content"][0]["text"]
        assert "8000x8000" in text and "16,000,000 pixels" in text
        small = base64.b64encode(png_bomb(64)).decode()
        assert (await client.call_tool("size", {"image": small}))["content"][0]["text"] == "64x64"


async def test_a_flood_of_large_messages_keeps_the_trace_small() -> None:
    """20 unsolicited 1 MiB log messages: the client's trace keeps their heads (each with its size and
    where the payload is), not 20 MiB. Before, the last 2,000 messages were kept whole (1.6 GiB reported)."""
    server = Server("flood")

    @server.tool
    async def shout(ctx: Context) -> str:
        """Log a lot."""
        for _ in range(20):
            await ctx.info("x" * (1 << 20))
        return "done"

    async with Client(server, era="legacy") as client:  # legacy: logs flow without a per-request level
        result = await client.call_tool("shout")
        assert result["content"][0]["text"] == "done"
        entries = list(client.trace)
        kept = sum(len(entry.raw) for entry in entries)
        assert kept < 256 * 1024, kept
        elided = [entry.message for entry in entries if entry.elided]
        assert len(elided) == 20
        assert elided[0]["method"] == "notifications/message" and elided[0]["elided"]["length"] > 1 << 20
