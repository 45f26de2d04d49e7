"""``Client.map``: one tool over many rows, same body over memory, stdio and HTTP (issue 9).

Results come back in input order whatever order the calls finish in; at most ``concurrency`` calls are in
flight; a generator is pulled only as workers free up (bounded memory); transient failures (a timeout) are
retried and others are not; ``on_error="raise"`` stops at the first failing row.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import UserDict
from collections.abc import Awaitable, Callable, Iterator
from types import MappingProxyType

import pandas as pd
import pytest

from mcp_notebook import Client
from mcp_notebook.engine.batch import BatchError, BatchRun, RowOutcome, is_transient, rows_of
from mcp_notebook.engine.server import Server
from mcp_notebook.errors import ConnectionClosedError, JSONRPCError, RequestTimeoutError
from tests.interaction._harness import WAIT, Connect
from tests.waiting import wait_until_async


def batch_server(state: dict[str, int]) -> Server:
    server = Server("batch")

    @server.tool
    async def score(x: float, delay: float = 0.0) -> dict[str, float]:
        """Twice x, after a delay; a negative x is the tool's own error."""
        state["in_flight"] += 1
        state["most"] = max(state["most"], state["in_flight"])
        try:
            await asyncio.sleep(delay)
            if x < 0:
                raise ValueError("negative x")
            return {"twice": 2 * x}
        finally:
            state["in_flight"] -= 1

    @server.tool
    async def flaky(key: str) -> str:
        """Hangs on its first call per key (the client times out and retries), answers afterwards."""
        state[key] = state.get(key, 0) + 1
        if state[key] == 1:
            await asyncio.sleep(WAIT)
        return f"ok {key}"

    return server


def fresh() -> dict[str, int]:
    return {"in_flight": 0, "most": 0}


async def test_results_are_in_input_order_aligned_with_the_index_with_errors_collected(
    connect: Connect,
) -> None:
    state = fresh()
    frame = pd.DataFrame(
        {"x": [1.0, -1.0, 3.0, 4.0], "delay": [0.2, 0.0, 0.0, 0.1]}, index=["a", "b", "c", "d"]
    )
    async with connect(batch_server(state)) as client:
        run = await client.map("score", frame, concurrency=3)
    assert [o.label for o in run.outcomes] == ["a", "b", "c", "d"]
    table = run.to_pandas()
    assert list(table.index) == ["a", "b", "c", "d"]
    assert list(table.columns) == ["twice", "status", "error"]
    assert table.loc["a", "twice"] == 2.0 and table.loc["d", "twice"] == 8.0
    assert "negative x" in table.loc["b", "error"] and pd.isna(table.loc["a", "error"])
    assert run.failed == 1 and state["most"] <= 3


async def test_concurrency_bounds_the_calls_in_flight_and_a_generator_is_pulled_lazily(
    connect: Connect,
) -> None:
    state = fresh()
    pulled: list[int] = []

    def rows() -> Iterator[dict[str, float]]:
        for i in itertools.count():
            if i == 20:
                return
            pulled.append(i)
            # never more rows taken than calls finished plus the workers
            assert len(pulled) <= state["finished"] + 4
            yield {"x": float(i), "delay": 0.01}

    state["finished"] = 0
    async with connect(batch_server(state)) as client:

        def count(run: object, outcome: object) -> None:
            state["finished"] += 1

        run = await client.map("score", rows(), concurrency=4, on_outcome=count)
    assert list(run.to_pandas()["twice"]) == [2.0 * i for i in range(20)]
    assert state["most"] <= 4 and run.total is None


async def test_a_timeout_is_retried_and_a_tool_error_is_not(connect: Connect) -> None:
    state = fresh()
    async with connect(batch_server(state)) as client:
        run = await client.map("flaky", ["p", "q"], timeout=0.5, retries=2, concurrency=2)
        failed = await client.map("score", [{"x": -1.0}], retries=3)
    assert list(run.to_pandas()["text"]) == ["ok p", "ok q"]
    assert [o.attempts for o in run.outcomes] == [2, 2] and state["p"] == 2
    assert failed.outcomes[0].attempts == 1 and "negative x" in (failed.outcomes[0].error or "")


async def test_on_error_raise_stops_at_the_first_failing_row(connect: Connect) -> None:
    state = fresh()
    rows = [{"x": 1.0}, {"x": -1.0}] + [{"x": 1.0, "delay": 0.05}] * 50
    async with connect(batch_server(state)) as client:
        with pytest.raises(BatchError, match="negative x") as info:
            await client.map("score", rows, on_error="raise", concurrency=2)
    assert info.value.outcome.label == 1


def test_what_counts_as_transient() -> None:
    assert is_transient(RequestTimeoutError("t")) and is_transient(ConnectionClosedError("gone"))
    assert is_transient(JSONRPCError(-32000, "HTTP 429", {"httpStatus": 429}))
    assert is_transient(JSONRPCError(-32029, "Too Many Requests"))
    assert not is_transient(JSONRPCError(-32602, "Invalid params"))
    assert not is_transient(ValueError("bug"))


def test_each_row_s_arguments_are_a_dict_of_their_own_whatever_mapping_the_row_is() -> None:
    """A dict row (the usual, checked without the ABC), any other Mapping, or a bare value of the single
    argument: each row's arguments are a new dict, so the caller's rows are never the outcome's."""
    given: dict[str, object] = {"x": 1}
    rows = [given, MappingProxyType({"x": 2}), UserDict({"x": 3}), 4]
    source, count = rows_of(rows, "x")
    got = list(source)
    assert count == 4 and got == [(0, {"x": 1}), (1, {"x": 2}), (2, {"x": 3}), (3, {"x": 4})]
    assert all(type(arguments) is dict for _, arguments in got) and got[0][1] is not given
    with pytest.raises(TypeError, match="row 0 is a int"):
        list(rows_of([1], None)[0])


def test_failed_looks_at_each_outcome_once_while_the_run_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress asks ``run.failed`` at every update: a long batch must not be scanned whole each time."""
    looked = [0]
    ok = RowOutcome.ok

    def counted(outcome: RowOutcome) -> bool:
        looked[0] += 1
        return ok.fget(outcome)  # type: ignore[no-any-return, misc]

    monkeypatch.setattr(RowOutcome, "ok", property(counted))
    run = BatchRun(None)
    for position in range(1_000):
        failing = position % 10 == 3
        run.outcomes.append(
            RowOutcome(position, position, {}, None if failing else {}, "no" if failing else None)
        )
        assert run.failed == position // 10 + (position % 10 >= 3)
    assert looked[0] == 1_000
    run.outcomes = list(reversed(run.outcomes))  # another list (the batch orders its outcomes at the end)
    assert run.failed == 100 and looked[0] == 2_000
    del run.outcomes[-500:]  # the same list, shorter (positions 500..999 left): counted again
    assert run.failed == 50


async def test_rows_of_a_tool_gone_from_the_list_do_not_each_list_the_tools_again(connect: Connect) -> None:
    """A missing tool is looked for in a fresh ``tools/list`` once per listing, not once per call: before,
    each row of a map over a tool the server no longer lists (removed midway, or never listed) sent a
    ``tools/list`` before its ``tools/call`` (300 rows, 227 listings). After a ``list_changed`` it is looked
    for again."""
    state = fresh()
    server = batch_server(state)
    server.remove_tool("flaky")  # listed no more: its calls are refused by the server
    async with connect(server) as client:
        await client.list_tools()
        listed = sum(1 for e in client.trace if '"tools/list"' in e.raw and e.direction == "out")
        run = await client.map("flaky", [{"key": f"k{i}"} for i in range(20)], concurrency=4, retries=0)
        assert run.failed == 20 and "flaky" in (run.outcomes[0].error or "")
        again = sum(1 for e in client.trace if '"tools/list"' in e.raw and e.direction == "out")
        assert again - listed == 1  # the first row looked for it once
        server.add_tool(lambda: "back", name="flaky", description="Back again.")
        await client.list_tools()  # (or a list_changed: the next call lists the tools again)
        assert (await client.call_tool("flaky"))["content"][0]["text"] == "back"


async def test_rows_are_not_retried_on_a_connection_gone_for_good(connect: Connect) -> None:
    """A closed connection is transient only while the client can open another (HTTP: a new session after
    the server ended its own). Once it cannot (memory, stdio: the server is gone), each row fails at once
    instead of sleeping through its retries on a connection that stays closed: before, a 400-row map whose
    server died at row 50 took 65 s to end (350 rows x 3 attempts)."""
    state = fresh()
    server = batch_server(state)
    async with connect(server, timeout=WAIT) as client:
        await client.list_tools()
        await connect.drop_server(server)
        if connect.transport != "http":
            await wait_until_async(_closed(client), "the client to see its connection closed")
        rows = [{"x": 1.0}] * 20
        backoff = 0.01 if connect.transport == "http" else WAIT  # (http: the first row retries, at once)
        run = await asyncio.wait_for(client.map("score", rows, retries=2, backoff=backoff), WAIT)
    if connect.transport == "http":  # the server ended the session: rows fail or run in a new one (a race)
        assert run.done == 20
    else:
        assert run.failed == 20 and {o.attempts for o in run.outcomes} == {1}


def _closed(client: Client) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return client.connection.closed

    return check
