"""Trace context across processes (DESIGN decision 21): W3C ``traceparent`` in ``_meta`` both ways and
OpenTelemetry spans (client calls, server handling, task runs), recorded by the SDK's in-memory exporter;
through HAProxy to a worker process, whose spans a file exporter writes (tests/tasks/_fixture.py); and a
message trace exported as OTLP/JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_notebook import Client, Context, Server
from mcp_notebook.engine import otel
from tests.notebook import ipyshell
from tests.scale.test_balancer import cluster

shell = ipyshell.shell
shell_factory = ipyshell.shell_factory

pytestmark = pytest.mark.timeout(120)
WAIT = 30.0


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.use_tracer_provider(provider)
    try:
        yield provider, exporter
    finally:
        otel.use_tracer_provider(None)
        provider.shutdown()


def app() -> Server:
    server = Server("traced")
    server.tasks.poll_interval_ms = 20

    @server.tool
    async def ask(ctx: Context) -> str:
        """Ask the client (a request the other way)."""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        return str((answer.get("content") or {}).get("n"))

    @server.tool(task="optional")
    async def work() -> str:
        """Done at once, as a task."""
        return "done"

    return server


def one(found: list[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    matching = [s for s in found if s.name == name and s.kind == kind]
    assert len(matching) == 1, [(s.name, s.kind) for s in found]
    return matching[0]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_one_trace_across_both_roles_and_a_task(spans: Any) -> None:
    provider, exporter = spans
    tracer = provider.get_tracer("test")
    handler = lambda params: {"action": "accept", "content": {"n": "Ada"}}  # noqa: E731
    async with Client(app(), era="legacy", elicitation_handler=handler) as client:
        with tracer.start_as_current_span("notebook cell") as cell:
            assert (await client.call_tool("ask"))["content"][0]["text"] == "Ada"
            await client.call_tool("work", task=True)
        sent = [
            e.message
            for e in client.trace
            if e.direction == "out" and e.message.get("method") == "tools/call"
        ]
    trace_id = cell.get_span_context().trace_id
    found = [s for s in exporter.get_finished_spans() if s.context.trace_id == trace_id]  # the cell's trace

    called = one(found, "tools/call ask", SpanKind.CLIENT)
    handled = one(found, "tools/call ask", SpanKind.SERVER)
    asked = one(found, "elicitation/create", SpanKind.CLIENT)  # the server's request to the client
    answered = one(found, "elicitation/create", SpanKind.SERVER)
    assert parent_of(called) == cell.get_span_context().span_id
    assert parent_of(handled) == called.context.span_id
    assert parent_of(asked) == handled.context.span_id
    assert parent_of(answered) == asked.context.span_id
    assert handled.attributes is not None and handled.attributes["gen_ai.tool.name"] == "ask"

    task = one(found, "task work", SpanKind.INTERNAL)
    assert parent_of(task) == one(found, "tools/call work", SpanKind.SERVER).context.span_id

    # on the wire: the W3C trace context of the client's span, in _meta
    traceparent = sent[0]["params"]["_meta"]["traceparent"]
    assert traceparent.startswith(f"00-{trace_id:032x}-{called.context.span_id:016x}-")


async def test_nothing_is_carried_without_a_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SDK configured (OpenTelemetry's no-op provider), or no OpenTelemetry at all: no ``traceparent``."""
    for api in ("installed", None):
        if api is None:
            monkeypatch.setattr(otel, "_api", None)
        async with Client(app(), era="modern") as client:
            assert (await client.call_tool("work"))["content"][0]["text"] == "done"
            metas = [
                e.message.get("params", {}).get("_meta", {}) for e in client.trace if e.direction == "out"
            ]
        assert metas and not any("traceparent" in meta for meta in metas)


async def test_one_trace_from_the_notebook_through_the_balancer_to_the_worker(
    tmp_path: Path, redis_url: str, spans: Any
) -> None:
    provider, exporter = spans
    worker_spans = tmp_path / "spans"
    worker_spans.mkdir()
    with cluster(tmp_path, redis_url, n=2, env={"FIXTURE_SPANS": str(worker_spans)}) as (url, _):
        async with Client(url, era="modern") as client:
            with provider.get_tracer("test").start_as_current_span("notebook cell") as cell:
                result = await client.call_tool("slow", {"seconds": 0.05})  # a task: polls go anywhere
    assert result["content"][0]["text"].startswith("slept 0.05 in ")
    trace_id = f"{cell.get_span_context().trace_id:032x}"
    ours = [s for s in exporter.get_finished_spans() if s.name == "tools/call slow"]
    assert len(ours) == 1 and ours[0].kind == SpanKind.CLIENT
    theirs = [json.loads(line) for f in worker_spans.iterdir() for line in f.read_text().splitlines()]
    handled = [s for s in theirs if s["name"] == "tools/call slow"]
    assert len(handled) == 1, theirs
    assert handled[0]["trace"] == trace_id and handled[0]["kind"] == "SERVER"
    assert handled[0]["parent"] == f"{ours[0].context.span_id:016x}"
    ran = [s for s in theirs if s["name"] == "task slow"]
    assert len(ran) == 1 and ran[0]["trace"] == trace_id and ran[0]["parent"] == handled[0]["span"]
    polls = [s for s in theirs if s["name"] == "tasks/get"]  # if any (a listen stream may say it first)
    assert {s["trace"] for s in polls} <= {trace_id}


async def test_a_message_trace_exports_as_otlp_json(spans: Any) -> None:
    provider, exporter = spans
    async with Client(app(), era="modern") as client:
        with provider.get_tracer("test").start_as_current_span("cell"):
            await client.call_tool("work")
        exported = otel.otlp_json(client.trace, "notebook")
    json.dumps(exported)  # JSON as it stands
    resource = exported["resourceSpans"][0]
    assert resource["resource"]["attributes"] == [
        {"key": "service.name", "value": {"stringValue": "notebook"}}
    ]
    out = resource["scopeSpans"][0]["spans"]
    call = next(s for s in out if s["name"] == "tools/call work")
    recorded = next(
        s for s in exporter.get_finished_spans() if s.name == "tools/call work" and s.kind == SpanKind.CLIENT
    )
    assert call["traceId"] == f"{recorded.context.trace_id:032x}"
    assert call["spanId"] == f"{recorded.context.span_id:016x}"
    assert call["kind"] == 3 and int(call["endTimeUnixNano"]) >= int(call["startTimeUnixNano"]) > 0
    assert {"key": "gen_ai.tool.name", "value": {"stringValue": "work"}} in call["attributes"]


def test_mcp_trace_otlp_writes_a_file(shell: Any, tmp_path: Path) -> None:
    api = shell.user_ns["mcp"]
    api.connect("traced", app())
    api.calls.client("traced").call_tool("work")
    target = tmp_path / "session.otlp.json"
    said = shell.run_line_magic("mcp", f"trace traced --otlp {target}")
    assert str(target) in said and "OTLP/JSON" in said
    spans = json.loads(target.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert "tools/call work" in {s["name"] for s in spans}
