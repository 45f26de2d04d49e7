"""The modern era (2026-07-28) without I/O: era detection, per-request ``_meta``, header checks, result
finishing, MRTR input rounds and sealed ``requestState``, listen filters; and the Session's dual-era gate.

Spec: MCP-NOTES §2.2-2.4 (basic/versioning, server/discover), §3.3 (error codes), §4.3 (HTTP headers),
§7.1 (MRTR), §7.2 (subscriptions/listen), §7.3 (caching).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_notebook.protocol import jsonrpc, modern
from mcp_notebook.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError
from mcp_notebook.protocol.session import ProtocolViolation, RequestReceived, Role, Session, State

V = "2026-07-28"


def meta(**extra: Any) -> dict[str, Any]:
    return {modern.META_PROTOCOL_VERSION: V, modern.META_CLIENT_CAPABILITIES: {}, **extra}


def request(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def server() -> Session:
    return Session(Role.SERVER, capabilities={"tools": {"listChanged": True}})


def refusal(event: object) -> dict[str, Any]:
    assert isinstance(event, ProtocolViolation) and event.reply is not None
    reply: dict[str, Any] = json.loads(event.reply)
    return reply


# ---- era detection and _meta ------------------------------------------------------------------------------
def test_a_request_is_modern_when_its_meta_names_a_protocol_version() -> None:
    assert modern.is_modern({"_meta": meta()})
    assert not modern.is_modern({"_meta": {"progressToken": 1}})
    assert not modern.is_modern({"protocolVersion": "2025-11-25"})
    assert not modern.is_modern(None)


def test_read_meta_returns_what_the_request_says_about_itself() -> None:
    info = {"name": "c", "version": "1"}
    got = modern.read_meta(
        "tools/list",
        {"_meta": meta(**{modern.META_CLIENT_INFO: info, modern.META_LOG_LEVEL: "info"})},
    )
    assert got.version.name == V and got.version.era == "modern"
    assert got.client_capabilities == {} and got.client_info == info and got.log_level == "info"
    assert got.wants_log("error") and not got.wants_log("debug")
    assert not modern.read_meta("tools/list", {"_meta": meta()}).wants_log(
        "emergency"
    )  # none without a level


@pytest.mark.parametrize(
    ("params", "code"),
    [
        (None, INVALID_PARAMS),
        ({}, INVALID_PARAMS),
        ({"_meta": {modern.META_CLIENT_CAPABILITIES: {}}}, INVALID_PARAMS),
        ({"_meta": {modern.META_PROTOCOL_VERSION: V}}, INVALID_PARAMS),
        ({"_meta": meta(**{modern.META_LOG_LEVEL: "loud"})}, INVALID_PARAMS),
        (
            {"_meta": {**meta(), modern.META_PROTOCOL_VERSION: "1900-01-01"}},
            modern.UNSUPPORTED_PROTOCOL_VERSION,
        ),
    ],
)
def test_read_meta_rejects_missing_or_invalid_fields(params: dict[str, Any] | None, code: int) -> None:
    with pytest.raises(JSONRPCError) as raised:
        modern.read_meta("tools/list", params)
    assert raised.value.code == code


DUAL = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def test_an_unsupported_version_names_what_is_supported() -> None:
    with pytest.raises(JSONRPCError) as raised:
        modern.read_meta("tools/list", {"_meta": {**meta(), modern.META_PROTOCOL_VERSION: "1900-01-01"}})
    assert raised.value.data == {"supported": [V], "requested": "1900-01-01"}


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "initialize", "resources/subscribe", "x/y"])
def test_methods_the_modern_era_lacks_are_not_found(method: str) -> None:
    with pytest.raises(JSONRPCError) as raised:
        modern.read_meta(method, {"_meta": meta()})
    assert raised.value.code == METHOD_NOT_FOUND
    assert modern.http_status(raised.value.code) == 404


def test_http_status_of_modern_errors() -> None:
    assert modern.http_status(INVALID_PARAMS) == 400
    for code in (
        modern.HEADER_MISMATCH,
        modern.MISSING_CLIENT_CAPABILITY,
        modern.UNSUPPORTED_PROTOCOL_VERSION,
    ):
        assert modern.http_status(code) == 400


# ---- HTTP headers -----------------------------------------------------------------------------------------
def headers(**values: str) -> dict[str, str]:
    return {"MCP-Protocol-Version": V, **{k.replace("_", "-"): v for k, v in values.items()}}


def test_matching_headers_pass_and_whitespace_is_ignored() -> None:
    params = {"name": "add", "_meta": meta()}
    assert (
        modern.check_headers(
            headers(**{"Mcp_Method": " tools/call ", "Mcp_Name": "add"}), "tools/call", params
        )
        is None
    )
    encoded = "=?base64?" + "w6lsw6h2ZQ==" + "?="  # "élève"
    params_uri = {"uri": "élève", "_meta": meta()}
    assert (
        modern.check_headers(
            headers(Mcp_Method="resources/read", Mcp_Name=encoded), "resources/read", params_uri
        )
        is None
    )


@pytest.mark.parametrize(
    "sent",
    [
        {"Mcp_Method": "tools/list", "Mcp_Name": "add"},  # method differs
        {"Mcp_Method": "TOOLS/CALL", "Mcp_Name": "add"},  # values are case-sensitive
        {"Mcp_Method": "tools/call", "Mcp_Name": "sub"},  # name differs
        {"Mcp_Method": "tools/call"},  # name missing
        {"Mcp_Name": "add"},  # method missing
        {"Mcp_Method": "tools/call", "Mcp_Name": "=?base64?!!!?="},  # broken base64
    ],
)
def test_mismatched_or_missing_headers_are_header_mismatch(sent: dict[str, str]) -> None:
    error = modern.check_headers(headers(**sent), "tools/call", {"name": "add", "_meta": meta()})
    assert error is not None and error.code == modern.HEADER_MISMATCH


def test_the_version_header_must_match_the_meta() -> None:
    params = {"_meta": {**meta(), modern.META_PROTOCOL_VERSION: "v999"}}
    error = modern.check_headers(headers(Mcp_Method="server/discover"), "server/discover", params)
    assert error is not None and error.code == modern.HEADER_MISMATCH


def test_param_headers_follow_x_mcp_header() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "plain": {"type": "string"},
        },
    }
    ok = {"Mcp-Param-Region": "=?base64?SGVsbG8=?=", "Mcp-Param-Count": "007"}
    assert modern.check_param_headers(schema, {"region": "Hello", "count": 7, "plain": "x"}, ok) is None
    assert modern.check_param_headers(schema, {}, {}) is None
    for sent in (
        {"Mcp-Param-Count": "7"},
        {**ok, "Mcp-Param-Region": "=?base64?SGVsbG8?="},
        {**ok, "Mcp-Param-Count": "8"},
    ):
        error = modern.check_param_headers(schema, {"region": "Hello", "count": 7}, sent)
        assert error is not None and error.code == modern.HEADER_MISMATCH
    literal = {"Mcp-Param-Region": "SGVsbG8=", "Mcp-Param-Count": "7"}  # no wrapper: a literal value
    assert modern.check_param_headers(schema, {"region": "SGVsbG8=", "count": 7}, literal) is None


# ---- results -----------------------------------------------------------------------------------------------
def test_complete_adds_result_type_server_info_and_cache_hints() -> None:
    info = {"name": "s", "version": "1"}
    listed = modern.complete({"tools": []}, "tools/list", info, ttl_ms=0, cache_scope="public")
    assert listed == {
        "tools": [],
        "resultType": "complete",
        "_meta": {modern.META_SERVER_INFO: info},
        "ttlMs": 0,
        "cacheScope": "public",
    }
    called = modern.complete(
        {"content": [], "_meta": {"k": 1}}, "tools/call", info, ttl_ms=5, cache_scope="public"
    )
    assert called["_meta"] == {"k": 1, modern.META_SERVER_INFO: info} and "ttlMs" not in called
    asking = modern.complete(
        {"resultType": "input_required"}, "resources/read", info, ttl_ms=5, cache_scope="public"
    )
    assert "ttlMs" not in asking  # MRTR results are not cacheable


# ---- MRTR --------------------------------------------------------------------------------------------------
def round_with(capabilities: dict[str, Any], responses: dict[str, Any] | None = None) -> modern.InputRound:
    request_meta = modern.read_meta(
        "tools/call", {"_meta": meta(**{modern.META_CLIENT_CAPABILITIES: capabilities})}
    )
    return modern.InputRound(request_meta, responses or {})


def test_an_unanswered_input_request_ends_the_round() -> None:
    inputs = round_with({"elicitation": {}})
    with pytest.raises(modern.InputRequired) as raised:
        inputs.ask("elicitation/create", {"message": "name?"}, "who")
    assert raised.value.requests == {"who": {"method": "elicitation/create", "params": {"message": "name?"}}}


def test_answers_replay_in_order_with_numbered_default_keys() -> None:
    inputs = round_with({"sampling": {}, "roots": {}}, {"sampling_1": {"role": "assistant"}})
    assert inputs.ask("sampling/createMessage", {}) == {"role": "assistant"}
    with pytest.raises(modern.InputRequired) as raised:
        inputs.ask("roots/list", {})
    assert list(raised.value.requests) == ["roots_2"]


def test_an_undeclared_capability_is_never_asked_for() -> None:
    with pytest.raises(modern.MissingClientCapability) as raised:
        round_with({"elicitation": {}}).ask("sampling/createMessage", {})
    assert raised.value.error.code == modern.MISSING_CLIENT_CAPABILITY
    assert raised.value.error.data == {"requiredCapabilities": {"sampling": {}}}


def test_input_responses_must_be_objects() -> None:
    assert modern.read_input_responses({}) == {}
    assert modern.read_input_responses({"inputResponses": {"a": {}, "extra": {}}}) == {"a": {}, "extra": {}}
    for bad in ("x", ["a"], {"a": "yes"}):
        with pytest.raises(JSONRPCError):
            modern.read_input_responses({"inputResponses": bad})


# ---- subscriptions/listen ----------------------------------------------------------------------------------
def test_listen_honours_only_what_was_asked_and_is_declared() -> None:
    capabilities = {"tools": {"listChanged": True}, "resources": {"subscribe": True}}
    asked = {
        "notifications": {
            "toolsListChanged": True,
            "promptsListChanged": True,
            "resourceSubscriptions": ["a://x"],
        }
    }
    honoured = modern.listen_filter(asked, capabilities)
    assert honoured == {"toolsListChanged": True, "resourceSubscriptions": ["a://x"]}
    assert modern.listen_matches(honoured, "notifications/tools/list_changed", None)
    assert not modern.listen_matches(honoured, "notifications/prompts/list_changed", None)
    assert modern.listen_matches(honoured, "notifications/resources/updated", {"uri": "a://x"})
    assert not modern.listen_matches(honoured, "notifications/resources/updated", {"uri": "a://y"})
    assert modern.listen_filter({}, capabilities) == {}
    with pytest.raises(JSONRPCError):
        modern.listen_filter({"notifications": []}, capabilities)


# ---- the Session: one endpoint, both eras ------------------------------------------------------------------
def test_a_modern_request_passes_no_handshake_and_leaves_the_state_alone() -> None:
    session = server()
    [event] = session.receive(request("tools/list", {"_meta": meta()}))
    assert isinstance(event, RequestReceived) and event.modern is not None
    assert event.modern.version.name == V
    assert session.state is State.NEW
    answer = json.loads(session.send_result(1, {"tools": []}))
    assert answer["result"] == {"tools": []}
    assert session.state is State.NEW


def test_a_legacy_request_before_initialize_is_still_refused() -> None:
    [event] = server().receive(request("tools/list", {}))
    assert refusal(event)["error"]["code"] == -32600


def test_server_discover_without_meta_is_an_invalid_params_error() -> None:
    [event] = server().receive(request("server/discover"))
    assert refusal(event)["error"]["code"] == INVALID_PARAMS
    assert refusal(event)["id"] == 1


def test_modern_initialize_and_ping_are_not_found() -> None:
    session = server()
    for method in ("initialize", "ping"):
        [event] = session.receive(request(method, {"_meta": meta()}))
        assert refusal(event)["error"]["code"] == METHOD_NOT_FOUND
    assert session.state is State.NEW


def test_an_unsupported_modern_version_is_refused_with_its_data() -> None:
    [event] = server().receive(
        request("tools/list", {"_meta": {**meta(), modern.META_PROTOCOL_VERSION: "2099-01-01"}})
    )
    error = refusal(event)["error"]
    assert error["code"] == modern.UNSUPPORTED_PROTOCOL_VERSION
    # a dual-era server names its legacy versions too (audit item 9)
    assert error["data"] == {"supported": [V, *DUAL], "requested": "2099-01-01"}


def test_an_undeclared_server_capability_is_not_found_in_both_eras() -> None:
    [event] = server().receive(request("prompts/list", {"_meta": meta()}))
    assert refusal(event)["error"]["code"] == METHOD_NOT_FOUND


def test_legacy_and_modern_share_one_session() -> None:
    session = server()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    [event] = session.receive(request("initialize", init))
    assert isinstance(event, RequestReceived) and event.modern is None
    session.send_result(1, session.accept_initialize(event.params))
    session.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert session.state is State.READY
    [modern_event] = session.receive(request("tools/list", {"_meta": meta()}, request_id=2))
    assert isinstance(modern_event, RequestReceived) and modern_event.modern is not None
    [legacy_event] = session.receive(request("ping", None, request_id=3))
    assert isinstance(legacy_event, RequestReceived) and legacy_event.modern is None
    assert session.version is not None and session.version.name == "2025-11-25"


def test_the_protocol_package_imports_only_the_standard_library() -> None:
    """protocol/ is sans-IO (DESIGN architecture table): no asyncio, no HTTP, nothing outside the stdlib but
    the JSON codec orjson (DESIGN decision 16), which does no I/O and has a stdlib fallback."""
    import ast
    import sys
    from pathlib import Path

    import mcp_notebook.protocol as package

    for path in Path(package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or (path.name, top) == ("jsonrpc.py", "orjson"), (
                    f"{path.name} imports {name}"
                )
                assert top not in ("asyncio", "socket", "threading", "subprocess"), f"{path.name}: {name}"


# ---- _meta read once: a transport's check handed on through the Wire -------------------------------------
def test_a_session_takes_the_meta_a_transport_checked_on_the_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    wire = jsonrpc.read(request("tools/list", {"_meta": meta()}))
    message = jsonrpc.parse(wire)[0]
    assert isinstance(message, jsonrpc.Request)
    checked = modern.check_meta(wire, message)
    calls = []
    monkeypatch.setattr(modern, "read_meta", lambda *args, **kwargs: calls.append(args))
    (event,) = server().receive(wire)
    assert isinstance(event, RequestReceived) and event.modern is checked and calls == []


def test_a_session_serving_other_versions_reads_the_meta_again() -> None:
    wire = jsonrpc.read(request("tools/list", {"_meta": meta()}))
    message = jsonrpc.parse(wire)[0]
    assert isinstance(message, jsonrpc.Request)
    modern.check_meta(wire, message)
    only_later = Session(Role.SERVER, capabilities={"tools": {}}, modern_versions=("2099-01-01",))
    (event,) = only_later.receive(wire)
    reply = refusal(event)  # its own -32022, not the transport's verdict
    assert reply["error"]["code"] == modern.UNSUPPORTED_PROTOCOL_VERSION
    assert reply["error"]["data"]["supported"][0] == "2099-01-01"


def test_a_checked_wire_with_a_reused_request_id_is_still_refused() -> None:
    session = server()
    for expected in (RequestReceived, ProtocolViolation):
        wire = jsonrpc.read(request("tools/list", {"_meta": meta()}))
        message = jsonrpc.parse(wire)[0]
        assert isinstance(message, jsonrpc.Request)
        modern.check_meta(wire, message)
        assert isinstance(session.receive(wire)[0], expected)


def test_a_plain_result_keeps_its_era_fields_through_copy_and_pickle() -> None:
    """EraResult keeps ``era_meta`` in a slot (no ``__dict__`` per result); copies and pickles keep it."""
    import copy
    import pickle

    from mcp_notebook.protocol import era

    info = {"name": "s", "version": "1"}
    wire = {"content": [], "resultType": "complete", "_meta": {era.META_SERVER_INFO: info}}
    plain = era.plain_result("tools/call", wire)
    assert plain == {"content": []} and not hasattr(plain, "__dict__")
    for again in (copy.copy(plain), copy.deepcopy(plain), pickle.loads(pickle.dumps(plain))):
        assert type(again) is type(plain) and again == {"content": []}
        assert era.era_meta(again) == {"resultType": "complete", "serverInfo": info}
