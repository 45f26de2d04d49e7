"""Reading the kind and id of a message from its two ends (the transports keep them of one too large)."""

from __future__ import annotations

import json

import pytest

from mcp_notebook.protocol.truncated import Ends, read_ends

BLOB = "b" * 5000


def ends_of(message: dict[str, object] | str, keep: int = 1000) -> Ends:
    text = message if isinstance(message, str) else json.dumps(message)
    return read_ends(text[:keep], text[-keep:])


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"x": BLOB}}, Ends("request", 7)),
        (
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"x": BLOB}},
            Ends("notification", None),
        ),
        ({"jsonrpc": "2.0", "id": 'a"b', "result": {"x": BLOB}}, Ends("response", 'a"b')),
        # TypeScript order: result first, the id last
        ({"result": {"x": BLOB, "id": 99}, "jsonrpc": "2.0", "id": 3}, Ends("response", 3)),
        # an "id" inside params is not the message's id
        ({"jsonrpc": "2.0", "method": "m", "params": {"id": 5, "x": BLOB}}, Ends("notification", None)),
        ({"jsonrpc": "2.0", "method": "m", "params": {"x": BLOB, "id": 5}}, Ends("notification", None)),
        ({"params": {"x": BLOB}, "jsonrpc": "2.0", "id": -4}, Ends("unknown", -4)),
        ("not json " + BLOB, Ends("unknown", None)),
    ],
)
def test_read_ends(message: dict[str, object] | str, expected: Ends) -> None:
    assert ends_of(message) == expected


def test_an_id_cut_by_the_head_is_not_trusted() -> None:
    text = '{"jsonrpc":"2.0","id":12345,"method":"m","params":{"x":"' + BLOB + '"}}'
    cut = text.index("12345") + 3  # the head ends inside the number
    assert read_ends(text[:cut], text[-10:]) == Ends("unknown", None)
    assert read_ends(text[: cut + 20], text[-10:]) == Ends("request", 12345)
