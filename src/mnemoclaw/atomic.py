"""Replacing a file atomically, leaving nothing behind when the write fails.

Every small state file mnemoclaw rewrites (sessions.json, the fallback state, the
model cache, a config edit) goes through here: written to a temporary file next to
it, then renamed over it. A full disk or any other failure removes the temporary
file, so a failed write is harmless: the old file stays as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_file(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO]:
    """A file to write ``path``'s new content to; it replaces ``path`` when the block ends."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        encoding = None if "b" in mode else "utf-8"
        with open(tmp, mode, encoding=encoding) as fh:
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
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if modes and path in modes:
                os.chmod(tmp, modes[path])
        for path, tmp in tmps.items():
            os.replace(tmp, path)
    finally:
        for tmp in tmps.values():
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    with atomic_file(path, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def remove_leftovers(directory: str | os.PathLike[str], name: str) -> None:
    """Temporary files of ``name`` that a killed process left in ``directory``."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    prefix = f".{name}."
    for entry in entries:
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            pid = entry[len(prefix):-4]
            if pid.isdigit() and not pid_alive(int(pid)):
                try:
                    os.unlink(os.path.join(directory, entry))
                except OSError:
                    pass


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
