"""One tool over many rows: bounded concurrency, results in input order, failures collected (issue 9).

:func:`call_many` drives any ``call(arguments) -> CallToolResult`` coroutine (``Client.call_tool`` bound to
a tool) over ``rows``: a pandas DataFrame (each row's columns are the arguments; an empty cell leaves the
argument out, so the tool's default applies), a list of dicts, or any iterable (a non-dict item is the value
of ``argument``). ``concurrency`` workers pull rows as they go, so a long generator is never materialised;
only the outcomes are kept. Transient failures (a timeout, a closed connection, HTTP 429/503) are retried
with exponential backoff; anything else (a tool's ``isError``, a JSON-RPC error) is the row's error at once.
With ``on_error="raise"`` the first failing row stops the batch with :class:`BatchError`.
"""

from __future__ import annotations

import asyncio
import math
import random
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConnectionClosedError, JSONRPCError, MCPError, RequestTimeoutError

__all__ = [
    "BatchError",
    "BatchRun",
    "OnOutcome",
    "RowOutcome",
    "call_many",
    "is_transient",
    "rows_of",
    "single_argument",
]

Call = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
OnError = Literal["collect", "raise"]
Rows = Iterator[tuple[Any, dict[str, Any]]]  # (label, arguments) per row
OnOutcome = Callable[["BatchRun", "RowOutcome"], None]
_TOO_MANY_REQUESTS = -32029  # transports/http_limits.py: the JSON-RPC code in a 429 body
_CHUNK = 1_000  # DataFrame rows turned into dicts at a time


class BatchError(MCPError):
    """A row failed and ``on_error="raise"`` was asked for; ``outcome`` is that row's."""

    def __init__(self, outcome: RowOutcome) -> None:
        super().__init__(f"row {outcome.label!r} failed: {outcome.error}")
        self.outcome = outcome


@dataclass
class RowOutcome:
    """One row's call: its position, its label (the DataFrame index label), result or error."""

    position: int
    label: Any
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.result is not None


@dataclass
class BatchRun:
    """Outcomes so far, in input order once the batch ends (a cancelled batch keeps the rows it finished)."""

    total: int | None
    outcomes: list[RowOutcome] = field(default_factory=list)
    #: every input row's label (a DataFrame's index, or 0..n-1), when the input has a length
    labels: list[Any] | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    # (the outcomes list counted, how many of it, how many of those failed): see ``failed``
    _tally: tuple[list[RowOutcome] | None, int, int] = field(
        default=(None, 0, 0), init=False, repr=False, compare=False
    )

    @property
    def done(self) -> int:
        return len(self.outcomes)

    @property
    def failed(self) -> int:
        """Rows that failed so far. Progress asks at every update of a batch that may be long: outcomes are
        only appended while it runs, so those counted before are not looked at again."""
        outcomes = self.outcomes
        counted_of, counted, failed = self._tally
        if counted_of is not outcomes or counted > len(outcomes):  # another list (ordered at the end)
            counted = failed = 0
        failed += sum(1 for o in outcomes[counted:] if not o.ok)
        self._tally = (outcomes, len(outcomes), failed)
        return failed

    def eta(self) -> float | None:
        """Seconds left at the rate so far, or None when it cannot be told yet."""
        if self.total is None or not self.outcomes:
            return None
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        return (self.total - self.done) / rate

    def ordered(self) -> list[RowOutcome]:
        return sorted(self.outcomes, key=lambda o: o.position)

    def to_pandas(self, columns: Sequence[str] = ()) -> Any:
        """A DataFrame aligned with the input's index, one row per input row: the result's columns
        (``columns`` among them even if no row returned them), then ``status`` and ``error``. A row that
        did not run (the batch was cancelled or stopped first) is there too, ``status`` "not run"."""
        from .tables import NOT_RUN, outcomes_frame

        rows: list[tuple[Any, Mapping[str, Any] | None, str | None]] = [
            (o.label, o.result, o.error) for o in self.ordered()
        ]
        if self.labels is not None and len(rows) < len(self.labels):
            ran = {o.position for o in self.outcomes}
            missing = f"{NOT_RUN}: the batch ended before this row finished"
            by_position = {o.position: row for o, row in zip(self.ordered(), rows, strict=True)}
            rows = [
                by_position[i] if i in ran else (label, None, missing) for i, label in enumerate(self.labels)
            ]
        return outcomes_frame(rows, columns)


def single_argument(tool_def: Mapping[str, Any] | None) -> str | None:
    """The name of a tool's only parameter: a row that is not a dict is that argument's value."""
    schema = (tool_def or {}).get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return next(iter(properties)) if isinstance(properties, Mapping) and len(properties) == 1 else None


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: a timeout, a lost connection, or the server asking to slow down (429/503)."""
    if isinstance(exc, (RequestTimeoutError, ConnectionClosedError, asyncio.TimeoutError)):
        return True
    if isinstance(exc, JSONRPCError):
        status = exc.data.get("httpStatus") if isinstance(exc.data, Mapping) else None
        return exc.code == _TOO_MANY_REQUESTS or status in (429, 503)
    return False


def _frame_rows(frame: Any, na: Any) -> Rows:
    """A DataFrame's rows as (index label, arguments), a chunk at a time; empty cells are left out."""

    def present(value: Any) -> bool:
        return value is not None and value is not na and not (isinstance(value, float) and math.isnan(value))

    for start in range(0, len(frame), _CHUNK):
        part = frame.iloc[start : start + _CHUNK]
        for label, record in zip(part.index, part.to_dict("records"), strict=True):
            yield label, {str(k): v for k, v in record.items() if present(v)}


def input_labels(rows: Any, count: int | None) -> list[Any] | None:
    """Every input row's label when the input has a length: a DataFrame's index, else 0..n-1."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(rows, pandas.DataFrame):
        return list(rows.index)
    return list(range(count)) if count is not None else None


def rows_of(rows: Any, argument: str | None = None) -> tuple[Rows, int | None]:
    """``(iterator of (label, arguments), count or None)`` for a DataFrame, a list of dicts or an iterable."""
    pandas = sys.modules.get("pandas")  # a DataFrame exists only if the caller imported pandas
    if pandas is not None and isinstance(rows, pandas.DataFrame):
        return _frame_rows(rows, pandas.NA), len(rows)
    count = len(rows) if hasattr(rows, "__len__") else None

    def items() -> Rows:
        for position, row in enumerate(rows):
            if type(row) is dict or isinstance(row, Mapping):  # the usual row skips the ABC check
                yield position, dict(row)
            elif argument is not None:
                yield position, {argument: row}
            else:
                raise TypeError(
                    f"row {position} is a {type(row).__name__}, not a dict of arguments; the tool takes "
                    "more than one argument, so each row must name them"
                )

    return items(), count


async def _one(
    call: Call, outcome: RowOutcome, retries: int, backoff: float, gone: Callable[[], bool] | None
) -> None:
    began = time.monotonic()
    for attempt in range(retries + 1):
        outcome.attempts = attempt + 1
        try:
            result = await call(outcome.arguments)
        except Exception as exc:
            if attempt < retries and is_transient(exc) and not (gone is not None and gone()):
                delay = backoff * 2**attempt
                await asyncio.sleep(delay * (0.5 + random.random()))  # jitter: retries do not march in step
                continue
            outcome.error = f"{type(exc).__name__}: {exc}"
            break
        outcome.result = result
        if result.get("isError") is True:
            outcome.error = _error_text(result)
        break
    outcome.seconds = time.monotonic() - began


def _error_text(result: Mapping[str, Any]) -> str:
    content = result.get("content")
    texts = [b.get("text") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return "\n".join(t for t in texts if isinstance(t, str)) or "the tool reported an error (isError)"


async def call_many(
    call: Call,
    rows: Any,
    *,
    concurrency: int = 8,
    on_error: OnError = "collect",
    retries: int = 2,
    backoff: float = 0.5,
    argument: str | None = None,
    on_outcome: OnOutcome | None = None,
    run: BatchRun | None = None,
    gone: Callable[[], bool] | None = None,
) -> BatchRun:
    """Call ``call`` once per row with at most ``concurrency`` calls in flight; see the module docstring.

    ``on_outcome(run, outcome)`` is told about every finished row (progress bars). Pass ``run`` to watch
    the outcomes from elsewhere (and keep them if the batch is cancelled). ``gone()`` true: what the calls
    go to is gone for good (a closed connection that cannot be opened again), so a transient failure is
    not retried (each row then fails at once instead of sleeping through its retries).
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if on_error not in ("collect", "raise"):
        raise ValueError('on_error must be "collect" or "raise"')
    source, count = rows_of(rows, argument)
    run = run if run is not None else BatchRun(count)
    run.total = count
    run.labels = input_labels(rows, count)
    positions = iter(range(2**63))
    stop = asyncio.Event()

    async def worker() -> None:
        while not stop.is_set():
            try:
                label, arguments = next(source)  # one row at a time: a generator is never materialised
            except StopIteration:
                return
            outcome = RowOutcome(next(positions), label, arguments)
            await _one(call, outcome, retries, backoff, gone)
            run.outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(run, outcome)
            if on_error == "raise" and not outcome.ok:
                stop.set()
                raise BatchError(outcome)

    tasks = [asyncio.ensure_future(worker()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*tasks)  # the first BatchError (on_error="raise") or a cancel ends it
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        run.finished = time.monotonic()
    run.outcomes = run.ordered()
    return run
