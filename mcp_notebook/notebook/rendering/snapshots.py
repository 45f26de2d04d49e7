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

__all__ = ["SNAPSHOT_TARGET", "register_view", "remember"]

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


# ---- the snapshot a saved file should hold (asked by the Jupyter server extension on save) --------------
SNAPSHOT_TARGET = "mcp_notebook.snapshots"  # comm target: open it with {"model_ids": [...]}
_views: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()  # model id -> owner
_target_installed = False


def register_view(model_id: str, owner: Any) -> None:
    """``owner`` (``.static_bundle()``, ``.done()``) is shown by the widget view of model ``model_id``.

    When a notebook is saved, ``mcp_notebook.jupyter_hooks`` asks the kernel for these owners' current
    snapshots: a page reloaded while a card waited never receives the display update that records the
    call's result, so without this the file would keep "awaiting approval" (issue 19 item 2)."""
    global _target_installed
    _views[model_id] = owner
    if _target_installed:
        return
    _target_installed = True
    try:
        from comm import get_comm_manager

        get_comm_manager().register_target(SNAPSHOT_TARGET, _answer)
    except Exception:  # not in a kernel (tests, terminal IPython): nobody will ask
        log.debug("no comm manager for %s", SNAPSHOT_TARGET, exc_info=True)


def _answer(comm: Any, message: dict[str, Any]) -> None:
    wanted = (message.get("content") or {}).get("data") or {}
    found: dict[str, Any] = {}
    for model_id in wanted.get("model_ids") or []:
        owner = _views.get(str(model_id))
        if owner is None:
            continue
        try:
            found[str(model_id)] = {"bundle": owner.static_bundle(), "final": bool(owner.done())}
        except Exception:  # one broken snapshot must not cost the others
            log.exception("no snapshot for widget %s", model_id)
    comm.send({"snapshots": found})
    comm.close()
