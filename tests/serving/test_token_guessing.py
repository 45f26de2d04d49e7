"""Issue 18 item 4: wrong-token guesses are rate limited per address (1,500 in 0.4 s met no 429 before).

After ``failure_burst`` wrong tokens an address gets 429 with ``Retry-After``, for every token, the right one
included, until its bucket refills: meanwhile a lucky guess cannot be told apart from a wrong one.
"""

from __future__ import annotations

import aiohttp
import pytest

from mcp_notebook import Server
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.serving._http import INIT

pytestmark = pytest.mark.timeout(60)


async def test_wrong_tokens_are_rate_limited_per_address() -> None:
    http_server = StreamableHTTPServer(Server("guess"), token="the-right-token")
    http_server.guard.failure_rate = 0.01  # refills in minutes: nothing refills during the test
    url = await http_server.start()
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            statuses = []
            for guess in range(30):
                headers = {**base, "Authorization": f"Bearer guess-{guess}"}
                async with http.post(url, json=INIT, headers=headers) as resp:
                    statuses.append(resp.status)
                    if resp.status == 429:
                        assert int(resp.headers["Retry-After"]) >= 1
                        assert (await resp.json())["error"]["code"] == -32029
            assert statuses == [401] * 20 + [429] * 10
            right = {**base, "Authorization": "Bearer the-right-token"}
            async with http.post(url, json=INIT, headers=right) as resp:
                assert resp.status == 429  # the right token too, until the address's bucket refills
            http_server.guard.failure_rate = 1000.0  # time passes
            async with http.post(url, json=INIT, headers=right) as resp:
                assert resp.status == 200
    finally:
        await http_server.stop()
