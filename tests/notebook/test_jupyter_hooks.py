"""The server extension's rule (mcp_notebook/jupyter_hooks.py): a widget view whose model is gone is left
out when it has a text/html snapshot; a live view, and a view with no snapshot, are kept. The browser
suite (tests/browser/test_live_page.py) checks it in JupyterLab and Notebook 7 against real kernels."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from mcp_notebook import jupyter_hooks
from mcp_notebook.jupyter_hooks import WIDGET_VIEW, dead_views_removed, live_widgets, snapshots_applied


def _output(model_id: str, *, html: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {WIDGET_VIEW: {"model_id": model_id}, "text/plain": "a card"}
    if html:
        data["text/html"] = "<div>the card's snapshot</div>"
    return {"output_type": "display_data", "data": data, "metadata": {}}


def test_only_dead_views_with_a_snapshot_are_left_out() -> None:
    notebook = {
        "cells": [
            {"cell_type": "code", "outputs": [_output("alive"), _output("gone"), _output("")]},
            {"cell_type": "code", "outputs": [_output("gone-no-snapshot", html=False)]},
            {"cell_type": "markdown", "source": "text"},
        ]
    }
    assert dead_views_removed(notebook, {"alive"}) == 2
    kept, gone, emptied = (o["data"] for o in notebook["cells"][0]["outputs"])
    assert WIDGET_VIEW in kept
    assert WIDGET_VIEW not in gone and gone["text/html"] == "<div>the card's snapshot</div>"
    assert WIDGET_VIEW not in emptied  # a view JupyterLab emptied (model_id "") opens as its snapshot
    assert WIDGET_VIEW in notebook["cells"][1]["outputs"][0]["data"]  # nothing to show instead: kept


def test_a_saved_view_takes_the_kernels_snapshot_and_a_finished_one_is_saved_as_html() -> None:
    notebook = {"cells": [{"cell_type": "code", "outputs": [_output("waiting"), _output("finished")]}]}
    snapshots = {
        "waiting": {
            "bundle": {"text/html": "<b>awaiting approval</b>", "text/plain": "awaiting"},
            "final": False,
        },
        "finished": {"bundle": {"text/html": "<b>Counted to 2.</b>", "text/plain": "Counted"}, "final": True},
    }
    assert snapshots_applied(notebook, snapshots) == 2
    waiting, finished = (o["data"] for o in notebook["cells"][0]["outputs"])
    assert WIDGET_VIEW in waiting and waiting["text/html"] == "<b>awaiting approval</b>"
    assert WIDGET_VIEW not in finished and finished["text/html"] == "<b>Counted to 2.</b>"


class _Client:
    """A kernel client whose comm_info_request is answered with ``comms``, or never (None)."""

    def __init__(self, comms: dict[str, Any] | None) -> None:
        self.comms = comms

    def start_channels(self, **_: Any) -> None:
        pass

    def stop_channels(self) -> None:
        pass

    async def comm_info(self, **_: Any) -> dict[str, Any]:
        if self.comms is None:
            await asyncio.Event().wait()  # a kernel still starting: no answer
        return {"content": {"comms": self.comms}}


def _server(state: str, comms: dict[str, Any] | None) -> Any:
    kernel = SimpleNamespace(execution_state=state, client=lambda: _Client(comms))
    sessions = [{"path": "a.ipynb", "kernel": {"id": "k1"}}]
    return SimpleNamespace(
        session_manager=SimpleNamespace(list_sessions=lambda: sessions),
        kernel_manager=SimpleNamespace(get_kernel=lambda kernel_id: kernel),
    )


async def test_a_kernel_still_starting_has_no_live_widgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opened in a fresh server while the notebook's new kernel is still starting (it has run nothing):
    no model is alive, so the dead views open as their snapshots; before, the kernel was asked, did not
    answer in time (slow to start: a loaded machine, heavy imports) and the views were kept: "model not
    found" on the page."""
    monkeypatch.setattr(jupyter_hooks, "LIVE_TIMEOUT", 0.05)
    assert await live_widgets(_server("starting", None), "/a.ipynb") == set()
    # a kernel that has started is asked: its open comms, or None (views kept) when it does not answer
    assert await live_widgets(_server("idle", {"m1": {"target_name": "jupyter.widget"}}), "a.ipynb") == {"m1"}
    assert await live_widgets(_server("busy", None), "a.ipynb") is None
