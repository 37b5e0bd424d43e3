"""The kernel's record of changes to the memory files: how a search in a watching process
knows, without a stat of every file, whether anything changed since it last looked.

On Linux, inotify queues an event inside the write itself (``write``, ``rename``,
``unlink``, ``utime`` return after it is queued), so a note some process finished writing
before a search began is in the queue when the search reads it. The queue is read
without blocking before each search: microseconds when nothing changed. Anything the
queue holds for a memory file sends that search back to the walk over every file, which
finds what changed.

The journal says when it cannot vouch for the files, and the search walks every time:
no inotify (not Linux), a watch limit reached, a folder on a network or FUSE filesystem
(changes made from another machine raise no event here). An overflowed queue or a folder
created, removed or moved makes it watch everything again and costs one walk.

Only what the index reads is watched, as discovery reads it: MEMORY.md and memory.md in the
workspace, memory/ and the extra folders recursively (links are not followed, ignored folders
not entered), an extra file through its folder, the transcript folder. A path that does not
exist yet is watched through its nearest existing folder.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from ..notes.discovery import IGNORED_DIRS, ROOT_FILES

log = logging.getLogger(__name__)

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_EXCL_UNLINK = 0x4000000
IN_ISDIR = 0x40000000
WATCH_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
              | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)
_SELF = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED
_EVENT = struct.Struct("iIII")

# Filesystems whose files can change without an event here: network and cluster filesystems
# (another machine writes) and FUSE (events only for writes made through this mount).
REMOTE_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre",
                       "gpfs", "davfs", "virtiofs", "vboxsf", "vmhgfs", "prl_fs", "ncpfs", "coda"})


@dataclass(frozen=True)
class _Dir:
    path: str
    source: str  # "memory" | "sessions"
    kind: str  # "root" | "tree" | "file" | "sessions" | "pending"
    name: str = ""  # "file": the one file that matters; "pending": the next folder on the way


class ChangeJournal:
    def __init__(self, workspace: str, extra_paths: Iterable[str], sessions_dir: str | None = None):
        self.workspace = os.path.abspath(workspace)
        self.extra_paths = [os.path.abspath(os.path.expanduser(p)) for p in extra_paths]
        self.sessions_dir = os.path.abspath(sessions_dir) if sessions_dir else None
        self.why: str | None = "not started"  # why the journal cannot be trusted; None when it can
        self.overflows = 0  # queue overflows seen (each cost one walk)
        self._fd: int | None = None
        self._dirs: dict[int, _Dir] = {}
        self._lock = threading.Lock()
        self._retry = False

    # -- lifecycle ----------------------------------------------------------------
    def start(self) -> ChangeJournal:
        with self._lock:
            self._arm()
        if self.why:
            log.info("searches check every memory file: %s", self.why)
        return self

    def close(self) -> None:
        with self._lock:
            self._close_fd()
            self.why = "stopped"

    @property
    def trusted(self) -> bool:
        return self.why is None

    @property
    def watches(self) -> int:
        return len(self._dirs)

    def take(self) -> set[str] | None:
        """The sources ("memory", "sessions") with changes since the last call; ``None`` when the
        journal cannot say (``why`` tells why): check every file."""
        with self._lock:
            if self._fd is None:
                if not self._retry:
                    return None
                self._arm()
                return None  # the walk this search makes starts the record afresh
            changed: set[str] = set()
            rearm = False
            while True:
                try:
                    buf = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    break
                except OSError as exc:
                    self._fail(f"reading file events failed ({exc})")
                    return None
                if not buf:
                    break
                for wd, mask, name in _events(buf):
                    if mask & IN_Q_OVERFLOW:
                        self.overflows += 1
                        log.info("file events overflowed the kernel's queue; checking every memory file once")
                        changed |= {"memory", "sessions"}
                        rearm = True
                        continue
                    d = self._dirs.get(wd)
                    if d is None:
                        continue
                    source, structural = _judge(d, name, mask)
                    if source:
                        changed.add(source)
                    rearm |= structural
            if rearm:
                self._arm()
                if self._fd is None:
                    return None
            return changed

    # -- watching ----------------------------------------------------------------
    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._dirs = {}

    def _fail(self, why: str) -> None:
        self._close_fd()
        if why != self.why:
            log.warning("searches check every memory file: %s", why)
        self.why = why

    def _arm(self) -> None:
        """Watch every folder afresh (events lost meanwhile are what the next walk finds)."""
        self._retry = False
        for _ in range(5):
            if self._arm_once():
                return
        self._fail("the memory folders kept changing while being watched")
        self._retry = True  # tried again at the next search

    def _arm_once(self) -> bool:
        """False when a folder vanished between listing and watching (list again)."""
        self._close_fd()
        if not sys.platform.startswith("linux"):
            self.why = "file events are read on Linux only"
            return True
        libc = _libc()
        if libc is None:
            self.why = "inotify is not available"
            return True
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            self.why = f"inotify is not available ({os.strerror(ctypes.get_errno())})"
            return True
        self._fd = fd
        mounts = _mounts()
        try:
            for d in self._folders():
                fs = _fs_type(d.path, mounts)
                if fs in REMOTE_FS or fs.startswith("fuse"):
                    raise _Untrusted(f"{d.path} is on a {fs} filesystem, where changes made elsewhere raise no "
                                     "event")
                wd = libc.inotify_add_watch(fd, os.fsencode(d.path), WATCH_MASK)
                if wd < 0:
                    err = ctypes.get_errno()
                    if err == errno.ENOSPC:
                        raise _Untrusted("the inotify watch limit is reached (raise fs.inotify.max_user_watches, "
                                         "e.g. sysctl fs.inotify.max_user_watches=524288)")
                    if err in (errno.ENOENT, errno.ENOTDIR):
                        return False
                    raise _Untrusted(f"cannot watch {d.path} ({os.strerror(err)})")
                self._dirs[wd] = d
        except _Untrusted as exc:
            self._fail(str(exc))
            return True
        self.why = None
        return True

    def _folders(self) -> list[_Dir]:
        out: list[_Dir] = []
        ws = self.workspace
        if os.path.isdir(ws) and not os.path.islink(ws):
            real = os.path.realpath(ws)
            out.append(_Dir(real, "memory", "root"))
            mem = os.path.join(ws, "memory")
            if os.path.isdir(mem) and not os.path.islink(mem):
                out += _tree(os.path.realpath(mem), "memory")
        else:
            out += _pending(ws, "memory")
        for p in self.extra_paths:
            if os.path.islink(p):
                continue  # discovery does not follow it either
            if os.path.isdir(p):
                out += _tree(os.path.realpath(p), "memory")
            elif p.lower().endswith(".md") and os.path.isdir(os.path.dirname(p)):
                out.append(_Dir(os.path.realpath(os.path.dirname(p)), "memory", "file", os.path.basename(p)))
            else:
                out += _pending(p, "memory")
        if self.sessions_dir:
            if os.path.isdir(self.sessions_dir):
                out.append(_Dir(os.path.realpath(self.sessions_dir), "sessions", "sessions"))
            else:
                out += _pending(self.sessions_dir, "sessions")
        return out


class _Untrusted(Exception):
    pass


def _judge(d: _Dir, name: str, mask: int) -> tuple[str, bool]:
    """(the source an event changes or "", whether the folders to watch may have changed)."""
    if mask & _SELF:
        return d.source, True
    is_dir = bool(mask & IN_ISDIR)
    if d.kind == "pending":
        return (d.source, True) if name == d.name else ("", False)
    if d.kind == "root":
        if name in ROOT_FILES:
            return "memory", False
        return ("memory", True) if name == "memory" else ("", False)
    if d.kind == "file":
        return ("memory", False) if name == d.name else ("", False)
    if d.kind == "sessions":
        return ("sessions", False) if name.endswith(".jsonl") and not is_dir else ("", False)
    if is_dir:  # a folder under a tree came, went or moved, notes and all
        return ("", False) if name in IGNORED_DIRS else ("memory", True)
    return ("memory", False) if name.lower().endswith(".md") else ("", False)


def _tree(root: str, source: str) -> list[_Dir]:
    out = [_Dir(root, source, "tree")]
    stack = [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False) and entry.name not in IGNORED_DIRS:
                        out.append(_Dir(entry.path, source, "tree"))
                        stack.append(entry.path)
        except OSError:
            continue  # unreadable: discovery skips it too
    return out


def _pending(path: str, source: str) -> list[_Dir]:
    """Watch the nearest existing folder above a path that does not exist yet, for the next
    folder on the way to it."""
    child, parent = path, os.path.dirname(path)
    while parent and not os.path.isdir(parent) and parent != os.path.dirname(parent):
        child, parent = parent, os.path.dirname(parent)
    if not os.path.isdir(parent):
        return []
    return [_Dir(os.path.realpath(parent), source, "pending", os.path.basename(child))]


def _events(buf: bytes) -> Iterable[tuple[int, int, str]]:
    at = 0
    while at + _EVENT.size <= len(buf):
        wd, mask, _cookie, length = _EVENT.unpack_from(buf, at)
        raw = buf[at + _EVENT.size:at + _EVENT.size + length]
        at += _EVENT.size + length
        yield wd, mask, os.fsdecode(raw.rstrip(b"\0"))


def _mounts() -> list[tuple[str, str]]:
    """(mount point, filesystem type), longest mount point first."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) >= 5 and right:
                    point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
                    out.append((point, right.split()[0]))
    except OSError:
        return []
    return sorted(out, key=lambda m: len(m[0]), reverse=True)


def _fs_type(path: str, mounts: list[tuple[str, str]]) -> str:
    for point, fs in mounts:
        if path == point or path.startswith(point.rstrip("/") + "/"):
            return fs
    return ""


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        try:
            lib: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]  # type: ignore[union-attr]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]  # type: ignore[union-attr]
        except (OSError, AttributeError):
            lib = None
        _LIBC.append(lib)
    return _LIBC[0]
