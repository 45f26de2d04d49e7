"""JSON-RPC framing: every message kind, the id rules, and the error replies for bad input.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic#messages (MCP-NOTES §3.1-3.3) and
https://www.jsonrpc.org/specification (sections 4-7). The parser is fed untrusted bytes, so it must never
raise: everything malformed becomes an ``Invalid`` carrying the reply (or None when a reply is forbidden).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_notebook.protocol.errors import INVALID_REQUEST, PARSE_ERROR
from mcp_notebook.protocol.jsonrpc import (
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Request,
    Response,
    parse,
    serialize,
)


def one(data: str | bytes, *, allow_batch: bool = False) -> Message | Invalid:
    items = parse(data, allow_batch=allow_batch)
    assert len(items) == 1
    return items[0]


def wire(obj: Any) -> str:
    return json.dumps(obj)


def reply_of(data: str | bytes, *, allow_batch: bool = False) -> ErrorResponse:
    """The error reply for input that must be refused with one."""
    item = one(data, allow_batch=allow_batch)
    assert isinstance(item, Invalid), item
    assert item.reply is not None, item
    return item.reply


def assert_error_response(text: str) -> dict[str, Any]:
    """``text`` is one well-formed JSON-RPC error response (jsonrpc, id, integer code, string message)."""
    obj = json.loads(text)
    assert isinstance(obj, dict)
    assert obj["jsonrpc"] == "2.0"
    assert "result" not in obj
    assert isinstance(obj["error"]["code"], int) and not isinstance(obj["error"]["code"], bool)
    assert isinstance(obj["error"]["message"], str)
    assert obj.get("id") is None or isinstance(obj["id"], (str, int))
    return obj


# -- every message kind ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, Request(1, "ping")),
        (
            {"jsonrpc": "2.0", "id": "a-1", "method": "tools/list", "params": {}},
            Request("a-1", "tools/list", {}),
        ),
        ({"jsonrpc": "2.0", "id": -7, "method": "x", "params": {"a": [1]}}, Request(-7, "x", {"a": [1]})),
        ({"jsonrpc": "2.0", "id": "", "method": "x"}, Request("", "x")),
        (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            Notification("notifications/initialized"),
        ),
        (
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 2},
            },
            Notification("notifications/progress", {"progressToken": 1, "progress": 2}),
        ),
        ({"jsonrpc": "2.0", "id": 3, "result": {}}, Response(3, {})),
        ({"jsonrpc": "2.0", "id": "r", "result": {"tools": []}}, Response("r", {"tools": []})),
        (
            {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}},
            ErrorResponse(4, -32601, "Method not found"),
        ),
        (
            {"jsonrpc": "2.0", "id": 5, "error": {"code": -32002, "message": "nf", "data": {"uri": "x:/"}}},
            ErrorResponse(5, -32002, "nf", {"uri": "x:/"}),
        ),
        # An error whose request id could not be read (JSON-RPC 2.0 section 5.1).
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            ErrorResponse(None, -32700, "Parse error"),
        ),
        ({"jsonrpc": "2.0", "error": {"code": -32600, "message": "bad"}}, ErrorResponse(None, -32600, "bad")),
        # A float error code with an integral value is still an integer on the wire.
        (
            {"jsonrpc": "2.0", "id": 6, "error": {"code": -32000.0, "message": "m"}},
            ErrorResponse(6, -32000, "m"),
        ),
    ],
)
def test_every_message_kind_parses(obj: dict[str, Any], expected: Message) -> None:
    assert parse(wire(obj)) == [expected]
    assert parse(wire(obj).encode("utf-8")) == [expected]


# -- id rules ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad_id", [None, True, False, 1.5, 2.0, [1], {"a": 1}])
def test_request_with_an_id_that_is_not_a_string_or_integer_is_refused_with_32600(bad_id: Any) -> None:
    """Request ids are strings or integers and MUST NOT be null (basic#requests); bool is not 1."""
    reply = reply_of(wire({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}))
    assert reply.code == INVALID_REQUEST
    assert reply.id is None  # the id could not be read, so it is not echoed (a bool must not become 1)


def test_request_without_an_id_is_a_notification() -> None:
    assert one(wire({"jsonrpc": "2.0", "method": "ping"})) == Notification("ping")


@pytest.mark.parametrize("bad_id", [None, True, 1.5, [1]])
def test_result_with_an_unusable_id_is_dropped_without_reply(bad_id: Any) -> None:
    item = one(wire({"jsonrpc": "2.0", "id": bad_id, "result": {}}))
    assert isinstance(item, Invalid) and item.reply is None


def test_result_without_an_id_is_dropped_without_reply() -> None:
    item = one(wire({"jsonrpc": "2.0", "result": {}}))
    assert isinstance(item, Invalid) and item.reply is None


# -- -32700: input that is not JSON ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        "",
        "   ",
        "{",
        '{"jsonrpc": "2.0", "id": 1, "method": "ping"',
        "not json",
        "{'jsonrpc': '2.0'}",
        '{"jsonrpc":"2.0","id":1,"method":"ping"} trailing',
        b"\xff\xfe\xfd",
        b'{"jsonrpc":"2.0","id":1,"method":"p\xffng"}',
        b'{"jsonrpc":"2.0","id":1,"method":"p\xc3"}',
    ],
    ids=repr,
)
def test_unparseable_input_is_answered_with_32700(data: str | bytes) -> None:
    reply = reply_of(data)
    assert reply.code == PARSE_ERROR
    assert reply.id is None
    assert_error_response(serialize(reply))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals_are_parse_errors(literal: str) -> None:
    """They are not JSON (RFC 8259 section 6), though Python's json module accepts them by default."""
    data = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":' + literal + "}}"
    assert reply_of(data).code == PARSE_ERROR


@pytest.mark.parametrize(
    "data",
    [
        "[" * 100_000 + "]" * 100_000,
        "[" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        '{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":' + "[" * 100_000 + "]" * 100_000 + "}}",
    ],
    ids=["arrays", "unclosed-arrays", "objects", "inside-params"],
)
@pytest.mark.parametrize("allow_batch", [False, True])
def test_deeply_nested_input_is_a_parse_error_not_a_crash(data: str, allow_batch: bool) -> None:
    assert reply_of(data, allow_batch=allow_batch).code == PARSE_ERROR


def test_utf8_encoded_lone_surrogate_is_a_parse_error() -> None:
    """MCP messages are UTF-8 (basic#messages); ED A0 80 (an encoded surrogate) is not valid UTF-8."""
    assert reply_of(b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}').code == PARSE_ERROR


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_bytes_in_another_unicode_encoding_are_a_parse_error(encoding: str) -> None:
    """MCP messages are UTF-8 (basic#messages): a UTF-16/32 body is not a valid message."""
    data = wire({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode(encoding)
    assert reply_of(data).code == PARSE_ERROR


# -- -32600: JSON that is not a valid request ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("obj", "echoed_id"),
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1),
        ({"id": 1, "method": "ping"}, 1),
        ({"jsonrpc": 2.0, "id": "s", "method": "ping"}, "s"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3}, 1),
        ({"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": None}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": ""}, 1),
        ({"jsonrpc": "2.0", "id": 1}, 1),
        ({}, None),
        # "method" with "result"/"error": neither a request nor a response (JSON-RPC 2.0 sections 4, 5)
        ({"jsonrpc": "2.0", "error": None, "id": 0, "method": "ping"}, 0),
        ({"jsonrpc": "2.0", "result": {}, "id": "r", "method": "tools/list"}, "r"),
        ({"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}, "id": 2, "method": "x"}, 2),
        ({"jsonrpc": "2.0", "result": {}, "method": "notifications/cancelled"}, None),
        ({"jsonrpc": "2.0", "result": {}, "id": None, "method": "ping"}, None),
    ],
)
def test_invalid_request_is_answered_with_32600_echoing_a_readable_id(
    obj: dict[str, Any], echoed_id: Any
) -> None:
    reply = reply_of(wire(obj))
    assert reply.code == INVALID_REQUEST
    assert reply.id == echoed_id
    assert_error_response(serialize(reply))


@pytest.mark.parametrize("value", [1, "text", None, True, 2.5])
def test_a_json_value_that_is_not_an_object_is_an_invalid_request(value: Any) -> None:
    assert reply_of(wire(value)).code == INVALID_REQUEST


# -- batches (2025-03-26 only: MCP-NOTES §3.2) ---------------------------------------------------------------
BATCH = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"}]


def test_batch_is_refused_with_32600_unless_allowed() -> None:
    reply = reply_of(wire(BATCH))
    assert reply.code == INVALID_REQUEST and reply.id is None


def test_allowed_batch_yields_one_item_per_element() -> None:
    assert parse(wire(BATCH), allow_batch=True) == [Request(1, "ping"), Notification("notifications/x")]


def test_empty_batch_is_invalid_even_when_allowed() -> None:
    assert reply_of("[]", allow_batch=True).code == INVALID_REQUEST


def test_invalid_elements_of_an_allowed_batch_are_refused_one_by_one() -> None:
    items = parse(wire([1, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]), allow_batch=True)
    assert len(items) == 2
    assert isinstance(items[0], Invalid) and items[0].reply is not None
    assert items[0].reply.code == INVALID_REQUEST
    assert items[1] == Request(2, "ping")


# -- malformed responses: never answered (JSON-RPC 2.0 section 5) ----------------------------------------
@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "2.0", "id": 1, "result": []},
        {"jsonrpc": "2.0", "id": 1, "result": "ok"},
        {"jsonrpc": "2.0", "id": 1, "result": None},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": "boom"},
        {"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1.5, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": 2}},
        {"jsonrpc": "2.0", "id": 1, "error": None},
    ],
)
def test_malformed_response_is_dropped_without_reply(obj: dict[str, Any]) -> None:
    item = one(wire(obj))
    assert isinstance(item, Invalid)
    assert item.reply is None


# -- serialize ---------------------------------------------------------------------------------------------
def test_serialize_is_one_compact_line_without_raw_newlines() -> None:
    """stdio framing: one message per line, no embedded newlines (basic/transports#stdio)."""
    text = serialize(Request(1, "x", {"s": "a\nb\u2028c", "t": "é"}))
    assert "\n" not in text and "\r" not in text
    assert json.loads(text) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "x",
        "params": {"s": "a\nb\u2028c", "t": "é"},
    }


def test_serialize_omits_absent_params_and_error_data() -> None:
    assert json.loads(serialize(Notification("n"))) == {"jsonrpc": "2.0", "method": "n"}
    assert json.loads(serialize(ErrorResponse(1, -1, "m"))) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -1, "message": "m"},
    }


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_serialize_writes_non_finite_floats_as_null(value: float) -> None:
    """DESIGN decision 15: NaN and infinities are never a protocol error; on the wire they are ``null``
    (README "NaN and Infinity"; the tool layer spells them out in the text copy before this point)."""
    text = serialize(Response(1, {"x": value, "y": [1.5, value]}))
    assert text == '{"jsonrpc":"2.0","id":1,"result":{"x":null,"y":[1.5,null]}}'


def test_serialize_writes_non_finite_floats_as_null_on_the_stdlib_path_too() -> None:
    """Integers beyond 64 bits are left to the stdlib encoder; its NaN rule must be the same."""
    text = serialize(Response(1, {"big": 2**70, "x": float("nan")}))
    assert text == '{"jsonrpc":"2.0","id":1,"result":{"big":1180591620717411303424,"x":null}}'


@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes"])
def test_serialize_refuses_values_that_are_not_json(value: Any) -> None:
    with pytest.raises(TypeError):
        serialize(Response(1, {"x": value}))


def test_serialize_bytes_are_compact_utf8() -> None:
    """The exact bytes: no spaces, non-ASCII as UTF-8 (not \\u escapes), control characters escaped."""
    text = serialize(Request(7, "m", {"t": "é\u2028", "c": "a\tb\x00"}))
    assert text == '{"jsonrpc":"2.0","id":7,"method":"m","params":{"t":"é\u2028","c":"a\\tb\\u0000"}}'


@pytest.mark.parametrize("literal", ["1e400", "-1e400"])
def test_numbers_that_overflow_a_double_are_parse_errors(literal: str) -> None:
    """They would decode as infinities, which JSON cannot carry; a peer that sends one sent no number."""
    data = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":' + literal + "}}"
    assert reply_of(data).code == PARSE_ERROR


# -- properties --------------------------------------------------------------------------------------------
json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KEYS = ["jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data"]
message_like = st.dictionaries(
    st.sampled_from(KEYS),
    st.sampled_from(["2.0", "1.0", 1, 1.5, None, True, "ping", ""]) | json_values,
    max_size=6,
)
error_like = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": st.one_of(st.none(), st.integers(), st.text()), "error": json_values}
)
anything_json = json_values | message_like | error_like | st.lists(message_like, max_size=4)


def check_parse_contract(data: str | bytes, allow_batch: bool) -> None:
    items = parse(data, allow_batch=allow_batch)
    assert len(items) >= 1
    for item in items:
        assert isinstance(item, (Request, Notification, Response, ErrorResponse, Invalid))
        if isinstance(item, Invalid) and item.reply is not None:
            obj = assert_error_response(serialize(item.reply))
            assert obj["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)


@settings(max_examples=300)
@given(data=st.binary(max_size=200), allow_batch=st.booleans())
def test_parse_never_raises_on_arbitrary_bytes(data: bytes, allow_batch: bool) -> None:
    check_parse_contract(data, allow_batch)


@settings(max_examples=300)
@given(data=st.text(max_size=200), allow_batch=st.booleans())
def test_parse_never_raises_on_arbitrary_text(data: str, allow_batch: bool) -> None:
    check_parse_contract(data, allow_batch)


@settings(max_examples=500)
@given(value=anything_json, allow_batch=st.booleans(), as_bytes=st.booleans())
def test_parse_never_raises_on_arbitrary_json(value: Any, allow_batch: bool, as_bytes: bool) -> None:
    text = json.dumps(value)
    check_parse_contract(text.encode() if as_bytes else text, allow_batch)


request_ids = st.integers() | st.text()
methods = st.text(min_size=1, max_size=30)
params = st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=4)
valid_messages = st.one_of(
    st.builds(Request, request_ids, methods, params),
    st.builds(Notification, methods, params),
    st.builds(Response, request_ids, st.dictionaries(st.text(max_size=8), json_values, max_size=4)),
    st.builds(ErrorResponse, st.none() | request_ids, st.integers(), st.text(), json_values),
)


@settings(max_examples=500)
@given(message=valid_messages)
def test_serialize_then_parse_round_trips(message: Message) -> None:
    text = serialize(message)
    assert "\n" not in text
    assert parse(text) == [message]
    assert parse(text.encode("utf-8")) == [message]


# -- the codec: orjson, and the stdlib when orjson is missing ------------------------------------------
@pytest.fixture(params=["orjson", "stdlib"])
def codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from mcp_notebook.protocol import jsonrpc

    if request.param == "stdlib":
        monkeypatch.setattr(jsonrpc, "orjson", None)
    else:
        assert jsonrpc.orjson is not None  # a main dependency: README "Choices of libraries"
    return str(request.param)


@pytest.mark.parametrize(
    "message",
    [
        Request(1, "tools/call", {"name": "t", "arguments": {"x": 1.5, "s": "é\u2028", "n": None}}),
        Response("r", {"structuredContent": {"v": [float("nan"), float("inf"), -0.0, 10**20]}}),
        ErrorResponse(None, -32700, "Parse error"),
    ],
)
def test_both_codecs_agree(codec: str, message: Message) -> None:
    text = serialize(message)
    assert "\n" not in text
    strict = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} on the wire"))
    assert strict["jsonrpc"] == "2.0"
    assert parse(text) == parse(text.encode()) and isinstance(parse(text)[0], type(message))


@pytest.mark.parametrize("data", ["{", '{"x":NaN}', b"\xff", '{"x":1e400}'])
def test_both_codecs_refuse_what_is_not_json(codec: str, data: str | bytes) -> None:
    assert reply_of(data).code == PARSE_ERROR


@pytest.mark.parametrize("number", [2**64, -(2**63) - 1, 10**40, -(10**100), 2**64 - 1, 123456789012345678])
def test_integers_of_any_size_decode_exactly(number: int) -> None:
    # orjson alone reads 2**64 as 1.8446744073709552e+19: digits lost without a word
    text = '{"jsonrpc":"2.0","id":1,"result":{"n":' + str(number) + ',"s":"x"}}'
    [message] = parse(text)
    assert message.result["n"] == number and type(message.result["n"]) is int
    [again] = parse(text.encode())
    assert again.result["n"] == number and type(again.result["n"]) is int


def test_long_digit_runs_inside_strings_change_nothing() -> None:
    text = '{"jsonrpc":"2.0","id":1,"result":{"s":"12345678901234567890123","f":1.5,"u":"é"}}'
    [message] = parse(text)
    assert message.result == {"s": "12345678901234567890123", "f": 1.5, "u": "é"}


def test_long_fractions_stay_on_the_fast_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_notebook.protocol import jsonrpc

    assert jsonrpc.orjson is not None  # a main dependency
    used: list[str] = []
    monkeypatch.setattr(jsonrpc, "_DECODER", type("Spy", (), {"decode": lambda self, t: used.append(t)})())
    [message] = parse('{"jsonrpc":"2.0","id":1,"result":{"x":0.00012345678901234567}}')
    assert message.result == {"x": 0.00012345678901234567} and used == []


# The long-integer check looks at every 19th character and follows the digits it finds; it must say exactly
# what a scan of every character says, wherever the runs fall (and whatever the text around them).
_pieces = st.sampled_from(["0", "7", "9" * 18, "1" * 19, "5" * 40, ".", "-", "x", "é", '"', ",", "e"])


@settings(max_examples=400)
@given(parts=st.lists(_pieces, max_size=120), pad=st.integers(0, 700))  # past _SMALL: the sampled path
def test_the_sampled_long_integer_check_agrees_with_a_full_scan(parts: list[str], pad: int) -> None:
    from mcp_notebook.protocol import jsonrpc

    text = "x" * pad + "".join(parts)
    raw = text.encode()
    expected = jsonrpc._scan_long_integer(raw)
    assert jsonrpc._has_long_integer(text) == expected
    assert jsonrpc._has_long_integer(raw) == expected


@pytest.mark.parametrize("at", [0, 1, 17, 18, 19, 37, 500_000, 1_048_576 - 19])
@pytest.mark.parametrize("after", ["", ".", '"', "é"])
def test_a_long_integer_anywhere_in_a_large_message_is_found(at: int, after: str) -> None:
    from mcp_notebook.protocol import jsonrpc

    text = "a" * 1_048_576
    if at and after:
        at -= 1
    text = text[:at] + after + "1234567890123456789" + text[at + len(after) + 19 :]
    found = after != "."  # after a "." the digits are a fraction's: no integer to lose
    assert jsonrpc._has_long_integer(text) is found
    assert jsonrpc._has_long_integer(text.encode()) is found
    assert jsonrpc._has_long_integer(text[: at + len(after) + 18] + "x" * 100) is False  # 18 digits only


def test_a_message_dense_with_digits_still_finds_its_long_integer() -> None:
    from mcp_notebook.protocol import jsonrpc

    numbers = ",".join(str(n) for n in range(100_000))  # digits everywhere: the whole-scan path
    assert jsonrpc._has_long_integer(numbers) is False
    assert jsonrpc._has_long_integer(numbers + "," + str(2**64)) is True
    [message] = parse('{"jsonrpc":"2.0","id":1,"result":{"n":[' + numbers + "," + str(2**64) + "]}}")
    assert message.result["n"][-1] == 2**64


@given(message=valid_messages)
def test_a_serialized_wire_keeps_its_utf8_line(message: Message) -> None:
    wire = serialize(message)
    # None only where orjson cannot write the value (an integer past 64 bits) and the stdlib did
    assert wire.line in (None, (str(wire) + "\n").encode("utf-8"))


def test_an_ordinary_serialized_wire_has_its_line() -> None:
    wire = serialize(Response(7, {"content": [{"type": "text", "text": "é\nx"}]}))
    assert wire.line == (str(wire) + "\n").encode("utf-8") and wire.line.count(b"\n") == 1


# -- parse once: a Wire carries what was decoded (read) or the message it was made from (serialize) ----------
@given(message=valid_messages)
def test_a_read_wire_parses_like_its_text_without_decoding_again(message: Message) -> None:
    from mcp_notebook.protocol import jsonrpc

    text = str(serialize(message))
    wire = jsonrpc.read(text)
    assert wire == text and wire.is_json
    assert parse(wire) == parse(text) == [message]
    assert jsonrpc.read(wire) is wire


@pytest.mark.parametrize("bad", ["{", "[1,", '{"jsonrpc": NaN}', b"\xff{}"])
def test_a_read_wire_of_broken_input_parses_as_the_parse_error(bad: str | bytes) -> None:
    from mcp_notebook.protocol import jsonrpc

    wire = jsonrpc.read(bad)
    assert not wire.is_json
    [invalid] = parse(wire)
    assert isinstance(invalid, Invalid) and invalid.reply is not None and invalid.reply.code == -32700


def test_a_serialized_wire_peeks_as_sent_and_parses_as_its_text() -> None:
    from mcp_notebook.protocol import jsonrpc

    message = Response(7, {"v": [float("nan"), (1, 2)]})
    wire = serialize(message)
    assert jsonrpc.peek(wire) is message  # routing our own answer decodes nothing
    assert parse(wire) == [Response(7, {"v": [None, [1, 2]]})]  # parse still means what the text says


@given(message=valid_messages)
def test_a_read_wire_is_classified_once_whoever_parses_it(message: Message) -> None:
    from mcp_notebook.protocol import jsonrpc

    wire = jsonrpc.read(str(serialize(message)))
    first = parse(wire)
    again = parse(wire, allow_batch=True)  # the HTTP client routes it, then its session parses it
    assert first == again == [message] and again[0] is first[0]  # the same immutable item, made once
    assert first is not again  # each caller gets its own list


def test_a_read_batch_still_depends_on_whether_batches_are_allowed() -> None:
    from mcp_notebook.protocol import jsonrpc

    wire = jsonrpc.read('[{"jsonrpc": "2.0", "method": "a"}]')
    assert isinstance(parse(wire)[0], Invalid)
    assert parse(wire, allow_batch=True) == [Notification("a")]


def test_messages_and_events_compare_hash_and_match_by_value() -> None:
    """The per-message classes are plain slotted dataclasses with Final fields (no longer frozen=True, whose
    __init__ cost ~3x): equality, hashing (when the fields hash), repr and match patterns are as before."""
    from mcp_notebook.protocol.modern import RequestMeta
    from mcp_notebook.protocol.session import RequestReceived, ResultReceived
    from mcp_notebook.protocol.versions import ProtocolVersion

    assert Request(1, "ping") == Request(1, "ping") != Request(2, "ping")
    assert hash(Request(1, "ping")) == hash(Request(1, "ping"))
    assert {Notification("a"), Notification("a"), ErrorResponse(1, -1, "no")} == {
        Notification("a"),
        ErrorResponse(1, -1, "no"),
    }
    with pytest.raises(TypeError):  # a dict field does not hash, as with frozen=True
        hash(Response(1, {}))
    assert repr(Request(7, "tools/list")) == "Request(id=7, method='tools/list', params=None)"
    meta = RequestMeta(ProtocolVersion("2026-07-28"), {}, {"name": "c"})
    match RequestReceived(3, "tools/call", {"name": "x"}, meta):
        case RequestReceived(3, "tools/call", {"name": name}, RequestMeta(log_level=None)):
            assert name == "x"
        case _:
            raise AssertionError("no match")
    assert ResultReceived(1, "m", {}) == ResultReceived(1, "m", {})
    assert not hasattr(Request(1, "m"), "__dict__")  # still slotted
