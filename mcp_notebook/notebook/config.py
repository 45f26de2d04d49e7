"""Settings for the notebook extension, as traitlets config (DESIGN decision 13).

In ``ipython_config.py`` / ``ipython_kernel_config.py``::

    c.MCPNotebook.default_timeout = 30
    c.MCPNotebook.approval_rules = {"everything.echo": "allow", "everything.*": "ask"}
    c.MCPNotebook.trusted_servers = ["weather"]
    c.MCPNotebook.headless_policy = "allow"       # what decides when nobody can click

At run time the same values live on ``mcp.config`` (``mcp.config.default_timeout = 5``).

**Is anyone there to click?** A kernel has no reliable signal that its frontend renders widgets: JupyterLab,
VS Code, nbclient and a bare ``jupyter console`` all talk to the same ZMQ kernel, and a widget-capable
frontend announces nothing before the first widget is shown. So the answer is declared, not guessed:
``MCP_NOTEBOOK_HEADLESS`` (``1``/``0``) wins, then ``c.MCPNotebook.headless`` (``True``/``False``), and
only when both are unset is it inferred from the shell: a ZMQ kernel counts as interactive, anything else
(terminal IPython, a plain ``InteractiveShell``) as headless. Headless runs (nbclient, CI) must set the
variable or the config value; the workshop notebooks' test run does. Even when this is wrong nothing hangs:
a synchronous call that needs a click returns a pending handle at once (DESIGN decision 4).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from traitlets import Bool, CaselessStrEnum, Dict, Float, Int, List, Unicode
from traitlets.config import Configurable

__all__ = ["HEADLESS_ENV", "HEADLESS_POLICY_ENV", "MCPNotebook", "detect_headless"]

HEADLESS_ENV = "MCP_NOTEBOOK_HEADLESS"
HEADLESS_POLICY_ENV = "MCP_NOTEBOOK_HEADLESS_POLICY"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class MCPNotebook(Configurable):
    """Configuration of ``%load_ext mcp_notebook`` and the ``mcp`` object."""

    default_timeout = Float(
        60.0, help="Seconds a request may take (restarted by each progress notification)."
    ).tag(config=True)
    headless = Bool(
        None,
        allow_none=True,
        help="True: nobody can click (nbclient, CI); False: a frontend renders widgets; "
        f"None: infer from the shell. The environment variable {HEADLESS_ENV} overrides this.",
    ).tag(config=True)
    headless_policy = CaselessStrEnum(
        ["allow", "deny"],
        default_value="deny",
        help="What happens to a call that would ask for approval when running headless. "
        f"The environment variable {HEADLESS_POLICY_ENV} overrides this.",
    ).tag(config=True)
    approval_rules = Dict(
        value_trait=CaselessStrEnum(["allow", "ask", "deny"]),
        key_trait=Unicode(),
        help="Rules by 'SERVER.TOOL' pattern (fnmatch: 'everything.*', '*.delete_*'): allow, ask or deny. "
        "The notebook's own tools are under the server name 'local'.",
    ).tag(config=True)
    trusted_servers = List(
        Unicode(),
        help="Servers whose tool annotations are believed (shown as facts, not claims).",
    ).tag(config=True)
    auto_allow_read_only = Bool(
        False, help="Allow tools that a *trusted* server marks readOnlyHint without asking."
    ).tag(config=True)
    max_text = Int(20_000, help="Characters of text shown per content block before it is cut.").tag(
        config=True
    )
    max_image_bytes = Int(2_000_000, help="Bytes of image/audio data embedded per block.").tag(config=True)
    history_size = Int(1000, help="How many calls the audit log keeps.").tag(config=True)
    apps = Bool(
        True, help="Render MCP Apps (io.modelcontextprotocol/ui) inline, and declare that clients do."
    ).tag(config=True)

    def is_headless(self, shell: Any = None) -> bool:
        return detect_headless(self.headless, shell)

    def effective_headless_policy(self) -> str:
        value = os.environ.get(HEADLESS_POLICY_ENV, "").strip().lower()
        if value in ("allow", "deny"):
            return value
        if value:
            raise ValueError(f"{HEADLESS_POLICY_ENV}={value!r}: expected 'allow' or 'deny'")
        return str(self.headless_policy).lower()


def detect_headless(configured: bool | None, shell: Any = None) -> bool:
    """The environment, then the configured value, then the kind of shell (see the module docstring)."""
    value = os.environ.get(HEADLESS_ENV, "")
    if value.strip():  # set but empty counts as unset
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"{HEADLESS_ENV}={value!r}: expected 1 or 0")
    if configured is not None:
        return configured
    return not any(cls.__name__ == "ZMQInteractiveShell" for cls in type(shell).__mro__)


_loading = threading.local()


def loading_notebook() -> bool:
    """True while ``notebook_file.load_notebook`` runs cells on this thread (``%mcp serve`` then waits)."""
    return bool(getattr(_loading, "depth", 0))


@contextlib.contextmanager
def marked_loading() -> Iterator[None]:
    _loading.depth = getattr(_loading, "depth", 0) + 1
    try:
        yield
    finally:
        _loading.depth -= 1
