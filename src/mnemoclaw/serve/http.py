"""Running an HTTP edge (the MCP server's streamable HTTP, the web UI) under uvicorn, and the
one guard both put before their app.

The socket is bound here before anything slow starts (the model, the first sync), so an address
that cannot be served is one line naming it and the fix, at once, not a server's traceback.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import os
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode

from ..errors import AddressError, ConfigError

Scope = MutableMapping[str, Any]  # the ASGI types, as Starlette states them
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_token(host: str, token: str | None, *, variable: str) -> None:
    """Refuse to serve memory off loopback without a token (``variable``: the environment
    variable that can give it)."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"refusing to serve memory on {host} without a token: anyone who can reach it could read "
                          f"your notes. Pass --token (or set {variable}), or bind to 127.0.0.1")


@dataclass(frozen=True)
class Refusal:
    """How a guard answers a request it turns away."""

    status: int
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...] = ((b"content-type", b"text/plain; charset=utf-8"),)

    @classmethod
    def plain(cls, status: int, text: str) -> Refusal:
        return cls(status, text.encode("utf-8"))

    async def send(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": list(self.headers)})
        await send({"type": "http.response.body", "body": self.body})


class TokenGuard:
    """ASGI middleware: the checks every HTTP request passes before the app sees it.

    With ``served_at`` on loopback, the Host header must name loopback (at that port, unless 0),
    so a page on another site cannot reach the app through DNS rebinding; without it the app
    checks the Host itself (the MCP SDK does). With a ``token``, the request must carry it as
    ``Authorization: Bearer <token>`` or, for an app given a ``cookie``, in that cookie, which a
    link with ``?token=<token>`` sets once (the link then leads to itself without the token, so
    the address bar and the history do not keep it); else ``refusal`` answers.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, refusal: Refusal, cookie: str | None = None,
                 served_at: tuple[str, int] | None = None):
        self.app = app
        self.token = token
        self.refusal = refusal
        self.cookie = cookie
        self.check_host = served_at is not None and is_loopback(served_at[0])  # off loopback the token guards
        self.port = served_at[1] if served_at is not None else 0

    def host_allowed(self, value: str) -> bool:
        name, _, port = value.rpartition(":") if not value.endswith("]") else (value, "", "")
        if not name:
            name, port = value, ""
        if port and self.port and port != str(self.port):
            return False
        return name.strip("[]").lower() in ("127.0.0.1", "localhost", "::1")

    def carries_token(self, headers: dict[str, str], token: str) -> bool:
        credential = bearer(headers.get("authorization", ""))
        if credential is not None and same_secret(credential, token):
            return True
        if self.cookie is None:
            return False
        cookies = dict(part.strip().split("=", 1) for part in headers.get("cookie", "").split(";") if "=" in part)
        return same_secret(cookies.get(self.cookie, ""), token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        if self.check_host and not self.host_allowed(headers.get("host", "")):
            await Refusal.plain(421, "this app answers only to 127.0.0.1, localhost or [::1] (Host header "
                                f"{headers.get('host', '')!r}); open it at its loopback address").send(send)
            return
        if self.token:
            if self.cookie is not None and await self._took_link(scope, send, self.cookie, self.token):
                return
            if not self.carries_token(headers, self.token):
                await self.refusal.send(send)
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _took_link(scope: Scope, send: Send, cookie: str, token: str) -> bool:
        """A request with the right ``?token=`` is answered with the cookie and a redirect."""
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        given = dict(query).get("token")
        if given is None or not same_secret(given, token):
            return False
        rest = urlencode([(k, v) for k, v in query if k != "token"])
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", (scope["path"] + ("?" + rest if rest else "")).encode("latin-1")),
            (b"set-cookie", f"{cookie}={token}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1")),
        ]})
        await send({"type": "http.response.body", "body": b""})
        return True


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
