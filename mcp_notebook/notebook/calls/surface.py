"""``Surface``: where call handles and widgets are shown, bound to the cell that asked (issue 19).

Split from ``handle.py`` (issue 21 round 6, a pure move): the display publisher and the cell a message
goes under; the handle, the forms and the live views publish through it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["Surface"]


class Surface:
    """Where handles and widgets are shown: the shell's display publisher (any thread may publish).

    A front end puts an output under the cell whose ``execute_request`` is the message's parent. ipykernel
    takes that parent from the publishing thread's context, so output published from the runtime thread,
    a widget click or a timer would land under whichever cell that thread last saw (the one that ran
    ``mcp.connect``, say). A surface made by :meth:`here` keeps the cell that was running when it was made
    and publishes every message with it as the parent, from any thread (issue 19).
    """

    def __init__(self, shell: Any = None, parent: dict[str, Any] | None = None) -> None:
        self.shell = shell
        self.parent = parent  # the execute_request whose cell shows what this surface publishes

    def here(self) -> Surface:
        """This surface bound to the cell running now (itself when no cell is running, as in a click)."""
        parent = _running_cell(self.shell)
        return Surface(self.shell, parent) if parent is not None else self

    def execution_count(self) -> int | None:
        count = getattr(self.shell, "execution_count", None)
        return count if isinstance(count, int) else None

    def publish(self, bundle: dict[str, Any], display_id: str | None = None, *, update: bool = False) -> None:
        transient = {"display_id": display_id} if display_id else None
        if self.shell is not None:
            publisher = self.shell.display_pub
            with _parent_set(publisher, self.parent):
                publisher.publish(data=bundle, metadata={}, transient=transient, update=update)
            return
        from IPython.display import display

        display(bundle, raw=True, display_id=display_id, update=update)  # type: ignore[no-untyped-call]


def _running_cell(shell: Any) -> dict[str, Any] | None:
    """The message of the ``execute_request`` the kernel is answering in this context, if any."""
    get_parent = getattr(shell, "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent()
    except Exception:  # not an ipykernel shell
        return None
    header = parent.get("header") if isinstance(parent, dict) else None
    if isinstance(header, dict) and header.get("msg_type") == "execute_request":
        return dict(parent)
    return None


@contextlib.contextmanager
def _parent_set(publisher: Any, parent: dict[str, Any] | None) -> Iterator[None]:
    """Publish with ``parent`` in this thread or task only (ipykernel 7 keeps the parent in a context
    variable; an older publisher without one keeps its own)."""
    set_parent = getattr(publisher, "set_thread_parent", None)
    if parent is None or set_parent is None:
        yield
        return
    token = set_parent(parent)
    try:
        yield
    finally:
        publisher.reset_thread_parent(token)
