"""A cross-process write lock that dies with its holder.

``flock`` locks belong to the open file description, so the kernel releases them when
the holding process exits for any reason, kill -9 included: no stale lock files.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import LockTimeoutError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def lock_holder(path: str) -> int | None:
    """The pid that last took the lock at ``path`` (it may have finished since)."""
    try:
        with open(path, "rb") as fh:
            return int(fh.read(32).strip() or 0) or None
    except (OSError, ValueError):
        return None


def lock_busy(path: str) -> bool:
    """Whether some process (this one included) holds the lock at ``path``. Writes nothing,
    so it works on a read-only state directory too."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False  # no lock file: nobody has written yet
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)  # releases the shared lock, if it was taken


@contextmanager
def file_lock(path: str, timeout: float | None = None, what: str = "the index", index: str = "") -> Iterator[None]:
    """Hold an exclusive lock on ``path``; wait up to ``timeout`` seconds (None: forever).
    ``what`` is how a message names what the lock guards, ``index`` the index it is (if one)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if deadline is not None and time.monotonic() >= deadline:
                        pid = lock_holder(path)
                        raise LockTimeoutError(
                            f"Another mnemoclaw process is writing {what} (lock {path}); "
                            f"waited {timeout:.0f}s. Try again when it finishes.",
                            holder=f"process {pid}" if pid else "another process", index=index) from None
                    time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        os.close(fd)  # releases the flock
