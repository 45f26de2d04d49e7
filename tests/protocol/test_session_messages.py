"""The sans-IO session (two Sessions joined by hand, tests/protocol/_pair.py): request ids, cancellation,
version negotiation, batches and closing (the lifecycle's transitions and capabilities: test_session.py).

Lifecycle: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle (MCP-NOTES §2.1);
cancellation: basic/utilities/cancellation (§3.6); batching: §3.2; error codes: §3.3.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_notebook.protocol.errors import (
    INVALID_REQUEST,
    JSONRPCError,
    LocalProtocolError,
    RemoteProtocolError,
)
from mcp_notebook.protocol.session import (
    ErrorReceived,
    NotificationReceived,
    ProtocolViolation,
    RequestReceived,
    ResultReceived,
    Role,
    Session,
    State,
)
from mcp_notebook.protocol.versions import ProtocolVersion
from tests.protocol._pair import CLIENT_CAPS, SERVER_CAPS, Pair, init_result, only, ready, reply_of, wire


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
