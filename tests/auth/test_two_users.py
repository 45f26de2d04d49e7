"""Issue 18 (high): two OAuth users of one ``mcp-notebook serve --http --auth ISSUER`` (a real subprocess,
tokens from the local authorization server) see nothing of each other.

Before: ``--auth`` gave every user the same (no) principal, so bob listed alice's tasks, read her result,
cancelled her job, used her ``Mcp-Session-Id`` (HTTP 200), finished her MRTR call with her sealed
``requestState`` and decoded the PIN inside it. Now each request's principal is the token's subject and
client: bob gets "Unknown task" (-32602), 404 for her session, ``other-principal`` for her state, and the
state is ciphertext.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from mcp_notebook.protocol import era
from tests.auth.local_as import LocalAS
from tests.auth.test_serve_cli import _serve, _stop

pytestmark = pytest.mark.timeout(120)
FIXTURE = str(Path(__file__).with_name("_identity_server.py"))
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
WAIT = 30.0
PIN = "493817"


class Caller:
    """One person's raw HTTP requests with their own access token."""

    def __init__(self, http: aiohttp.ClientSession, url: str, token: str) -> None:
        self.http, self.url, self.token = http, url, token
        self.session_id: str | None = None
        self.next_id = 0

    async def post(self, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        base = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {self.token}",
        }
        async with self.http.post(self.url, json=message, headers={**base, **headers}) as resp:
            text = await resp.text()
            if "Mcp-Session-Id" in resp.headers and self.session_id is None:
                self.session_id = resp.headers["Mcp-Session-Id"]
            status = resp.status
        for line in text.splitlines():  # an SSE answer: the data line with the answer
            if line.startswith("data:") and '"id"' in line:
                text = line[5:]
        return status, json.loads(text) if text.strip() else {}

    async def legacy(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        self.next_id += 1
        headers = {"MCP-Protocol-Version": LEGACY}
        sid = session or self.session_id
        if sid is not None and method != "initialize":
            headers["Mcp-Session-Id"] = sid
        return await self.post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, headers
        )

    async def start(self) -> None:
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        status, _ = await self.legacy("initialize", params)
        assert status == 200 and self.session_id
        async with self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {self.token}",
                "Mcp-Session-Id": self.session_id,
                "MCP-Protocol-Version": LEGACY,
            },
        ) as resp:
            assert resp.status == 202

    async def modern(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = era.modern_params(params, MODERN, {"elicitation": {}}, {"name": "raw", "version": "1"})
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": body}
        _, answer = await self.post(message, era.http_headers(method, body))
        return answer


async def test_two_oauth_users_see_nothing_of_each_other(auth_server: LocalAS) -> None:
    process, url = await _serve("--auth", auth_server.issuer, target=FIXTURE)
    try:
        alice_token = auth_server.mint(url, sub="alice@example.org", client_id="notebook")
        bob_token = auth_server.mint(url, sub="bob@example.org", client_id="notebook")
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
            alice, bob = Caller(http, url, alice_token), Caller(http, url, bob_token)
            await alice.start()
            await bob.start()

            # alice starts a long task (2025-11-25 task-augmented tools/call)
            _, created = await alice.legacy(
                "tools/call", {"name": "slow", "arguments": {"seconds": 60}, "task": {"ttl": 60_000}}
            )
            task_id = created["result"]["task"]["taskId"]

            # bob: not in his list; get, result and cancel: "Unknown task" (-32602)
            _, listed = await bob.legacy("tasks/list", {})
            assert task_id not in {t["taskId"] for t in listed["result"]["tasks"]}
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                _, answer = await bob.legacy(method, {"taskId": task_id})
                assert answer["error"]["code"] == -32602, (method, answer)
                assert "Unknown task" in answer["error"]["message"]

            # bob with alice's session id: 404, as if it did not exist
            status, answer = await bob.legacy("tools/list", {}, session=alice.session_id)
            assert status == 404 and answer["error"]["code"] == -32001

            # alice still owns a running task, sees it listed, and may cancel it
            _, got = await alice.legacy("tasks/get", {"taskId": task_id})
            assert got["result"]["status"] == "working"
            _, listed = await alice.legacy("tasks/list", {})
            assert task_id in {t["taskId"] for t in listed["result"]["tasks"]}
            _, cancelled = await alice.legacy("tasks/cancel", {"taskId": task_id})
            assert cancelled["result"]["status"] == "cancelled"

            # MRTR (2026-07-28): alice answers the PIN; the next round's state carries it, sealed
            first = await alice.modern("tools/call", {"name": "unlock", "arguments": {}})
            assert first["result"]["resultType"] == "input_required"
            pin = {"pin": {"action": "accept", "content": {"pin": PIN}}}
            second = await alice.modern(
                "tools/call",
                {
                    "name": "unlock",
                    "arguments": {},
                    "inputResponses": pin,
                    "requestState": first["result"]["requestState"],
                },
            )
            state = second["result"]["requestState"]
            assert second["result"]["resultType"] == "input_required"
            raw = base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
            assert PIN.encode() not in raw and b"alice" not in raw and PIN not in state

            ok = {"ok": {"action": "accept", "content": {"ok": True}}}
            retry = {"name": "unlock", "arguments": {}, "inputResponses": ok, "requestState": state}
            stolen = await bob.modern("tools/call", retry)
            assert stolen["error"]["code"] == -32602
            assert stolen["error"]["data"] == {"reason": "other-principal"}
            done = await alice.modern("tools/call", retry)
            text = done["result"]["content"][0]["text"]
            assert text.startswith("unlocked with 6 digits for oauth:") and "alice@example.org" in text
    finally:
        await _stop(process)
