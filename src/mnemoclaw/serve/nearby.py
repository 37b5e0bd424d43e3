"""Asking a mnemoclaw process that already serves this agent, instead of starting one.

``search`` and ``recall`` run on every prompt when they are a hook, and a fresh process spends
most of a second importing, loading the model and opening the index. A process that lives on
(``watch``, ``mcp``, ``ui``, ``chat``) listens on a Unix socket and leaves a record of it in
``STATE_DIR/serving/``. A command line that finds one sends its arguments, working directory
and environment, and prints what the server wrote: the same text and exit code, from a client
that imports nothing but the standard library.

Only the same user, only the same settings:

- the folder is the owner's alone (0700), the socket and its record too (0600); the client
  asks only a socket its own user owns, and the server answers only a caller of its own user
  (``SO_PEERCRED``);
- the server answers only when the caller's arguments, working directory and environment
  resolve to exactly the settings it serves (another agent, a config file changed since the
  server started, a usage error: it declines, and the command runs as it would alone);
- a record left by a process that ended, a socket of another user, a server of another
  version, a damaged record: one line on stderr, and the command runs on its own;
- a server that cannot answer holds nobody: a stopped one (Ctrl-Z, SIGSTOP) is not asked, any
  other acknowledges a caller at once and says it is alive every BEAT while it works, and one
  silent for a second is given up on (one line on stderr; the command runs on its own).

``MNEMOCLAW_NEARBY=off`` never asks.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from .. import __version__

TYPE_CHECKING = False  # the client imports neither typing nor dataclasses: each costs milliseconds a prompt
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import IO, Any

PROTOCOL = 2  # 2: acknowledgement and signs of life before the reply
FOLDER = "serving"  # under the state directory: a record per serving process, ``<pid>.server``
RECORD = ".server"  # its lines: ``key=value`` (pid, socket, command, version, workspace, agent)
ENV_OFF = "MNEMOCLAW_NEARBY"
COMMANDS = frozenset({"search", "recall"})
# the same as config.DEFAULT_STATE_DIR and config.ENV_STATE_DIR (a test keeps them equal): the
# client does not import config
DEFAULT_STATE_DIR = "~/.mnemoclaw"
ENV_STATE_DIR = "MNEMOCLAW_STATE_DIR"
# A server acknowledges a caller the moment it accepts it, and says it is alive every BEAT while
# the request waits or runs; a socket that accepts but says nothing (a process stopped with
# SIGSTOP, or hung) is given up on after ACK_TIMEOUT or, once it spoke, after SILENCE.
ALIVE = b"."
ACK_TIMEOUT = 1.0
BEAT = 0.2
SILENCE = 1.0
REPLY_TIMEOUT = 30.0  # a live server is waited for this long: a search may index what changed first (at most 64 files)
REQUEST_TIMEOUT = 5.0  # how long a server waits for a caller's request, or for it to take the reply
SUN_PATH_MAX = 100  # a Unix socket's path is at most 107 bytes on Linux, 103 on macOS


def env_seen(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The variables that decide which memory a command means: the server answers only a
    caller whose values are its own."""
    return {k: v for k, v in env.items() if k.startswith(("MNEMOCLAW_", "OPENCLAW_")) or k == "HOME"}


# -- the wire --------------------------------------------------------------------------------
# A request is one JSON object (written here by hand: the json package imports re, and the
# client's start-up is most of what a hook waits for). The server writes ALIVE at once and every
# BEAT until it replies; a reply is one header line,
# ``mnemoclaw-nearby PROTOCOL VERSION ANSWERED CODE OUT_BYTES ERR_BYTES``, then the command's
# stdout and stderr as they are (a declined request's stdout says why).
HEADER = b"mnemoclaw-nearby"
_ESCAPES = {i: f"\\u{i:04x}" for i in range(32)} | {ord("\\"): "\\\\", ord('"'): '\\"'}


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_text(v) for v in value) + "]"
    return "{" + ",".join(f"{_text(str(k))}:{_text(v)}" for k, v in value.items()) + "}"


def reply_bytes(answered: bool, code: int, stdout: str, stderr: str, version: str = __version__) -> bytes:
    out, err = stdout.encode("utf-8"), stderr.encode("utf-8")
    head = b" ".join([HEADER, str(PROTOCOL).encode(), version.encode(), b"1" if answered else b"0",
                      str(code).encode(), str(len(out)).encode(), str(len(err)).encode()])
    return head + b"\n" + out + err


def read_reply(data: bytes) -> tuple[int, str, bool, int, str, str]:
    """(protocol, version, answered, code, stdout, stderr); ValueError if it is not a reply."""
    head, _, body = data.partition(b"\n")
    parts = head.split(b" ")
    if len(parts) < 3 or parts[0] != HEADER:
        raise ValueError("not a mnemoclaw reply")
    protocol, version = int(parts[1]), parts[2].decode("utf-8", "replace")
    if protocol != PROTOCOL or len(parts) != 7:
        return protocol, version, False, 0, "", ""
    answered, code, n_out, n_err = parts[3] == b"1", int(parts[4]), int(parts[5]), int(parts[6])
    if len(body) != n_out + n_err:
        raise ValueError(f"the reply was cut short ({len(body)} of {n_out + n_err} bytes)")
    return protocol, version, answered, code, body[:n_out].decode("utf-8"), body[n_out:].decode("utf-8")


def _socket_module() -> Any:
    try:
        import _socket  # the C module: socket.py's enums and selectors cost milliseconds

        return _socket
    except ImportError:  # pragma: no cover - another Python
        import socket

        return socket


# -- the client: a command line asking ------------------------------------------------------
class Asked:
    def __init__(self) -> None:
        self.code: int | None = None  # the exit code, when a server answered
        self.stdin: str | None = None  # what was read from stdin to send, for the command to read instead


def _state_dir(argv: Sequence[str], env: dict[str, str] | os._Environ[str]) -> str:
    for i, token in enumerate(argv):
        if token == "--state-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if token.startswith("--state-dir="):
            return token.split("=", 1)[1]
    return env.get(ENV_STATE_DIR) or DEFAULT_STATE_DIR


def _say(err: IO[str], message: str) -> None:
    err.write(f"mnemoclaw: {message}\n")
    err.flush()


def _remove(*paths: str) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: the socket's owner check decides
    return True


class _Quiet(Exception):
    """A server said nothing for too long; the message says how."""


def _exchange(net: Any, path: str, request: bytes, until: float) -> bytes:
    """The reply of the server at ``path`` to ``request``, without its signs of life. ``_Quiet``
    when it takes or acknowledges nothing within ACK_TIMEOUT, falls silent for SILENCE, or has not
    replied by ``until`` (a ``time.monotonic()``)."""
    conn = net.socket(net.AF_UNIX, net.SOCK_STREAM)
    heard = False
    chunks: list[bytes] = []
    try:
        # the request first: a server of an older protocol sends nothing before it has read it
        conn.settimeout(max(0.001, min(ACK_TIMEOUT, until - time.monotonic())))
        try:
            conn.connect(path)  # a backlog that callers filled (a server stopped for long): EAGAIN at once
            conn.sendall(request)
            conn.shutdown(net.SHUT_WR)
        except (TimeoutError, BlockingIOError):
            raise _Quiet(f"did not answer within {ACK_TIMEOUT:g} s (stopped or hung?)") from None
        while True:
            left = until - time.monotonic()
            if left <= 0:
                raise _Quiet(f"was still working after {REPLY_TIMEOUT:g} s")
            conn.settimeout(min(SILENCE if heard else ACK_TIMEOUT, left))
            try:
                data = conn.recv(1 << 16)
            except TimeoutError:
                if time.monotonic() >= until:
                    continue
                raise _Quiet(f"stopped answering (silent for {SILENCE:g} s)" if heard else
                             f"did not answer within {ACK_TIMEOUT:g} s (stopped or hung?)") from None
            if not data:
                return b"".join(chunks)
            heard = True
            if not chunks:
                data = data.lstrip(ALIVE)
            if data:
                chunks.append(data)
    finally:
        conn.close()


def _stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (Ctrl-Z in its terminal, SIGSTOP), where /proc says so (Linux):
    such a process accepts on its socket and answers nothing until it is continued."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return False
    return state in ([b"T"], [b"t"])


def ask(argv: Sequence[str], *, stdin: IO[str] | None = None, out: IO[str] | None = None,
        err: IO[str] | None = None, deadline: float | None = None) -> Asked:
    """Have a serving process run ``mnemoclaw <argv>`` if one serves these settings. ``deadline``
    (a ``time.monotonic()``): a hook's run, which ends then, answered or not."""
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    env = os.environ
    if env.get(ENV_OFF, "").lower() in ("off", "0", "no", "false"):
        return Asked()
    if not COMMANDS.intersection(argv) or {"-h", "--help", "--version"}.intersection(argv):
        return Asked()
    folder = os.path.join(os.path.expanduser(_state_dir(argv, env)), FOLDER)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(RECORD))
    except OSError:
        return Asked()
    if not names:
        return Asked()
    net = _socket_module()
    asked = Asked()
    if "--hook" in argv or "-" in argv:
        asked.stdin = stdin.read()
    hook_ms = None
    if deadline is not None:
        from ..cli.hook import timeout_ms

        hook_ms = timeout_ms(argv)
    # a server drops a hook's request it reaches after the caller gave up (wall-clock ms: another process)
    given_up = None if deadline is None else int((time.time() + deadline - time.monotonic()) * 1000)
    request = _text({"protocol": PROTOCOL, "version": __version__, "argv": list(argv), "cwd": os.getcwd(),
                     "env": env_seen(env), "stdin": asked.stdin, "deadlineMs": given_up}).encode(
        "utf-8", "surrogateescape")
    uid = os.getuid()
    verbose = any(a in ("-v", "-vv", "--verbose") for a in argv)
    for name in names:
        record = os.path.join(folder, name)
        try:
            if os.lstat(record).st_uid != uid:
                _say(err, f"not asking the server {record} names: the file belongs to another user; "
                          "running on its own")
                continue
            with open(record, encoding="utf-8") as fh:
                fields = dict(line.split("=", 1) for line in fh.read().splitlines() if line)
            path, pid, command = fields["socket"], int(fields["pid"]), fields.get("command", "?")
        except FileNotFoundError:
            continue  # its server stopped between the listing and here
        except (OSError, ValueError, KeyError, TypeError):
            _say(err, f"{record} is damaged (not a record a mnemoclaw server wrote); removed it, running on its own")
            _remove(record)
            continue
        if not _alive(pid):
            _say(err, f"the mnemoclaw server {record} names (process {pid}) has ended; removed what it left, "
                      "running on its own")
            _remove(record, path)
            continue
        if _stopped(pid):
            _say(err, f"process {pid} ({command}) is stopped (Ctrl-Z or SIGSTOP; `kill -CONT {pid}` resumes it) and "
                      "cannot answer; running on its own")
            continue
        try:
            st = os.lstat(path)
        except OSError:
            _say(err, f"the socket {path} of process {pid} is gone; running on its own")
            continue
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != uid:
            what = ("is not a socket" if not stat.S_ISSOCK(st.st_mode)
                    else f"belongs to user {st.st_uid}, not you ({uid})")
            _say(err, f"not asking {path}: it {what}; running on its own")
            continue
        until = deadline if deadline is not None else time.monotonic() + REPLY_TIMEOUT
        try:
            protocol, version, answered, code, said, told = read_reply(_exchange(net, path, request, until))
        except (ConnectionRefusedError, FileNotFoundError):
            _say(err, f"nothing listens on {path} (process {pid} left it); removed it, running on its own")
            _remove(record, path)
            continue
        except _Quiet as how:
            if hook_ms is not None and time.monotonic() >= until:
                from ..cli.hook import late

                err.write(late(hook_ms, f"waiting for process {pid} ({command})"))
                err.flush()
                asked.code = 0  # a hook's run ends at its deadline, whoever was working
                return asked
            _say(err, f"process {pid} ({command}) {how}; running on its own")
            continue
        except (OSError, ValueError) as exc:
            _say(err, f"process {pid} at {path} gave no answer ({exc}); running on its own")
            continue
        if protocol != PROTOCOL or version != __version__:
            _say(err, f"the mnemoclaw serving this agent (process {pid}, {command}) is version {version}, this one "
                      f"is {__version__}; restart it to be asked; running on its own")
            continue
        if not answered:
            continue  # another agent's, or other settings: not an error
        out.write(said)
        out.flush()
        err.write(told)
        if verbose:
            _say(err, f"answered by process {pid} ({command}) over {path}")
        err.flush()
        asked.code = code
        return asked
    return asked


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


def fingerprint(settings: Any) -> str:
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
    """The socket a long-running process answers ``search`` and ``recall`` on, for the settings
    it serves. One thread accepts, acknowledges each caller at once and tells the waiting ones
    every BEAT that this process is alive; another answers them in order, with a ``Memory`` of
    its own (its own connection to the index and its own record of file changes) that shares the
    process's embedding model."""

    def __init__(self, settings: Any, command: str, provider: Callable[[], Any], *, warm: bool = True):
        self.settings = settings
        self.command = command
        self.warm = warm  # open the index and load the vectors before the first request
        self._provider = provider
        self._fingerprint = fingerprint(settings)
        self._env = env_seen(os.environ)
        self._memory: Any = None
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
        from contextlib import nullcontext

        from ..cli.app import Ctx, cli
        from ..cli.index import hook_recall, run_recall, run_search

        argv, cwd = [str(a) for a in request["argv"]], str(request["cwd"])
        group = cli.make_context("mnemoclaw", list(argv))
        # what the group left for its command (click keeps the command's name apart)
        name, command, rest = cli.resolve_command(group, [*getattr(group, "_protected_args", []), *group.args])
        if name not in COMMANDS or command is None:
            return self._declined(f"{name} is not answered here")
        sub = command.make_context(name, rest, parent=group)
        g, p = group.params, dict(sub.params)

        ctx = Ctx(p.pop("workspace_") or g["workspace"], p.pop("state_dir_") or g["state_dir"],
                  p.pop("config_") or g["config_path"], g["agent"], p.pop("openclaw_") or g["openclaw_dir"], cwd=cwd)
        settings = ctx.settings()
        if fingerprint(settings) != self._fingerprint:
            return self._declined("other settings")
        said: list[str] = []
        told: list[str] = [f"mnemoclaw: {w}\n" for w in settings.warnings]  # what the command line would log

        def echo(message: Any = "", file: Any = None, nl: bool = True, err: bool = False, color: Any = None) -> None:
            (told if err else said).append(f"{message}\n" if nl else str(message))

        memory = self._open()
        if name == "search":
            if not str(p["query"]).strip():
                return self._declined("usage")
            code = run_search(memory, p.pop("query"), echo=echo, **p)
        elif p["hook"]:
            code = hook_recall(lambda: settings, lambda _: nullcontext(memory), request.get("stdin") or "",
                               p["as_json"], echo)
        else:
            message = p["message"]
            if message == "-":
                message = request.get("stdin")
            if not isinstance(message, str) or not message.strip():
                return self._declined("usage")
            code = run_recall(memory, message, p["last_turn"], p["as_json"], echo)
        self.answered += 1
        return reply_bytes(True, code, "".join(said), "".join(told))

    def _open(self) -> Any:
        if self._memory is None:
            from ..api import Memory

            self._memory = Memory(self.settings, provider=self._provider(), background=False)
            self._memory.freshness.follow()
        return self._memory


def serving(settings: Any, command: str, provider: Callable[[], Any], *, warm: bool = True) -> Any:
    """A context in which this process answers ``search`` and ``recall`` for ``settings`` (or,
    when it cannot listen, says so once and does nothing)."""
    from contextlib import nullcontext

    server = Server(settings, command, provider, warm=warm).start()
    return server if server is not None else nullcontext()
