"""Running an HTTP edge (the MCP server's streamable HTTP, the web UI) under uvicorn.

The socket is bound here before anything slow starts (the model, the first sync), so an address
that cannot be served is one line naming it and the fix, at once, not a server's traceback.
"""

from __future__ import annotations

import errno
import hmac
import os
import socket
from collections.abc import Callable
from typing import Any, Literal

from ..errors import AddressError


def same_secret(given: str | bytes, expected: str) -> bool:
    """A token compared in constant time, as bytes (a token in any characters is just wrong,
    never an error)."""
    raw = given if isinstance(given, bytes) else given.encode("utf-8", "replace")
    return hmac.compare_digest(raw.strip(), expected.encode("utf-8"))


def bearer(authorization: str | bytes) -> bytes | None:
    """The credential of an ``Authorization: Bearer <token>`` header (the scheme is
    case-insensitive, RFC 9110 11.1), or None."""
    raw = authorization if isinstance(authorization, bytes) else authorization.encode("latin-1", "replace")
    scheme, _, credential = raw.strip().partition(b" ")
    return credential.strip() if scheme.lower() == b"bearer" else None


def listen(host: str, port: int, *, option: str) -> socket.socket:
    """A socket bound to ``host:port`` (port 0: any free one). ``option`` is how the user
    chooses another (``--port``, ``--http HOST:PORT``), for the message."""
    if not 0 <= port <= 65535:
        raise AddressError(f"port {port} does not exist: ports are 0-65535 (0 picks a free one); give another "
                           f"with {option}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise AddressError(f"cannot serve on {host!r}: {getattr(exc, 'strerror', None) or exc} (give an address "
                           "of this machine, e.g. 127.0.0.1)") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart reuses the port at once
        sock.bind(address)
        sock.set_inheritable(True)
    except OSError as exc:
        sock.close()
        shown = f"[{host}]" if ":" in host else host
        if exc.errno == errno.EADDRINUSE:
            raise AddressError(f"port {port} on {shown} is in use{_holder_text(port, option)}") from None
        if exc.errno == errno.EACCES:
            raise AddressError(f"port {port} on {shown} needs privileges (ports below 1024 are the system's); "
                               f"give another with {option}") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise AddressError(f"{shown} is not an address of this machine; give one it has (127.0.0.1 serves this "
                               "machine only)") from None
        raise AddressError(f"cannot serve on {shown}:{port}: {exc.strerror or exc}") from None
    except OverflowError:
        sock.close()
        raise AddressError(f"port {port} does not exist: ports are 0-65535; give another with {option}") from None
    return sock


def _holder_text(port: int, option: str) -> str:
    holder = port_holder(port)
    if holder is None:
        return f"; stop what serves there, or give another port with {option}"
    pid, command = holder
    if "mnemoclaw" in command:
        return (f" by mnemoclaw (pid {pid}: {command[:120]}); use that one, stop it (kill {pid}), or give another "
                f"port with {option}")
    return f" by another program (pid {pid}: {command[:80]}); give another port with {option}"


def port_holder(port: int) -> tuple[int, str] | None:
    """The process listening on TCP ``port`` and its command line, when this user may see it
    (Linux: /proc's socket tables and each process's file descriptors); else None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                next(fh, None)
                for row in fh:
                    fields = row.split()
                    if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(f"socket:[{fields[9]}]")
        except (OSError, ValueError, IndexError):
            continue
    if not inodes:
        return None
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if not any(os.readlink(f"/proc/{pid}/fd/{fd}") in inodes for fd in fds):
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
        except OSError:
            continue
        return int(pid), " ".join(_command(argv).split())
    return None


def _command(argv: list[str]) -> str:
    """A command line as a person would type it (``python -m mnemoclaw.cli ui`` is ``mnemoclaw ui``)."""
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == "mnemoclaw" or arg in ("mnemoclaw", "mnemoclaw.cli"):
            return " ".join(["mnemoclaw", *argv[i + 1:]])
    return " ".join(argv)


def serve(app: Any, sock: socket.socket, *, on_bound: Callable[[str, int], None] | None = None,
          before: Callable[[], None] | None = None, lifespan: Literal["auto", "on", "off"] = "auto") -> None:
    """Serve ``app`` on the bound ``sock`` until interrupted; ``before`` runs first, ``on_bound``
    gets the printable host and the port (port 0 picked one) once the server listens."""
    import anyio
    import uvicorn

    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan=lifespan)
    server = uvicorn.Server(config)

    async def main() -> None:
        if before:
            before()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            while not server.started:
                if server.should_exit:
                    return
                await anyio.sleep(0.05)
            if on_bound:
                on_bound(host if ":" not in host else f"[{host}]", port)

    anyio.run(main)
