"""A Jupyter server extension: a notebook opened in JupyterLab or Notebook 7 never shows "Error displaying
widget: model not found" for an output of ours (issue 19 item 3; docs/architecture.md "Widgets that
outlive their kernel").

An output the library publishes while something is interactive carries two representations: the widget
view (``application/vnd.jupyter.widget-view+json``, a reference to a model that lives in the kernel) and
``text/html``, the static snapshot of the same thing. JupyterLab and Notebook 7 always prefer the widget
view, and when its model is not in the kernel (the kernel restarted, the file was reopened in another
server) they print "model not found" instead of falling back to the snapshot beside it.

Only the server knows, when the page asks for the file, whether each view's model is alive: it knows the
notebook's kernel and can ask it which widget comms are open (the Jupyter protocol's
``comm_info_request``). This extension does exactly that when the contents API hands a notebook to a
page, and leaves out the widget view of every output that has a ``text/html`` snapshot and whose model
is not alive, so the page shows the snapshot. A view whose model is alive is kept (a reload leaves a
waiting card clickable); the file on disk is not changed. If the kernel does not answer in
``LIVE_TIMEOUT`` seconds (a long cell keeps it busy), nothing is left out.

Enabled by ``jupyter-config/mcp_notebook.json`` (installed into ``etc/jupyter/jupyter_server_config.d``),
or ``--ServerApp.jpserver_extensions=mcp_notebook.jupyter_hooks=True``. Imports nothing else of the
package: the server process does not need the kernel's side.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

__all__ = ["LIVE_TIMEOUT", "dead_views_removed", "live_widgets"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_TARGET = "jupyter.widget"  # the comm target of ipywidgets' models (a model id is its comm id)
LIVE_TIMEOUT = 3.0  # seconds to wait for the kernel's comm_info_reply

log = logging.getLogger("mcp_notebook.jupyter_hooks")


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "mcp_notebook.jupyter_hooks"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    global log
    log = serverapp.log  # the server's log, where a person running it looks
    manager = serverapp.contents_manager
    original: Callable[..., Any] = manager.get
    if not inspect.iscoroutinefunction(original):
        log.warning("mcp_notebook: %s is not asynchronous; dead widget views stay", type(manager).__name__)
        return

    async def get(path: str, content: bool = True, type: str | None = None, **kwargs: Any) -> Any:
        model = await original(path, content=content, type=type, **kwargs)
        notebook = model.get("content") if content and model.get("type") == "notebook" else None
        if isinstance(notebook, dict) and any(_views(notebook)):
            live = await live_widgets(serverapp, path)
            if live is not None:
                removed = dead_views_removed(notebook, live)
                log.info(
                    "mcp_notebook: %s: %d widget view(s) of a gone model open as snapshots", path, removed
                )
        return model

    original_save: Callable[..., Any] = manager.save

    async def save(model: dict[str, Any], path: str = "", **kwargs: Any) -> Any:
        notebook = model.get("content") if model.get("type") == "notebook" else None
        if isinstance(notebook, dict) and any(_views(notebook)):
            snapshots = await kernel_snapshots(serverapp, path, _model_ids(notebook))
            if snapshots:
                snapshots_applied(notebook, snapshots)
        return await _maybe_await(original_save(model, path, **kwargs))

    manager.get = get
    manager.save = save
    serverapp.log.info("mcp_notebook: widget views whose model is gone open as their snapshot")


def _views(notebook: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The data of every output that has both a widget view and a ``text/html`` snapshot."""
    for cell in notebook.get("cells") or []:
        for output in cell.get("outputs") or [] if isinstance(cell, dict) else []:
            data = output.get("data") if isinstance(output, dict) else None
            if isinstance(data, dict) and WIDGET_VIEW in data and "text/html" in data:
                yield data


def _model_ids(notebook: dict[str, Any]) -> list[str]:
    return [
        str(data[WIDGET_VIEW].get("model_id"))
        for data in _views(notebook)
        if isinstance(data[WIDGET_VIEW], dict)
    ]


def snapshots_applied(notebook: dict[str, Any], snapshots: dict[str, Any]) -> int:
    """Write each view's current snapshot (from the kernel) beside it; a finished call's view is left out,
    so the file holds the call's final state as plain HTML. How many outputs changed."""
    changed = 0
    for data in list(_views(notebook)):
        view = data[WIDGET_VIEW]
        found = snapshots.get(str(view.get("model_id"))) if isinstance(view, dict) else None
        bundle = found.get("bundle") if isinstance(found, dict) else None
        if not isinstance(bundle, dict):
            continue
        for mime in ("text/html", "text/plain"):
            if isinstance(bundle.get(mime), str):
                data[mime] = bundle[mime]
        if isinstance(found, dict) and found.get("final") is True:
            del data[WIDGET_VIEW]
        changed += 1
    return changed


def dead_views_removed(notebook: dict[str, Any], live: set[str]) -> int:
    """Leave out the widget view of each output with a snapshot whose model is not in ``live``; how many."""
    removed = 0
    for data in list(_views(notebook)):
        view = data[WIDGET_VIEW]
        if not (isinstance(view, dict) and view.get("model_id") in live):
            del data[WIDGET_VIEW]
            removed += 1
    return removed


async def live_widgets(serverapp: Any, path: str) -> set[str] | None:
    """The ids of the widget models alive in the kernel of the notebook at ``path`` (empty: no kernel);
    None when the kernel could not tell in time."""
    sessions = await _maybe_await(serverapp.session_manager.list_sessions())
    wanted = path.strip("/")  # the contents API may give "/a.ipynb", a session "a.ipynb"
    kernel_ids = [
        s["kernel"]["id"] for s in sessions if str(s.get("path", "")).strip("/") == wanted and s.get("kernel")
    ]
    live: set[str] = set()
    for kernel_id in kernel_ids:
        try:
            kernel = serverapp.kernel_manager.get_kernel(kernel_id)
        except KeyError:  # ended meanwhile
            continue
        if getattr(kernel, "execution_state", None) == "starting":
            # no word from it since it (re)started (jupyter_server's state until its first status): it
            # has run nothing, so no model is alive; not asked, since a kernel slow to start would not
            # answer in time and the dead views would be kept ("model not found")
            continue
        comms = await _open_comms(kernel)
        if comms is None:
            return None
        live |= comms
    return live


async def _open_comms(kernel: Any) -> set[str] | None:
    client = kernel.client()
    client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
    try:
        reply = await asyncio.wait_for(
            client.comm_info(target_name=WIDGET_TARGET, reply=True, timeout=LIVE_TIMEOUT), LIVE_TIMEOUT + 1
        )
    except (TimeoutError, asyncio.TimeoutError):
        log.info("mcp_notebook: the kernel did not list its widgets in %s s; views kept", LIVE_TIMEOUT)
        return None
    except Exception:  # a kernel going away, a protocol error: keep the views (never hide a live one)
        log.debug("comm_info_request failed", exc_info=True)
        return None
    finally:
        client.stop_channels()
    comms = reply.get("content", {}).get("comms", {})
    return {str(comm_id) for comm_id in comms} if isinstance(comms, dict) else set()


SNAPSHOT_TARGET = "mcp_notebook.snapshots"  # the kernel side: mcp_notebook/notebook/rendering/snapshots.py


async def kernel_snapshots(serverapp: Any, path: str, model_ids: list[str]) -> dict[str, Any] | None:
    """The current snapshot of each of our widget views, asked of the notebook's kernel over a comm
    (``{model_id: {"bundle": ..., "final": bool}}``); None when there is no kernel or no answer in time."""
    sessions = await _maybe_await(serverapp.session_manager.list_sessions())
    wanted = path.strip("/")
    for session in sessions:
        if str(session.get("path", "")).strip("/") != wanted or not session.get("kernel"):
            continue
        try:
            kernel = serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
        except KeyError:
            continue
        try:
            return await asyncio.wait_for(_ask_snapshots(kernel, model_ids), LIVE_TIMEOUT)
        except (TimeoutError, asyncio.TimeoutError):
            log.info("mcp_notebook: the kernel did not send snapshots in %s s; saved as shown", LIVE_TIMEOUT)
        except Exception:
            log.debug("asking for snapshots failed", exc_info=True)
    return None


async def _ask_snapshots(kernel: Any, model_ids: list[str]) -> dict[str, Any]:
    import uuid
    from queue import Empty

    client = kernel.client()
    client.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=False)
    try:
        # IOPub is a subscription: wait until it delivers something of ours before asking
        while True:
            probe = client.kernel_info()
            try:
                while True:
                    message = await client.get_iopub_msg(timeout=0.5)
                    if message["parent_header"].get("msg_id") == probe:
                        break
                break
            except Empty:
                continue
        comm_id = uuid.uuid4().hex
        content = {"comm_id": comm_id, "target_name": SNAPSHOT_TARGET, "data": {"model_ids": model_ids}}
        client.shell_channel.send(client.session.msg("comm_open", content))
        while True:
            message = await client.get_iopub_msg()
            if message["content"].get("comm_id") != comm_id:
                continue
            if message["msg_type"] == "comm_msg":
                found = message["content"].get("data", {}).get("snapshots", {})
                return found if isinstance(found, dict) else {}
            if message["msg_type"] == "comm_close":  # no such target here: nothing of ours is live
                return {}
    finally:
        client.stop_channels()


async def _maybe_await(value: Awaitable[Any] | Any) -> Any:
    return await value if inspect.isawaitable(value) else value
