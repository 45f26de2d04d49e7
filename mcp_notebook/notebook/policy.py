"""Who decides whether a tool call runs, and the audit log of every decision and call (DESIGN decision 11).

:meth:`Policy.decide` answers ``allow``, ``ask`` or ``deny`` for ``(server, tool definition)``, in order:

1. an explicit rule for exactly ``SERVER.TOOL`` (``"everything.echo": "allow"``) — the only kind of rule
   that may auto-allow a tool which declares itself destructive;
2. the most specific pattern rule that matches (``"everything.*": "ask"``; fnmatch, most literal
   characters wins); an ``allow`` pattern does not cover a tool that declares ``destructiveHint: true``,
   which is asked about instead;
3. "always allow this tool" choices made this session (they beat ``ask`` patterns, never a ``deny``);
4. defaults: the notebook's own tools (server ``local``) run, unless they declare ``destructiveHint:
   true``; remote tools ask, except that a trusted server's ``readOnlyHint`` tools may run when
   ``auto_allow_read_only`` is on. Annotations are hints and, from untrusted servers, claims
   (spec: server/tools#tool-annotations): a claim is only ever believed when it makes us *more* careful.

Headless (nobody can click), an ``ask`` becomes the declared headless policy, ``allow`` or ``deny``.
"""

from __future__ import annotations

import abc
import datetime as dt
import fnmatch
import itertools
import threading
import time
from collections import deque
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .callargs import format_magic, format_python
from .render_base import table_bundle

__all__ = [
    "LOCAL",
    "VERDICTS",
    "AuditEntry",
    "AuditLog",
    "Decision",
    "History",
    "Policy",
    "RuleBook",
    "Verdict",
    "declares_destructive",
    "is_read_only",
    "may_be_destructive",
]

Verdict = Literal["allow", "ask", "deny"]
VERDICTS: tuple[Verdict, ...] = ("allow", "ask", "deny")
LOCAL = "local"  # the connection name of the notebook's own server


def _annotations(tool_def: Mapping[str, Any] | None) -> Mapping[str, Any]:
    ann = (tool_def or {}).get("annotations")
    return ann if isinstance(ann, Mapping) else {}


def is_read_only(tool_def: Mapping[str, Any] | None) -> bool:
    return _annotations(tool_def).get("readOnlyHint") is True


def declares_destructive(tool_def: Mapping[str, Any] | None) -> bool:
    """``destructiveHint: true`` said out loud (it is meaningful only when not read-only)."""
    return not is_read_only(tool_def) and _annotations(tool_def).get("destructiveHint") is True


def may_be_destructive(tool_def: Mapping[str, Any] | None) -> bool:
    """By the spec's defaults (readOnlyHint false, destructiveHint true) a tool without annotations may be."""
    return not is_read_only(tool_def) and _annotations(tool_def).get("destructiveHint", True) is not False


def check_verdict(value: str) -> Verdict:
    lowered = value.strip().lower()
    for verdict in VERDICTS:
        if lowered == verdict:
            return verdict
    raise ValueError(f"{value!r} is not a verdict: use allow, ask or deny")


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    by: str  # the reason, for people: "rule 'everything.*'", "default: remote tool", ...


def _specificity(pattern: str) -> tuple[int, int]:
    literal = sum(1 for ch in pattern if ch not in "*?[]")
    return literal, len(pattern)


class RuleBook(abc.ABC):
    """Rules by ``PARTY.TOOL`` pattern, "always allow" choices and the headless fallback: the mechanics
    shared by the policy for calls the notebook makes (:class:`Policy`, PARTY = server) and the one for
    calls made to it (``serving_gate.IncomingPolicy``, PARTY = client). Subclasses give the defaults."""

    party = "PARTY"
    example = "'party.tool' or 'party.*'"

    def __init__(
        self, rules: Mapping[str, str] | None = None, *, headless: bool = False, headless_policy: str = "deny"
    ) -> None:
        self._lock = threading.Lock()
        self.rules: dict[str, Verdict] = {p: check_verdict(v) for p, v in (rules or {}).items()}
        self.headless = headless
        self.headless_policy: Verdict = check_verdict(headless_policy)
        if self.headless_policy == "ask":
            raise ValueError("the headless policy must be allow or deny: nobody is there to ask")
        self.session_allowed: set[str] = set()

    # -- changing it --------------------------------------------------------------------------------
    def set(self, pattern: str, verdict: str) -> None:
        """A rule for ``PARTY.TOOL`` or a pattern (fnmatch: ``everything.*``, ``*.delete_*``)."""
        if "." not in pattern and pattern != "*":
            raise ValueError(f"a rule pattern is {self.party}.TOOL (e.g. {self.example}), not {pattern!r}")
        with self._lock:
            self.rules[pattern] = check_verdict(verdict)

    def unset(self, pattern: str) -> bool:
        with self._lock:
            return self.rules.pop(pattern, None) is not None

    def always_allow(self, party: str, tool: str) -> None:
        with self._lock:
            self.session_allowed.add(f"{party}.{tool}")

    # -- deciding ---------------------------------------------------------------------------------------
    def decide(self, party: str, tool: str, tool_def: Mapping[str, Any] | None) -> Decision:
        decision = self._decide(party, tool, tool_def)
        if decision.verdict == "ask" and self.headless:
            return Decision(self.headless_policy, f"headless policy ({decision.by})")
        return decision

    def _decide(self, party: str, tool: str, tool_def: Mapping[str, Any] | None) -> Decision:
        key = f"{party}.{tool}"
        with self._lock:
            rules, allowed = dict(self.rules), key in self.session_allowed
        if key in rules:
            return Decision(rules[key], f"rule {key!r}")
        matching = sorted((p for p in rules if fnmatch.fnmatchcase(key, p)), key=_specificity, reverse=True)
        pattern = matching[0] if matching else None
        verdict = rules[pattern] if pattern is not None else None
        if verdict == "deny":
            return Decision("deny", f"rule {pattern!r}")
        if allowed:  # the person chose "always allow this tool": it beats ask patterns, never a deny
            return Decision("allow", "always allow (this session)")
        if verdict == "allow" and declares_destructive(tool_def):
            return Decision("ask", f"rule {pattern!r}, but the tool declares destructiveHint")
        if verdict is not None:
            return Decision(verdict, f"rule {pattern!r}")
        return self._default(party, tool_def)

    @abc.abstractmethod
    def _default(self, party: str, tool_def: Mapping[str, Any] | None) -> Decision:
        """The verdict when no rule and no "always allow" applies: each policy states its own."""

    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = [{"kind": "rule", "what": p, "verdict": v} for p, v in sorted(self.rules.items())]
            rows += [
                {"kind": "always allow", "what": k, "verdict": "allow"} for k in sorted(self.session_allowed)
            ]
        return rows


class Policy(RuleBook):
    """Approval for the calls this notebook makes: rules, trusted servers, "always allow" choices."""

    party = "SERVER"
    example = "'everything.echo' or 'local.*'"

    def __init__(
        self,
        rules: Mapping[str, str] | None = None,
        *,
        trusted: Iterable[str] = (),
        auto_allow_read_only: bool = False,
        headless: bool = False,
        headless_policy: str = "deny",
    ) -> None:
        super().__init__(rules, headless=headless, headless_policy=headless_policy)
        self.trusted: set[str] = set(trusted)
        self.auto_allow_read_only = auto_allow_read_only

    def trust(self, server: str) -> None:
        with self._lock:
            self.trusted.add(server)

    def untrust(self, server: str) -> None:
        with self._lock:
            self.trusted.discard(server)

    def is_trusted(self, server: str) -> bool:
        return server == LOCAL or server in self.trusted

    def _default(self, party: str, tool_def: Mapping[str, Any] | None) -> Decision:
        if party == LOCAL:
            if declares_destructive(tool_def):
                return Decision("ask", "default: notebook tool that declares destructiveHint")
            return Decision("allow", "default: notebook tool")
        if self.auto_allow_read_only and party in self.trusted and is_read_only(tool_def):
            return Decision("allow", "default: read-only tool of a trusted server")
        return Decision("ask", "default: remote tool")

    # -- showing it -------------------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        rows = super().rows()
        with self._lock:
            rows += [{"kind": "trusted server", "what": s, "verdict": ""} for s in sorted(self.trusted)]
        mode = f"headless: {self.headless_policy}" if self.headless else "interactive: ask means a click"
        rows.append({"kind": "mode", "what": mode, "verdict": ""})
        if self.auto_allow_read_only:
            rows.append({"kind": "default", "what": "read-only tools of trusted servers", "verdict": "allow"})
        return rows

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        return table_bundle(self.rows(), ["kind", "what", "verdict"], title="Approval policy")

    def __repr__(self) -> str:
        return f"<Policy {len(self.rules)} rules, trusted={sorted(self.trusted)}, headless={self.headless}>"


# --------------------------------------------------------------------------------------------- audit log

_ids = itertools.count(1)


@dataclass
class AuditEntry:
    """One tool call and how it was decided; updated in place as the call goes on."""

    server: str
    tool: str
    arguments: dict[str, Any]
    decision: str
    decided_by: str
    status: str
    time: float = field(default_factory=time.time)
    duration: float | None = None
    error: str | None = None
    kind: str = "call"  # or "elicitation", "sampling": requests from the server, answered here
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def target(self) -> str:
        # a bare name is routed to the notebook's server unless it has a dot (which could name a server)
        return self.tool if self.server == LOCAL and "." not in self.tool else f"{self.server}.{self.tool}"

    @property
    def magic(self) -> str:
        """The ``%mcp call`` line that makes this call again ("" for a server's request)."""
        if self.kind != "call":
            return ""
        return format_magic(self.target, self.arguments)

    @property
    def python(self) -> str:
        """The same call from Python ("" for a server's request)."""
        if self.kind != "call":
            return ""
        return format_python(self.target, self.arguments)

    def row(self) -> dict[str, Any]:
        when = dt.datetime.fromtimestamp(self.time).strftime("%H:%M:%S")
        return {
            "#": self.id,
            "time": when,
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "decision": self.decision,
            "decided by": self.decided_by,
            "status": self.status,
            "duration (s)": None if self.duration is None else round(self.duration, 3),
            "error": self.error,
            "%mcp": self.magic,
            "python": self.python,
        }


class AuditLog:
    """The last ``maxlen`` entries; thread-safe (calls finish on the runtime thread)."""

    def __init__(self, maxlen: int = 1000) -> None:
        self._entries: deque[AuditEntry] = deque(maxlen=maxlen)
        self._lock = threading.Lock()

    def add(self, entry: AuditEntry) -> AuditEntry:
        with self._lock:
            self._entries.append(entry)
        return entry

    def entries(self) -> list[AuditEntry]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class History:
    """A snapshot of the audit log as a table; ``h[i].magic`` / ``h[i].python`` give an entry as code."""

    def __init__(self, entries: list[AuditEntry]) -> None:
        self.entries = entries

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index: int) -> AuditEntry:
        return self.entries[index]

    def __iter__(self) -> Iterator[AuditEntry]:
        return iter(self.entries)

    def rows(self) -> list[dict[str, Any]]:
        return [entry.row() for entry in self.entries]

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        return table_bundle(self.rows(), title="MCP calls (copy a row's %mcp or python cell to run it again)")

    def __repr__(self) -> str:
        return f"<History {len(self.entries)} calls>"
