"""Session transcripts (append-only JSONL) and their metadata (``sessions.json``).

Every entry is one JSON object on one line, written with a single ``write`` on a file
opened for appending, so entries never interleave and a crash can at worst cut the
last line short. Such a torn last line is detected when the transcript is opened and
cut off (it is saved next to the transcript first); nothing before it is touched.
``sessions.json`` is replaced atomically (write to a temporary file, then rename).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..atomic import private_dir, write_atomic
from ..errors import ReadOnlyError
from ..locks import file_lock
from ..notes import tombstones
from ..text import parse

log = logging.getLogger(__name__)


def epoch_seconds(value: Any) -> float:
    """A timestamp from sessions.json in seconds (OpenClaw writes milliseconds)."""
    try:
        ts = float(value or 0)
    except (TypeError, ValueError):
        return 0.0
    return ts / 1000.0 if ts > 1e11 else ts


class SessionStore:
    """``read_only``: another program's sessions (OpenClaw's): read them, never write,
    repair or create anything there. ``state_dir``: where the tombstones are; what they fence
    is never read back (a forgotten line of OpenClaw's transcript, one a restore brought back)."""

    def __init__(self, directory: Path, *, read_only: bool = False, state_dir: Path | None = None):
        self.dir = Path(directory)
        self.read_only = read_only
        self.state_dir = state_dir
        if not read_only:
            private_dir(self.dir)
        self.meta_path = self.dir / "sessions.json"
        self._lines: dict[str, int] = {}  # lines per transcript, so appends know their line number

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"the sessions in {self.dir} are read-only here; nothing was written")

    # -- metadata ---------------------------------------------------------------
    @contextmanager
    def _meta_lock(self) -> Iterator[None]:
        with file_lock(str(self.meta_path) + ".lock", timeout=30, what="sessions.json"):
            yield

    def all_meta(self) -> dict[str, dict[str, Any]]:
        try:
            with open(self.meta_path, encoding="utf-8") as fh:
                data = parse.loads(fh.read())
            return data if isinstance(data, dict) else {}
        except FileNotFoundError:
            return {}
        except ValueError:
            if self.read_only:
                log.warning("%s is not valid JSON; listing no sessions from it", self.meta_path)
                return {}
            broken = self.meta_path.with_suffix(f".json.broken-{int(time.time())}")
            os.replace(self.meta_path, broken)
            log.warning("sessions.json was not valid JSON; moved to %s and started afresh", broken)
            return {}

    def meta(self, session_id: str) -> dict[str, Any]:
        return dict(self.all_meta().get(session_id) or {})

    def update_meta(self, session_id: str, **changes: Any) -> dict[str, Any]:
        self._writable()
        with self._meta_lock():
            data = self.all_meta()
            entry = {**(data.get(session_id) or {}), **changes}
            data[session_id] = entry
            write_atomic(self.meta_path, json.dumps(data, ensure_ascii=False, indent=1))
        return entry

    def latest(self) -> str | None:
        data = self.all_meta()
        if not data:
            return None
        return max(data, key=lambda k: epoch_seconds(data[k].get("updatedAt")))

    @staticmethod
    def new_id() -> str:
        return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]

    # -- transcripts --------------------------------------------------------------
    def path(self, session_id: str) -> Path:
        """The transcript of a session. OpenClaw keys sessions.json by session key
        (``agent:main:main``) and names the transcript by the entry's ``sessionId``."""
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise ValueError(f"invalid session id {session_id!r}")
        entry = self.all_meta().get(session_id) if self.read_only else None
        name = entry.get("sessionId") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            name = session_id
        return self.dir / f"{name}.jsonl"

    def append(self, session_id: str, entry: dict[str, Any]) -> int:
        """Append one entry; returns its 1-based line number."""
        self._writable()
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        path = self.path(session_id)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            os.write(fd, line)
        finally:
            os.close(fd)
        self._lines[session_id] = self._lines.get(session_id, self._count(path, size)) + 1
        return self._lines[session_id]

    @staticmethod
    def _count(path: Path, size: int) -> int:
        if size == 0:
            return 0
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))

    def read(self, session_id: str) -> list[tuple[int, dict[str, Any]]]:
        """Every entry with its line number; repairs a torn last line."""
        path = self.path(session_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        if data and not data.endswith(b"\n") and self.read_only:
            data = data[: data.rfind(b"\n") + 1]  # someone else's file: read the whole lines, repair nothing
        elif data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            try:
                parse.loads(tail)
                data = data + b"\n"  # a whole entry without its newline: complete it
                with open(path, "ab") as fh:
                    fh.write(b"\n")
            except ValueError:
                saved = path.with_suffix(f".torn-{int(time.time())}")
                write_atomic(saved, tail)
                os.truncate(path, cut)
                data = data[:cut]
                log.warning("transcript %s ended in a torn line (a crash mid-write); it was cut off and kept in %s",
                            path.name, saved.name)
        if self.state_dir is not None and data:
            fenced, n = tombstones.load(self.state_dir).transcript(path.stem, data.decode("utf-8", "replace"))
            data = fenced.encode("utf-8") if n else data  # blanked: every other line keeps its number
        out = []
        for n, raw in enumerate(data.split(b"\n")[:-1] if data else [], start=1):
            if not raw.strip():
                continue
            try:
                out.append((n, parse.loads(raw)))
            except ValueError:
                log.warning("transcript %s line %d is not JSON; skipped", path.name, n)
        self._lines[session_id] = data.count(b"\n")
        return out
