"""transports/_heap.py: each transport (HTTP client and server, stdio client and server) frees one block
larger than asyncio's 256 KiB reads when it starts, once per process, so that glibc serves those reads from
the heap instead of mapping memory for each (an mmap, an mremap and a munmap per message, in a process that
happened not to free such a block itself)."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys
from collections.abc import Iterator

import pytest

from mcp_notebook.transports import _heap
from mcp_notebook.transports.http_client import StreamableHTTPClientTransport
from mcp_notebook.transports.http_server import StreamableHTTPServer
from mcp_notebook.transports.stdio import StdioClientTransport, StdioServerTransport
from tests.waiting import WAIT

READ = 256 * 1024  # asyncio's read size (selector_events and unix_events: max_size)

# In a fresh process: whether glibc maps memory for a block the size of a read (mallinfo2's count of mapped
# blocks, before and after; the block is shrunk before it is freed, as asyncio's read is, so that measuring
# does not raise the threshold itself), then again after reads_from_the_heap(). _heap.py is loaded from its
# file alone: importing (and perhaps compiling) the package first could free a large block by luck.
PROBE = f"""
import ctypes, importlib.util, sys
spec = importlib.util.spec_from_file_location("heap", sys.argv[1])
heap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heap)
reads_from_the_heap = heap.reads_from_the_heap

libc = ctypes.CDLL(None)
libc.malloc.restype = libc.realloc.restype = ctypes.c_void_p
libc.malloc.argtypes, libc.realloc.argtypes = [ctypes.c_size_t], [ctypes.c_void_p, ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc.mallinfo2.restype = Info

def mapped():
    before = libc.mallinfo2().hblks
    block = libc.malloc({READ})
    mapped = libc.mallinfo2().hblks - before
    libc.free(libc.realloc(block, 16))
    return mapped

first = mapped()
reads_from_the_heap()
print(first, mapped())
"""


def _glibc() -> bool:
    return sys.platform.startswith("linux") and "libc.so" in (ctypes.util.find_library("c") or "")


@pytest.mark.skipif(not _glibc(), reason="glibc's mmap threshold: Linux with glibc only")
def test_a_read_sized_block_comes_from_the_heap_once_primed() -> None:
    command = [sys.executable, "-I", "-S", "-c", PROBE, _heap.__file__]
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"], done.stdout  # mapped before; from the heap after


@pytest.fixture
def primed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The sizes of the blocks reads_from_the_heap made, in a process where it has not run yet."""
    made: list[int] = []
    monkeypatch.setattr(_heap, "_done", False)
    monkeypatch.setattr(_heap, "bytes", made.append, raising=False)
    yield made


async def test_the_http_client_primes_once(primed: list[int]) -> None:
    for _ in range(2):
        transport = await StreamableHTTPClientTransport.start("http://127.0.0.1:9/")
        await transport.aclose()
    assert primed == [1 << 20] and primed[0] > READ


async def test_the_http_server_primes_once(primed: list[int]) -> None:
    from mcp_notebook import Server

    for _ in range(2):
        http = StreamableHTTPServer(Server("heap"))
        await http.start("127.0.0.1", 0)
        await http.stop()
    assert primed == [1 << 20]


async def test_the_stdio_client_primes_once(primed: list[int]) -> None:
    for _ in range(2):
        transport = await StdioClientTransport.start([sys.executable, "-c", "pass"])
        await transport.aclose()
    assert primed == [1 << 20]


def test_the_stdio_server_primes_once(primed: list[int]) -> None:
    StdioServerTransport()
    StdioServerTransport()
    assert primed == [1 << 20]
