"""engine/otel.tracer() finds OpenTelemetry's global provider without reading the environment per request."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from mcp_notebook.engine import otel


def test_no_global_provider_means_no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)
    monkeypatch.setattr(otel, "_env_provider", None)
    assert otel.tracer() is None


def test_a_global_provider_set_after_the_first_request_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)
    monkeypatch.setattr(otel, "_env_provider", None)
    assert otel.tracer() is None
    provider = TracerProvider()
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)  # what trace.set_tracer_provider() sets
    try:
        assert otel.tracer() is not None
    finally:
        provider.shutdown()


def test_a_provider_named_in_the_environment_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = TracerProvider()
    loaded: list[Any] = []

    def get_tracer_provider() -> Any:  # stands for OpenTelemetry loading the provider the variable names
        loaded.append(provider)
        return provider

    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setenv("OTEL_PYTHON_TRACER_PROVIDER", "sdk_tracer_provider")
    monkeypatch.setattr(otel, "_env_provider", None)
    monkeypatch.setattr(trace, "get_tracer_provider", get_tracer_provider)
    try:
        assert otel.tracer() is not None
        assert loaded == [provider]
    finally:
        provider.shutdown()
