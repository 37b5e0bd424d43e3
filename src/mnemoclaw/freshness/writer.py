"""A writer thread that keeps the index fresh without making anyone wait.

The watcher, the interval timer, session start and searches that found more work than
they should do inline all *request* a sync; requests that arrive while a sync runs are
merged into one more sync after it. The thread has its own database connection, so
searches on the caller's connection keep reading the last committed state meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from ..errors import LockTimeoutError
from ..types import IndexReport

log = logging.getLogger(__name__)


class Writer(Protocol):
    def sync(self, *, lock_timeout: float | None = None,
             progress: Callable[[int, int], None] | None = None) -> IndexReport: ...
    def close(self) -> None: ...


class BackgroundSync:
    def __init__(self, open_writer: Callable[[], Writer], *, name: str = "mnemoclaw-sync",
                 on_report: Callable[[IndexReport, set[str]], None] | None = None,
                 on_error: Callable[[Exception], None] | None = None):
        self._open_writer = open_writer
        self._on_error = on_error
        self._name = name
        self._on_report = on_report
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._running = False
        self._files: int | None = None  # files the running sync has to index, once it has looked
        self._closed = False
        self._thread: threading.Thread | None = None
        self.syncs = 0
        self.last_error: str | None = None

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._running or bool(self._pending)

    def request(self, reason: str) -> None:
        """Ask for a sync soon; returns at once."""
        with self._cond:
            if self._closed:
                return
            self._pending.add(reason)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait_small(self, files: int, timeout: float) -> str:
        """Wait for the running sync to end unless it has more than ``files`` files to index:
        "idle" (none was running), "ended", or "busy" (a long one, or still running after
        ``timeout``)."""
        with self._cond:
            if not self._running:
                return "idle"
            self._cond.wait_for(lambda: not self._running or (self._files or 0) > files, max(timeout, 0.0))
            return "busy" if self._running else "ended"

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no sync is running or requested; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not (self._pending or self._running), timeout)

    def close(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the thread -------------------------------------------------------------
    def _run(self) -> None:
        writer: Writer | None = None
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._pending or self._closed)
                    if self._closed:
                        return
                    reasons, self._pending = self._pending, set()
                    self._running, self._files = True, None
                try:
                    if writer is None:
                        writer = self._open_writer()
                    self._sync(writer, reasons)
                finally:
                    with self._cond:
                        self._running = False
                        self._cond.notify_all()
        except BaseException as exc:  # never die silently: the next request starts a new thread
            log.error("background sync stopped: %s", exc)
            self.last_error = str(exc)
            with self._cond:
                self._thread = None
                self._running = False
                self._cond.notify_all()
        finally:
            if writer is not None:
                writer.close()

    def _progress(self, done: int, total: int) -> None:
        with self._cond:
            if self._files != total:
                self._files = total
                self._cond.notify_all()

    def _sync(self, writer: Writer, reasons: set[str]) -> None:
        while True:
            try:
                report = writer.sync(lock_timeout=1.0, progress=self._progress)
                break
            except LockTimeoutError:
                # another process is writing; it may take long, and we may be asked to stop
                with self._cond:
                    if self._closed:
                        return
                continue
            except Exception as exc:
                # a dead provider or a full disk: the last good index keeps serving
                self.last_error = str(exc)
                log.warning("background sync (%s) failed: %s", ", ".join(sorted(reasons)), exc)
                if self._on_error is not None:
                    self._on_error(exc)
                return
        self.syncs += 1
        self.last_error = None
        if report.failed:
            log.info("background sync: %d file(s) could not be indexed", len(report.failed))
        if self._on_report is not None:
            self._on_report(report, reasons)
