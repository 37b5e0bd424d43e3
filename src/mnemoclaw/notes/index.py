"""The ``Index`` the notes side tells what changed, over a memory backend: the files it reads,
the transcripts a forget reaches, a sync now, and the purge a forget owes the index
(``owed.py``): recorded before the files change, paid after, finished by the next command when
a forget was killed half-way.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..backends.base import Backend
from ..config import Settings
from ..sessions.visibility import transcript_folders, visibility
from ..types import IndexReport, SourceFile
from . import owed, tombstones
from .discovery import discover_sessions
from .owed import Forgotten


class BackendIndex:
    """``Index`` (``notes/handle.py``) over ``backend``; ``sync(**options)`` indexes what changed
    (``Memory.sync``, whose provider decisions it keeps)."""

    def __init__(self, backend: Backend, settings: Settings, sync: Callable[..., IndexReport],
                 clock: Callable[[], float] = time.time):
        self.backend = backend
        self.settings = settings
        self._sync = sync
        self._clock = clock
        self.finishing = False  # paying what forgets owe: the sync that does it must not start another

    def files(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        return self.backend.files(sources)

    def transcript_folders(self) -> list[tuple[str, Path]]:
        """The transcript folders this agent may read, by agent (``tools.sessions.visibility``)."""
        s = self.settings
        s.refresh_transcripts()
        layout = s.openclaw_layout
        return transcript_folders(s.agent_id, s.sessions_dir, visibility(s.raw), openclaw_dir=s.openclaw_dir,
                                  openclaw_version=layout.version if layout is not None else None,
                                  state_dir=s.state_dir)

    def transcripts(self) -> list[SourceFile]:
        out = []
        for agent, folder in self.transcript_folders():
            for f in discover_sessions(folder):
                shown = f.path if agent == self.settings.agent_id else f"sessions/{agent}/{Path(f.abspath).name}"
                out.append(dataclasses.replace(f, path=shown))
        return out

    def refresh(self) -> IndexReport:
        return self._sync(fallback_now=False)

    def owed(self) -> bool:
        """A forget still owes the index its purge (one killed half-way), and the index can take it."""
        return bool(tombstones.load(self.settings.state_dir, quiet=True).pending) and not self.backend.read_only

    def finish(self, *, before: set[str] | None = None, **sync: Any) -> Forgotten | None:
        """Pay what forgets owe the index: None when nothing is owed, or the index cannot be
        written now (``status`` says so until it can). ``sync``: how to sync meanwhile."""
        if self.finishing or self.backend.read_only:
            return None
        self.finishing = True
        try:
            return owed.finish(self.backend.store, self.settings.state_dir,
                               lambda: self._sync(**{"fallback_now": False, **sync}), before=before)
        finally:
            self.finishing = False

    def forgetting(self, paths: Sequence[str], texts: Sequence[str], fences: Sequence[tombstones.Tombstone] = (),
                   said: Sequence[str] = ()) -> AbstractContextManager[Forgotten]:
        at = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self._clock()))
        return owed.forgetting(self.backend.store, self.settings.state_dir, at, paths, texts, fences, said,
                               lambda before: self.finish(before=before))
