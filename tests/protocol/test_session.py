"""The sans-IO session: two Sessions joined by hand (h11's ConnectionPair idea), no I/O at all: the
lifecycle's transitions, requests before initialization and capabilities (ids, cancellation, negotiation,
batches and closing: test_session_messages.py).

Lifecycle: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle (MCP-NOTES §2.1);
error codes: §3.3.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from mcp_notebook.protocol.errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JSONRPCError,
    LocalProtocolError,
)
from mcp_notebook.protocol.session import (
    TRANSITIONS,
    ErrorReceived,
    RequestReceived,
    ResultReceived,
    Role,
    Session,
    State,
    Trigger,
)
from tests.protocol._pair import CLIENT_CAPS, SERVER_CAPS, Pair, only, ready, reply_of, wire

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
