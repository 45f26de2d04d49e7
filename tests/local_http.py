"""A hand-written aiohttp app served for a test on a free local port: the one way tests start one.

```python
app = web.Application()
app.router.add_post("/mcp", handler)
async with serving(app) as base:  # "http://127.0.0.1:PORT"; the app is cleaned up when the block ends
    ...
```
Fixtures ``yield`` inside the block; objects with ``start``/``stop`` keep it in an ``AsyncExitStack``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web


@contextlib.asynccontextmanager
async def serving(
    app: web.Application, host: str = "127.0.0.1", port: int = 0, **runner_options: Any
) -> AsyncIterator[str]:
    """``app`` listening on ``host`` at ``port`` (0: one the system picks); yields ``http://host:port``.
    ``runner_options`` go to :class:`aiohttp.web.AppRunner` (``access_log=None``, ``shutdown_timeout``)."""
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        yield f"http://{host}:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
