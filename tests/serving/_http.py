"""Raw HTTP against a served notebook server: exact statuses and headers, no client library in the way."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

WAIT = 10.0
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test-client", "version": "1"},
    },
}


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str

    def messages(self) -> list[dict[str, Any]]:
        """JSON-RPC messages in the body: one JSON document, or the data lines of an SSE stream."""
        if self.headers.get("content-type", "").startswith("application/json"):
            return [json.loads(self.body)]
        found = []
        for line in self.body.splitlines():
            if line.startswith("data:") and line[5:].strip():
                found.append(json.loads(line[5:].strip()))
        return found


def post(
    url: str,
    body: Any,
    *,
    token: str | None = None,
    session: str | None = None,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> Reply:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=WAIT)
    try:
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        }
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if session is not None:
            sent["Mcp-Session-Id"] = session
        sent.update(headers or {})
        data = raw if raw is not None else json.dumps(body).encode()
        conn.request("POST", parts.path, body=data, headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
    finally:
        conn.close()


def open_session(url: str, token: str, name: str = "raw-test-client") -> str:
    init = json.loads(json.dumps(INIT))
    init["params"]["clientInfo"]["name"] = name
    reply = post(url, init, token=token)
    assert reply.status == 200, reply
    session = reply.headers["mcp-session-id"]
    done = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token=token, session=session)
    assert done.status == 202, done
    return session


def request(url: str, token: str, session: str, method: str, params: dict[str, Any], rid: int = 1) -> Reply:
    return post(
        url, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, token=token, session=session
    )


def answer(reply: Reply, rid: int) -> dict[str, Any]:
    for message in reply.messages():
        if message.get("id") == rid:
            return message
    raise AssertionError(f"no answer to {rid} in {reply}")
