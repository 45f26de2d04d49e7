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


def test_entries_read_and_told_are_trace_entries_with_the_whole_message_told() -> None:
    """The trace keeps plain tuples and makes the entries when read: the same fields either way; a
    listener gets every message whole, also one the trace keeps only the head of."""
    trace = Trace(max_entry_chars=10)
    told: list[TraceEntry] = []

    class View:
        def on_entry(self, entry: TraceEntry) -> None:
            told.append(entry)

    view = View()  # held weakly by the trace: alive for the test
    trace.listen(view.on_entry)
    trace.record("out", '{"id":1}')
    trace.record("in", "y" * 2000)
    trace.record("note", "stderr")
    read = list(trace)
    assert all(type(entry) is TraceEntry for entry in read + told)
    assert [(e.direction, e.raw, e.elided) for e in read] == [
        ("out", '{"id":1}', 0),
        ("in", "y" * 1024, 2000),
        ("note", "stderr", 0),
    ]
    assert [(e.direction, e.raw, e.elided) for e in told] == [
        ("out", '{"id":1}', 0),
        ("in", "y" * 2000, 0),
        ("note", "stderr", 0),
    ]
    assert [e.time for e in read] == [e.time for e in told]
    assert trace.entries()[0] == {"direction": "out", "time": read[0].time, "message": {"id": 1}}
    assert trace.entries(since=read[1].time)[-1]["message"] == {"note": "stderr"}
