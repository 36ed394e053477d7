"""Inside a sandbox without a network: the agent's loopback door to reins' egress proxy.

Run inside the sandbox, before the program, as ``python -I -S bridge.py SOCKET [HOST:PORT…]
-- PROGRAM ARGS…`` (the standard library only: no site, no reins). It listens on the
sandbox's own loopback and carries each connection to the proxy's Unix socket
(:mod:`reins.sandbox.egress`), which decides where it may go:

- a proxy port, offered to the program as ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``: the
  bytes go to the proxy as they are;
- each allowed destination on the host's loopback (a model server on ``127.0.0.1:8080``), at
  the same port inside, for programs that ignore proxy variables: each connection is a
  ``CONNECT`` to that destination.

Then it runs the program with those variables, passes it the signals it gets, and ends as the
program ended (its exit code, or the same signal). Nothing here is a wall: the program may
talk to the socket itself, and the proxy refuses what the quest did not allow.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading

CHUNK = 256 * 1024
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy")  # fmt: skip


def main(args: list[str]) -> None:
    split = args.index("--")
    path, forwards, program = args[0], args[1:split], args[split + 1 :]
    proxy = _listen("127.0.0.1", 0)
    _serve(proxy, path, None)
    for written in forwards:
        host, _, port = written.rpartition(":")
        for inside in ("127.0.0.1", "::1"):
            with contextlib.suppress(OSError):  # no IPv6 loopback here, say
                _serve(_listen(inside, int(port)), path, f"{host}:{port}")
    url = f"http://127.0.0.1:{proxy.getsockname()[1]}"
    env = dict(os.environ)
    env.update(dict.fromkeys(PROXY_VARIABLES, url))
    for name in ("NO_PROXY", "no_proxy"):
        env.pop(name, None)
    try:
        child = subprocess.Popen(program, env=env)
    except OSError as exc:
        sys.stderr.write(f"cannot start {program[0]}: {exc.strerror or exc}\n")
        os._exit(127)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda got, _frame: child.send_signal(got))
    code = child.wait()
    if code < 0:  # end as it ended: by the same signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(64)
    return listener


def _serve(listener: socket.socket, path: str, destination: str | None) -> None:
    def accept() -> None:
        while True:
            client, _ = listener.accept()
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no wait on small writes
            threading.Thread(target=_carry, args=(client, path, destination), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def _carry(client: socket.socket, path: str, destination: str | None) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
        if destination is not None and not _tunnel(upstream, client, destination):
            return
        back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
        back.start()
        _copy(client, upstream)
        back.join()
    except OSError:
        pass
    finally:
        client.close()
        upstream.close()


def _tunnel(upstream: socket.socket, client: socket.socket, destination: str) -> bool:
    """Ask the proxy for ``destination``: True once it said yes, else its answer passed on."""
    upstream.sendall(f"CONNECT {destination} HTTP/1.1\r\nHost: {destination}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = upstream.recv(4096)
        if not data:
            return False
        head += data
    answer, _, rest = head.partition(b"\r\n\r\n")
    if answer.split(b" ", 2)[1:2] == [b"200"]:
        if rest:
            client.sendall(rest)
        return True
    client.sendall(head)  # the proxy's refusal, for a program that reads it
    return False


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


if __name__ == "__main__":
    main(sys.argv[1:])
