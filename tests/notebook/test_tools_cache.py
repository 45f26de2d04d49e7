"""One tools cache: the notebook reads a server's tools through its client's cache, so whatever makes the
client list again (list_changed, a 2026-07-28 ``ttlMs`` running out, a new HTTP session) reaches the notebook.
"""

from __future__ import annotations

from typing import Any

from mcp_notebook import Server
from mcp_notebook.engine.runtime import get_runtime
from mcp_notebook.engine.sync import SyncClient
from mcp_notebook.notebook.calls.connections import Connections


def test_a_modern_servers_tools_are_not_stale_forever_in_the_notebook() -> None:
    server = Server("growing", cache_ttl_ms=0)  # every tools/list result is stale at once

    @server.tool
    def first() -> str:
        return "1"

    def opener(name: str, target: Any, **options: Any) -> SyncClient:
        return SyncClient(target, runtime=get_runtime(), name=name, era="modern", listen=False, **options)

    connections = Connections(opener, lambda: Server("local"))
    try:
        client = connections.connect("srv", server)
        assert client.aio.is_modern
        assert set(connections.tools("srv")) == {"first"}

        @server.tool
        def second() -> str:  # a stateless client hears no list_changed: only the ttl tells it
            return "2"

        assert set(connections.tools("srv")) == {"first", "second"}  # was {"first"}: a cache of its own
        assert connections.tools("srv") == client.aio._tools  # the client's cache, not a copy kept aside
    finally:
        connections.close()
