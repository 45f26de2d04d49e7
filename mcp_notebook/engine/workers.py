"""The worker threads that synchronous tools, resources and prompts run in (unless the notebook's kernel
thread runs them): :func:`run_in_worker`, the default ``Server.run_sync``.

What ``asyncio.to_thread`` does, for less: a call is one tuple handed to an idle worker (woken by a byte
on its own pipe, see :class:`_Workers`), where ``to_thread`` goes through the loop's ``ThreadPoolExecutor`` (a
``concurrent.futures.Future`` with its condition, a work item, the executor's locks and semaphore) and
``wrap_future``'s chaining of two futures. The answer goes back through the loop's own inbox (a deque and a
pipe the loop reads), not ``call_soon_threadsafe`` (a Handle and a context copy per answer, and two
reads of the loop's self-pipe per wake-up); a loop that cannot watch one (Windows' proactor loop) gets
``call_soon_threadsafe``. ``bench/hop.py`` measures the hop against ``to_thread`` and anyio's.

As with ``to_thread``: the caller's context variables are seen by the function, its exception is raised
to the awaiting caller, a caller cancelled before a worker picks the call up means it never runs (once it
runs it finishes; its result is dropped), and calls run concurrently, on as many threads as are busy, up
to :data:`MAX_WORKERS` per event loop (then that loop's calls wait their turn): the bound of each loop's
default executor, so a sync tool that waits for a sync tool served on another loop (``connect()``'s thread)
never waits for a worker its own loop's calls hold. A job waiting in :meth:`Runtime.run
<mcp_notebook.engine.runtime.Runtime.run>` (a sync tool calling a tool through the sync client) does not count
against its loop's bound while it waits (:func:`park_here`): the call it waits for may be served on its own
loop (two in-process servers under ``connect()``). The threads are shared by every loop, and unlike the
default executor's they are daemons that nothing joins: a tool blocked forever holds up neither
``asyncio.run``'s end nor interpreter exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import socket
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_WORKERS", "run_in_worker", "to_worker"]

T = TypeVar("T")
MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)  # the default executor's own bound
_PIPES = os.name == "posix"  # a selector loop elsewhere (Windows) watches sockets only

QUICK = 100e-6  # s: a function whose last call took less may wait for a busy worker rather than wake one
# s: how often a loop with calls waiting behind quick jobs checks that those jobs end; not under the switch
# interval (5 ms), which a worker may wait to get the interpreter lock while the loop holds it
WATCH = max(0.001, sys.getswitchinterval())

# (context, function, the loop's inbox, the future, its loop, the function it calls: None if unknown)
_Job = tuple[
    contextvars.Context,
    Callable[[], Any],
    "_Inbox | None",
    "asyncio.Future[Any]",
    asyncio.AbstractEventLoop,
    Any,
]
Loop = asyncio.AbstractEventLoop


class _Worker:
    """One worker thread's end of its wake-ups: it sleeps in a read of its own pipe until a job is put in
    ``job`` and a byte written. While it has a job: its ``loop`` and function (``fn``), and ``quick``, if
    the pool expects it to end soon (see ``_Workers``); ``runs`` counts the jobs it took, ``seen`` is that
    count when its loop's watch last looked."""

    __slots__ = ("fn", "job", "loop", "quick", "read", "runs", "seen", "write")

    def __init__(self) -> None:
        self.job: _Job | None = None
        self.loop: Loop | None = None
        self.fn: Any = None
        self.quick = False
        self.runs = self.seen = 0
        self.read, self.write = os.pipe()

    def close(self) -> None:
        os.close(self.read)
        os.close(self.write)


class _Workers:
    """Idle workers wait in a stack, each on its own pipe; a loop's jobs wait in a queue while it has
    :data:`MAX_WORKERS` of them running (the bound is per loop, as each loop's default executor's: one bound
    for all would let sync tools waiting for calls served on another loop take every worker). A pipe, not a
    lock or a queue's condition: a write to a pipe is a *synchronous* wake-up for the kernel (the writer will
    sleep soon), so the woken worker is queued on the loop's own CPU and runs when the loop goes to wait for
    the answer, instead of waking an idle CPU, or preempting the loop and finding the interpreter lock still
    held (measured: 4.5 -> 2.2 context switches per hop).

    A loop's jobs also wait, so that a burst of short calls does not wake a thread per call (each then
    fighting the others and the loop for the interpreter lock), while a worker runs a *quick* job of that
    loop: one of a function whose last call took under :data:`QUICK` (a sync tool, known by the function a
    ``functools.partial`` wraps). That worker takes the loop's waiting jobs one after the other. A function
    not seen yet, or slow last time, gets a worker of its own at once, so a tool that blocks never holds up
    another call; one that was quick and now blocks is caught by the loop's watch: every :data:`WATCH` while
    jobs wait behind quick ones, a quick job still running since the last look is no longer counted quick
    (nor its function), and the waiting jobs go to workers of their own, up to the bound."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []  # the most recently idle last: it is taken first
        self._busy: dict[Loop, int] = {}  # a loop's jobs running (none: no entry)
        self._quick_busy: dict[Loop, int] = {}  # of those, the quick ones (none: no entry)
        self._waiting: dict[Loop, deque[_Job]] = {}  # a loop's jobs past its bound or behind quick ones
        self._workers: list[_Worker] = []
        self._last: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()  # s per function

    def submit(self, job: _Job) -> None:
        _, _, inbox, _, loop, fn = job
        worker = watch = None
        with self._lock:
            if self._busy.get(loop, 0) < MAX_WORKERS and not (
                inbox is not None and self._quick_busy.get(loop) and self._is_quick(fn)
            ):
                if self._idle:  # _assign's usual case, inline (one frame less per call)
                    worker = self._idle.pop()
                    self._take(worker, job, loop)
                else:
                    worker = self._assign(job, loop)
            else:
                waiting = self._waiting.get(loop)
                if waiting is None:
                    waiting = self._waiting[loop] = deque()
                waiting.append(job)
                if inbox is not None and self._quick_busy.get(loop) and not inbox.watched:
                    inbox.watched, watch = True, inbox
        if worker is not None:
            if getattr(loop, "_ready", None):  # more callbacks before the loop waits: see _Wake
                loop.call_soon(_Wake(self._wake, worker))
            else:
                self._wake(worker)
        if watch is not None:  # in an empty context: not the caller's (its request's variables)
            loop.call_later(WATCH, self._watch, watch, loop, context=contextvars.Context())

    def _is_quick(self, fn: Any) -> bool:
        try:
            return fn is not None and self._last.get(fn, QUICK) < QUICK
        except TypeError:  # not a function that can be referred to weakly: never counted quick
            return False

    def _assign(self, job: _Job, loop: Loop) -> _Worker | None:
        """(Under the lock, the loop under its bound.) The job to an idle worker (returned, to be woken), or
        to a new one (None)."""
        if self._idle:
            worker = self._idle.pop()
            self._take(worker, job, loop)
            return worker
        worker = _Worker()
        self._workers.append(worker)
        self._take(worker, job, loop)  # not the thread's argument: its Thread would hold the job for good
        name = f"mcp-notebook worker {len(self._workers)}"
        try:
            threading.Thread(target=self._work, args=(worker,), name=name, daemon=True).start()
        except BaseException:  # no thread to be had: the caller hears of it, nothing is counted
            self._workers.remove(worker)
            self._drop(worker, loop)
            worker.close()
            raise
        return None

    def _take(self, worker: _Worker, job: _Job, loop: Loop) -> None:
        fn = job[5]
        worker.job, worker.loop, worker.fn = job, loop, fn
        worker.runs += 1
        self._busy[loop] = self._busy.get(loop, 0) + 1
        try:  # _is_quick, inline
            quick = fn is not None and self._last.get(fn, QUICK) < QUICK
        except TypeError:  # not a function that can be referred to weakly: never counted quick
            quick = False
        worker.quick = quick
        if quick:
            self._quick_busy[loop] = self._quick_busy.get(loop, 0) + 1

    def _drop(self, worker: _Worker, loop: Loop, busy: int = 1) -> None:
        """(Under the lock.) The worker's job is no longer counted running (busy=0: no longer quick only)."""
        if worker.quick:
            worker.quick = False
            _count_down(self._quick_busy, loop)
        if busy:
            worker.loop = worker.fn = None
            _count_down(self._busy, loop)

    @staticmethod
    def _wake(worker: _Worker) -> None:
        os.write(worker.write, b"\0")

    def _work(self, worker: _Worker) -> None:
        _here.worker = worker
        while True:
            job, worker.job = worker.job, None
            while job is not None:
                job = _run(job, worker, self._next)  # its locals (the result, the loop) go with it
            os.read(worker.read, 1)

    def _next(self, worker: _Worker, loop: Loop, fn: Any, took: float) -> _Job | None:
        """The worker's next job (the next waiting one of ``loop``, whose job it ran), or None once it is
        counted idle; ``fn`` took ``took`` s."""
        with self._lock:
            if fn is not None and (took < QUICK) != worker.quick:  # written only when it changes
                with contextlib.suppress(TypeError):
                    self._last[fn] = took
            if worker.quick:  # _drop(worker, loop), inline
                worker.quick = False
                _count_down(self._quick_busy, loop)
            worker.loop = worker.fn = None
            busy = self._busy[loop] - 1
            if busy:
                self._busy[loop] = busy
            else:
                del self._busy[loop]
            waiting = self._waiting.get(loop) if self._waiting else None  # (mostly none at all)
            if not waiting:
                self._idle.append(worker)
                return None
            self._take(worker, waiting.popleft(), loop)
            job, worker.job = worker.job, None
            self._spread(loop)  # its job not quick: the jobs behind it go to workers of their own
        return job

    def _spread(self, loop: Loop) -> None:
        """(Under the lock.) While the loop has jobs waiting and no quick job running, each goes to a worker
        as far as its bound allows (a worker that cannot be started leaves it waiting)."""
        waiting = self._waiting.get(loop)
        while waiting and not self._quick_busy.get(loop) and self._busy.get(loop, 0) < MAX_WORKERS:
            job = waiting.popleft()
            try:
                worker = self._assign(job, loop)
            except BaseException:  # no thread now: the job waits for a worker of its loop to finish
                waiting.appendleft(job)
                break
            if worker is not None:
                self._wake(worker)
        if not waiting:
            self._waiting.pop(loop, None)

    def _watch(self, inbox: _Inbox, loop: Loop) -> None:
        """On the loop, every :data:`WATCH` while its jobs wait behind quick ones: see the class."""
        with self._lock:
            for worker in self._workers:
                if worker.loop is not loop:
                    continue
                if worker.quick and worker.runs == worker.seen:  # the same job as at the last look
                    if worker.job is None:  # running, not just handed over: its function is slow now
                        with contextlib.suppress(TypeError):
                            self._last[worker.fn] = float("inf")  # (still running)
                    self._drop(worker, loop, busy=0)
                worker.seen = worker.runs
            self._spread(loop)
            inbox.watched = bool(self._waiting.get(loop)) and bool(self._quick_busy.get(loop))
        if inbox.watched and not inbox.closed:
            loop.call_later(WATCH, self._watch, inbox, loop, context=contextvars.Context())

    def park(self, worker: _Worker) -> Loop | None:
        """The worker's job waits for a call that may be served on its own loop (see :func:`park_here`): it no
        longer counts against that loop's bound (nor as quick), and jobs waiting for a worker get one. The
        loop it counted against (None: it has no job), for :meth:`unpark`."""
        with self._lock:
            loop = worker.loop
            if loop is None or loop not in self._busy:  # no job (or a pool from before a fork)
                return None
            if worker.quick:  # it blocks: not quick (as the watch finds a quick job still running)
                with contextlib.suppress(TypeError):
                    self._last[worker.fn] = float("inf")
            self._drop(worker, loop, busy=0)
            _count_down(self._busy, loop)
            self._spread(loop)
        return loop

    def unpark(self, loop: Loop | None) -> None:
        """The parked job runs on: counted against its loop's bound again (past it, while it runs)."""
        if loop is not None:
            with self._lock:
                self._busy[loop] = self._busy.get(loop, 0) + 1

    def after_fork(self) -> None:
        """In a forked child the threads are gone (their pipes, queue and lock with them), and a loop there
        makes its own inbox."""
        for worker in self._workers:
            worker.close()
        self.__init__()  # type: ignore[misc]
        _inboxes.clear()


class _Wake:
    """A worker's wake-up held until the callbacks ready on its loop have run (``_Workers.submit``): a read
    of several requests starts their handlers in one turn, their jobs wait behind this one (a quick
    function's), and one wake-up serves them all, where a wake-up per job had each fight the loop for the
    interpreter lock. If the loop is closed first, the worker is woken when this is dropped."""

    __slots__ = ("_wake", "_worker")

    def __init__(self, wake: Callable[[_Worker], None], worker: _Worker) -> None:
        self._wake = wake
        self._worker: _Worker | None = worker

    def __call__(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            with contextlib.suppress(OSError):  # (its pipe closed: a pool from before a fork)
                self._wake(worker)

    def __del__(self) -> None:
        self()


def _count_down(counts: dict[Loop, int], loop: Loop) -> None:
    left = counts[loop] - 1
    if left:
        counts[loop] = left
    else:
        del counts[loop]


def _run(
    job: _Job, worker: _Worker, next_job: Callable[[_Worker, Loop, Any, float], _Job | None]
) -> _Job | None:
    """Run one job; the worker's next job. The worker counts itself idle (or takes its next job) *before* it
    wakes the loop: once the loop is woken the two threads want the interpreter at once, and whatever the
    worker still does then (its bookkeeping) the loop waits for."""
    context, fn, inbox, future, loop, known = job
    if future.cancelled():  # read across threads: at worst a just-cancelled call still runs
        return next_job(worker, loop, None, 0.0)
    start = time.perf_counter()
    try:
        result = context.run(fn)
    except BaseException as exc:  # delivered to the caller, as to_thread does
        following = next_job(worker, loop, known, time.perf_counter() - start)
        _deliver(inbox, future, None, exc)
    else:
        following = next_job(worker, loop, known, time.perf_counter() - start)
        if inbox is not None:  # _deliver's usual case, inline
            inbox.put(future, result, None)
        else:
            _deliver(inbox, future, result, None)
    return following


def _deliver(inbox: _Inbox | None, future: asyncio.Future[Any], result: Any, exc: Any) -> None:
    if inbox is not None:
        inbox.put(future, result, exc)
        return
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits the answer any more
        future.get_loop().call_soon_threadsafe(_settle, future, result, exc)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)
    if type(future) is _Answer:
        future.resume()


# a callback held by an _Answer, with its context
_Waiter = tuple[Callable[["_Answer"], object], "contextvars.Context | None"]


class _Answer(asyncio.Future[Any]):
    """The future a caller of :func:`run_in_worker` awaits; on the loop, once settled, it resumes the task
    awaiting it at once instead of through ``call_soon`` (what a plain future does with its callbacks): a
    turn of the loop less per call (a ``select`` and a Handle), in the same turn that read the answer.

    Only its awaiting task's wake-up is held back from the future's own callbacks; anything else (a
    callback added once it is done, a cancel) goes the usual way. A task is resumed at once only where
    asyncio would have run it: on its loop with no task running (the inbox's reader, a ``call_soon``
    callback); otherwise (a nested loop runner with a task current) through ``call_soon``."""

    __slots__ = ("_waiting",)  # set by the first add_done_callback: no __init__ of its own, made as fast

    _waiting: list[_Waiter]

    def add_done_callback(
        self,
        fn: Callable[[_Answer], object],
        *,
        context: contextvars.Context | None = None,
    ) -> None:
        if self.done():
            super().add_done_callback(fn, context=context)
            return
        try:
            self._waiting.append((fn, context))
        except AttributeError:
            self._waiting = [(fn, context)]

    def remove_done_callback(self, fn: Callable[[_Answer], object]) -> int:
        waiting = self._take()
        kept = [(f, c) for f, c in waiting if f != fn]
        self._waiting = kept
        return len(waiting) - len(kept) + super().remove_done_callback(fn)

    def cancel(self, msg: Any | None = None) -> bool:
        if not super().cancel(msg=msg):
            return False
        self._schedule(self._take())
        return True

    def resume(self) -> None:
        """(On the loop, done.) Run the held callbacks now: see the class."""
        waiting = self._take()
        if asyncio.current_task(self.get_loop()) is not None:
            self._schedule(waiting)
            return
        for fn, context in waiting:
            if context is None:
                fn(self)
            else:
                context.run(fn, self)

    def _take(self) -> list[_Waiter]:
        try:
            waiting = self._waiting
        except AttributeError:
            return []
        self._waiting = []
        return waiting

    def _schedule(self, waiting: list[_Waiter]) -> None:
        loop = self.get_loop()
        for fn, context in waiting:
            loop.call_soon(fn, self, context=context)


class _Inbox:
    """One loop's answers from the workers: a deque, and a pipe (a socket pair where a loop can watch only
    sockets: Windows) whose read end the loop watches. A worker appends its answer and writes a byte, unless
    one is written that the loop has not read yet; the loop, woken, reads, then settles every answer there
    is: answers given while the loop is busy cost it one wake-up, and their workers no write each. Only the
    loop holds it (its reader's Handle), and a worker while it answers: ``_inboxes`` refers to it weakly, so
    an answer left for a closed loop (a call cancelled, still running when the loop closed) goes with the
    inbox once its worker lets go, and the future it holds lets the loop go. Its ends close when the loop is
    collected or the inbox is. (A try, not ``contextlib.suppress``, on this path.)"""

    __slots__ = ("__weakref__", "_answers", "_reader", "_sockets", "_woken", "_writer", "watched")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.watched = (
            False  # the pool watches this loop's jobs waiting behind quick ones (``_Workers._watch``)
        )
        self._woken = False  # a byte is written that the loop has not read yet: answers go without one
        self._answers: deque[tuple[asyncio.Future[Any], Any, Any]] = deque()
        self._sockets: tuple[socket.socket, socket.socket] | None = None
        if _PIPES:  # a byte through a pipe: 0.9-1.3 us written and read, through a socket pair 2.4-3.9
            self._reader, self._writer = os.pipe()
        else:
            self._sockets = socket.socketpair()
            self._reader, self._writer = (end.fileno() for end in self._sockets)
        try:
            for end in self._sockets or ():
                end.setblocking(False)
            if self._sockets is None:
                os.set_blocking(self._reader, False)
                os.set_blocking(self._writer, False)
            # in an empty context: the reader's Handle keeps its context for the loop's life, and the first
            # caller's (its request's variables) must not be held that long
            contextvars.Context().run(loop.add_reader, self._reader, self._settle_all)
        except BaseException:
            self.close()
            raise

    def put(self, future: asyncio.Future[Any], result: Any, exc: Any) -> None:
        self._answers.append((future, result, exc))
        if not self._woken:  # else the loop will settle this one with those before it
            self._wake()

    def _settle_all(self) -> None:
        try:  # the wake-up bytes; any left over only wake the loop once more
            if self._sockets is None:
                os.read(self._reader, 4096)
            else:
                self._sockets[0].recv(4096)
        except OSError:  # woken for nothing: an earlier wake-up settled its answer
            pass
        self._woken = False  # after the read (a byte written now wakes the loop again), before the answers
        answers = self._answers
        # Only the answers already there: a caller resumed here (see _Answer) may make another call, whose
        # answer can come before this loop ends; it waits for the next turn (its byte is written), so a
        # chain of quick calls never keeps the loop from its other callbacks and its I/O.
        left = len(answers)
        try:
            while left:
                left -= 1
                _settle(*answers.popleft())
        finally:
            if left:  # a resumed caller raised out of the loop (KeyboardInterrupt): the rest next turn
                self._wake()

    def _wake(self) -> None:
        self._woken = True
        try:
            if self._sockets is None:
                os.write(self._writer, b"\0")
            else:
                self._sockets[1].send(b"\0")
        except OSError:  # full (the loop is behind and will wake anyway) or closed (the loop is gone)
            return

    def close(self) -> None:
        """Close both ends (once: a second call closes nothing, the numbers may be another file's by then)."""
        if self._sockets is not None:
            for end in self._sockets:
                end.close()
        elif self._reader != -1:
            os.close(self._reader)
            os.close(self._writer)
        self._reader = self._writer = -1

    @property
    def closed(self) -> bool:
        return self._reader == -1

    def __del__(self) -> None:
        if hasattr(self, "_writer"):  # not when the pipe could not be made in __init__
            self.close()


def _no_inbox() -> None:
    """The entry of a loop that cannot watch a socket (stands where a weak reference to an inbox would)."""
    return None


_inboxes: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], Callable[[], _Inbox | None]]] = {}


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox | None:
    """The loop's inbox (made on its first call), or None for a loop that cannot watch a socket."""
    key = id(loop)
    known = _inboxes.get(key)
    if known is not None and known[0]() is loop:
        return known[1]()
    try:
        ref = weakref.ref(loop)
    except TypeError:  # a loop that cannot be referred to weakly: nothing to tie an inbox's sockets to
        return None
    try:
        inbox: _Inbox | None = _Inbox(loop)
    except NotImplementedError:  # the proactor loop has no add_reader: call_soon_threadsafe then
        inbox = None
    weak = _no_inbox if inbox is None else weakref.ref(inbox)
    _inboxes[key] = (ref, weak)
    weakref.finalize(loop, _forget, key, weak)
    return inbox


def _forget(key: int, weak: Callable[[], _Inbox | None]) -> None:
    known = _inboxes.get(key)
    if known is not None and known[1] is weak:
        del _inboxes[key]
    inbox = weak()
    if inbox is not None:
        inbox.close()


_workers = _Workers()


class _Here(threading.local):
    worker: _Worker | None = None  # in a worker thread: its _Worker (elsewhere, this default: no exception)


_here = _Here()


def park_here() -> Loop | None:
    """Before a worker's wait for a call that may be served on the worker's own loop: meanwhile its job is
    not counted against that loop's bound; give what this returns to :func:`unpark` once the wait ends.
    Elsewhere (not in a worker) nothing happens (None)."""
    worker = _here.worker
    return None if worker is None else _workers.park(worker)


def unpark(loop: Loop | None) -> None:
    """After the wait :func:`park_here` was called for (``loop``: what it returned)."""
    if loop is not None:
        _workers.unpark(loop)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers.after_fork)


async def run_in_worker(fn: Callable[[], T]) -> T:
    """``fn()`` in a worker thread, in a copy of the caller's context; its result or its exception."""
    return await to_worker(fn)


def to_worker(fn: Callable[[], T]) -> asyncio.Future[T]:
    """:func:`run_in_worker`, the future returned to await at once (``Server.run_sync``: no coroutine)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = _Answer(loop=loop)
    known = fn.func if type(fn) is functools.partial else None  # a tool's call: the tool's function
    _workers.submit((contextvars.copy_context(), fn, _inbox(loop), future, loop, known))
    return future
