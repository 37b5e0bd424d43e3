"""Tombstones: what ``forget --session | --source | --participant`` took out, remembered so that
nothing brings it back: not a re-index, not a rebuild, not a re-import of the same export, not
a transcript that another program keeps (OpenClaw's) and mnemoclaw may only read.

One file, ``STATE_DIR/tombstones.json``, a list of records::

    {"kind": "session", "value": "5c9e…", "since": "2026-11-01" | null, "at": "2026-12-04T17:50:00+00:00",
     "items": ["memory/imports/chatgpt/2026-03-01-trip-1a2b3c4d.md", …]}

``since``: only what is dated that day or later is fenced (null: all of it); ``items``: the
imported files a ``source`` forget removed, which a re-import leaves out.

A damaged file is never rewritten and never guessed at: it is read as no tombstones (the plain
path), with one line naming it and the fix, and ``forget`` by origin refuses until it is mended.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .errors import MnemoclawError

log = logging.getLogger(__name__)

FILE = "tombstones.json"  # under the state directory
KINDS = ("session", "source", "participant")
SENDER_FIELDS = ("sender", "senderName", "sender_name", "name", "from", "author")
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")
_warned: set[str] = set()


class TombstoneError(MnemoclawError):
    """The tombstone file cannot be read or written."""


@dataclass(frozen=True)
class Tombstone:
    kind: str  # session | source | participant
    value: str
    since: str | None  # YYYY-MM-DD: only what is dated then or later
    at: str  # when it was forgotten (ISO 8601)
    items: tuple[str, ...] = ()

    def covers(self, day: str | None) -> bool:
        """Whether content of ``day`` (YYYY-MM-DD; None: undated) is fenced: with no ``since``
        everything is; with one, what is dated then or later (what carries no date is left, as
        the forget left it, and it said so)."""
        return self.since is None or (day is not None and day >= self.since)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "since": self.since, "at": self.at, "items": list(self.items)}


@dataclass
class Fences:
    """The tombstones in force, and why none are when the file is damaged."""

    tombstones: list[Tombstone] = field(default_factory=list)
    damaged: str | None = None

    def _of(self, kind: str) -> list[Tombstone]:
        return [t for t in self.tombstones if t.kind == kind]

    def session(self, session_id: str | None, day: str | None = None) -> bool:
        return bool(session_id) and any(t.value == session_id and t.covers(day) for t in self._of("session"))

    def participant(self, name: str | None, day: str | None = None) -> bool:
        said = (name or "").strip().casefold()
        return bool(said) and any(t.value.casefold() == said and t.covers(day) for t in self._of("participant"))

    def imported(self, rel: str) -> bool:
        return any(rel in t.items for t in self._of("source"))

    def entry(self, attrs: dict[str, Any], day: str | None) -> bool:
        """A memory entry an agent wrote in a forgotten session."""
        return self.session(attrs.get("session"), day)

    def transcript(self, session_id: str, data: str) -> tuple[str, int]:
        """A transcript's JSONL with the fenced lines blanked (line numbers kept, so citations hold),
        and how many were."""
        if not self.tombstones:
            return data, 0
        session_wide = [t for t in self._of("session") if t.value == session_id]
        people = self._of("participant")
        if not session_wide and not people:
            return data, 0
        out, dropped = [], 0
        for line in data.split("\n"):
            entry = json_entry(line)
            day = entry_day(entry)
            if entry is not None and (any(t.covers(day) for t in session_wide)
                                      or (people and self.participant(sender(entry), day))):
                out.append("")
                dropped += 1
            else:
                out.append(line)
        return "\n".join(out), dropped


def json_entry(line: str) -> dict[str, Any] | None:
    """One JSONL line as the object it holds (None: not an object, or not JSON)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        got = json.loads(line)
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def entry_day(entry: dict[str, Any] | None) -> str | None:
    """The day (UTC, YYYY-MM-DD) a transcript entry was written, from ``at`` / ``timestamp``."""
    if not entry:
        return None
    for key in ("at", "timestamp", "ts", "createdAt"):
        value = entry.get(key)
        if isinstance(value, (int, float)) and value > 0:
            seconds = value / 1000 if value > 1e11 else value  # OpenClaw writes milliseconds
            return datetime.fromtimestamp(seconds, UTC).date().isoformat()
        if isinstance(value, str) and (m := _DAY.match(value)):
            return m.group(1)
    return None


def sender(entry: dict[str, Any]) -> str | None:
    """Who said a transcript message, where the transcript says (a group chat's sender)."""
    msg = entry.get("message") if isinstance(entry.get("message"), dict) else entry
    for holder in (msg, entry):
        for key in SENDER_FIELDS:
            value = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, dict):  # {"sender": {"name": …, "id": …}}
                for inner in ("name", "displayName", "username", "id"):
                    if isinstance(value.get(inner), str) and value[inner].strip():
                        return value[inner].strip()
    return None


def file_day(path: str) -> str | None:
    """The day a memory file is about, from its name (``memory/2026-03-01.md``,
    ``memory/imports/chatgpt/2026-03-01-trip-….md``); None when it names none."""
    m = _DAY.search(path.rsplit("/", 1)[-1])
    return m.group(1) if m else None


def _parse(data: Any) -> list[Tombstone]:
    if not isinstance(data, list):
        raise ValueError("it is not a list of records")
    out = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or rec.get("kind") not in KINDS or not isinstance(rec.get("value"), str) \
                or not rec["value"] or not isinstance(rec.get("at"), str):
            raise ValueError(f"record {i} is not a tombstone (kind, value, at)")
        since = rec.get("since")
        if since is not None:
            date.fromisoformat(str(since))  # ValueError: not a date
        items = rec.get("items") or []
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise ValueError(f"record {i}'s items are not a list of paths")
        out.append(Tombstone(rec["kind"], rec["value"], since, rec["at"], tuple(items)))
    return out


def load(state_dir: str | Path, *, quiet: bool = False) -> Fences:
    """The tombstones in force; a damaged file is said once in the log (unless ``quiet``: the
    caller says it) and read as none."""
    path = Path(state_dir) / FILE
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return Fences()
    except (OSError, UnicodeDecodeError) as exc:
        return _damaged(path, str(getattr(exc, "strerror", None) or exc), quiet)
    try:
        return Fences(_parse(json.loads(text)))
    except (ValueError, TypeError) as exc:
        return _damaged(path, str(exc), quiet)


def _damaged(path: Path, why: str, quiet: bool) -> Fences:
    say = (f"{path} is damaged ({why}): forgotten sessions and sources are not kept out until it is mended; "
           "fix the JSON or move the file aside, then run `mnemoclaw forget` by origin again")
    if not quiet and str(path) not in _warned:
        _warned.add(str(path))
        log.warning("%s", say)
    return Fences(damaged=say)


def add(state_dir: str | Path, tombstone: Tombstone) -> None:
    """Record ``tombstone`` (atomically: the file is whole before and after). Refuses when the
    file is damaged: it is never overwritten."""
    fences = load(state_dir, quiet=True)
    if fences.damaged:
        raise TombstoneError(fences.damaged)
    kept = [t for t in fences.tombstones if (t.kind, t.value, t.since) != (tombstone.kind, tombstone.value,
                                                                             tombstone.since)]
    same = [t for t in fences.tombstones if t not in kept]
    items = tuple(dict.fromkeys([*(x for t in same for x in t.items), *tombstone.items]))
    merged = [*kept, Tombstone(tombstone.kind, tombstone.value, tombstone.since, tombstone.at, items)]
    Path(state_dir).mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(Path(state_dir) / FILE,
                     json.dumps([t.as_dict() for t in merged], ensure_ascii=False, indent=1) + "\n")
    except OSError as exc:
        raise TombstoneError(f"could not record the tombstone in {Path(state_dir) / FILE} "
                             f"({exc.strerror or exc}); nothing was removed") from None
