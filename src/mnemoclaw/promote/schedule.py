"""The scheduled promotion of a long-lived process (``watch``, ``mcp``, ``ui``) when
``dreaming.enabled``: at each minute ``dreaming.frequency`` names (cron, local time), one run of
``mnemoclaw promote --apply`` on a Memory of its own. One run at a time across processes, and one
per scheduled minute: the first process to take the lock runs it and stamps the minute, the
others see the stamp and leave it. A run that fails is one line in the log; the next minute tries
again. Nothing of it reaches a chat: the model step (promote/merge.py) is a request of its own,
never a turn of a session, and no transcript records it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import private_dir, write_atomic
from ..config.dreaming import dreaming
from ..errors import LockTimeoutError, MnemoclawError
from ..locks import file_lock
from ..text.cron import next_run, parse_cron

if TYPE_CHECKING:
    from ..api import Memory
    from ..config import Settings

log = logging.getLogger(__name__)


class Nightly:
    """A thread that runs promotion at the scheduled minutes until ``stop``."""

    def __init__(self, settings: Settings, open_memory: Callable[[], Memory], *,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], Any] | None = None):
        self.settings = settings
        self.opts = dreaming(settings.raw if isinstance(settings.raw, dict) else {})
        self.cron = parse_cron(self.opts.frequency, "dreaming.frequency")
        self._open = open_memory
        self._clock = clock
        self._stop = threading.Event()
        self._sleep = sleep or self._stop.wait
        self._thread: threading.Thread | None = None
        self.last: dict[str, Any] | None = None  # what the last run of this process did

    @property
    def folder(self) -> Path:
        return Path(self.settings.state_dir) / "promote" / self.settings.agent_id

    def start(self) -> Nightly:
        self._thread = threading.Thread(target=self._loop, name="mnemoclaw-promote", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            slot = next_run(self.cron, datetime.fromtimestamp(self._clock()))
            self._sleep(max(0.0, slot.timestamp() - self._clock()))
            if self._stop.is_set():
                return
            self.run_slot(slot)

    def run_slot(self, slot: datetime) -> dict[str, Any] | None:
        """The run of one scheduled minute, unless another process has it or had it."""
        private_dir(self.folder)
        stamp = self.folder / "nightly.json"
        try:
            with file_lock(str(self.folder / "nightly.lock"), timeout=0, what="the scheduled promotion"):
                try:
                    done = json.loads(stamp.read_text("utf-8")).get("slot")
                except (OSError, ValueError):
                    done = None
                if done == slot.isoformat():
                    return None
                self.last = self._run()
                write_atomic(stamp, json.dumps({"slot": slot.isoformat(), **self.last}))
                return self.last
        except LockTimeoutError:
            return None  # another process runs this minute

    def _run(self) -> dict[str, Any]:
        from . import run

        try:
            with self._open() as mem:
                p = run.plan(mem, self.opts)
                done = run.apply(mem, p)
            log.info("scheduled promotion: %d entr%s promoted into MEMORY.md", done.get("promoted", 0),
                     "y" if done.get("promoted", 0) == 1 else "ies")
            return {"at": datetime.fromtimestamp(self._clock()).isoformat(timespec="seconds"), **done}
        except (MnemoclawError, OSError) as exc:
            log.warning("the scheduled promotion did not run: %s (the next scheduled minute tries again)", exc)
            return {"at": datetime.fromtimestamp(self._clock()).isoformat(timespec="seconds"), "error": str(exc)}


def start_nightly(settings: Settings, open_memory: Callable[[], Memory]) -> Nightly | None:
    """The scheduled promotion when ``dreaming.enabled``, started; None when it is not."""
    if not dreaming(settings.raw if isinstance(settings.raw, dict) else {}).enabled:
        return None
    if settings.openclaw_dir is not None:
        log.warning("dreaming.enabled is not applied to an OpenClaw agent: mnemoclaw never writes its MEMORY.md")
        return None
    return Nightly(settings, open_memory).start()


@contextmanager
def nightly(settings: Settings, open_memory: Callable[[], Memory]) -> Iterator[Nightly | None]:
    """``start_nightly`` for the life of a long-running command, stopped when it ends."""
    job = start_nightly(settings, open_memory)
    try:
        yield job
    finally:
        if job is not None:
            job.stop()


__all__ = ["Nightly", "nightly", "start_nightly"]
