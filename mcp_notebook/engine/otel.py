"""Trace context across processes (DESIGN decision 21): W3C ``traceparent``/``tracestate`` in a request's
``_meta``, and OpenTelemetry spans for a client's requests, a server's handling and a task's run.

OpenTelemetry is optional (``pip install 'mcp-notebook[otel]'`` brings opentelemetry-api): without it every
function here does nothing, and with the API but no SDK configured the spans are OpenTelemetry's own no-ops
(nothing is injected, since there is no trace to carry). With an SDK configured, a client's request
carries its span's context in ``_meta`` (both roles: a server's elicitation or sampling request too), and
the receiving side's span continues the same trace, through any load balancer, since the context travels
in the message rather than in HTTP headers. Span names and attributes follow OpenTelemetry's MCP semantic
conventions (``{mcp.method.name} {target}``, ``mcp.method.name``, ``gen_ai.tool.name``,
``jsonrpc.request.id``).

:func:`otlp_json` turns a connection's message trace (:class:`~.trace.Trace`) into OTLP/JSON, with or
without OpenTelemetry installed: ``%mcp trace --otlp FILE``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator, Mapping
from typing import Any

from .trace import Trace

__all__ = ["client_span", "otlp_json", "server_span", "task_span", "tracer", "use_tracer_provider"]

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
_SCOPE = "mcp_notebook"
_UNSET: Any = object()
_api: Any = _UNSET
_provider: Any = None


def use_tracer_provider(provider: Any) -> None:
    """Make spans with this ``TracerProvider`` (None: OpenTelemetry's global one, the default)."""
    global _provider
    _provider = provider


def _otel() -> Any:
    """``(trace, TraceContextTextMapPropagator(), the no-op provider types)`` from opentelemetry-api, or None
    when it is not installed."""
    global _api
    if _api is _UNSET:
        try:
            from opentelemetry import trace
            from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
        except ImportError:
            _api = None
        else:
            noop = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
            _api = (trace, TraceContextTextMapPropagator(), noop)
    return _api


_tracers: dict[int, tuple[Any, Any]] = {}
_env_provider: bool | None = None  # OTEL_PYTHON_TRACER_PROVIDER set: read once, at the first request


def _global_provider(trace: Any) -> Any:
    """OpenTelemetry's global provider; None while none is set nor named in the environment. Its own
    ``get_tracer_provider()`` looks the environment up on every call until one is set (a KeyError caught in
    ``os.environ``: ~1 us, twice per round trip); the environment is read here once instead."""
    global _env_provider
    provider = getattr(trace, "_TRACER_PROVIDER", _UNSET)  # what set_tracer_provider sets
    if provider is None:
        if _env_provider is None:
            _env_provider = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
        if not _env_provider:
            return None  # get_tracer_provider() would give the no-op proxy
    return trace.get_tracer_provider()


def tracer() -> Any:
    """The tracer spans go to, or None when nothing would record them (no OpenTelemetry, or no SDK
    configured): then the engine skips tracing altogether, at the cost of one check per request."""
    api = _api if _api is not _UNSET else _otel()  # once looked up, without a call per request
    if api is None:
        return None
    provider = _provider
    if not provider:  # (as `_provider or ...` read it)
        if getattr(api[0], "_TRACER_PROVIDER", _UNSET) is None and _env_provider is False:
            return None  # the usual case, as _global_provider finds it, without calling it
        provider = _global_provider(api[0])
    if provider is None or isinstance(provider, api[2]):
        return None
    known = _tracers.get(id(provider))
    if known is None or known[0] is not provider:
        known = _tracers[id(provider)] = (provider, provider.get_tracer(_SCOPE))
    return known[1]


def _target(method: str, params: Mapping[str, Any] | None) -> str | None:
    if not params:
        return None
    for key in ("name", "uri"):  # tools/call, prompts/get; resources/read
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None


def _attributes(method: str, params: Mapping[str, Any] | None, request_id: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp.method.name": method, "rpc.system": "jsonrpc"}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)
    target = _target(method, params)
    if target is not None:
        key = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}.get(method)
        attributes[key or "mcp.resource.uri"] = target
    return attributes


def _name(method: str, params: Mapping[str, Any] | None) -> str:
    target = _target(method, params)
    return f"{method} {target}" if target else method


@contextlib.contextmanager
def client_span(tracer: Any, method: str, params: dict[str, Any] | None) -> Iterator[dict[str, Any] | None]:
    """A CLIENT span for an outgoing request (``tracer``: from :func:`tracer`); yields ``params`` with the
    span's trace context added to ``_meta`` (unchanged when the caller put its own ``traceparent`` there)."""
    trace, propagator, _ = _otel()
    span = tracer.start_span(
        _name(method, params), kind=trace.SpanKind.CLIENT, attributes=_attributes(method, params, None)
    )
    try:
        meta = (params or {}).get("_meta")
        if span.get_span_context().is_valid and not (isinstance(meta, dict) and TRACEPARENT in meta):
            carrier: dict[str, str] = {}
            propagator.inject(carrier, context=trace.set_span_in_context(span))
            params = {**(params or {}), "_meta": {**(meta if isinstance(meta, dict) else {}), **carrier}}
        yield params
    except BaseException as exc:
        if isinstance(exc, Exception):
            span.record_exception(exc)
            span.set_status(trace.Status(trace.StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            span.set_attribute("error.type", type(exc).__name__)
        raise
    finally:
        span.end()


@contextlib.contextmanager
def server_span(
    tracer: Any, method: str, params: Mapping[str, Any] | None, request_id: Any
) -> Iterator[None]:
    """A SERVER span around handling a request, the child of the trace context in its ``_meta`` (if any);
    current while the handler runs, so what it starts (a task) continues the trace."""
    trace, propagator, _ = _otel()
    meta = params.get("_meta") if params else None
    carrier = (
        {k: v for k, v in meta.items() if k in (TRACEPARENT, TRACESTATE) and isinstance(v, str)}
        if isinstance(meta, dict)
        else {}
    )
    parent = propagator.extract(carrier) if carrier else None
    with tracer.start_as_current_span(
        _name(method, params),
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes=_attributes(method, params, request_id),
    ):
        yield


@contextlib.contextmanager
def task_span(tool: str, task_id: str) -> Iterator[None]:
    """An INTERNAL span for a task's run in the background (a child of the ``tools/call`` that made it)."""
    recorder = tracer()
    if recorder is None:
        yield
        return
    trace = _otel()[0]
    attributes = {"gen_ai.tool.name": tool, "mcp.task.id": task_id}
    with recorder.start_as_current_span(f"task {tool}", kind=trace.SpanKind.INTERNAL, attributes=attributes):
        yield


# ---- OTLP/JSON from a message trace --------------------------------------------------------------------
def otlp_json(trace: Trace, service: str) -> dict[str, Any]:
    """The requests of a message trace as OTLP/JSON spans (opentelemetry-proto's JSON encoding): one span
    per request from when it passed to when its answer did; CLIENT for ours, SERVER for the peer's. A
    request that carried a ``traceparent`` keeps its trace and span ids, so the export joins the trace the
    serving side recorded."""
    opened: dict[tuple[str, Any], tuple[float, dict[str, Any]]] = {}
    spans: list[dict[str, Any]] = []
    for entry in trace:
        if entry.direction == "note":
            continue
        message = entry.message
        if "method" in message and "id" in message:
            opened[(entry.direction, message["id"])] = (entry.time, message)
            continue
        if "id" not in message or ("result" not in message and "error" not in message):
            continue
        asked = "out" if entry.direction == "in" else "in"
        start = opened.pop((asked, message["id"]), None)
        if start is not None:
            spans.append(_span(start[1], start[0], entry.time, message, client=asked == "out"))
    resource = {"attributes": [_attribute("service.name", service)]}
    scope = {"scope": {"name": _SCOPE}, "spans": spans}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def _span(
    request: dict[str, Any], began: float, ended: float, answer: dict[str, Any], *, client: bool
) -> dict[str, Any]:
    method = str(request["method"])
    params = request.get("params") if isinstance(request.get("params"), dict) else None
    trace_id, span_id, parent_id = secrets.token_hex(16), secrets.token_hex(8), ""
    meta = params.get("_meta") if params else None
    traceparent = meta.get(TRACEPARENT) if isinstance(meta, dict) else None
    parts = traceparent.split("-") if isinstance(traceparent, str) else []
    if len(parts) == 4 and len(parts[1]) == 32 and len(parts[2]) == 16:
        if client:
            trace_id, span_id = parts[1], parts[2]  # the span whose context the request carried
        else:
            trace_id, parent_id = parts[1], parts[2]
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": _name(method, params),
        "kind": 3 if client else 2,  # SPAN_KIND_CLIENT, SPAN_KIND_SERVER
        "startTimeUnixNano": str(int(began * 1e9)),
        "endTimeUnixNano": str(int(ended * 1e9)),
        "attributes": [_attribute(k, v) for k, v in _attributes(method, params, request.get("id")).items()],
    }
    if parent_id:
        span["parentSpanId"] = parent_id
    if "error" in answer:
        error = answer["error"] if isinstance(answer["error"], dict) else {}
        span["status"] = {"code": 2, "message": str(error.get("message", ""))}  # STATUS_CODE_ERROR
    elif isinstance(answer.get("result"), dict) and answer["result"].get("isError") is True:
        span["status"] = {"code": 2, "message": "the tool reported an error"}
    return span


def _attribute(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}
