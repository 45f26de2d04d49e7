"""Re-record ``sample.jsonl``, the cassette the pytest plugin tests use:
``python tests/cassette/data/record_sample.py``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from mcp_notebook import Client, Recording  # noqa: E402
from tests.cassette.sample import make  # noqa: E402


async def main() -> None:
    async def elicit(params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"name": "Ada"}}

    client = Client(make(), era="legacy", elicitation_handler=elicit)
    async with client, Recording(client, HERE / "sample.jsonl"):
        await client.call_tool("add", {"a": 2, "b": 3})
        await client.call_tool("echo", {"text": "hello"})
        await client.call_tool("slow", {"seconds": 0.05}, task=True)
        await client.call_tool("greet", {})


if __name__ == "__main__":
    asyncio.run(main())
