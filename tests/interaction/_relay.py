"""A stdio server process that is only a pipe: ``python _relay.py HOST PORT``.

The interaction suite's stdio arm spawns this as the "server command". It connects to HOST:PORT, where the
test process serves a :class:`Server` it can observe, and copies bytes unchanged: stdin -> socket and
socket -> stdout. So the client really spawns a process and speaks newline-delimited JSON over its pipes
(spec: basic/transports#stdio), while the server runs in the test process.

How it ends, as a stdio server would:

* stdin EOF (the client closes our stdin: lifecycle#shutdown) -> half-close the socket, keep copying the
  server's last bytes to stdout until it closes too, exit 0;
* the socket ends first (the test's ``drop``: the server hung up) -> exit 1 with a line on stderr, which the
  client reports with the exit code.

Standard library only; no buffering (``os.read``/``os.write``), so nothing waits in the relay.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

CHUNK = 1 << 16
CONNECT_TIMEOUT = 5.0
EXIT_SERVER_HUNG_UP = 1
EXIT_CANNOT_CONNECT = 2


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _stdin_to_socket(sock: socket.socket, stdin_closed: threading.Event) -> None:
    try:
        while data := os.read(0, CHUNK):
            sock.sendall(data)
    except OSError:  # the socket is gone: the main thread sees it too and exits
        return
    stdin_closed.set()
    try:
        sock.shutdown(socket.SHUT_WR)  # the server reads EOF, as a stdio server reads it on stdin
    except OSError:
        return


def main(host: str, port: int) -> int:
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        print(f"relay: cannot connect to {host}:{port}: {exc}", file=sys.stderr, flush=True)
        return EXIT_CANNOT_CONNECT
    sock.settimeout(None)
    # Without this, Nagle holds each small message until the previous one is ACKed (~40 ms delayed ACK).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stdin_closed = threading.Event()
    # Daemon: a read blocked on stdin must not keep the process alive once the server has hung up.
    threading.Thread(target=_stdin_to_socket, args=(sock, stdin_closed), daemon=True).start()
    with sock:
        try:
            while data := sock.recv(CHUNK):
                _write_all(1, data)
        except OSError as exc:  # ECONNRESET from an aborted socket; EPIPE when the client stopped reading
            reason = repr(exc)
        else:
            reason = "EOF"
    if stdin_closed.is_set():
        return 0
    print(f"relay: the server hung up ({reason})", file=sys.stderr, flush=True)
    return EXIT_SERVER_HUNG_UP


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
