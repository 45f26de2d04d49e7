"""Socket and pipe reads without a memory mapping each: the one allocator setting our transports make (the
HTTP client and server, the stdio client and server, each when it starts).

asyncio reads a socket (and a pipe) into a new bytes object of ``max_size`` (256 KiB), then shrinks it to what
came. glibc serves an allocation that large with mmap while its threshold is at its default (128 KiB), so
every read of a small answer cost an mmap, an mremap, a munmap and a page fault: strace of one client, 2,000
modern calls: 2,718 mmap, 2,203 mremap, 2,476 munmap; ~30 us of CPU per call. glibc raises the threshold by
itself once a block above it is freed (M_MMAP_THRESHOLD, "dynamic"), which some processes happened to do and
others not: the same client measured 15 or 45 us of system time per call from one process to the next.
Freeing one 1 MiB block at start makes every process the lucky one: the reads then come from the heap (no
system call); the threshold goes where glibc would have put it anyway. Nothing else changes: a process that
set the threshold itself (``MALLOC_MMAP_THRESHOLD_``, ``mallopt``) keeps it, and other allocators ignore this.
(``bench/peers.py``'s HTTP server showed no mmap per request: its start already freed such a block. Over
stdio, 2,200 calls of a client and ``bench/peers.py``'s stdio server: 2,203 mremap in the client's loop thread
and 2,202 in the server's in two runs of four, in one of them only, none in the fourth.)
"""

from __future__ import annotations

__all__ = ["reads_from_the_heap"]

_PRIMING = 1 << 20  # above asyncio's 256 KiB reads, within glibc's dynamic range (at most 32 MiB)
_done = False


def reads_from_the_heap() -> None:
    """Once per process: allocate and free one block larger than a socket read (see the module)."""
    global _done
    if not _done:
        _done = True
        bytes(_PRIMING)  # freed at once: glibc raises its mmap threshold above it
