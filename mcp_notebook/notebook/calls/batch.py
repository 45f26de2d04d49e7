"""``mcp.map(TOOL, rows)``: one tool over the rows of a table, as one call handle (issue 9).

One approval for the whole batch ("500 calls to demo.score"), one progress bar with Cancel and an ETA, the
rows' failures collected (``on_error="collect"``) or the first one raised (``"raise"``), and a handle whose
``.to_pandas()`` is a DataFrame aligned with the input's index (the result columns, then ``error``). The
batching itself is the engine's (``engine/batch.py``), so ``Client.map`` does the same without a notebook.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from itertools import islice
from typing import Any

from ...engine.batch import BatchError, BatchRun, OnError, RowOutcome, rows_of, single_argument
from ...engine.tables import row_columns
from ..rendering.base import esc, label_html, note_html, wrap
from ..rendering.table import table_parts
from .handle import CallHandle
from .pipeline import Calls, Target
from .policy import AuditEntry

__all__ = ["BatchError", "BatchHandle", "map_async", "map_rows"]


_PROGRESS_EVERY = 0.2  # seconds between progress updates (a fast batch finishes thousands of rows a second)


class BatchHandle(CallHandle):
    """A batch of calls of one tool: a :class:`CallHandle` (approval, progress, Cancel, ``await``) whose
    result is a summary; ``run`` holds every row's outcome and ``to_pandas()`` the table of them."""

    def __init__(self, *, run: BatchRun, sample: list[dict[str, Any]] | None = None, **options: Any) -> None:
        self.run = run
        #: the first rows going out, as the approval card shows them (None for a stream: not consumed)
        self.sample = sample
        #: the finished batch's view and what it was built from (see :meth:`static_bundle`)
        self._view_of: tuple[list[RowOutcome], tuple[str, int, float], dict[str, str]] | None = None
        super().__init__(**options)

    @property
    def cancel_label(self) -> str:
        """The Cancel button's words: what it stops ("Cancel 50 calls")."""
        return f"Cancel {self.run.total} calls" if self.run.total is not None else "Cancel the batch"

    @property
    def label(self) -> str:
        count = f"{self.run.total}" if self.run.total is not None else "a stream of"
        return f"{count} calls to {self.entry.target}"

    @property
    def defaults(self) -> dict[str, Any]:
        return {}  # the card shows the batch, not one call's arguments

    def to_pandas(self) -> Any:
        """One row per input row, indexed like the input: the result's columns (those the tool's output
        schema declares always among them), then ``status`` ("ok", "failed", "not run": the batch was
        cancelled or stopped first) and ``error`` (None for a row that succeeded).

        A running batch is waited for (``result_wait`` s); one awaiting approval raises
        :class:`NotFinished` rather than return a frame with no rows (issue 19 item 4)."""
        self._finished_result()
        return self.run.to_pandas(_declared_columns(self.tool_def))

    @property
    def failures(self) -> list[RowOutcome]:
        return [o for o in self.run.ordered() if not o.ok]

    def static_bundle(self) -> dict[str, str]:
        """The summary and the first rows of an ended batch, built once per state, row count and end: a
        render walks every row (~5 us each) and a batch's end, its cell output and a save each render it.
        Rows that land after a Cancel, or the run's end, make the next render build it again."""
        run = self.run
        if self.state not in ("done", "cancelled") or run.done == 0:
            return super().static_bundle()
        built, facts = self._view_of, (self.state, run.done, run.finished)
        if built is not None and built[0] is run.outcomes and built[1] == facts:
            return dict(built[2])
        bundle = self._table_bundle()
        if run.finished is not None:  # (a cancelled run may still be ending: built again next time)
            self._view_of = (run.outcomes, (self.state, run.done, run.finished), bundle)
        return dict(bundle)

    def _table_bundle(self) -> dict[str, str]:
        summary = _summary(self.run, self.label, cancelled=self.state == "cancelled")
        rows = [{"row": _label(o.label), **_columns(o)} for o in self.run.ordered()]
        table = table_parts(rows)
        html = label_html(f"<b>{esc(summary)}</b>")
        text = summary
        failed = _failed_rows(self.run)
        if failed:  # the table shows the first rows only: say which rows failed, wherever they are
            html += f'<div class="mcpnb-bad">{esc(failed)}</div>'
            text += f"\n{failed}"
        if table is not None:
            html, text = html + table[0], f"{text}\n{table[1]}"
        html += note_html("handle.to_pandas() gives every row as a DataFrame aligned with the input")
        return {
            "text/html": wrap(html, error=self.run.failed > 0 and self.run.failed == self.run.done),
            "text/plain": text,
        }


FAILED_SHOWN = 10  # failed rows named in a batch's preview


def _failed_rows(run: BatchRun) -> str:
    """'failed rows: x, q, ... (12 in all)', each with its error; empty when every row succeeded."""
    failed = [o for o in run.ordered() if not o.ok]
    if not failed:
        return ""
    named = "; ".join(f"{_label(o.label)}: {o.error}" for o in failed[:FAILED_SHOWN])
    more = f" ... ({len(failed)} in all; handle.failures has them)" if len(failed) > FAILED_SHOWN else ""
    return f"failed rows: {named}{more}"


def _declared_columns(tool_def: Mapping[str, Any] | None) -> list[str]:
    """The columns a row's result has, from the tool's output schema (through a ``result`` wrapper)."""
    schema = (tool_def or {}).get("outputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return []
    if set(properties) == {"result"}:
        inner = properties["result"]
        inner_properties = inner.get("properties") if isinstance(inner, Mapping) else None
        return list(inner_properties) if isinstance(inner_properties, Mapping) else ["result"]
    return [str(name) for name in properties]


def _label(label: Any) -> Any:
    return label if isinstance(label, (str, int, float, bool)) else str(label)


def _columns(outcome: RowOutcome) -> dict[str, Any]:
    return {**row_columns(outcome.result), "error": outcome.error}


def _summary(run: BatchRun, label: str, *, cancelled: bool = False) -> str:
    seconds = (run.finished or time.monotonic()) - run.started
    ok = run.done - run.failed
    head = f"{label}: {ok} succeeded, {run.failed} failed in {seconds:.1f} s"
    if cancelled:
        head += f" (cancelled after {run.done} rows)"
    return head


def _progress(run: BatchRun) -> str:
    eta = run.eta()
    parts = [f"{run.failed} failed"] if run.failed else []
    if eta is not None:
        parts.append(f"ETA {eta:.0f} s")
    return ", ".join(parts)


def _result(run: BatchRun, label: str) -> dict[str, Any]:
    """The handle's result: a summary (the rows themselves are in ``run``, not copied into a dict)."""
    structured = {"calls": run.done, "succeeded": run.done - run.failed, "failed": run.failed}
    return {"content": [{"type": "text", "text": _summary(run, label)}], "structuredContent": structured}


def prepare_batch(
    calls: Calls,
    target: Target,
    rows: Any,
    *,
    concurrency: int,
    on_error: OnError,
    retries: int,
    call_timeout: float | None,
) -> BatchHandle:
    """Decide once for the whole batch (the policy of a single call of this tool) and build its handle."""
    decision = calls.decide(target)
    server, tool, client = target.server, target.tool, target.client
    count = len(rows) if hasattr(rows, "__len__") else None
    summary = {"rows": count if count is not None else "an iterable (count unknown)"}
    summary |= {"concurrency": concurrency, "on_error": on_error}
    status = "awaiting-approval" if decision.verdict == "ask" else "running"
    entry = calls.audit.add(AuditEntry(server, tool, summary, decision.verdict, decision.by, status))
    run = BatchRun(count)
    seconds = call_timeout if call_timeout is not None else calls.config.default_timeout

    async def runner(progress: Any) -> dict[str, Any]:
        last = [0.0]

        def on_outcome(run: BatchRun, outcome: RowOutcome) -> None:
            now = time.monotonic()
            if now - last[0] >= _PROGRESS_EVERY or run.done == run.total:
                last[0] = now
                progress(run.done, run.total, _progress(run))

        run.started = time.monotonic()
        await client.aio.map(
            tool,
            rows,
            concurrency=concurrency,
            on_error=on_error,
            retries=retries,
            timeout=seconds,
            on_outcome=on_outcome,
            run=run,
        )
        return _result(run, handle.label)

    handle = BatchHandle(
        run=run,
        sample=_sample(rows, count, target.definition),
        server=server,
        tool=tool,
        arguments=summary,
        tool_def=target.definition,
        decision=decision,
        entry=entry,
        runner=runner,
        view=calls.view,
        **calls.context(target),
    )
    calls.track(handle)
    return handle


SAMPLE_ROWS = 5  # rows of the input the batch's approval card shows


def _sample(rows: Any, count: int | None, tool_def: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """The first rows' arguments, labelled, for the card; None for an input without a length (an iterator
    would be consumed) or one the batch will refuse anyway."""
    if count is None:
        return None
    try:
        source, _ = rows_of(rows, single_argument(tool_def))
        return [{"row": _label(label), **arguments} for label, arguments in islice(source, SAMPLE_ROWS)]
    except Exception:  # the batch itself reports a bad input, with its reason
        return None


def _raise_if_asked(handle: BatchHandle) -> BatchHandle:
    if isinstance(handle.error, BatchError):
        raise handle.error
    return handle


def map_rows(calls: Calls, name: str, rows: Any, **options: Any) -> BatchHandle:
    """The body of ``mcp.map``: ask (returning at once, like ``mcp.call``) or run and block until done."""
    handle = prepare_batch(calls, calls.resolve(name), rows, **options)
    if handle.state == "awaiting-approval" or handle.done():
        return calls.run(handle)  # shown for a person to approve, or already ended (denied)
    return _raise_if_asked(calls.run(handle))


async def map_async(calls: Calls, name: str, rows: Any, **options: Any) -> BatchHandle:
    """The body of ``await mcp.map_async``: shows the batch live and waits, approval clicks included."""
    handle = prepare_batch(calls, await calls.resolve_async(name), rows, **options)
    await calls.start(handle)
    return _raise_if_asked(handle)
