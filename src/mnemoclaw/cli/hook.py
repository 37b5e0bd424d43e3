"""A ``recall --hook`` run has one deadline, and never holds or blocks the prompt.

Claude Code and Codex wait for a ``UserPromptSubmit`` hook before the prompt goes on (docs/recall.md's
example allows 10 s), and read an exit code of 2 as "block this prompt". So a hook's run:

- has one deadline, ``--timeout-ms`` (default 3 s) from when mnemoclaw starts, that bounds everything
  it does: asking a running mnemoclaw (serve/nearby_client.py), importing, reading the settings,
  opening the index, indexing what changed, embedding the message, searching. At the deadline a watchdog thread
  says so in one line on stderr and ends the process with exit 0 and nothing on stdout, whatever the
  work was doing. Ending it there is what a ``kill -9`` does: the index is SQLite in WAL mode (an
  unfinished transaction is rolled back by the next reader), the write lock is a ``flock`` the kernel
  releases, and files are written whole or not at all (atomic.py);
- exits 0 on a usage error too (click's message is kept on stderr).

Only the standard library: the client imports this before it knows whether a server answers. The
option, its bounds and the line said at the deadline (``timeout_ms``, ``late``) are the client's,
which reads them before click is imported.
"""

from __future__ import annotations

import os
import sys

from ..serve.nearby_client import DEFAULT_MS, MAX_MS, OPTION, PREFIX, late, timeout_ms

TYPE_CHECKING = False  # typing costs milliseconds on every prompt a hook answers
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["DEFAULT_MS", "MAX_MS", "OPTION", "PREFIX", "Watchdog", "current", "late", "run", "timeout_ms"]

_current: Watchdog | None = None


class Watchdog:
    """Ends this process at ``deadline`` (a ``time.monotonic()``) with exit 0 and one line, unless
    the run claimed the right to write its answer first."""

    def __init__(self, deadline: float, ms: int):
        import threading

        self.deadline = deadline
        self.ms = ms
        self.doing = "starting"  # what the run is doing, for the line at the deadline
        self._lock = threading.Lock()
        self._claimed = False
        self._settled = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="mnemoclaw-hook-deadline", daemon=True)

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def claim(self) -> None:
        """The run is about to write its answer: the deadline no longer ends it. (If the deadline
        has just fired, this waits for the process to end, so nothing is written twice.)"""
        with self._lock:
            self._claimed = True
            self._settled.set()

    def _watch(self) -> None:
        import time

        if self._settled.wait(max(0.0, self.deadline - time.monotonic())):
            return
        with self._lock:  # held until the process ends: a claim after this never returns
            if self._claimed:
                return
            try:
                os.write(2, late(self.ms, self.doing).encode("utf-8", "replace"))
            except OSError:
                pass
            os._exit(0)  # without waiting for the work, its threads or interpreter shutdown


def current() -> Watchdog | None:
    """The watchdog of this process's hook run, if it is one (set by ``run``)."""
    return _current


def run(command: Callable[[], object], deadline: float, ms: int) -> None:
    """Run ``command`` (the click group) as a hook's run: bounded by ``deadline``, exit 0 always."""
    global _current
    _current = watchdog = Watchdog(deadline, ms).start()
    try:
        command()
    except SystemExit as exc:
        if exc.code not in (0, None):  # a usage error: click said what; a hook never blocks the prompt
            sys.stderr.flush()
    except Exception:  # a bug keeps its traceback, and still does not block the prompt
        import traceback

        traceback.print_exc()
    watchdog.claim()
    sys.exit(0)
