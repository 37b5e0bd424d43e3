"""Keeping one agent's index fresh: the sync before a search, the background writer, the
watcher and the interval timer.

A search first indexes what changed (newest first, at most ``INLINE_SYNC_FILES``
files); anything bigger (the rest of a large change, a rebuild after a settings change,
transcripts, a repair) is handed to the background writer, whose thread has its own
connection, while the search answers from the last committed index.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..backends.base import Backend
from ..errors import IndexCorruptError, LockTimeoutError, MnemoclawError, ReadOnlyError, WorkspaceError
from ..store.base import damage_reason
from ..types import IndexReport
from .journal import ChangeJournal
from .watcher import Watcher
from .writer import BackgroundSync, Writer

log = logging.getLogger(__name__)

# A search that finds changed files indexes this many (newest first) before answering;
# the rest is left to the background writer, so a large change never stalls a search.
INLINE_SYNC_FILES = 64
# How long a search waits for another writer before it answers from the last commit.
SEARCH_LOCK_WAIT = 0.2
# ... unless that writer is this process's background writer doing an ordinary sync (at
# most INLINE_SYNC_FILES files: the session-start sync, the watcher's after an append): it
# is doing what the search would do itself, and taking longer on a busy machine or with a
# remote provider (one request is 0.2-1 s); the search waits for it, up to this long.
SEARCH_WRITER_WAIT = 10.0


class Freshness:
    def __init__(self, backend: Backend, sync_settings: dict[str, Any], *, workspace: str,
                 extra_paths: Sequence[str], sessions_dir: str | None,
                 inline_sync: Callable[..., IndexReport], open_writer: Callable[[], Writer],
                 on_writer_error: Callable[[Exception], None], allow_background: bool = True):
        self.backend = backend
        self.sync_settings = sync_settings
        self.workspace = workspace
        self.extra_paths = list(extra_paths)
        self.sessions_dir = sessions_dir
        self._inline_sync = inline_sync
        self._open_writer = open_writer
        self._on_writer_error = on_writer_error
        self.allow_background = allow_background
        self._background: BackgroundSync | None = None
        self._watcher: Watcher | None = None
        # while watching, the kernel's record of file changes spares a search the walk over
        # every file; memory_clean: the last walk found nothing to index and the journal has
        # recorded no change to a memory file since
        self._journal: ChangeJournal | None = None
        self._memory_clean = False
        self.walks = 0  # searches that checked every memory file
        self.walks_spared = 0  # searches the journal spared that
        self._interval_stop: threading.Event | None = None
        self.error: str | None = None  # why the last search-triggered sync failed
        self.left_over: tuple[int, int] | None = None  # (files done, files changed) by the last inline sync
        # called with (report, reasons) after each background sync
        self.listeners: list[Callable[[IndexReport, set[str]], None]] = []

    # -- the background writer ----------------------------------------------------------
    @property
    def background(self) -> BackgroundSync:
        """The writer thread (started on first request), with its own connection."""
        if self._background is None:
            self._background = BackgroundSync(self._open_writer, on_report=self._sync_done,
                                              on_error=self._on_writer_error)
        return self._background

    def request(self, reason: str) -> None:
        """Sync soon in the background writer; returns at once."""
        if self.allow_background and not self.backend.read_only:
            self.background.request(reason)

    def restart_writer(self) -> None:
        """The next request starts a new writer (the provider changed: the old one embeds with the old)."""
        if self._background is not None:
            self._background.close(timeout=0)
            self._background = None

    def _sync_done(self, report: IndexReport, reasons: set[str]) -> None:
        for listener in list(self.listeners):
            try:
                listener(report, reasons)
            except Exception as exc:
                log.warning("sync listener failed: %s", exc)

    # -- before a search ----------------------------------------------------------------
    def before_search(self) -> None:
        """Index what changed, so a note written a moment ago is found."""
        self.left_over = None
        if not self.sync_settings["onSearch"] or self.backend.read_only:
            return
        if self.backend.damaged() is not None:
            self.request("repair")  # too slow to do before a search; it answers from what is readable
            return
        journal = self._journal
        changed = journal.take() if journal is not None else None
        if changed is None:
            self._memory_clean = False
        else:
            if "sessions" in changed:
                self.request("sessions")
            if "memory" in changed:
                self._memory_clean = False
            elif self._memory_clean:
                self.walks_spared += 1
                return
        self.walks += 1
        try:
            dirty = self.backend.dirty_sources()
        except IndexCorruptError as exc:
            self.backend.mark_damaged(damage_reason(exc))
            self.request("repair")
            return
        if "sessions" in dirty:
            self.request("sessions")
        if "memory" not in dirty:
            self._memory_clean = changed is not None  # and the journal has seen everything since it was read
            return
        if self.backend.needs_rebuild() and self.backend.has_files():
            self.request("rebuild")
            return
        try:
            report = self._sync_before_search()
            if report.deferred:
                done = report.added + report.changed
                self.left_over = (done, done + report.deferred)
                self.request("search")
        except LockTimeoutError:
            # another writer (perhaps a long rebuild) is bringing the index up to date
            holder = self.backend.lock_holder()
            who = "this process's background sync" if holder == os.getpid() else f"process {holder or '?'}"
            log.info("%s is updating the index; searching the last committed state", who)
        except WorkspaceError:
            raise
        except (MnemoclawError, OSError) as exc:
            # disk full, provider down, ...: answer from the last good index and say so
            self.error = str(exc)
            log.warning("could not update the index before searching: %s", exc)

    def _sync_before_search(self) -> IndexReport:
        """The inline sync; if the lock's wait runs out while this process's own background
        writer holds it for an ordinary sync (no bigger than a search's own), wait for that
        sync to end and try again: the search then indexes whatever it left (a note appended
        after it looked). A long job, another process's, or one still running after
        SEARCH_WRITER_WAIT is not waited for: the search answers from the last commit."""
        deadline = time.monotonic() + SEARCH_WRITER_WAIT
        idle_retries = 1  # the writer may have let go just after the lock's wait ran out
        while True:
            try:
                return self._inline_sync(lock_timeout=SEARCH_LOCK_WAIT, sources=("memory",), limit=INLINE_SYNC_FILES,
                                         fallback_now=False)
            except LockTimeoutError:
                bg = self._background
                if bg is None or self.backend.lock_holder() != os.getpid():
                    raise
                state = bg.wait_small(INLINE_SYNC_FILES, deadline - time.monotonic())
                if state == "busy" or (state == "idle" and idle_retries == 0):
                    raise
                idle_retries -= state == "idle"

    # -- watching and the interval --------------------------------------------------------
    def start_session(self) -> None:
        """An agent session starts: sync in the background (``sync.onSessionStart``)."""
        if self.sync_settings["onSessionStart"]:
            self.request("session-start")

    def watch(self, *, debounce_ms: int | None = None, polling: bool | None = None) -> Watcher:
        """Watch the memory files; changes are synced in the background after the debounce."""
        if self.backend.read_only:
            raise ReadOnlyError(f"the index cannot be written ({self.backend.read_only_why}), so it cannot be "
                                "kept fresh")
        if self._watcher is None:
            self._watcher = Watcher(
                self.workspace, self.extra_paths, lambda paths: self.request("watch"),
                sessions_dir=self.sessions_dir,
                debounce_ms=self.sync_settings["watchDebounceMs"] if debounce_ms is None else debounce_ms,
                polling=polling,
            ).start()
            if self._watcher.mode == "native" and self.sync_settings["onSearch"]:
                self._journal = ChangeJournal(self.workspace, self.extra_paths, self.sessions_dir).start()
        return self._watcher

    def follow(self) -> None:
        """Read the kernel's record of file changes before each search, without a watcher of
        this object's own (another one keeps the index fresh: a second reader of the same index
        in a watching process)."""
        if self._journal is None and self.sync_settings["onSearch"] and not self.backend.read_only:
            journal = ChangeJournal(self.workspace, self.extra_paths, self.sessions_dir).start()
            if journal.trusted:
                self._journal = journal
            else:
                journal.close()

    @property
    def search_check(self) -> dict[str, Any]:
        """How a search learns what changed: the kernel's record of file events ("events"), or
        a stat of every memory file ("walk", with the reason)."""
        j = self._journal
        if not self.sync_settings["onSearch"]:
            out: dict[str, Any] = {"mode": "off", "why": "sync.onSearch is false"}
        elif j is not None and j.trusted:
            out = {"mode": "events", "why": None, "watches": j.watches, "overflows": j.overflows}
        elif j is not None:
            out = {"mode": "walk", "why": j.why}
        elif self._watcher is not None:
            out = {"mode": "walk", "why": f"the watcher is {self._watcher.mode} (file events are not delivered)"}
        else:
            out = {"mode": "walk", "why": "this process does not watch the files"}
        return {**out, "walks": self.walks, "walksSpared": self.walks_spared}

    @property
    def watching(self) -> str:
        return self._watcher.mode if self._watcher else "off"

    def start(self, *, watch: bool | None = None) -> None:
        """Everything a long-running process wants: session-start sync, watcher, interval sync."""
        if self.backend.read_only:
            return  # served as it is: nothing to keep fresh
        self.start_session()
        if self.sync_settings["watch"] if watch is None else watch:
            self.watch()
        minutes = self.sync_settings["intervalMinutes"]
        if minutes and self._interval_stop is None:
            stop = self._interval_stop = threading.Event()

            def tick() -> None:
                while not stop.wait(minutes * 60):
                    self.request("interval")

            threading.Thread(target=tick, name="mnemoclaw-interval", daemon=True).start()

    def stop(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            self._memory_clean = False
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self._interval_stop is not None:
            self._interval_stop.set()
            self._interval_stop = None
        if self._background is not None:
            self._background.close()
            self._background = None

    def status(self) -> dict[str, Any]:
        bg = self._background
        return {"watching": self.watching, "syncs": bg.syncs if bg else 0, "busy": bg.busy if bg else False,
                "lastError": (bg.last_error if bg else None) or self.error, "searchCheck": self.search_check}
