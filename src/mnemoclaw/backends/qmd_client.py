"""Running qmd: one agent's qmd as a child process with a timeout, an output cap, no shell,
its own config and cache folders, and its whole process group killed on timeout or when the
backend closes; and reading what it answers. The QMD backend (``qmd.py``) decides when.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..atomic import private_dir
from ..errors import MnemoclawError

INDEX = "mnemoclaw"  # qmd's --index: its config file and database are named after it
MIN_VERSION = (2, 0, 0)
OUTPUT_CAP = 200_000  # characters of qmd output read before the call is refused
SHOWN = "qmd/"  # a file of a configured qmd path, as results show it: qmd/<collection>/<path>
INSTALL_HINT = "install it (npm install -g @tobilu/qmd, needs Node >= 22) or set memory.qmd.command to its path"
# probe: `qmd --version`, asked before anything else in a process. A warm qmd 2.8.3 answers in
# 0.3-1.0 s on a shared 2-core machine, 4.4 s at worst beside two more busy processes
# (benchmarks/qmd.py --hanging, docs/qmd.md), so one silent for 5 s is taken for broken; the
# first start after installing took 20 s, which an explicit `mnemoclaw index` allows: it probes
# with the collection timeout. collection: remove and rename (`collection add` indexes the
# folder it adds, so it has update's). search: memory.qmd.limits.timeoutMs.
TIMEOUTS = {"probe": 5.0, "collection": 30.0, "update": 120.0, "embed": 600.0, "search": 4.0}
# every qmd process running now, of any client: killed when the interpreter exits, so a qmd
# started in its own session (to kill its whole group) never outlives a process that forgot
# to close its backend
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


class QmdError(MnemoclawError):
    """qmd could not answer: missing, too old, timed out, or said something unreadable."""


@dataclass(frozen=True, slots=True)
class Collection:
    name: str
    path: Path
    pattern: str
    default: bool = False  # one of the workspace's own memory collections

    def shown(self, rel: str) -> str:
        """A file of the collection as results show it."""
        if self.name == "memory-dir":
            return f"memory/{rel}"
        if self.default:
            return rel
        return f"{SHOWN}{self.name}/{rel}"


@dataclass(frozen=True, slots=True)
class QmdHit:
    collection: str
    path: str  # relative to the collection's folder
    line: int
    score: float
    start: int = 0  # the lines qmd's snippet shows (its "@@ -START,COUNT @@" header)
    count: int = 0


def parse_hits(out: str) -> list[QmdHit]:
    """``qmd search --json``: an array, possibly after other output; "No results found" means none."""
    if re.search(r"^No results found", out, re.M):
        return []
    m = re.search(r"^\s*\[", out, re.M)
    if m is None:
        raise QmdError(f"qmd answered without a JSON list: {_first_line(out)!r}")
    try:
        data, _ = json.JSONDecoder().raw_decode(out, m.start() + len(m.group()) - 1)
    except ValueError as exc:
        raise QmdError(f"qmd answered JSON that cannot be read ({exc})") from None
    if not isinstance(data, list):
        raise QmdError("qmd answered JSON that is not a list of results")
    hits = []
    for row in data:
        uri = row.get("file") if isinstance(row, dict) else None
        if not isinstance(uri, str) or not uri.startswith("qmd://"):
            raise QmdError(f"qmd answered a result without a qmd:// file: {str(row)[:80]!r}")
        collection, _, rel = unquote(uri[len("qmd://"):].split("?", 1)[0]).partition("/")
        line = row.get("line")
        score = row.get("score", 0)
        if not collection or not rel or not isinstance(line, int) or not isinstance(score, int | float):
            raise QmdError(f"qmd answered a result that cannot be read: {str(row)[:80]!r}")
        header = re.match(r"@@ -(\d+),(\d+)", str(row.get("snippet") or ""))
        start, count = (int(header.group(1)), int(header.group(2))) if header else (max(1, line), 1)
        hits.append(QmdHit(collection, rel, max(1, line), float(score), start, count))
    return hits


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:120]
    return "(nothing)"


def _version(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if m is None:
        raise QmdError(f"qmd --version said {_first_line(text)!r}, not a version")
    return tuple(int(g) for g in m.groups())


class QmdClient:
    """One agent's qmd: its own config and cache folders under ``home``. ``timeout``: a
    search's; ``timeouts``: the other calls' (``TIMEOUTS``' keys)."""

    def __init__(self, command: str, home: Path, timeout: float = TIMEOUTS["search"],
                 timeouts: dict[str, float] | None = None):
        self.command = command
        self.home = Path(home)
        self.timeout = timeout
        self.timeouts = {**TIMEOUTS, **(timeouts or {}), "search": timeout}
        self.version: tuple[int, ...] | None = None
        self.stopped = False  # stop() was called: no qmd is started any more
        self._mine: set[subprocess.Popen[bytes]] = set()

    def stop(self) -> None:
        """Kill every qmd this client is running (each with its process group) and start no
        more: what the backend's close does, so a hung qmd cannot outlive it."""
        with _RUNNING_LOCK:
            self.stopped = True
            running = list(self._mine)
        for proc in running:
            _kill(proc)

    @property
    def config_file(self) -> Path:
        return self.home / "config" / f"{INDEX}.yml"

    @property
    def database(self) -> Path:
        return self.home / "xdg-cache" / "qmd" / f"{INDEX}.sqlite"

    def executable(self) -> str:
        found = shutil.which(self.command) if os.sep not in self.command else (
            self.command if os.access(self.command, os.X_OK) else None)
        if not found:
            raise QmdError(f"qmd was not found (memory.qmd.command {self.command!r}): {INSTALL_HINT}")
        return found

    def identity(self) -> str:
        """Which qmd this is: the executable's real path, size and time (installing or updating
        it changes them), or the command and "missing"."""
        try:
            exe = os.path.realpath(self.executable())
            st = os.stat(exe)
        except (QmdError, OSError):
            return f"{self.command} missing"
        return f"{exe} {st.st_size} {st.st_mtime_ns}"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("INDEX_PATH", "QMD_CONFIG_DIR")}
        env.update(XDG_CONFIG_HOME=str(self.home / "xdg-config"), XDG_CACHE_HOME=str(self.home / "xdg-cache"),
                   QMD_CONFIG_DIR=str(self.home / "config"), NO_COLOR="1")
        return env

    def run(self, *args: str, what: str, timeout: float | None = None) -> str:
        """qmd's stdout, within ``what``'s timeout (``timeout``: another); a QmdError naming
        what went wrong otherwise."""
        exe = self.executable()
        try:
            for d in ("xdg-config", "xdg-cache", "config"):
                private_dir(self.home / d)
        except OSError as exc:  # a read-only state dir that never held qmd's folders
            raise QmdError(f"cannot make qmd's folders in {self.home}: {exc.strerror or exc}") from None
        limit = timeout if timeout is not None else self.timeouts[what]
        with _RUNNING_LOCK:  # held across the start, so stop() either sees this process or refuses it
            if self.stopped:
                raise QmdError(f"qmd {args[0]} was not started: the backend is closing")
            # the working directory is the isolated home: a .qmd/ folder above the caller's one
            # would otherwise take over qmd's config and index
            try:
                proc = subprocess.Popen([exe, "--index", INDEX, *args], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.home, env=self._env(),
                                        start_new_session=True, umask=0o077)  # its index is the user's alone
            except OSError as exc:
                raise QmdError(f"qmd could not be started ({exc.strerror or exc}): {INSTALL_HINT}") from None
            self._mine.add(proc)
            _RUNNING.add(proc)
        try:
            return self._read(proc, args[0], limit)
        finally:
            with _RUNNING_LOCK:
                self._mine.discard(proc)
                _RUNNING.discard(proc)

    def _read(self, proc: subprocess.Popen[bytes], command: str, limit: float) -> str:
        out_parts: list[bytes] = []
        err_parts: list[bytes] = []
        size = [0]

        def read(stream: Any, into: list[bytes]) -> None:
            for chunk in iter(lambda: stream.read1(65536), b""):
                into.append(chunk)
                size[0] += len(chunk)
                if size[0] > OUTPUT_CAP * 4:
                    _kill(proc)
                    return

        readers = [threading.Thread(target=read, args=(proc.stdout, out_parts), daemon=True),
                   threading.Thread(target=read, args=(proc.stderr, err_parts), daemon=True)]
        for t in readers:
            t.start()
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.wait()
            raise QmdError(f"qmd {command} took longer than {limit:g}s and was stopped") from None
        finally:
            for t in readers:
                t.join(timeout=2)
        if self.stopped and proc.returncode < 0:
            raise QmdError(f"qmd {command} was stopped: the backend is closing")
        out = b"".join(out_parts).decode("utf-8", "replace")
        err = b"".join(err_parts).decode("utf-8", "replace")
        if len(out) > OUTPUT_CAP:
            raise QmdError(f"qmd {command} answered more than {OUTPUT_CAP} characters; refused")
        if proc.returncode != 0:
            raise QmdError(f"qmd {command} failed (exit {proc.returncode}): {_first_line(err or out)}")
        return out

    def check_version(self, timeout: float | None = None) -> tuple[int, ...]:
        """qmd runs and is new enough (``timeout``: the probe's unless given)."""
        self.version = _version(self.run("--version", timeout=timeout, what="probe"))
        if self.version < MIN_VERSION:
            have = ".".join(map(str, self.version))
            need = ".".join(map(str, MIN_VERSION))
            raise QmdError(f"qmd {have} is too old: mnemoclaw needs {need} or newer "
                           "(npm install -g @tobilu/qmd)")
        return self.version

    def collections(self) -> dict[str, tuple[str, str]]:
        """name -> (path, pattern), from qmd's own config file."""
        try:
            text = self.config_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise QmdError(f"cannot read qmd's config {self.config_file}: {exc.strerror}") from None
        return _read_collections(text)

    def reconcile(self, wanted: Sequence[Collection]) -> list[str]:
        """Make qmd's collections what the config says; what was done, one line each."""
        have = self.collections()
        want = {c.name: c for c in wanted}
        done = []
        for name, (path, pattern) in have.items():
            c = want.get(name)
            if c is None or (str(c.path), c.pattern) != (path, pattern):
                moved = next((w for w in wanted if w.name not in have and (str(w.path), w.pattern) == (path, pattern)),
                             None)
                if c is None and moved is not None:
                    self.run("collection", "rename", name, moved.name, what="collection")
                    done.append(f"renamed {name} to {moved.name}")
                    have = {**have, moved.name: (path, pattern)}
                    continue
                self.run("collection", "remove", name, what="collection")
                done.append(f"removed {name}")
        have = self.collections()
        for c in wanted:
            if c.name not in have:
                # qmd indexes the folder as it adds it: as long as an update may take
                self.run("collection", "add", str(c.path), "--name", c.name, "--mask", c.pattern, what="update")
                done.append(f"added {c.name} ({c.path}, {c.pattern})")
        return done

    def update(self) -> str:
        return self.run("update", what="update")

    def embed(self) -> str:
        return self.run("embed", what="embed")

    def search(self, mode: str, text: str, limit: int, collections: Sequence[str]) -> list[QmdHit]:
        args = [mode, text, "--json", "-n", str(limit)]
        for name in collections:
            args += ["-c", name]
        return parse_hits(self.run(*args, what="search"))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@atexit.register
def _kill_all() -> None:
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        _kill(proc)


def _read_collections(text: str) -> dict[str, tuple[str, str]]:
    """The ``collections:`` block of qmd's YAML config (two-space nesting, scalar values)."""
    out: dict[str, dict[str, str]] = {}
    inside = False
    current = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, _, value = line.strip().partition(":")
        if indent == 0:
            inside = key == "collections"
            current = None
            continue
        if not inside:
            continue
        if indent == 2:
            current = _scalar(key)
            out[current] = {}
        elif current is not None and indent >= 4:
            out[current][key] = _scalar(value.strip())
    return {n: (v.get("path", ""), v.get("pattern", "**/*.md")) for n, v in out.items()}


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            return str(json.loads(value))
        except ValueError:
            return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value
