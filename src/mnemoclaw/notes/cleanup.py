"""Clean-up: expired and low-importance entries removed (as ``forget`` removes them), old daily
logs moved to ``memory/archive/`` (still searched, ranked below live notes; ``query.archive``
false leaves them out). A plan first; nothing changes until it is applied."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from ..atomic import like_parent_dir
from ..errors import ConfigError, PathDeniedError
from ..markdown.annotations import annotated_entries
from ..search.annotated import ARCHIVE_DIR
from ..text.dates import note_date
from ..types import SourceFile
from .forget import ForgetPlan, Removal, merge_ranges, read_split

_AGE = re.compile(r"^\s*(\d+)\s*([dwmy]?)\s*$")
_UNIT_DAYS = {"": 1, "d": 1, "w": 7, "m": 30, "y": 365}
_DAILY = re.compile(r"^memory/[^/]+\.md$")


def parse_age(text: str) -> int:
    """'180d', '26w', '6m', '1y' or a number of days -> days."""
    m = _AGE.match(text.lower())
    if not m:
        raise ConfigError(f"--older-than {text!r} is not an age: write a number of days, or 180d, 26w, 6m, 1y")
    return int(m.group(1)) * _UNIT_DAYS[m.group(2)]


@dataclass(frozen=True, slots=True)
class Move:
    path: str  # workspace-relative
    dest: str
    day: date

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "to": self.dest, "date": self.day.isoformat()}


@dataclass
class CleanupPlan:
    removals: ForgetPlan
    why: dict[tuple[str, int], str] = field(default_factory=dict)  # (path, start line) -> reason
    moves: list[Move] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.removals.removals and not self.moves

    def as_dict(self) -> dict[str, Any]:
        removals = [{**r.as_dict(), "why": self.why.get((r.path, r.start), "")} for r in self.removals.removals]
        return {"remove": removals, "linesRemoved": self.removals.line_count,
                "archive": [m.as_dict() for m in self.moves]}


def plan(files: Sequence[SourceFile], workspace: Path, today: date, *, older_than_days: int | None,
         below_importance: int | None, expired: bool) -> CleanupPlan:
    removals = ForgetPlan("cleanup")
    out = CleanupPlan(removals)
    ws = os.path.realpath(workspace)
    for f in files:
        if f.source != "memory":
            continue
        try:
            text = "\n".join(read_split(f.abspath))
        except (OSError, UnicodeDecodeError):
            continue
        found: list[tuple[int, int, str]] = []
        for s, e, attrs, _ in annotated_entries(text)[0]:
            until = attrs.get("expires")
            if expired and until and date.fromisoformat(until) < today:
                found.append((s, e, f"expired {until}"))
            imp = attrs.get("importance")
            if below_importance is not None and imp is not None and int(imp) < below_importance:
                found.append((s, e, f"importance {imp} < {below_importance}"))
        if found:
            lines = text.split("\n")
            for s, e in merge_ranges([(s, e) for s, e, _ in found], adjacent=False):
                removals.removals.append(Removal(f.path, f.abspath, f.source, s, e, tuple(lines[s - 1 : e])))
                out.why[(f.path, s)] = "; ".join(dict.fromkeys(w for a, b, w in found if s <= a and b <= e))
        inside = os.path.realpath(f.abspath).startswith(ws + os.sep)
        if older_than_days is not None and inside and _DAILY.match(f.path):
            day = note_date(f.path)
            if day is not None and day < today - timedelta(days=older_than_days):
                out.moves.append(Move(f.path, ARCHIVE_DIR + f.path.removeprefix("memory/"), day))
    out.moves.sort(key=lambda m: m.day)
    return out


def move(workspace: Path, moves: Sequence[Move]) -> list[str]:
    """Move the daily logs into the archive; the paths moved (one already there is refused)."""
    ws = Path(os.path.realpath(workspace))
    done = []
    for m in moves:
        src, dest = ws / m.path, ws / m.dest
        if dest.exists():
            raise PathDeniedError(f"{m.dest} exists already; {m.path} was not archived (merge the two by hand)")
        if src.is_symlink() or (dest.parent.exists() and dest.parent.is_symlink()):
            raise PathDeniedError(f"{m.path} or {ARCHIVE_DIR} is a symbolic link; nothing was archived")
        like_parent_dir(dest.parent)
        os.rename(src, dest)
        done.append(m.path)
    return done
