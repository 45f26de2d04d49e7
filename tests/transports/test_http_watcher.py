"""The Streamable HTTP server's disconnect watcher (FirstActivity.watch): one task per server finds the
POSTs whose client left before their first event. An error never leaves the server without it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mcp_notebook.transports._http_sessions import FirstActivity, _Stream
from mcp_notebook.transports.http_server import StreamableHTTPServer
from tests.transports.test_http_per_request import _hang_up_on, _hanging, make_server
from tests.waiting import WAIT, wait_until_async

HTTP_LOG = "mcp_notebook.http"


async def test_an_error_checking_one_client_does_not_stop_the_watcher(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``gone(request)`` raising once is logged, and the watcher goes on: a client that hung up is still
    found and its tool cancelled (before, the watcher died with the error and nobody was found again)."""
    server = make_server()
    started, cancelled = _hanging(server)
    http = StreamableHTTPServer(server)
    real = http._first._gone
    calls = 0

    def gone_raising_once(request: Any) -> bool:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("the check failed")
        return real(request)

    http._first._gone = gone_raising_once
    with caplog.at_level(logging.ERROR, logger=HTTP_LOG):
        await _hang_up_on(server, http, started, cancelled)
    assert calls > 1
    failures = [r for r in caplog.records if "the watcher goes on" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is not None


async def test_a_request_whose_check_always_fails_is_logged_once_and_left_waiting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request whose check keeps raising stays waiting (taken for gone, a client still there would lose
    its answer) and is logged once, not every round; the others are still checked and found."""
    broken, left = object(), object()
    checked: list[object] = []

    def gone(request: object) -> bool:
        checked.append(request)
        if request is broken:
            raise RuntimeError("the check failed")
        return request is left

    async def rounds() -> bool:
        return checked.count(broken) >= 5

    first = FirstActivity(gone, 0.01)
    watcher = asyncio.get_running_loop().create_task(first.watch())
    kept = _Stream("s1", None, json_mode=True, buffer=1)
    abandoned = _Stream("s2", None, json_mode=True, buffer=1)
    try:
        with caplog.at_level(logging.ERROR, logger=HTTP_LOG):
            await asyncio.sleep(0)  # the watcher starts and sleeps: nothing waits
            first.hold(broken, kept)
            first.hold(left, abandoned)
            await asyncio.wait_for(abandoned.activity.wait(), WAIT)
            await wait_until_async(rounds, "five rounds checking the broken request")
        assert abandoned.abandoned and not kept.abandoned and not kept.activity.is_set()
        assert not watcher.done()
        failures = [r for r in caplog.records if "the watcher goes on" in r.getMessage()]
        assert len(failures) == 1
    finally:
        watcher.cancel()
        await asyncio.wait([watcher])


async def test_a_watcher_that_ends_unexpectedly_is_started_again(caplog: pytest.LogCaptureFixture) -> None:
    """If the watcher task itself fails, the server says so (an error with its traceback) and starts it
    again: a client that hangs up afterwards is still found (before, it never was)."""
    server = make_server()
    started, cancelled = _hanging(server)
    http = StreamableHTTPServer(server)
    real_watch = http._first.watch
    runs = 0

    async def watch_failing_once() -> None:
        nonlocal runs
        runs += 1
        if runs == 1:
            raise RuntimeError("the watcher broke")
        await real_watch()

    http._first.watch = watch_failing_once  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger=HTTP_LOG):
        await _hang_up_on(server, http, started, cancelled)
    assert runs == 2
    restarted = [r for r in caplog.records if "starting it again" in r.getMessage()]
    assert len(restarted) == 1 and restarted[0].levelno == logging.ERROR and restarted[0].exc_info


def test_stop_leaves_no_task_pending_and_a_cancelled_watcher_is_not_restarted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """stop() waits for the watcher and the sweeper it cancels: closing the loop right after destroys no
    pending task. A watcher cancelled while the server runs (the loop ending) is reported, not restarted
    (a task made then would be destroyed pending)."""
    loop = asyncio.new_event_loop()
    try:
        http = StreamableHTTPServer(make_server())
        loop.run_until_complete(http.start("127.0.0.1", 0))
        watcher = http._watcher
        assert watcher is not None
        with caplog.at_level(logging.WARNING, logger=HTTP_LOG):
            watcher.cancel()
            loop.run_until_complete(asyncio.wait([watcher]))
        assert http._watcher is watcher  # not restarted
        assert any("cancelled while the server runs" in r.getMessage() for r in caplog.records)
        http._watcher = None
        http._start_watcher(loop)
        loop.run_until_complete(http.stop())
        assert [task for task in asyncio.all_tasks(loop) if not task.done()] == []
    finally:
        loop.close()
