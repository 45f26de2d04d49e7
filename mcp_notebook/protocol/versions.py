"""Protocol versions, eras and the features each version has.

One :class:`ProtocolVersion` object knows the negotiated version and answers "may I use feature X?", so no
code compares date strings. Legacy versions (<= 2025-11-25) use the ``initialize`` handshake; the modern era
(2026-07-28) is stateless and carries the version in every request's ``_meta``
(https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "FEATURES",
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "ProtocolVersion",
    "negotiate",
    "version",
]

Era = Literal["legacy", "modern"]

LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
SUPPORTED_VERSIONS: tuple[str, ...] = (
    LEGACY_VERSIONS  # what we negotiate today; modern joins when implemented
)
LATEST_LEGACY = "2025-11-25"

# feature -> (first version that has it, last version that has it or None). Versions compare as ISO dates.
# Sources: the changelogs summarised in MCP-NOTES section 1.
FEATURES: dict[str, tuple[str, str | None]] = {
    "initialize": ("2024-11-05", "2025-11-25"),
    "batching": ("2025-03-26", "2025-03-26"),
    "streamable_http": ("2025-03-26", None),
    "http_sse_transport": ("2024-11-05", "2024-11-05"),
    "tool_annotations": ("2025-03-26", None),
    "audio_content": ("2025-03-26", None),
    "completions_capability": ("2025-03-26", None),
    "progress_message": ("2025-03-26", None),
    "structured_output": ("2025-06-18", None),
    "elicitation": ("2025-06-18", None),
    "resource_link": ("2025-06-18", None),
    "titles": ("2025-06-18", None),
    "protocol_version_header": ("2025-06-18", None),
    "completion_context": ("2025-06-18", None),
    "icons": ("2025-11-25", None),
    "elicitation_url": ("2025-11-25", None),
    "sampling_tools": ("2025-11-25", None),
    "tasks": ("2025-11-25", "2025-11-25"),  # core in 2025-11-25, an extension from 2026-07-28
    "tool_execution": ("2025-11-25", "2025-11-25"),
    "sse_polling": ("2025-11-25", "2025-11-25"),
    "json_schema_2020_12_default": ("2025-11-25", None),
    "ping": ("2024-11-05", "2025-11-25"),
    "logging_set_level": ("2024-11-05", "2025-11-25"),
    "server_requests": ("2024-11-05", "2025-11-25"),  # elicitation/sampling/roots as server->client requests
    "sessions": ("2025-03-26", "2025-11-25"),
    "server_discover": ("2026-07-28", None),
    "mrtr": ("2026-07-28", None),
    "result_type": ("2026-07-28", None),
}


@dataclass(frozen=True, slots=True)
class ProtocolVersion:
    """A protocol version and what it allows."""

    name: str

    @property
    def era(self) -> Era:
        return "modern" if self.name >= MODERN_VERSIONS[0] else "legacy"

    def supports(self, feature: str) -> bool:
        try:
            first, last = FEATURES[feature]
        except KeyError:
            raise KeyError(f"unknown protocol feature {feature!r}; known: {sorted(FEATURES)}") from None
        return first <= self.name and (last is None or self.name <= last)

    def __str__(self) -> str:
        return self.name


def version(name: str) -> ProtocolVersion:
    """The ProtocolVersion for a known version string; ValueError for an unknown one."""
    if name not in LEGACY_VERSIONS and name not in MODERN_VERSIONS:
        known = ", ".join(LEGACY_VERSIONS + MODERN_VERSIONS)
        raise ValueError(f"unknown MCP protocol version {name!r} (known: {known})")
    return ProtocolVersion(name)


def negotiate(requested: object, supported: tuple[str, ...] = SUPPORTED_VERSIONS) -> ProtocolVersion:
    """Server side of legacy negotiation: the requested version if we support it, else our latest.

    https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation
    """
    if isinstance(requested, str) and requested in supported:
        return ProtocolVersion(requested)
    return ProtocolVersion(max(supported))
