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
import secrets
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...engine.approval import Approval, IncomingCall

if TYPE_CHECKING:
    from ...engine.server import Server
from ..rendering.base import table_bundle
from .callargs import format_magic, format_python

__all__ = [
    "LOCAL",
    "VERDICTS",
    "AuditEntry",
    "AuditLog",
    "Decision",
    "IncomingPolicy",
    "Policy",
    "PolicyApprover",
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


_GLOB = frozenset("*?[]")


def _is_exact(pattern: str) -> bool:
    return not _GLOB.intersection(pattern)


def _matches(pattern: str, party: str, tool: str) -> bool:
    """``PARTY.TOOL`` patterns match the two parts separately (the party part never spans a dot), so a
    party named ``x.read_`` or ``*`` cannot stretch or become a pattern: ``*.read_*`` does not match
    ``("x.read_", "hello")``. A bare ``*`` matches everything."""
    if pattern == "*":
        return True
    party_pattern, _, tool_pattern = pattern.partition(".")
    return fnmatch.fnmatchcase(party, party_pattern) and fnmatch.fnmatchcase(tool, tool_pattern)


class RuleBook(abc.ABC):
    """Rules by ``PARTY.TOOL`` pattern, "always allow" choices and the headless fallback: the mechanics
    shared by the policy for calls the notebook makes (:class:`Policy`, PARTY = server) and the one for
    calls made to it (:class:`IncomingPolicy`, PARTY = the caller's principal). Subclasses give the
    defaults. An exact rule is one without glob characters; only an exact rule may allow a tool that
    declares ``destructiveHint``, and it must name the party and the tool literally."""

    party = "PARTY"
    example = "'party.tool' or 'party.*'"

    def __init__(
        self, rules: Mapping[str, str] | None = None, *, headless: bool = False, headless_policy: str = "deny"
    ) -> None:
        self._lock = threading.Lock()
        self.rules: dict[str, Verdict] = {}
        for pattern, verdict in (rules or {}).items():
            self.rules[self._check_pattern(pattern)] = check_verdict(verdict)
        self.headless = headless
        self.headless_policy: Verdict = check_verdict(headless_policy)
        if self.headless_policy == "ask":
            raise ValueError("the headless policy must be allow or deny: nobody is there to ask")
        self.session_allowed: set[str] = set()

    def _check_pattern(self, pattern: str) -> str:
        if "." not in pattern and pattern != "*":
            raise ValueError(f"a rule pattern is {self.party}.TOOL (e.g. {self.example}), not {pattern!r}")
        return pattern

    # -- changing it --------------------------------------------------------------------------------
    def set(self, pattern: str, verdict: str) -> None:
        """A rule for ``PARTY.TOOL`` or a pattern (fnmatch: ``everything.*``, ``*.delete_*``)."""
        self._check_pattern(pattern)
        with self._lock:
            self.rules[pattern] = check_verdict(verdict)

    def unset(self, pattern: str) -> bool:
        with self._lock:
            return self.rules.pop(pattern, None) is not None

    def always_allow(self, party: str, tool: str) -> None:
        with self._lock:
            self.session_allowed.add(f"{party}.{tool}")

    # -- deciding ---------------------------------------------------------------------------------------
    def decide(
        self, party: str, tool: str, tool_def: Mapping[str, Any] | None, *, remembered: str | None = None
    ) -> Decision:
        """``remembered``: the key "always allow" choices were stored under, when not ``party``."""
        decision = self._decide(party, tool, tool_def, remembered or party)
        if decision.verdict == "ask" and self.headless:
            return Decision(self.headless_policy, f"headless policy ({decision.by})")
        return decision

    def _decide(self, party: str, tool: str, tool_def: Mapping[str, Any] | None, remembered: str) -> Decision:
        with self._lock:
            rules, allowed = dict(self.rules), f"{remembered}.{tool}" in self.session_allowed
        exact = f"{party}.{tool}"
        if "." not in party and _is_exact(party) and exact in rules:
            return Decision(rules[exact], f"rule {exact!r}")
        matching = [p for p in rules if not _is_exact(p) and _matches(p, party, tool)]
        pattern = max(matching, key=_specificity) if matching else None
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


class IncomingPolicy(RuleBook):
    """Who may run which served tool. Rules by ``PRINCIPAL.TOOL`` pattern, where the principal is what the
    *connection* knows about the caller (:class:`~mcp_notebook.transports.base.Peer`): the name of the
    credential it authenticated with, else its transport (``http``, ``stdio``, ``memory``) — never the
    name the client declares. ``"*.wipe": "ask"``, ``"stdio.*": "allow"``, ``"inspector.*": "deny"``
    (a token named ``inspector``). An ``allow`` *pattern* does not cover a tool declaring
    ``destructiveHint`` (only an exact ``PRINCIPAL.TOOL`` rule does). Defaults: ask for tools that declare
    ``destructiveHint: true``, allow read-only and other served tools (their author wrote them). Headless
    (nobody to click), an ``ask`` becomes ``headless_policy``. "Always allow" is remembered per session."""

    party = "PRINCIPAL"
    example = "'*.wipe', 'http.*' or 'stdio.*'"

    def _default(self, party: str, tool_def: Mapping[str, Any] | None) -> Decision:
        if declares_destructive(tool_def):
            return Decision("ask", "default: the tool declares destructiveHint")
        if is_read_only(tool_def):
            return Decision("allow", "default: read-only tool")
        return Decision("allow", "default: served tool")

    @staticmethod
    def _remembered(call: IncomingCall) -> str:
        """What "always allow in this session" covers: the caller's HTTP session (legacy; a session only
        answers to the principal that opened it), else (2026-07-28, no sessions) the principal the call is
        bound to (its token's name, its OAuth subject and client), else this one call: an anonymous
        stateless caller has nothing that ties its next call to this one."""
        if call.peer.session_id:
            return f"session:{call.peer.session_id}"
        if call.principal is not None:
            return f"principal:{call.principal}"
        return f"call:{secrets.token_hex(8)}"  # never matched again

    def decide_call(self, call: IncomingCall) -> Decision:
        return self.decide(call.peer.principal, call.tool, call.tool_def, remembered=self._remembered(call))

    def always_allow_call(self, call: IncomingCall) -> None:
        """The person chose "always allow" on a card: this tool, for the rest of this caller's session."""
        self.always_allow(self._remembered(call), call.tool)


Asker = Callable[[IncomingCall, Decision], Awaitable[bool]]


class PolicyApprover:
    """The gate :meth:`Server.approve <mcp_notebook.engine.server.Server>` awaits for served tools: decide
    by :class:`IncomingPolicy`, ask a person (``ask``, the server console) when it says so, and record
    every decision and how each call ended in the audit log (listen with :meth:`on_event`)."""

    def __init__(
        self,
        policy: IncomingPolicy,
        audit: AuditLog,
        ask: Asker | None = None,
        on_denied: Callable[[IncomingCall, Decision], None] | None = None,
    ) -> None:
        self.policy, self.audit, self.ask, self.on_denied = policy, audit, ask, on_denied
        self._entries: dict[IncomingCall, AuditEntry] = {}

    def install(self, server: Server) -> bool:
        """Become ``server``'s approval hook (and hear how calls end), unless its author set a hook of their
        own: that one stays, and False is returned. ``mcp-notebook serve`` and ``%mcp serve`` both do this."""
        if server.approve is not None:
            return False
        server.approve = self
        server.add_listener(self.on_event)
        return True

    def uninstall(self, server: Server) -> None:
        if server.approve is self:
            server.approve = None
        server.remove_listener(self.on_event)

    async def __call__(self, call: IncomingCall) -> Approval:
        if call.peer.transport == "memory":  # the notebook's own calls: its outgoing Policy decided them
            return Approval(True, "an in-process caller")
        decision = self.policy.decide_call(call)
        if decision.verdict == "ask" and self.ask is None:
            decision = Decision("deny", f"nobody to ask ({decision.by})")
        status = "awaiting-approval" if decision.verdict == "ask" else "running"
        entry = AuditEntry(
            call.peer.principal,
            call.tool,
            dict(call.arguments),
            decision.verdict,
            decision.by,
            status,
            kind="incoming",
            client=call.declared_name,
        )
        self.audit.add(entry)
        if decision.verdict == "ask":
            assert self.ask is not None
            try:
                approved = await self.ask(call, decision)
            except BaseException:
                entry.status = "cancelled"
                raise
            decision = Decision("allow" if approved else "deny", "you, in the server console")
            entry.decision, entry.decided_by = decision.verdict, decision.by
        elif decision.verdict == "deny" and self.on_denied is not None:
            self.on_denied(call, decision)
        allowed = decision.verdict == "allow"
        entry.status = "running" if allowed else "denied"
        if allowed:
            self._entries[call] = entry
        return Approval(allowed, decision.by)

    def on_event(self, event: str, data: dict[str, Any]) -> None:
        """A server listener: a call's audit entry learns how it ended (done, failed, cancelled)."""
        if event != "call_finished":
            return
        entry = self._entries.pop(data.get("call"), None)  # type: ignore[arg-type]
        if entry is None:
            return
        entry.duration = time.time() - entry.time
        entry.status = str(data.get("status") or "done")
        if entry.status == "failed":
            entry.error = "tool error (isError)"


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
    kind: str = "call"  # or "elicitation", "sampling": requests from the server, answered here;
    # "incoming": a call made to the notebook's served tools (``server`` is then the caller's principal)
    client: str = ""  # incoming: the name the client declared (display only)
    response: Any = None  # what came back (bounded: calls.history.kept_response), for the history
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
