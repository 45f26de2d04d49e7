"""Protocol versions, eras, feature gates and legacy version negotiation.

Expected gates are written out per version from the changelogs (MCP-NOTES §1.1-1.3), not derived from
``FEATURES``, so a wrong row in the table fails here.
"""

from __future__ import annotations

import pytest

from mcp_notebook.protocol.versions import (
    FEATURES,
    LATEST_LEGACY,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    ProtocolVersion,
    negotiate,
    version,
)

# Features every legacy (initialize-handshake) version has.
_LEGACY_CORE = {"initialize", "ping", "logging_set_level", "server_requests"}

EXPECTED: dict[str, set[str]] = {
    # first release: stdio + HTTP+SSE
    "2024-11-05": _LEGACY_CORE | {"http_sse_transport"},
    # Streamable HTTP, batching, annotations, audio, completions capability, progress message
    "2025-03-26": _LEGACY_CORE
    | {
        "batching",
        "streamable_http",
        "tool_annotations",
        "audio_content",
        "completions_capability",
        "progress_message",
        "sessions",
    },
    # batching removed; structured output, elicitation, resource links, titles, header, completion context
    "2025-06-18": _LEGACY_CORE
    | {
        "streamable_http",
        "tool_annotations",
        "audio_content",
        "completions_capability",
        "progress_message",
        "sessions",
        "structured_output",
        "elicitation",
        "resource_link",
        "titles",
        "protocol_version_header",
        "completion_context",
    },
    # icons, URL elicitation, sampling tools, tasks, tool execution, SSE polling, 2020-12 default
    "2025-11-25": _LEGACY_CORE
    | {
        "streamable_http",
        "tool_annotations",
        "audio_content",
        "completions_capability",
        "progress_message",
        "sessions",
        "structured_output",
        "elicitation",
        "resource_link",
        "titles",
        "protocol_version_header",
        "completion_context",
        "icons",
        "elicitation_url",
        "sampling_tools",
        "tasks",
        "tool_execution",
        "sse_polling",
        "json_schema_2020_12_default",
    },
    # stateless: no initialize, ping, setLevel, server requests, sessions, core tasks; adds discover/MRTR
    "2026-07-28": {
        "streamable_http",
        "tool_annotations",
        "audio_content",
        "completions_capability",
        "progress_message",
        "structured_output",
        "elicitation",
        "resource_link",
        "titles",
        "protocol_version_header",
        "completion_context",
        "icons",
        "elicitation_url",
        "sampling_tools",
        "json_schema_2020_12_default",
        "server_discover",
        "mrtr",
        "result_type",
    },
}


def test_every_version_has_an_expected_gate_row() -> None:
    assert set(EXPECTED) == set(LEGACY_VERSIONS + MODERN_VERSIONS)
    assert set().union(*EXPECTED.values()) <= set(FEATURES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_feature_gates_per_version(name: str) -> None:
    v = version(name)
    assert {feature for feature in FEATURES if v.supports(feature)} == EXPECTED[name]


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_every_feature_exists_in_at_least_one_version(feature: str) -> None:
    assert any(feature in gates for gates in EXPECTED.values())


def test_batching_only_in_2025_03_26() -> None:
    """MCP-NOTES §3.2: added in 2025-03-26, removed in 2025-06-18."""
    assert [v for v in EXPECTED if version(v).supports("batching")] == ["2025-03-26"]


def test_unknown_feature_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="teleport"):
        version(LATEST_LEGACY).supports("teleport")


@pytest.mark.parametrize(
    ("name", "era"), [(v, "legacy") for v in LEGACY_VERSIONS] + [("2026-07-28", "modern")]
)
def test_era(name: str, era: str) -> None:
    assert version(name).era == era


@pytest.mark.parametrize("name", ["2026-06-30", "1.0.0", "", "2025-11-26", "draft"])
def test_unknown_version_string_is_refused(name: str) -> None:
    """MCP-NOTES §1.1: only the dated releases exist; 2026-06-30 was a planned name, never on the wire."""
    with pytest.raises(ValueError, match="unknown MCP protocol version"):
        version(name)


def test_version_str_is_its_name() -> None:
    assert str(version("2025-06-18")) == "2025-06-18"


def test_latest_legacy_and_supported() -> None:
    assert LATEST_LEGACY == "2025-11-25" == max(LEGACY_VERSIONS)
    assert LATEST_LEGACY in SUPPORTED_VERSIONS


# -- negotiation (basic/lifecycle#version-negotiation) -------------------------------------------------------
@pytest.mark.parametrize("requested", list(SUPPORTED_VERSIONS))
def test_negotiate_echoes_a_supported_version(requested: str) -> None:
    assert negotiate(requested) == ProtocolVersion(requested)


@pytest.mark.parametrize(
    "requested", ["1.0.0", "2099-01-01", "2026-07-28", "", None, 20251125, ["2025-11-25"]]
)
def test_negotiate_answers_latest_for_anything_unsupported(requested: object) -> None:
    assert negotiate(requested) == ProtocolVersion(LATEST_LEGACY)


def test_negotiate_with_a_restricted_set_answers_its_latest() -> None:
    assert negotiate("2025-11-25", ("2024-11-05", "2025-06-18")) == ProtocolVersion("2025-06-18")
    assert negotiate("2024-11-05", ("2024-11-05", "2025-06-18")) == ProtocolVersion("2024-11-05")
