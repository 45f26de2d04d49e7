"""The sans-IO session: two Sessions joined by hand (h11's ConnectionPair idea), no I/O at all.

Lifecycle: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle (MCP-NOTES §2.1);
cancellation: basic/utilities/cancellation (§3.6); batching: §3.2; error codes: §3.3.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from mcp_notebook.protocol.errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
    RemoteProtocolError,
)
from mcp_notebook.protocol.session import (
    TRANSITIONS,
    ErrorReceived,
    Event,
    NotificationReceived,
    ProtocolViolation,
    RequestReceived,
    ResultReceived,
    Role,
    Session,
    State,
    Trigger,
)
from mcp_notebook.protocol.versions import ProtocolVersion

SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True},
    "prompts": {},
    "logging": {},
    "completions": {},
}
CLIENT_CAPS: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}


# -- helpers -----------------------------------------------------------------------------------------------
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


# -- every row of TRANSITIONS, driven through the public API -----------------------------------------------
C, S = Role.CLIENT, Role.SERVER


def _c_send_initialize() -> Session:
    pair = Pair()
    assert pair.client.state is State.NEW
    pair.client.initialize_request()
    return pair.client


def _c_recv_result() -> Session:
    pair = Pair()
    _, request = pair.send_initialize()
    assert pair.client.state is State.INITIALIZING
    assert isinstance(pair.answer_initialize(request), ResultReceived)
    return pair.client


def _c_recv_error() -> Session:
    pair = Pair()
    _, request = pair.send_initialize()
    assert pair.client.state is State.INITIALIZING
    text = pair.server.send_error(request.id, -32602, "Unsupported protocol version")
    event = only(pair.client.receive(text))
    assert isinstance(event, ErrorReceived) and isinstance(event.error, JSONRPCError)
    return pair.client


def _c_send_initialized() -> Session:
    pair = Pair()
    _, request = pair.send_initialize()
    pair.answer_initialize(request)
    assert pair.client.state is State.INITIALIZED
    pair.client.send_notification("notifications/initialized")
    return pair.client


def _s_recv_initialize() -> Session:
    pair = Pair()
    assert pair.server.state is State.NEW
    pair.send_initialize()
    return pair.server


def _s_send_result() -> Session:
    pair = Pair()
    _, request = pair.send_initialize()
    assert pair.server.state is State.INITIALIZING
    pair.answer_initialize(request)
    return pair.server


def _s_send_error() -> Session:
    pair = Pair()
    _, request = pair.send_initialize()
    assert pair.server.state is State.INITIALIZING
    pair.server.send_error(request.id, -32602, "Unsupported protocol version")
    return pair.server


def _s_recv_initialized() -> Session:
    pair = Pair()
    _, request = pair.send_initialize()
    pair.answer_initialize(request)
    assert pair.server.state is State.INITIALIZED
    pair.send_initialized()
    return pair.server


def _c_adopt_modern() -> Session:
    """A dual-era client whose server/discover was answered: no handshake, stateless from here."""
    pair = Pair()
    pair.client.send_request("server/discover", {})
    pair.client.adopt_modern("2026-07-28", {"tools": {}}, {"name": "s", "version": "1"})
    assert pair.client.version is not None and pair.client.version.era == "modern"
    return pair.client


ROW_DRIVERS: dict[tuple[Role, State, Trigger], Callable[[], Session]] = {
    (C, State.NEW, Trigger.ADOPT_MODERN): _c_adopt_modern,
    (C, State.NEW, Trigger.SEND_INITIALIZE): _c_send_initialize,
    (C, State.INITIALIZING, Trigger.RECV_INITIALIZE_RESULT): _c_recv_result,
    (C, State.INITIALIZING, Trigger.RECV_INITIALIZE_ERROR): _c_recv_error,
    (C, State.INITIALIZED, Trigger.SEND_INITIALIZED): _c_send_initialized,
    (S, State.NEW, Trigger.RECV_INITIALIZE): _s_recv_initialize,
    (S, State.INITIALIZING, Trigger.SEND_INITIALIZE_RESULT): _s_send_result,
    (S, State.INITIALIZING, Trigger.SEND_INITIALIZE_ERROR): _s_send_error,
    (S, State.INITIALIZED, Trigger.RECV_INITIALIZED): _s_recv_initialized,
}


def test_every_transition_row_has_a_driver() -> None:
    assert set(ROW_DRIVERS) == set(TRANSITIONS)


@pytest.mark.parametrize("row", list(TRANSITIONS), ids=lambda r: f"{r[0].value}-{r[1].value}-{r[2].name}")
def test_transition_row(row: tuple[Role, State, Trigger]) -> None:
    session = ROW_DRIVERS[row]()
    assert session.role is row[0]
    assert session.state is TRANSITIONS[row]


def test_server_may_be_initialized_again_after_refusing_initialize() -> None:
    """SEND_INITIALIZE_ERROR goes back to NEW: the client may retry with another version."""
    pair = Pair()
    _, request = pair.send_initialize("2025-11-25")
    pair.server.send_error(request.id, -32602, "Unsupported protocol version")
    _, text = Session(Role.CLIENT).initialize_request("2025-06-18")
    event = only(pair.server.receive(text))
    assert isinstance(event, RequestReceived) and event.method == "initialize"
    assert pair.server.state is State.INITIALIZING


# -- illegal transitions -------------------------------------------------------------------------------------
ILLEGAL = [t for t in itertools.product(Role, State, Trigger) if t not in TRANSITIONS]


@pytest.mark.parametrize("row", ILLEGAL, ids=lambda r: f"{r[0].value}-{r[1].value}-{r[2].name}")
def test_every_illegal_transition_raises_naming_role_and_state(row: tuple[Role, State, Trigger]) -> None:
    role, state, trigger = row
    session = Session(role, state=state)
    with pytest.raises(LocalProtocolError) as info:
        session._fire(trigger)
    message = str(info.value)
    assert role.value in message and repr(state.value) in message and trigger.value in message
    assert session.state is state


def _client_initialized_twice() -> None:
    Pair().client.send_notification("notifications/initialized")


def _client_initialize_twice() -> None:
    session = Session(Role.CLIENT)
    session.initialize_request()
    session.initialize_request()


def _client_initialize_when_ready() -> None:
    ready().client.initialize_request()


def _server_sends_initialize() -> None:
    ready().server.send_request("initialize", {})


def _server_sends_initialized() -> None:
    ready().server.send_notification("notifications/initialized")


def _server_accepts_without_initialize() -> None:
    Session(Role.SERVER).accept_initialize({"protocolVersion": "2025-11-25"})


def _client_sends_initialized_again() -> None:
    ready().client.send_notification("notifications/initialized")


@pytest.mark.parametrize(
    ("act", "role", "state"),
    [
        (_client_initialized_twice, "client", "new"),
        (_client_initialize_twice, "client", "initializing"),
        (_client_initialize_when_ready, "client", "ready"),
        (_server_sends_initialize, "server", "ready"),
        (_server_sends_initialized, "server", "ready"),
        (_server_accepts_without_initialize, "server", "new"),
        (_client_sends_initialized_again, "client", "ready"),
    ],
)
def test_illegal_public_calls_raise_naming_role_and_state(
    act: Callable[[], None], role: str, state: str
) -> None:
    with pytest.raises(LocalProtocolError) as info:
        act()
    assert role in str(info.value) and repr(state) in str(info.value)


# -- requests before initialization ----------------------------------------------------------------------
@pytest.mark.parametrize("step", ["new", "initializing"])
def test_client_may_not_send_requests_other_than_ping_before_the_initialize_result(step: str) -> None:
    """lifecycle#initialization: the client SHOULD NOT send requests other than ping before the result."""
    pair = Pair()
    if step == "initializing":
        pair.send_initialize()
    with pytest.raises(LocalProtocolError, match=f"client in state '{step}' may not send 'tools/list'"):
        pair.client.send_request("tools/list")
    pair.client.send_request("ping")  # ping is always allowed


def test_server_refuses_requests_before_initialize_with_32600() -> None:
    server = Session(Role.SERVER, capabilities=SERVER_CAPS)
    reply = reply_of(only(server.receive(wire({"id": 9, "method": "tools/list"}))))
    assert reply["id"] == 9 and reply["error"]["code"] == INVALID_REQUEST
    assert server.state is State.NEW


def test_server_refuses_requests_during_initialize_with_32600() -> None:
    pair = Pair(server_caps=SERVER_CAPS)
    pair.send_initialize()
    reply = reply_of(only(pair.server.receive(wire({"id": "x", "method": "tools/list"}))))
    assert reply["id"] == "x" and reply["error"]["code"] == INVALID_REQUEST


def test_server_answers_ping_before_initialize() -> None:
    server = Session(Role.SERVER)
    assert isinstance(only(server.receive(wire({"id": 1, "method": "ping"}))), RequestReceived)


def test_server_accepts_a_request_racing_notifications_initialized() -> None:
    """After the initialize result the client may send requests (lifecycle#initialization)."""
    pair = Pair(server_caps=SERVER_CAPS)
    _, request = pair.send_initialize()
    pair.answer_initialize(request)
    _, event = pair.client_request("tools/list")
    assert isinstance(event, RequestReceived) and event.method == "tools/list"


def test_server_may_only_ping_before_notifications_initialized() -> None:
    """lifecycle#initialization: the server SHOULD NOT send requests other than ping and logging before it."""
    pair = Pair(CLIENT_CAPS, SERVER_CAPS)
    _, request = pair.send_initialize()
    pair.answer_initialize(request)
    with pytest.raises(LocalProtocolError, match="server in state 'initialized' may not send 'roots/list'"):
        pair.server.send_request("roots/list")
    pair.server.send_request("ping")


def test_client_refuses_server_requests_before_initialization_with_32600() -> None:
    client = Session(Role.CLIENT, capabilities=CLIENT_CAPS)
    reply = reply_of(only(client.receive(wire({"id": 1, "method": "roots/list"}))))
    assert reply["error"]["code"] == INVALID_REQUEST


# -- capabilities ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "capability"),
    [
        ("tools/list", "tools"),
        ("tools/call", "tools"),
        ("resources/read", "resources"),
        ("prompts/get", "prompts"),
        ("logging/setLevel", "logging"),
        ("completion/complete", "completions"),
    ],
)
def test_client_sends_no_request_for_a_capability_the_server_did_not_declare(
    method: str, capability: str
) -> None:
    """lifecycle#capability-negotiation: both sides MUST use only negotiated capabilities (2025-06-18+)."""
    pair = Pair(CLIENT_CAPS, server_caps={}).handshake()
    with pytest.raises(LocalProtocolError, match=f"'{capability}'") as info:
        pair.client.send_request(method)
    assert method in str(info.value)
    assert pair.client.outstanding() == {}


def test_subscribe_needs_the_subscribe_sub_capability() -> None:
    pair = Pair(server_caps={"resources": {"listChanged": True}}).handshake()
    pair.client.send_request("resources/read", {"uri": "x:/"})
    with pytest.raises(LocalProtocolError, match=r"\'resources\.subscribe\'"):
        pair.client.send_request("resources/subscribe", {"uri": "x:/"})


@pytest.mark.parametrize(
    ("method", "capability"),
    [("sampling/createMessage", "sampling"), ("elicitation/create", "elicitation"), ("roots/list", "roots")],
)
def test_server_sends_no_request_for_a_capability_the_client_did_not_declare(
    method: str, capability: str
) -> None:
    pair = Pair(client_caps={}, server_caps=SERVER_CAPS).handshake()
    with pytest.raises(LocalProtocolError, match=f"client did not declare the capability '{capability}'"):
        pair.server.send_request(method, {})


def test_completion_needs_no_capability_in_2024_11_05() -> None:
    """The completions capability arrived in 2025-03-26; 2024-11-05 had no flag (MCP-NOTES §2.1)."""
    pair = Pair(server_caps={}).handshake("2024-11-05")
    pair.client.send_request("completion/complete", {})


@pytest.mark.parametrize("method", ["tools/list", "resources/subscribe", "prompts/list", "logging/setLevel"])
def test_server_answers_32601_for_a_capability_it_did_not_declare(method: str) -> None:
    """MCP-NOTES §3.3: -32601 for a server capability not advertised."""
    pair = Pair(server_caps={"resources": {}}).handshake()
    reply = reply_of(only(pair.server.receive(wire({"id": 41, "method": method, "params": {}}))))
    assert reply["id"] == 41 and reply["error"]["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize("method", ["sampling/createMessage", "elicitation/create", "roots/list"])
def test_client_answers_32601_for_a_capability_it_did_not_declare(method: str) -> None:
    """client/roots: a client without roots support answers -32601; likewise sampling and elicitation."""
    pair = Pair(client_caps={}).handshake()
    reply = reply_of(only(pair.client.receive(wire({"id": 5, "method": method, "params": {}}))))
    assert reply["id"] == 5 and reply["error"]["code"] == METHOD_NOT_FOUND


def test_unknown_methods_reach_the_application() -> None:
    """The session has no capability for unknown methods; the engine answers -32601 for them."""
    pair = ready()
    event = only(pair.server.receive(wire({"id": 1, "method": "vendor/x"})))
    assert isinstance(event, RequestReceived) and event.method == "vendor/x"


# -- ids ---------------------------------------------------------------------------------------------------
def test_duplicate_in_flight_request_id_is_refused() -> None:
    """basic#requests: an id MUST NOT be reused by the requestor while in flight."""
    pair = ready()
    assert isinstance(only(pair.server.receive(wire({"id": 7, "method": "tools/list"}))), RequestReceived)
    reply = reply_of(only(pair.server.receive(wire({"id": 7, "method": "prompts/list"}))))
    assert reply["id"] == 7 and reply["error"]["code"] == INVALID_REQUEST
    pair.server.send_result(7, {"tools": []})  # the first request is still owed its answer


def test_string_and_integer_ids_are_distinct() -> None:
    pair = ready()
    assert isinstance(only(pair.server.receive(wire({"id": 7, "method": "ping"}))), RequestReceived)
    assert isinstance(only(pair.server.receive(wire({"id": "7", "method": "ping"}))), RequestReceived)


def test_our_request_ids_are_unique() -> None:
    pair = ready()
    ids = [pair.client.send_request("ping")[0] for _ in range(50)]
    assert len(set(ids)) == 50


def test_answer_to_an_unknown_id_is_a_violation_without_reply() -> None:
    pair = ready()
    event = only(pair.client.receive(wire({"id": 999, "result": {}})))
    assert isinstance(event, ProtocolViolation) and event.reply is None
    assert "999" in event.reason


@pytest.mark.parametrize("request_id", [999, None])
def test_error_with_an_unknown_or_missing_id_is_a_violation_without_reply(request_id: int | None) -> None:
    pair = ready()
    event = only(pair.client.receive(wire({"id": request_id, "error": {"code": -32603, "message": "boom"}})))
    assert isinstance(event, ProtocolViolation) and event.reply is None


def test_answer_matches_its_request() -> None:
    pair = ready()
    request_id, event = pair.client_request("tools/list")
    assert isinstance(event, RequestReceived)
    answer = only(pair.client.receive(pair.server.send_result(event.id, {"tools": []})))
    assert answer == ResultReceived(request_id, "tools/list", {"tools": []})
    assert pair.client.outstanding() == {}


def test_error_answer_becomes_a_jsonrpc_error() -> None:
    pair = ready()
    request_id, event = pair.client_request("tools/call", {"name": "nope"})
    assert isinstance(event, RequestReceived)
    answer = only(pair.client.receive(pair.server.send_error(event.id, -32602, "Unknown tool: nope")))
    assert isinstance(answer, ErrorReceived) and answer.id == request_id and answer.method == "tools/call"
    assert isinstance(answer.error, JSONRPCError)
    assert (answer.error.code, answer.error.message) == (-32602, "Unknown tool: nope")


def test_answering_a_request_nobody_sent_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError, match="no request 12"):
        ready().server.send_result(12, {})


def test_a_result_that_cannot_be_serialized_leaves_the_request_answerable() -> None:
    """Every request gets an answer (basic#responses): if the result is not JSON, an error still can be.

    Today send_result pops the request before serializing, so the fallback send_error raises and the peer
    waits forever (see tests/interaction test_tool_returning_nan_is_still_answered).
    """
    pair = ready()
    _, event = pair.client_request("tools/call", {"name": "t"})
    assert isinstance(event, RequestReceived)
    with pytest.raises(TypeError):
        pair.server.send_result(event.id, {"structuredContent": {"x": object()}, "content": []})
    text = pair.server.send_error(event.id, -32603, "Internal error")
    assert isinstance(only(pair.client.receive(text)), ErrorReceived)


# -- cancellation ------------------------------------------------------------------------------------------
def test_cancel_builds_notifications_cancelled() -> None:
    """basic/utilities/cancellation: {requestId, reason?}."""
    pair = ready()
    request_id, _ = pair.client_request("tools/call", {"name": "slow"})
    text = pair.client.cancel(request_id, "user pressed stop")
    assert json.loads(text) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "user pressed stop"},
    }
    assert request_id not in pair.client.outstanding()
    note = only(pair.server.receive(text))
    assert note == NotificationReceived(
        "notifications/cancelled", {"requestId": request_id, "reason": "user pressed stop"}
    )


def test_late_answer_to_a_cancelled_request_is_ignored_without_reply() -> None:
    """cancellation#behavior-requirements: the sender SHOULD ignore any response that arrives afterwards."""
    pair = ready()
    request_id, event = pair.client_request("tools/call", {"name": "slow"})
    assert isinstance(event, RequestReceived)
    pair.client.cancel(request_id)
    late = only(pair.client.receive(pair.server.send_result(event.id, {"content": []})))
    assert isinstance(late, ProtocolViolation) and late.reply is None
    assert "cancelled" in late.reason
    late_error = only(pair.client.receive(wire({"id": request_id, "error": {"code": 1, "message": "m"}})))
    assert isinstance(late_error, ProtocolViolation) and late_error.reply is None


def test_forgotten_request_cannot_be_answered() -> None:
    """The receiver of a cancellation SHOULD NOT respond to the cancelled request."""
    pair = ready()
    _, event = pair.client_request("tools/call", {"name": "slow"})
    assert isinstance(event, RequestReceived)
    pair.server.forget(event.id)
    with pytest.raises(LocalProtocolError):
        pair.server.send_result(event.id, {"content": []})


def test_initialize_cannot_be_cancelled_and_stays_outstanding() -> None:
    """lifecycle: the client MUST NOT cancel initialize. Refusing must not lose the request either."""
    pair = Pair()
    request_id, request = pair.send_initialize()
    with pytest.raises(LocalProtocolError, match="initialize"):
        pair.client.cancel(request_id)
    assert pair.client.outstanding() == {request_id: "initialize"}
    assert isinstance(pair.answer_initialize(request), ResultReceived)
    assert pair.client.state is State.INITIALIZED


# -- negotiation -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("requested", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_server_echoes_a_supported_version(requested: str) -> None:
    """lifecycle#version-negotiation: if the server supports the version it MUST respond with the same."""
    pair = Pair()
    _, request = pair.send_initialize(requested)
    answer = pair.answer_initialize(request)
    assert isinstance(answer, ResultReceived) and answer.result["protocolVersion"] == requested
    assert pair.server.version == pair.client.version == ProtocolVersion(requested)


@pytest.mark.parametrize("requested", ["1.0.0", "2099-01-01", "2026-07-28"])
def test_server_answers_its_latest_for_an_unknown_version(requested: str) -> None:
    server = Session(Role.SERVER)
    text = wire(
        {"id": 1, "method": "initialize", "params": {"protocolVersion": requested, "capabilities": {}}}
    )
    event = only(server.receive(text))
    assert isinstance(event, RequestReceived)
    result = server.accept_initialize(event.params)
    assert result["protocolVersion"] == "2025-11-25"


def test_initialize_result_carries_info_capabilities_and_instructions() -> None:
    pair = Pair(CLIENT_CAPS, SERVER_CAPS)
    _, request = pair.send_initialize()
    answer = pair.answer_initialize(request, instructions="Use the add tool.")
    assert isinstance(answer, ResultReceived)
    assert answer.result == {
        "protocolVersion": "2025-11-25",
        "capabilities": SERVER_CAPS,
        "serverInfo": {"name": "s", "version": "2"},
        "instructions": "Use the add tool.",
    }
    assert pair.server.peer_info == {"name": "c", "version": "1"}
    assert pair.server.peer_capabilities == CLIENT_CAPS
    assert pair.client.peer_info == {"name": "s", "version": "2"}
    assert pair.client.peer_capabilities == SERVER_CAPS
    assert pair.client.instructions == "Use the add tool."


def test_no_instructions_key_without_instructions() -> None:
    pair = Pair()
    _, request = pair.send_initialize()
    answer = pair.answer_initialize(request)
    assert isinstance(answer, ResultReceived) and "instructions" not in answer.result
    assert pair.client.instructions is None


@pytest.mark.parametrize("chosen", ["1999-01-01", "2026-07-28", None, 20251125])
def test_client_refuses_a_version_it_does_not_support(chosen: Any) -> None:
    """lifecycle#version-negotiation: a client not supporting the server's version SHOULD disconnect."""
    client = Session(Role.CLIENT)
    request_id, _ = client.initialize_request()
    event = only(client.receive(wire({"id": request_id, "result": init_result(chosen)})))
    assert isinstance(event, ErrorReceived) and event.method == "initialize"
    assert isinstance(event.error, RemoteProtocolError)
    assert repr(chosen) in str(event.error)
    assert client.state is State.CLOSED
    assert client.version is None


def test_client_with_a_restricted_version_set_refuses_the_latest() -> None:
    client = Session(Role.CLIENT, supported_versions=("2025-06-18",))
    request_id, _ = client.initialize_request("2025-06-18")
    event = only(client.receive(wire({"id": request_id, "result": init_result("2025-11-25")})))
    assert isinstance(event, ErrorReceived) and isinstance(event.error, RemoteProtocolError)


def test_second_initialize_is_refused() -> None:
    pair = ready()
    text = wire({"id": 99, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
    reply = reply_of(only(pair.server.receive(text)))
    assert reply["id"] == 99 and reply["error"]["code"] == INVALID_REQUEST
    assert pair.server.state is State.READY


def test_client_refuses_an_initialize_request() -> None:
    pair = ready()
    reply = reply_of(only(pair.client.receive(wire({"id": 1, "method": "initialize", "params": {}}))))
    assert reply["error"]["code"] == INVALID_REQUEST


@pytest.mark.parametrize("when", ["new", "ready"])
def test_stray_notifications_initialized_is_a_violation_without_reply(when: str) -> None:
    server = ready().server if when == "ready" else Session(Role.SERVER)
    event = only(server.receive(wire({"method": "notifications/initialized"})))
    assert isinstance(event, ProtocolViolation) and event.reply is None


# -- batches (2025-03-26 only, MCP-NOTES §3.2) --------------------------------------------------------------
BATCH = json.dumps(
    [
        {"jsonrpc": "2.0", "id": 101, "method": "ping"},
        {"jsonrpc": "2.0", "id": 102, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    ]
)


def test_batch_accepted_under_2025_03_26() -> None:
    server = ready("2025-03-26").server
    events = server.receive(BATCH)
    assert [type(e) for e in events] == [RequestReceived, RequestReceived, NotificationReceived]


def test_client_accepts_a_batch_under_2025_03_26() -> None:
    client = ready("2025-03-26").client
    notes = json.dumps([{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}] * 2)
    assert [type(e) for e in client.receive(notes)] == [NotificationReceived, NotificationReceived]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batch_refused_under_other_versions(version: str) -> None:
    server = ready(version).server
    reply = reply_of(only(server.receive(BATCH)))
    assert reply["error"]["code"] == INVALID_REQUEST


def test_batch_refused_before_negotiation() -> None:
    """2025-03-26: initialize MUST NOT be part of a batch; before negotiation no batch is allowed at all."""
    server = Session(Role.SERVER)
    batch = json.dumps(
        [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}]
    )
    assert reply_of(only(server.receive(batch)))["error"]["code"] == INVALID_REQUEST
    assert server.state is State.NEW


# -- closing -------------------------------------------------------------------------------------------------
def test_closed_session_sends_nothing_and_refuses_requests() -> None:
    pair = ready()
    pair.client.close()
    pair.server.close()
    with pytest.raises(LocalProtocolError, match="closed"):
        pair.client.send_request("ping")
    with pytest.raises(LocalProtocolError, match="closed"):
        pair.client.send_notification("notifications/roots/list_changed")
    reply = reply_of(only(pair.server.receive(wire({"id": 1, "method": "ping"}))))
    assert reply["error"]["code"] == INVALID_REQUEST
