"""A one-shot listener on 127.0.0.1 (random port) for the authorization server's redirect (RFC 8252 §7.3).

The first request to ``/callback`` that carries ``code``, ``error`` or ``state`` — and, once :attr:`state` is
set, exactly that ``state`` — resolves :attr:`result` with its full URL and gets a short page saying the tab
can be closed. A request with another state (anyone on this machine can reach the port) gets 400 and the
listener keeps waiting for the real redirect; everything else gets 404.
"""

from __future__ import annotations

import asyncio
import hmac

from aiohttp import web

__all__ = ["CallbackListener"]

_DONE_PAGE = """<!doctype html><meta charset="utf-8"><title>mcp-notebook</title>
<p>Authorization received. You can close this tab and return to the notebook.</p>"""


class CallbackListener:
    def __init__(self, runner: web.AppRunner, site: web.TCPSite, port: int, result: asyncio.Future[str]):
        self._runner = runner
        self._site = site
        self.port = port
        self.result = result
        self.state: str | None = None  # the authorization request's state, once it is made

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    @classmethod
    async def start(cls) -> CallbackListener:
        result: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        bound: list[int] = []
        listeners: list[CallbackListener] = []

        async def callback(request: web.Request) -> web.Response:
            query = request.query
            if result.done() or not ({"code", "error", "state"} & set(query)):
                raise web.HTTPNotFound()
            expected = listeners[0].state if listeners else None
            if expected is not None and not hmac.compare_digest(query.get("state", ""), expected):
                raise web.HTTPBadRequest(text="This is not the sign-in this listener waits for.")
            # The URL is rebuilt from our own redirect URI, so a forged Host header cannot change it.
            result.set_result(f"http://127.0.0.1:{bound[0]}/callback?{request.query_string}")
            return web.Response(text=_DONE_PAGE, content_type="text/html")

        app = web.Application()
        app.router.add_get("/callback", callback)
        runner = web.AppRunner(app, access_log=None)  # the query holds the code: never logged
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        port = int(sockets[0].getsockname()[1])
        bound.append(port)
        listener = cls(runner, site, port, result)
        listeners.append(listener)
        return listener

    async def stop(self) -> None:
        if not self.result.done():
            self.result.cancel()
        await self._runner.cleanup()
