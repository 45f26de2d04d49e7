"""When the kernel shuts down (a restart, "Shut Down Kernel"), every live widget display is replaced by
its static snapshot, so JupyterLab shows the snapshot instead of "Error displaying widget: model not
found" or a "Loading widget..." that never ends, and a notebook saved afterwards keeps plain HTML.

The hook is IPython's own ``exit_now`` trait, which ipykernel sets first thing in ``do_shutdown`` while
IOPub still runs; nothing is patched. Displays are held weakly: a form nobody references drops out.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["remember"]

log = logging.getLogger("mcp_notebook.notebook")
Static = Callable[[], dict[str, Any]]

# shell id -> (display id -> (publish, weakref to the object whose .static_bundle() is shown))
_live: dict[int, dict[str, tuple[Callable[..., None], weakref.ref[Any]]]] = {}


def remember(shell: Any, display_id: str, owner: Any, publish: Callable[..., None]) -> None:
    """Replace display ``display_id`` with ``owner.static_bundle()`` when ``shell``'s kernel shuts down."""
    if shell is None or not hasattr(shell, "observe"):
        return
    displays = _live.get(id(shell))
    if displays is None:
        displays = _live[id(shell)] = {}
        shell.observe(lambda change: _on_exit(id(shell), change), names="exit_now")
    displays[display_id] = (publish, weakref.ref(owner))


def _on_exit(key: int, change: dict[str, Any]) -> None:
    if not change.get("new"):
        return
    for display_id, (publish, ref) in list(_live.pop(key, {}).items()):
        owner = ref()
        if owner is None:
            continue
        try:
            publish(owner.static_bundle(), display_id, update=True)
        except Exception:  # shutting down: log it, never stop the shutdown
            log.exception("could not leave a static snapshot for display %s", display_id)
