"""The serving side of the socket fast path: a long-running process answering a command line
that asks it (what that means, who is answered and how a caller falls back:
``nearby_client.py``, which also holds the wire).

The server knows no command and no option: it answers from a command table the command line
fills (``cli/index.py``), a handler per command name. A handler reads a ``Call`` (the caller's
argv, working directory and stdin), asks it for the memory of the settings that argv names (the
server's own, or ``Declined``: the caller runs on its own) and writes through its ``echo``.
"""

from __future__ import annotations

import os
import stat
import time

from .. import __version__

# the client's names, re-exported: the fast path's tests reach both sides through this module
from .nearby_client import (
    ACK_TIMEOUT,
    ALIVE,
    BEAT,
    DEFAULT_STATE_DIR,
    ENV_STATE_DIR,
    FOLDER,
    PROTOCOL,
    RECORD,
    REPLY_TIMEOUT,
    REQUEST_TIMEOUT,
    SUN_PATH_MAX,
    Asked,
    _remove,
    _socket_module,
    ask,
    env_seen,
    read_reply,
    reply_bytes,
)

TYPE_CHECKING = False  # importing this module is on the client's path (tests/serve/test_nearby.py): no typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..api import Memory
    from ..config import Settings

    Handler = Callable[["Call"], int]  # one command answered: its exit code

__all__ = ["ACK_TIMEOUT", "ALIVE", "DEFAULT_STATE_DIR", "ENV_STATE_DIR", "FOLDER", "PROTOCOL", "RECORD",
           "SUN_PATH_MAX", "Asked", "Call", "Commands", "Declined", "Server", "ask", "fingerprint", "read_reply",
           "reply_bytes", "serving", "socket_path", "_socket_module"]


# -- the command table: what a server answers, filled by the command line ---------------------
class Declined(Exception):
    """This server does not answer the call (a usage error, other settings): the caller runs the
    command on its own, and says what it says."""


class Call:
    """One caller's command, as a handler answers it."""

    def __init__(self, argv: list[str], cwd: str, stdin: str | None, memory_for: Callable[[Settings], Memory]):
        self.argv = argv  # the command line after ``mnemoclaw``
        self.cwd = cwd  # the caller's working directory: what its relative paths are relative to
        self.stdin = stdin  # what the caller read from its stdin and sent (a hook's JSON, ``-``), or None
        self.out: list[str] = []
        self.err: list[str] = []
        self._memory_for = memory_for

    def echo(self, message: Any = "", file: Any = None, nl: bool = True, err: bool = False, color: Any = None) -> None:
        """``click.echo``'s signature, writing into the reply instead of this process's stdout or stderr."""
        (self.err if err else self.out).append(f"{message}\n" if nl else str(message))

    def memory(self, settings: Settings) -> Memory:
        """The server's memory, if ``settings`` (what the caller's command line resolves to) are
        exactly the ones it serves; else ``Declined``."""
        return self._memory_for(settings)


class Commands:
    """A serving process's command table: a handler per command name. The command line fills it,
    and says which command an argv names: only it knows which of its options take a value."""

    def __init__(self, name_of: Callable[[list[str]], str | None], handlers: Mapping[str, Handler]):
        self.name_of = name_of
        self.handlers = dict(handlers)


NO_COMMANDS = Commands(lambda argv: None, {})  # answers no command; still acknowledges callers, and declines


# -- the server: a long-running process answering -------------------------------------------
def _private_folder(path: str) -> str | None:
    """``path`` as a folder only this user can enter, or why it cannot be one."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot make {path} ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return f"{path} is not a folder of this user's"
    if st.st_mode & 0o077:
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            return f"{path} is open to other users and cannot be closed ({exc.strerror or exc})"
    return None


def socket_path(state_dir: str, pid: int) -> str:
    """``STATE_DIR/serving/<pid>.sock``, or, where that path is too long for a Unix socket, one
    in this user's own folder under the temporary directory."""
    path = os.path.join(state_dir, FOLDER, f"{pid}.sock")
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        return path
    import hashlib
    import tempfile

    tag = hashlib.sha256(os.fsencode(state_dir)).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"mnemoclaw-{os.getuid()}", f"{tag}-{pid}.sock")


def fingerprint(settings: Settings) -> str:
    """What decides every answer: two settings with the same fingerprint answer alike."""
    import json

    s = settings
    return json.dumps([s.agent_id, str(s.workspace), str(s.state_dir), str(s.config_path), s.memory_search,
                       s.memory, str(s.openclaw_dir), s.env_pg_url, s.host], sort_keys=True, default=str)


class _Caller:
    """One accepted connection. Its signs of life and its reply go through one lock, so they never
    interleave, and nothing is written after the reply."""

    def __init__(self, conn: Any):
        import threading

        self.conn = conn
        self.lock = threading.Lock()
        self.done = False
        self.beat_at = 0.0

    def beat(self) -> None:
        if not self.lock.acquire(blocking=False):
            return  # the reply is being written: that is life enough
        try:
            if not self.done:
                self.conn.sendall(ALIVE)
                self.beat_at = time.monotonic()
        except OSError:  # the caller went away (gave up, or its deadline passed); whoever replies closes
            self.done = True
        finally:
            self.lock.release()

    def reply(self, data: bytes | None) -> None:
        """Send ``data`` (None: nothing, the caller runs on its own) and close."""
        with self.lock:
            try:
                if data is not None and not self.done:
                    self.conn.sendall(data)
            except OSError:
                pass
            finally:
                self.done = True
                self.conn.close()


def _caller_uid(conn: Any) -> int:
    import socket
    import struct

    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return int(struct.unpack("3i", creds)[1])
    except (AttributeError, OSError):
        return os.getuid()  # no SO_PEERCRED here: the folder's 0700 keeps others out


class Server:
    """The socket a long-running process answers its ``commands`` on, for the settings it
    serves. One thread accepts, acknowledges each caller at once and tells the waiting ones
    every BEAT that this process is alive; another answers them in order, with a ``Memory`` of
    its own (its own connection to the index and its own record of file changes) that shares the
    process's embedding model."""

    def __init__(self, settings: Settings, command: str, provider: Callable[[], Any], *,
                 commands: Commands = NO_COMMANDS, warm: bool = True):
        self.settings = settings
        self.command = command
        self.commands = commands
        self.warm = warm  # open the index and load the vectors before the first request
        self._provider = provider
        self._fingerprint = fingerprint(settings)
        self._env = env_seen(os.environ)
        self._memory: Memory | None = None
        self._sock: Any = None
        self._threads: list[Any] = []
        self._queue: Any = None
        self.path = ""
        self.record = ""
        self.answered = 0

    def start(self) -> Server | None:
        import logging
        import socket
        import threading

        from ..atomic import replace_all

        log = logging.getLogger(__name__)
        state = str(self.settings.state_dir)
        self.path = socket_path(state, os.getpid())
        for folder in dict.fromkeys([os.path.join(state, FOLDER), os.path.dirname(self.path)]):
            why = _private_folder(folder)
            if why:
                log.warning("not serving search and recall over a socket: %s; commands run on their own", why)
                return None
        _remove(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.path)
            os.chmod(self.path, 0o600)
            sock.listen(16)
        except OSError as exc:
            sock.close()
            log.warning("not serving search and recall over %s (%s); commands run on their own", self.path,
                        exc.strerror or exc)
            return None
        self._sock = sock
        self.record = os.path.join(state, FOLDER, f"{os.getpid()}{RECORD}")
        info = {"pid": os.getpid(), "socket": self.path, "command": self.command, "version": __version__,
                "protocol": PROTOCOL, "workspace": str(self.settings.workspace), "agent": self.settings.agent_id}
        replace_all({self.record: "".join(f"{k}={v}\n" for k, v in info.items())}, {self.record: 0o600})
        import queue

        self._queue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._listen, args=(sock,), name="mnemoclaw-nearby", daemon=True),
                         threading.Thread(target=self._work, name="mnemoclaw-nearby-work", daemon=True)]
        for thread in self._threads:
            thread.start()
        return self

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        _remove(self.record, self.path)
        try:
            sock.shutdown(2)
        except OSError:
            pass
        sock.close()
        self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout=REPLY_TIMEOUT)
        if self._memory is not None:
            self._memory.close()
            self._memory = None

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _listen(self, sock: Any) -> None:
        """Accept, acknowledge, and say every BEAT to whoever still waits that this process lives:
        a caller tells a busy server (warming up, indexing what changed) from a stopped one."""
        waiting: list[_Caller] = []
        while self._sock is not None:
            waiting = [c for c in waiting if not c.done]
            try:
                sock.settimeout(BEAT if waiting else None)
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    conn = None
            except OSError:
                break  # closed
            if conn is not None:
                conn.settimeout(REQUEST_TIMEOUT)
                caller = _Caller(conn)
                if _caller_uid(conn) != os.getuid():
                    caller.reply(self._declined("another user"))  # told no before it has said anything
                    continue
                caller.beat()
                waiting.append(caller)
                self._queue.put(caller)
            now = time.monotonic()
            for c in waiting:
                if now - c.beat_at >= BEAT:
                    c.beat()

    def _work(self) -> None:
        import json
        import logging

        log = logging.getLogger(__name__)
        if self.warm:  # callers are acknowledged and kept waiting meanwhile
            try:
                self._open().search("mnemoclaw", max_results=1)
            except Exception as exc:  # noqa: BLE001 - a request will say what is wrong
                log.debug("could not warm the nearby reader: %s", exc)
        while (caller := self._queue.get()) is not None:
            reply = None
            if self._sock is None or caller.done:  # closing, or the caller has gone: it runs on its own
                caller.reply(None)
                continue
            try:
                chunks = []
                while data := caller.conn.recv(1 << 16):
                    chunks.append(data)
                request = json.loads(b"".join(chunks).decode("utf-8", "surrogateescape"))
                given_up = request.get("deadlineMs") if isinstance(request, dict) else None
                if not (isinstance(given_up, int) and time.time() * 1000 > given_up):  # else: a hook gone by now
                    reply = self.answer(request)
            except Exception as exc:  # noqa: BLE001 - one bad caller never stops the server
                log.debug("a nearby request failed: %s", exc)
            caller.reply(reply)
        while not self._queue.empty():  # accepted as it closed
            if (caller := self._queue.get_nowait()) is not None:
                caller.reply(None)

    def _declined(self, why: str) -> bytes:
        return reply_bytes(False, 0, why, "")

    def answer(self, request: Any) -> bytes:
        """The reply to one request: the command's output, or why this server does not answer it."""
        if not isinstance(request, dict):
            return self._declined("not a request")
        if request.get("protocol") != PROTOCOL or request.get("version") != __version__:
            return self._declined("another version")
        if request.get("env") != self._env:
            return self._declined("another environment")
        try:
            return self._run(request)
        except Exception as exc:  # noqa: BLE001 - the command line runs it on its own and says what is wrong
            import logging

            logging.getLogger(__name__).debug("declined a nearby %s: %s", request.get("argv"), exc)
            return self._declined(f"{type(exc).__name__}: {exc}")

    def _run(self, request: dict[str, Any]) -> bytes:
        argv = [str(a) for a in request["argv"]]
        name = self.commands.name_of(argv)
        handler = self.commands.handlers.get(name) if name is not None else None
        if handler is None:
            return self._declined(f"{name} is not answered here")
        stdin = request.get("stdin")
        call = Call(argv, str(request["cwd"]), stdin if isinstance(stdin, str) else None, self._memory_for)
        try:
            code = handler(call)
        except Declined as why:
            return self._declined(str(why))
        self.answered += 1
        return reply_bytes(True, code, "".join(call.out), "".join(call.err))

    def _memory_for(self, settings: Settings) -> Memory:
        if fingerprint(settings) != self._fingerprint:
            raise Declined("other settings")
        return self._open()

    def _open(self) -> Memory:
        if self._memory is None:
            from ..api import Memory

            self._memory = Memory(self.settings, provider=self._provider(), background=False)
            self._memory.freshness.follow()
        return self._memory


def serving(settings: Settings, command: str, provider: Callable[[], Any], commands: Commands, *,
            warm: bool = True) -> Any:
    """A context in which this process answers ``commands`` for ``settings`` (or, when it cannot
    listen, says so once and does nothing)."""
    from contextlib import nullcontext

    server = Server(settings, command, provider, commands=commands, warm=warm).start()
    return server if server is not None else nullcontext()
