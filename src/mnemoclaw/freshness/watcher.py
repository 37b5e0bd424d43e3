"""Watching the memory files and asking for a sync after a quiet moment.

Native notifications (inotify, FSEvents, ReadDirectoryChangesW through ``watchfiles``)
cost one watch per directory and a single descriptor, never one per file. Where they
are unavailable (watch limit reached, network or container filesystems) the watcher
polls instead.

Only what the index reads is watched: the workspace root (not recursively: for
MEMORY.md, memory.md and the memory/ folder itself), memory/ and each extra folder
recursively, an extra file's folder, and the transcript folder. Events on other files
(editor swap files, JSON, anything under .git or node_modules) are dropped.

A burst of writes becomes one flush: ``on_change`` runs when no relevant event has
arrived for ``debounce_ms``, or at the latest ``max_wait_ms`` after the first one, so
a stream of writes that never pauses still gets synced.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..notes.discovery import IGNORED_DIRS, ROOT_FILES

log = logging.getLogger(__name__)

POLL_DELAY_MS = 500
MAX_WAIT_FACTOR = 4


@dataclass(frozen=True)
class Target:
    path: str  # an existing directory
    recursive: bool
    kind: str  # "root" | "tree" | "file" | "sessions"
    file: str = ""  # for kind "file": the one file that matters


class Watcher:
    def __init__(
        self,
        workspace: str,
        extra_paths: Iterable[str],
        on_change: Callable[[set[str]], None],
        *,
        sessions_dir: str | None = None,
        debounce_ms: int = 1500,
        max_wait_ms: int | None = None,
        polling: bool | None = None,
    ):
        self.workspace = os.path.realpath(workspace)
        self.extra_paths = [os.path.abspath(os.path.expanduser(p)) for p in extra_paths]
        self.sessions_dir = os.path.realpath(sessions_dir) if sessions_dir else None
        self.on_change = on_change
        self.debounce = debounce_ms / 1000
        self.max_wait = (max_wait_ms if max_wait_ms is not None else MAX_WAIT_FACTOR * debounce_ms) / 1000
        self.polling = _env_polling() if polling is None else polling
        self.flushes = 0  # how many times on_change ran
        self.events = 0  # relevant file events seen
        self.mode = "stopped"
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._first = 0.0
        self._last = 0.0
        self._stop = threading.Event()
        self._arm_stop: threading.Event | None = None
        self._threads: list[threading.Thread] = []
        self._targets: list[Target] = []
        self._flusher: threading.Thread | None = None
        self._arm_lock = threading.Lock()

    # -- lifecycle ----------------------------------------------------------------
    def start(self) -> Watcher:
        self._stop.clear()
        quiet = logging.getLogger("watchfiles")
        if quiet.level == logging.NOTSET:  # it logs every batch of changes at INFO
            quiet.setLevel(logging.WARNING)
        self.mode = "polling" if self.polling else "native"
        self._arm()
        self._flusher = threading.Thread(target=self._flush_loop, name="mnemoclaw-debounce", daemon=True)
        self._flusher.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._arm_stop is not None:
            self._arm_stop.set()
        with self._cond:
            self._cond.notify_all()
        for t in self._threads + ([self._flusher] if self._flusher else []):
            if t is not threading.current_thread():
                t.join(5)
        self.mode = "stopped"

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def targets(self) -> list[Target]:
        return list(self._targets)

    # -- what to watch ------------------------------------------------------------
    def _compute_targets(self) -> list[Target]:
        out = []
        if os.path.isdir(self.workspace):
            out.append(Target(self.workspace, False, "root"))
        else:
            out += _pending(self.workspace)
        trees = [os.path.join(self.workspace, "memory")] + self.extra_paths
        for p in trees:
            if os.path.islink(p):
                continue
            if os.path.isdir(p):
                out.append(Target(os.path.realpath(p), True, "tree"))
            elif p.lower().endswith(".md") and os.path.isdir(os.path.dirname(p)):
                out.append(Target(os.path.realpath(os.path.dirname(p)), False, "file", file=os.path.realpath(p)))
            elif not os.path.exists(p) and p not in trees[:1]:
                out += _pending(p)  # not there yet: watch for it to appear
        if self.sessions_dir and os.path.isdir(self.sessions_dir):
            out.append(Target(self.sessions_dir, False, "sessions"))
        return out

    def _arm(self) -> None:
        with self._arm_lock:
            if not self._stop.is_set():
                self._arm_locked()

    def _arm_locked(self) -> None:
        if self._arm_stop is not None:
            self._arm_stop.set()
        stop = self._arm_stop = threading.Event()
        self._targets = self._compute_targets()
        self._threads = [t for t in self._threads if t.is_alive()]
        for recursive in (True, False):
            paths = sorted({t.path for t in self._targets if t.recursive == recursive})
            if recursive:  # a tree inside another tree is already covered
                paths = [p for p in paths if not any(p != q and p.startswith(q + os.sep) for q in paths)]
            if not paths:
                continue
            t = threading.Thread(target=self._watch_loop, args=(paths, recursive, stop),
                                 name=f"mnemoclaw-watch-{'tree' if recursive else 'dirs'}", daemon=True)
            t.start()
            self._threads.append(t)

    def _watch_loop(self, paths: list[str], recursive: bool, stop: threading.Event) -> None:
        try:
            import watchfiles
        except ImportError:  # pragma: no cover - a dependency; kept for trimmed installs
            log.warning("watchfiles is not installed; file watching is off (pip install watchfiles)")
            return
        polling = self.polling
        while not (stop.is_set() or self._stop.is_set()):
            try:
                self.mode = "polling" if polling else "native"
                for changes in watchfiles.watch(
                    *paths, watch_filter=None, debounce=200, step=20, stop_event=stop, recursive=recursive,
                    force_polling=polling, poll_delay_ms=POLL_DELAY_MS, raise_interrupt=False,
                    ignore_permission_denied=True, rust_timeout=1000,
                ):
                    self._on_events(changes)
                return
            except OSError as exc:
                if polling:
                    log.error("cannot watch %s: %s", ", ".join(paths), exc)
                    return
                # e.g. the inotify watch limit (fs.inotify.max_user_watches) was reached
                log.warning("native file watching failed (%s); polling every %d ms instead", exc, POLL_DELAY_MS)
                polling = True
            except Exception as exc:  # a path vanished between listing and watching: look again
                log.info("re-arming the watcher after: %s", exc)
                if not stop.wait(0.5):
                    self._arm()
                return

    # -- events -------------------------------------------------------------------
    def relevant(self, path: str) -> bool | str:
        """True if ``path`` matters to the index; "rearm" if the watched set must change."""
        for t in self._targets:
            if t.kind == "file":
                if path == t.file:
                    return True
                continue
            if t.kind == "pending":
                continue  # see the end: anything on the way to a missing path re-arms
            if t.kind in ("root", "sessions"):
                if os.path.dirname(path) != t.path:
                    continue
                name = os.path.basename(path)
                if t.kind == "sessions":
                    return name.endswith(".jsonl")
                if name in ROOT_FILES:
                    return True
                if name == "memory":
                    return "rearm"
                continue
            if path == t.path:
                return "rearm"  # a watched folder itself was removed or replaced
            if path.startswith(t.path + os.sep):
                rel = path[len(t.path) + 1 :].split(os.sep)
                if any(part in IGNORED_DIRS for part in rel[:-1]) or rel[-1] in IGNORED_DIRS:
                    return False
                name = rel[-1]
                if name.lower().endswith(".md"):
                    return True
                # a folder renamed or removed under the tree takes its notes with it
                return "." not in name and (not os.path.exists(path) or os.path.isdir(path))
        # a folder that did not exist when the watch started (or something on the way to it)
        if any(path == p or p.startswith(path + os.sep) for p in [self.workspace, *self.extra_paths]):
            return "rearm"
        return False

    def _on_events(self, changes: Iterable[tuple[Any, str]]) -> None:
        paths = set()
        rearm = False
        for _, path in changes:
            verdict = self.relevant(path)
            if verdict == "rearm":
                rearm = True
                paths.add(path)
            elif verdict:
                paths.add(path)
        if rearm:
            self._arm()
        if not paths:
            return
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first = now
            self._pending |= paths
            self._last = now
            self.events += len(paths)
            self._cond.notify_all()

    def _flush_loop(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._stop.is_set())
                while self._pending and not self._stop.is_set():
                    due = min(self._last + self.debounce, self._first + self.max_wait)
                    wait = due - time.monotonic()
                    if wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._stop.is_set():
                    return
                paths, self._pending = self._pending, set()
            self.flushes += 1
            try:
                self.on_change(paths)
            except Exception as exc:
                log.warning("sync after file changes failed: %s", exc)


def _pending(path: str) -> list[Target]:
    """Watch the nearest existing folder above a path that does not exist yet."""
    parent = os.path.dirname(path)
    while parent and not os.path.isdir(parent) and parent != os.path.dirname(parent):
        parent = os.path.dirname(parent)
    return [Target(os.path.realpath(parent), False, "pending")] if os.path.isdir(parent) else []


def _env_polling() -> bool:
    return os.environ.get("MNEMOCLAW_WATCH_POLLING", "").lower() in ("1", "true", "yes")
