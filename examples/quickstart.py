"""mcp_notebook in 30 seconds: a typed Python function becomes an MCP tool; a client calls it.

Run: .venv/bin/python examples/quickstart.py  (after bash scripts/lab or bash scripts/test set up .venv)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Annotated

from mcp_notebook import Client, Context, Field, Server

server = Server("weather-demo", instructions="Made-up weather, for demonstrations.")


@dataclass
class Forecast:
    city: str
    days: int
    temperatures: list[float]


@server.tool(annotations={"readOnlyHint": True})
async def forecast(city: str, ctx: Context, days: Annotated[int, Field(ge=1, le=14)] = 3) -> Forecast:
    """Forecast the weather.

    Args:
        city: City name.
        days: How many days ahead.
    """
    temperatures = []
    for day in range(days):
        await ctx.report_progress(day + 1, days, f"day {day + 1}")
        temperatures.append(round(12.0 + 3.5 * ((len(city) + day) % 4), 1))
    return Forecast(city, days, temperatures)


async def main() -> None:
    async with Client(server) as client:  # in memory; a command list means stdio, a URL means HTTP
        print(f"connected to {client.server_info['name']} (protocol {client.negotiated_version})\n")
        for tool in await client.list_tools():
            print(f"tool {tool['name']}: {tool['description']}")
            print("  inputSchema:", json.dumps(tool["inputSchema"]))
            print("  outputSchema:", json.dumps(tool.get("outputSchema")), "\n")

        def on_progress(progress: float, total: float | None, message: str | None) -> None:
            print(f"  progress {progress}/{total}: {message}")

        result = await client.call_tool(
            "forecast", {"city": "Paris", "days": 2}, progress_callback=on_progress
        )
        print("structured result:", result["structuredContent"])

        bad = await client.call_tool("forecast", {"city": "Paris", "days": 20})
        print("\ninvalid input is a tool error the model can read:", bad["content"][0]["text"])

        print("\nthe protocol, as it went over the wire (last 4 messages):")
        for entry in list(client.trace)[-4:]:
            arrow = "->" if entry.direction == "out" else "<-"
            print(f"  {arrow} {entry.raw[:150]}")


if __name__ == "__main__":
    asyncio.run(main())
