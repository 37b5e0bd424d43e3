"""Replacing a file atomically, leaving nothing behind when the write fails; and the modes of
what mnemoclaw keeps for itself.

Every small state file mnemoclaw rewrites (sessions.json, the fallback state, the
model cache, a config edit) goes through here: written to a temporary file next to
it, then renamed over it. A full disk or any other failure removes the temporary
file, so a failed write is harmless: the old file stays as it was.

What mnemoclaw creates for itself (the state directory and everything in it: the index,
tombstones, transcripts, config) is the user's alone, whatever the umask: folders 0700
(``private_dir``), files 0600 (``private=True``, the default here). A file that exists keeps
its mode when it is replaced; a memory file of the workspace is written with ``private=False``
(a new one gets the umask's mode, as any editor would give it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder, each part of it that is made here made 0700 (a folder that exists
    is left as it is: ``mnemoclaw status`` names one that others can read)."""
    return _make_dirs(Path(path), lambda _: True)


def _make_dirs(target: Path, private: Callable[[Path], bool]) -> Path:
    """Make the missing parts of ``target``, each 0700 where ``private(its parent)`` says so
    (explicitly: the umask cannot widen a mode, but one like 0o277 narrows it), else as the umask
    says."""
    missing = []
    for folder in (target, *target.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        mine = private(folder.parent)
        try:
            os.mkdir(folder, PRIVATE_DIR if mine else 0o777)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        if mine:
            os.chmod(folder, PRIVATE_DIR)
    return target


def private_file(path: str | os.PathLike[str]) -> None:
    """Create ``path`` empty and 0600 if it is missing (what another library then opens, such as
    SQLite, which gives its -wal and -shm files the database file's mode)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)


def _mode_for(target: Path, private: bool) -> int | None:
    """The mode a replacement of ``target`` gets: the file's own, else 0600 when ``private`` or
    when its folder is private (a workspace inside the state directory); None: what the umask
    gives."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        return PRIVATE_FILE if private or is_private(target.parent) else None


def is_private(folder: str | os.PathLike[str]) -> bool:
    """Only its owner can read ``folder``."""
    try:
        return os.stat(folder).st_mode & 0o077 == 0
    except OSError:
        return False


def new_file_mode(folder: str | os.PathLike[str]) -> int:
    """The mode to create a file of the user's in ``folder`` with (the umask still applies): 0600
    in a private folder, else what an editor would give it."""
    return PRIVATE_FILE if is_private(folder) else 0o644


def like_parent_dir(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder; each part made here is private when the folder it is made in is,
    else made as the umask says (a workspace's folders: private only inside a private one)."""
    return _make_dirs(Path(path), is_private)


@contextmanager
def atomic_file(path: str | os.PathLike[str], mode: str = "wb", *, private: bool = True) -> Iterator[IO]:
    """A file to write ``path``'s new content to; it replaces ``path`` when the block ends,
    with ``path``'s mode (a new file: 0600 when ``private``, else the umask's)."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    wanted = _mode_for(target, private)
    try:
        encoding = None if "b" in mode else "utf-8"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE if wanted is not None else 0o666)
        try:
            if wanted is not None:
                os.fchmod(fd, wanted)
            fh = open(fd, mode, encoding=encoding)
        except BaseException:
            os.close(fd)
            raise
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def replace_all(contents: dict[str, str], modes: dict[str, int] | None = None) -> None:
    """Replace several files, all or none: every new content is written and flushed to a
    temporary file beside its file first, and only then are they renamed over the files. A full
    disk (or any failure) while writing removes the temporary files and leaves every file as it
    was; the renames themselves allocate nothing."""
    tmps: dict[str, str] = {}
    try:
        for path, text in contents.items():
            tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
            tmps[path] = tmp
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)  # readable by others only after
            with open(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, (modes or {}).get(path, _mode_for(Path(path), True) or PRIVATE_FILE))
        for path, tmp in tmps.items():
            os.replace(tmp, path)
    finally:
        for tmp in tmps.values():
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, private: bool = True) -> None:
    with atomic_file(path, "wb", private=private) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def remove_leftovers(directory: str | os.PathLike[str], name: str | None = None) -> list[str]:
    """Remove the temporary files of ``name`` (None: of any file) that a killed process left in
    ``directory`` (``.<name>.<pid>.tmp``, the process gone); the names removed."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for entry in entries:
        m = _LEFTOVER.fullmatch(entry)
        if not m or (name is not None and m.group(1) != name) or pid_alive(int(m.group(2))):
            continue
        try:
            os.unlink(os.path.join(directory, entry))
            removed.append(entry)
        except OSError:
            pass
    return removed


_LEFTOVER = re.compile(r"\.(.+)\.(\d+)\.tmp")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
