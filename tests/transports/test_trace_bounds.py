"""engine/trace.py keeps at most ``maxlen`` entries and about ``max_chars`` of text, the newest."""

from __future__ import annotations

from mcp_notebook.engine.trace import Trace, TraceEntry


def test_a_full_trace_drops_its_oldest_entry_for_each_new_one() -> None:
    trace = Trace(maxlen=3)
    for i in range(5):
        trace.record("in", f"m{i}")
    assert [entry.raw for entry in trace] == ["m2", "m3", "m4"]
    assert trace._chars == 6


def test_the_text_bound_drops_as_many_as_it_takes() -> None:
    trace = Trace(maxlen=100, max_chars=20)
    for _ in range(5):
        trace.record("in", "z" * 8)
    assert len(trace) == 2 and trace._chars == 16
    trace.record("in", "w" * 30)  # alone over the bound: kept, the only one
    assert [entry.raw for entry in trace] == ["w" * 30]


def test_a_lowered_maxlen_applies_at_the_next_message() -> None:
    trace = Trace(maxlen=10)
    for i in range(10):
        trace.record("out", str(i))
    trace.maxlen = 3
    trace.record("out", "x")
    assert [entry.raw for entry in trace] == ["8", "9", "x"]


def test_a_long_message_is_kept_as_its_head() -> None:
    trace = Trace(max_entry_chars=10)
    trace.record("out", "y" * 50)
    (entry,) = list(trace)
    assert isinstance(entry, TraceEntry) and entry.elided == 50 and entry.raw == "y" * 50  # head: 1024
    trace.record("out", "y" * 5000)
    assert list(trace)[-1].raw == "y" * 1024 and trace._chars == 50 + 1024
