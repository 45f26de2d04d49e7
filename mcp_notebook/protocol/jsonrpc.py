"""JSON-RPC 2.0 framing for MCP: parse untrusted input into messages, serialize messages.

The parser never raises: anything malformed becomes an :class:`Invalid` carrying the error response to send
back (or ``None`` when JSON-RPC forbids replying, e.g. to a malformed response).
Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic#messages and https://www.jsonrpc.org/specification
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final

from .errors import INVALID_REQUEST, PARSE_ERROR

try:  # a main dependency (README "Choices of libraries"); the stdlib below keeps protocol/ whole without it
    import orjson
except ImportError:  # pragma: no cover - exercised by the stdlib fallback tests instead
    orjson = None  # type: ignore[assignment]

__all__ = [
    "ErrorResponse",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "Wire",
    "json_type",
    "parse",
    "peek",
    "read",
    "serialize",
    "valid_id",
]

RequestId = str | int


# Immutable by type (Final fields, checked by mypy), not frozen=True: a frozen dataclass's __init__ sets each
# field through object.__setattr__, about 3x the cost of a plain one, and these are made for every message.
@dataclass(slots=True, unsafe_hash=True)
class Request:
    id: Final[RequestId]
    method: Final[str]
    params: Final[dict[str, Any] | None] = None


@dataclass(slots=True, unsafe_hash=True)
class Notification:
    method: Final[str]
    params: Final[dict[str, Any] | None] = None


@dataclass(slots=True, unsafe_hash=True)
class Response:
    id: Final[RequestId]
    result: Final[dict[str, Any]]


@dataclass(slots=True, unsafe_hash=True)
class ErrorResponse:
    id: Final[RequestId | None]
    code: Final[int]
    message: Final[str]
    data: Final[Any] = None


@dataclass(frozen=True, slots=True)
class Invalid:
    """Input that is not a valid message. ``reply`` is the error to send back, if one may be sent;
    ``answers``: the id of the request a broken response was meant to answer, when it can be read."""

    reason: str
    reply: ErrorResponse | None
    answers: RequestId | None = None


Message = Request | Notification | Response | ErrorResponse


def valid_id(value: Any) -> bool:
    """MCP request ids are strings or integers; never null, never booleans (bool is an int in Python)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# The stdlib pair, one of each for the process (json.loads/json.dumps with options build a new one per call):
# the decoder when orjson is missing, the encoder for what orjson refuses (integers beyond 64 bits, non-str
# keys, nesting deeper than 254) so that those keep their stdlib meaning.
def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e400: JSON has no infinities, and orjson refuses it too
        raise ValueError(f"{text} overflows a double")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
# datetimes and dataclasses are not JSON: orjson would write them, the stdlib refuses them, and so do we
_ORJSON_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME if orjson is not None else 0
)


# orjson reads an integer beyond 64 bits as a float, silently losing digits; Python peers send such integers
# (a factorial, an id, a big count). A message with a run of 19+ digits that is not a fraction's (perhaps
# inside a string) is decoded by the stdlib instead, which keeps every integer exact.
#
# Found without touching most of the message: any 19 consecutive characters hold exactly one whose index is
# 18 modulo 19, so only every 19th character is looked at (a strided slice, translate and find, all at C
# speed), and a digit there is followed out to its whole run. A message dense with digits (more sampled
# digits than _MAX_PROBES) is scanned whole instead (bytes.translate + find, ~1 ms per MB: reading every
# character cost more than orjson's decoding of a 1 MB text block; a regular expression, 20x that).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG = 19
_LONG_RUN = b"0" * _LONG
_MAX_PROBES = 32
_SMALL = 512
_DIGIT_CHARS = frozenset("0123456789")
_DIGIT_BYTES = frozenset(b"0123456789")


def _has_long_integer(data: str | bytes) -> bool:
    """Whether ``data`` holds a run of 19+ digits not right after a ``.`` (which orjson may misread)."""
    size = len(data)
    if size < _LONG:
        return False
    if size < _SMALL:  # a short message: three C calls over it beat the sampling's six
        return _scan_long_integer(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    sample = data[_LONG - 1 :: _LONG]
    if isinstance(sample, str):  # one byte per character ("?" for the others), so positions still match
        sample = sample.encode("ascii", "replace")
    zeros = sample.translate(_DIGITS_TO_ZERO)
    if zeros.count(b"0") > _MAX_PROBES:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        return _scan_long_integer(raw)
    digits: frozenset[Any] = _DIGIT_CHARS if isinstance(data, str) else _DIGIT_BYTES
    dot = "." if isinstance(data, str) else 0x2E
    done = 0  # the runs before this offset were looked at
    at = zeros.find(b"0")
    while at != -1:
        start = end = at * _LONG + _LONG - 1
        if start >= done:
            while start and data[start - 1] in digits:
                start -= 1
            while end < size and data[end] in digits:
                end += 1
            if end - start >= _LONG and (start == 0 or data[start - 1] != dot):
                return True
            done = end
        at = zeros.find(b"0", at + 1)
    return False


def _scan_long_integer(raw: bytes) -> bool:
    zeros = raw.translate(_DIGITS_TO_ZERO)
    at = zeros.find(_LONG_RUN)
    while at != -1:  # ``at`` starts a run of digits: find returns the leftmost window
        if at == 0 or raw[at - 1] != 0x2E:  # not after ".": an integer (or digits inside a string)
            return True
        end = at + len(_LONG_RUN)
        while end < len(zeros) and zeros[end] == 0x30:
            end += 1
        at = zeros.find(_LONG_RUN, end)
    return False


def _loads(data: str | bytes) -> Any:
    """RFC 8259 JSON only: NaN/Infinity literals, numbers that overflow a double and lone surrogates are
    refused. Integers of any size decode exactly (orjson for the common case, the stdlib past 64 bits)."""
    if isinstance(data, str):
        if type(data) is not str:  # a Wire: orjson takes exact str only
            data = str.__str__(data)
    elif type(data) is not bytes:
        data = bytes(data)
    if orjson is not None:
        if len(data) < _SMALL:  # _has_long_integer's short-message case, without the call through it
            raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
            if not _scan_long_integer(raw):
                return orjson.loads(data)
        elif not _has_long_integer(data):
            return orjson.loads(data)
    # MCP messages are UTF-8 (basic#messages); json.loads would sniff UTF-16/32 in bytes: decode here.
    return _DECODER.decode(data.decode("utf-8") if isinstance(data, bytes) else data)


def _finite(value: Any) -> Any:
    """``value`` with every NaN/Infinity replaced by None (what orjson and JSON.stringify write)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _dumps(obj: Any) -> str:
    if orjson is not None:
        try:
            return orjson.dumps(obj, option=_ORJSON_OPTIONS).decode("utf-8")
        except TypeError:  # orjson.JSONEncodeError; the stdlib decides, so the error (if any) is its own
            pass
    return _ENCODER.encode(_finite(obj))


class Wire(str):
    """Serialized JSON-RPC text that carries what a layer already knows about it, so that each message is
    decoded once per hop and our own messages are not decoded at all.

    Still the text (a ``str``): transports carry serialized JSON (DESIGN decision 2). Two kinds:

    * :func:`read` decodes received text once and keeps the value: a transport that had to look inside a
      message to route it (HTTP) hands the engine this Wire, and :func:`parse` classifies the value
      without decoding again (the same result as parsing the text).
    * :func:`serialize` returns a Wire holding the message it was made from: a transport routing our own
      message reads it with :func:`peek` (the values as sent: NaN not yet null, tuples not yet lists;
      routing needs only the id and method). :func:`parse` of it still decodes the text.

    A serialize-made Wire also keeps the UTF-8 bytes it was decoded from, with a newline after them
    (:attr:`line`): a line-framed transport (stdio) writes them as they are instead of encoding the text
    again and appending the newline (two copies of a 1 MB message).

    A transport that checked a read modern request's ``_meta`` keeps what it found on the Wire
    (:attr:`checked`, see :func:`protocol.modern.check_meta`), so the engine reads it once per request.

    A Wire never crosses a hop: the in-memory transport passes the plain text on, and the trace keeps only
    the text.
    """

    decoded: Any  # the JSON value read (or _Undecodable); _UNREAD when made by serialize
    message: Message | None  # the message serialize made it from
    classified: Message | Invalid | None  # parse's reading of a read-made single message, once made
    line: bytes | None  # serialize: the text as UTF-8 plus b"\n" (None when the stdlib encoder wrote it)
    checked: Any  # protocol.modern.check_meta: (the modern versions checked for, the RequestMeta found)

    def __new__(
        cls, text: str, decoded: Any = None, message: Message | None = None, line: bytes | None = None
    ) -> Wire:
        self = str.__new__(cls, text)  # (not super(): no super object per message)
        self.decoded = _UNREAD if message is not None else decoded
        self.message = message
        self.line = line
        self.classified = None
        self.checked = None
        return self

    @property
    def is_json(self) -> bool:
        """False when the text did not decode (:func:`parse` then gives the parse error)."""
        return not isinstance(self.decoded, _Undecodable)


@dataclass(frozen=True, slots=True)
class _Undecodable:
    reason: str


_UNREAD = _Undecodable("not read")  # a serialize-made Wire: parse decodes its text


def read(data: str | bytes) -> Wire:
    """Decode ``data`` (one line or body) once; the result is the text, with its decoded value attached.

    Never raises: input that is not JSON parses (:func:`parse`) as the usual parse error. Bytes must be
    UTF-8; invalid UTF-8 is a parse error as well."""
    if isinstance(data, Wire) and data.decoded is not _UNREAD:
        return data
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        return Wire("", _Undecodable(str(exc)))
    try:
        return Wire(text, _loads(data))
    except (ValueError, RecursionError, TypeError) as exc:
        return Wire(text, _Undecodable(str(exc)))


def peek(data: str | bytes) -> Message | Invalid:
    """What one (non-batch) message says, for routing it: the message a :func:`serialize` Wire was made
    from (nothing decoded), else :func:`parse`'s first item."""
    if isinstance(data, Wire) and data.message is not None:
        return data.message
    return parse(data)[0]


def parse(data: str | bytes, *, allow_batch: bool = False) -> list[Message | Invalid]:
    """Parse one line/body. Returns one item, or several for an accepted batch (protocol 2025-03-26 only).

    A :class:`Wire` is not decoded again: its ``decoded`` value is classified (a single message once: the
    items are immutable)."""
    if isinstance(data, Wire) and data.decoded is not _UNREAD:
        obj = data.decoded
        if type(obj) is dict:  # one message, read once: classified once (a transport routing it, the session)
            item = data.classified
            if item is None:
                item = data.classified = _classify(obj)
            return [item]
        if isinstance(obj, _Undecodable):
            return [Invalid(f"parse error: {obj.reason}", ErrorResponse(None, PARSE_ERROR, "Parse error"))]
    else:
        try:
            obj = _loads(data)
        except (ValueError, RecursionError, TypeError) as exc:
            # UnicodeDecodeError is a ValueError: invalid UTF-8 is a parse error as well.
            return [Invalid(f"parse error: {exc}", ErrorResponse(None, PARSE_ERROR, "Parse error"))]
    if isinstance(obj, list):
        if not allow_batch:
            return [_invalid(None, "JSON-RPC batches are not supported in this protocol version")]
        if not obj:
            return [_invalid(None, "empty batch")]
        return [_classify(item) for item in obj]
    return [_classify(obj)]


def _invalid(msg_id: RequestId | None, reason: str) -> Invalid:
    return Invalid(reason, ErrorResponse(msg_id, INVALID_REQUEST, f"Invalid request: {reason}"))


def _classify(obj: Any) -> Message | Invalid:
    if not isinstance(obj, dict):
        return _invalid(None, "a message must be a JSON object")
    raw_id = obj.get("id")
    # valid_id(raw_id), its usual cases inline (an exact int or str: bool is a type of its own)
    msg_id = raw_id if type(raw_id) is int or type(raw_id) is str or valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return _invalid(msg_id, '"jsonrpc" must be "2.0"')
    if "method" in obj and ("result" in obj or "error" in obj):
        # Neither a request (which has no "result"/"error") nor a response (which has no "method"):
        # JSON-RPC 2.0 sections 4 and 5. Refused the same way in every era and on every transport, with the
        # id when it can be read so the sender is not left waiting; never acted upon as the request.
        return _invalid(msg_id, 'a message with "method" must not have "result" or "error"')
    if "method" in obj:
        return _classify_call(obj, msg_id)
    if "result" in obj or "error" in obj:
        return _classify_response(obj, msg_id)
    return _invalid(msg_id, 'neither "method" nor "result"/"error" present')


def _classify_call(obj: dict[str, Any], msg_id: RequestId | None) -> Message | Invalid:
    method = obj["method"]
    if not isinstance(method, str) or not method:
        return _invalid(msg_id, '"method" must be a non-empty string')
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        return _invalid(msg_id, '"params" must be an object')
    if "id" not in obj:
        return Notification(method, params)
    if msg_id is None:
        return _invalid(None, '"id" must be a string or an integer')
    return Request(msg_id, method, params)


def _classify_response(obj: dict[str, Any], msg_id: RequestId | None) -> Message | Invalid:
    # Responses are never answered, even when malformed (JSON-RPC 2.0 section 5).
    if "result" in obj and "error" in obj:
        return Invalid('a response has both "result" and "error"', None)
    if "result" in obj:
        result = obj["result"]
        if msg_id is None:
            return Invalid('a result without a valid "id"', None)
        if not isinstance(result, dict):
            return Invalid('"result" must be an object', None, msg_id)
        return Response(msg_id, result)
    error = obj["error"]
    if (
        not isinstance(error, dict)
        or not _is_int(error.get("code"))
        or not isinstance(error.get("message"), str)
    ):
        return Invalid('"error" must be an object with an integer "code" and a string "message"', None)
    return ErrorResponse(msg_id, int(error["code"]), error["message"], error.get("data"))


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (type(None), "null"))


def json_type(value: object) -> str | None:
    """The JSON Schema type of a scalar (``True``: boolean, not integer), None for anything else (a tool's
    enum and const schemas, tools/_typeschema.py; a result table's column types, notebook/rendering)."""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), None)


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (
        isinstance(value, float) and math.isfinite(value) and value.is_integer()
    )


def to_wire(message: Message) -> dict[str, Any]:
    if isinstance(message, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params is not None:
            out["params"] = message.params
        return out
    if isinstance(message, Notification):
        out = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            out["params"] = message.params
        return out
    if isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    error: dict[str, Any] = {"code": message.code, "message": message.message}
    if message.data is not None:
        error["data"] = message.data
    return {"jsonrpc": "2.0", "id": message.id, "error": error}


def serialize(message: Message) -> Wire:
    """Compact, single-line JSON: stdio framing forbids embedded newlines, and the encoder escapes every
    control character inside strings. Non-ASCII is written as UTF-8, not ``\\u`` escapes.

    NaN and +/-Infinity are written as ``null`` (DESIGN decision 15: never a protocol error; the tool layer
    spells them out in the text copy first, README "NaN and Infinity"). A value that is not JSON at all
    (a set, an arbitrary object) raises ``TypeError``.
    """
    obj = to_wire(message)
    if orjson is not None:
        try:
            line = orjson.dumps(obj, option=_ORJSON_OPTIONS | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # orjson.JSONEncodeError; the stdlib decides, as in _dumps
            pass
        else:
            with memoryview(line) as view:  # decoded without copying the bytes first
                return Wire(str(view[:-1], "utf-8"), message=message, line=line)
    return Wire(_dumps(obj), message=message)
