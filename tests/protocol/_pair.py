"""A client Session and a server Session joined by hand (h11's ConnectionPair idea), for the sans-IO
session tests (test_session.py, test_session_messages.py)."""

from __future__ import annotations

import json
from typing import Any

from mcp_notebook.protocol.session import (
    Event,
    NotificationReceived,
    ProtocolViolation,
    RequestReceived,
    ResultReceived,
    Role,
    Session,
    State,
)

SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True},
    "prompts": {},
    "logging": {},
    "completions": {},
}
CLIENT_CAPS: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}


def only(events: list[Event]) -> Event:
    assert len(events) == 1, events
    return events[0]


def wire(obj: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", **obj})


def reply_of(event: Event) -> dict[str, Any]:
    assert isinstance(event, ProtocolViolation), event
    assert event.reply is not None, event
    reply: dict[str, Any] = json.loads(event.reply)
    return reply


def init_result(version: str = "2025-11-25", **extra: Any) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
        **extra,
    }


class Pair:
    """A client Session and a server Session; every helper moves serialized text from one to the other."""

    def __init__(
        self,
        client_caps: dict[str, Any] | None = None,
        server_caps: dict[str, Any] | None = None,
    ) -> None:
        self.client = Session(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities=client_caps or {})
        self.server = Session(Role.SERVER, info={"name": "s", "version": "2"}, capabilities=server_caps or {})

    def send_initialize(self, version: str = "2025-11-25") -> tuple[int | str, RequestReceived]:
        request_id, text = self.client.initialize_request(version)
        event = only(self.server.receive(text))
        assert isinstance(event, RequestReceived) and event.method == "initialize"
        return request_id, event

    def answer_initialize(self, request: RequestReceived, instructions: str | None = None) -> Event:
        result = self.server.accept_initialize(request.params, instructions)
        return only(self.client.receive(self.server.send_result(request.id, result)))

    def send_initialized(self) -> Event:
        return only(self.server.receive(self.client.send_notification("notifications/initialized")))

    def handshake(self, version: str = "2025-11-25", instructions: str | None = None) -> Pair:
        _, request = self.send_initialize(version)
        assert isinstance(self.answer_initialize(request, instructions), ResultReceived)
        assert isinstance(self.send_initialized(), NotificationReceived)
        assert self.client.state is State.READY and self.server.state is State.READY
        return self

    def client_request(self, method: str, params: dict[str, Any] | None = None) -> tuple[int | str, Event]:
        request_id, text = self.client.send_request(method, params)
        return request_id, only(self.server.receive(text))


def ready(version: str = "2025-11-25") -> Pair:
    return Pair(CLIENT_CAPS, SERVER_CAPS).handshake(version)
