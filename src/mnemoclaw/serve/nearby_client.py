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

This module is the client and the wire, standard library only: it runs before anything else on
every prompt a hook answers. The server is ``serve/nearby.py``; the command line fills the table
of what it answers (``cli/index.py``).
"""

from __future__ import annotations

import os
import stat
import sys
import time

from .. import __version__

TYPE_CHECKING = False  # the client imports neither typing nor dataclasses: each costs milliseconds a prompt
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO, Any

PROTOCOL = 2  # 2: acknowledgement and signs of life before the reply
FOLDER = "serving"  # under the state directory: a record per serving process, ``<pid>.server``
RECORD = ".server"  # its lines: ``key=value`` (pid, socket, command, version, workspace, agent)
ENV_OFF = "MNEMOCLAW_NEARBY"
COMMANDS = frozenset({"search", "recall"})  # what a command line asks about (a server answers what its table holds)
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


# -- a hook's deadline, read before click is imported (cli/hook.py keeps it) ------------------
OPTION = "--timeout-ms"
DEFAULT_MS = 3000  # well under the 10 s a hook is given in docs/recall.md's example
MAX_MS = 600_000
PREFIX = "mnemoclaw recall --hook: "


def timeout_ms(argv: Sequence[str]) -> int | None:
    """The milliseconds a ``recall --hook`` run may take (None: ``argv`` is not one). A value that is
    not a whole number 1..MAX_MS counts as the default here; click then says what is wrong with it."""
    if "recall" not in argv or "--hook" not in argv:
        return None
    for i, token in enumerate(argv):
        if token == OPTION:
            value = argv[i + 1] if i + 1 < len(argv) else ""
        elif token.startswith(OPTION + "="):
            value = token[len(OPTION) + 1:]
        else:
            continue
        try:
            ms = int(value)
        except ValueError:
            return DEFAULT_MS
        return ms if 1 <= ms <= MAX_MS else DEFAULT_MS
    return DEFAULT_MS


def late(ms: int, doing: str) -> str:
    """The line a hook's run ends with when its deadline passes."""
    return f"{PREFIX}nothing recalled: the {ms} ms deadline passed while {doing} ({OPTION} sets it)\n"


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
    hook_ms = None if deadline is None else timeout_ms(argv)
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
