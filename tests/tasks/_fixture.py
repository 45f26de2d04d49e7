"""A server for the task tests that run ``mcp-notebook serve`` (restarts, several workers)."""

from __future__ import annotations

import asyncio
import os

from mcp_notebook import Context, Server

if os.environ.get("FIXTURE_ONE_DIES"):  # tests/tasks/test_workers.py: the second worker to start dies
    try:
        os.close(os.open(os.environ["FIXTURE_ONE_DIES"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        raise SystemExit("this worker fails to start (FIXTURE_ONE_DIES)") from None

server = Server("tasks-fixture")
server.tasks.poll_interval_ms = 50
# tests/scale sets these: a long watch interval shows a cancel crossing workers by Redis pub/sub, not polls
server.tasks.watch_interval = float(os.environ.get("FIXTURE_WATCH_INTERVAL", "0.05"))
server.tasks.lease_seconds = float(os.environ.get("FIXTURE_LEASE_SECONDS", "8"))
if os.environ.get("FIXTURE_SPANS"):  # tests/scale/test_traces.py: this worker's spans, a JSON line each
    import json

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    from mcp_notebook.engine import otel

    class _ToFile(SpanExporter):
        def export(self, spans: object) -> SpanExportResult:
            path = os.path.join(os.environ["FIXTURE_SPANS"], f"{os.getpid()}.jsonl")
            with open(path, "a") as out:
                for span in spans:  # type: ignore[attr-defined]
                    parent = span.parent.span_id if span.parent is not None else None
                    line = {
                        "name": span.name,
                        "kind": span.kind.name,
                        "trace": f"{span.context.trace_id:032x}",
                        "span": f"{span.context.span_id:016x}",
                        "parent": f"{parent:016x}" if parent is not None else None,
                    }
                    out.write(json.dumps(line) + "\n")
            return SpanExportResult.SUCCESS

    _provider = TracerProvider()
    _provider.add_span_processor(SimpleSpanProcessor(_ToFile()))
    otel.use_tracer_provider(_provider)

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@server.tool
def pid() -> int:
    """The serving process's id (which worker answered)."""
    return os.getpid()


@server.tool(task="optional")
async def slow(seconds: float, ctx: Context) -> str:
    """Wait (cooperatively), then say which process finished the work."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        ctx.check_cancelled()
        await asyncio.sleep(0.02)
    return f"slept {seconds} in {os.getpid()}"


@server.tool(task="optional")
async def until_cancelled(mark: str, ctx: Context) -> str:
    """Run until cancelled, then write which process stopped to the file ``mark``."""
    while not ctx.cancelled:
        await asyncio.sleep(0.02)
    with open(mark, "w") as out:
        out.write(f"stopped in {os.getpid()}")
    return "stopped"


@server.tool(task="optional")
async def confirm(ctx: Context) -> str:
    """A task that waits for the user's answer (2026: tasks/update, from any worker)."""
    answer = await ctx.elicit("Go ahead?", CONFIRM, key="go")
    return f"ok={(answer.get('content') or {}).get('ok')} in {os.getpid()}"


@server.tool
async def greet(ctx: Context) -> str:
    """MRTR: ask for a name, then greet (the retry may land on another worker)."""
    answer = await ctx.elicit(
        "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name"
    )
    return f"Hello, {(answer.get('content') or {}).get('name')} from {os.getpid()}"
