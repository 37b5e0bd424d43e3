"""What a search does with the annotations written in the Markdown (markdown/annotations.py):
importance moves an entry up or down the ranking a little and ahead of entries saying the
same thing less importantly, an expired entry is left out, an entry
whose ``key`` a newer entry also has is answered by that newer entry, ``type`` filters.

The view is built from the store's annotated chunks and file records, and rebuilt when the
index changes; an index without annotations costs one dictionary look-up per search.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..markdown.annotations import decode, retired, strip_comments
from ..markdown.chunker import HEADING
from ..store.base import ChunkSource
from ..text.dates import note_date
from ..text.tokenize import similarity_tokens

# Each importance point above or below 5 (the middle of 1-10, and what an entry without
# one counts as) lifts or lowers an entry by this many standard deviations of the fused
# score: enough to order near-duplicates, too little to bury a clearly better match
# (measured by benchmarks/annotations.py, docs/quality.md).
IMPORTANCE_STEP = 0.05
NEUTRAL_IMPORTANCE = 5
# Two results say the same thing when one holds every word of the other and they share
# this much of their words (Jaccard): "Note: Maria prefers window seats" and "Maria prefers
# window seats", not "Elena prefers window seats" (another fact); the more important one
# goes first, wherever the ranking put it.
NEAR_DUPLICATE = 0.6
# Daily logs moved to memory/archive/ (``mnemoclaw cleanup``) rank this far below live notes.
ARCHIVE_SHIFT = -0.5
ARCHIVE_DIR = "memory/archive/"


def archived(path: str) -> bool:
    return path.startswith(ARCHIVE_DIR)


@dataclass(frozen=True, slots=True)
class Entry:
    """Adjacent chunks of one file that carry the same key: one entry, newest last."""

    key: str
    path: str
    ids: tuple[int, ...]
    start: int
    end: int
    when: tuple  # (day, first indexed, line): what "newer" means (AnnotationView._age)

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start}-L{self.end}"


class AnnotationView:
    """The index's annotations, arranged for ranking."""

    def __init__(self, store: ChunkSource):
        self.store = store
        self._built: tuple | None = None
        self.attrs: dict[int, dict] = {}
        self.entry_of: dict[int, Entry] = {}
        self.current: dict[str, Entry] = {}

    def refresh(self) -> AnnotationView:
        notes = self.store.annotations()
        records = self.store.file_records()
        if self._built is not None and self._built[0] is notes and self._built[1] is records:
            return self
        self.attrs = {rid: decode(meta) for rid, (_, _, _, meta) in notes.items()}
        keyed: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
        for rid, (path, start, end, _) in notes.items():
            key = self.attrs[rid].get("key")
            if key:
                keyed.setdefault((key, path), []).append((start, end, rid))
        self.entry_of, self.current = {}, {}
        for (key, path), parts in keyed.items():
            parts.sort()
            groups: list[list[tuple[int, int, int]]] = []
            for part in parts:
                # one entry the chunker cut in pieces: its chunks overlap or meet
                if groups and part[0] <= groups[-1][-1][1] + 1 and self._one_entry(groups[-1][-1][2], part[2]):
                    groups[-1].append(part)
                else:
                    groups.append([part])
            for g in groups:
                entry = Entry(key, path, tuple(p[2] for p in g), g[0][0], max(p[1] for p in g),
                              self._age(path, self.attrs[g[0][2]], g[0][0]))
                for rid in entry.ids:
                    self.entry_of[rid] = entry
                best = self.current.get(key)
                if best is None or (entry.when, entry.path) > (best.when, best.path):
                    self.current[key] = entry
        self._built = (notes, records)
        return self

    def _one_entry(self, a: int, b: int) -> bool:
        """Two adjacent keyed chunks are pieces of one entry (the chunker cut a long one; the
        indexer marks each piece with the entry's first line), not two entries annotated alike."""
        return self.attrs[a].get("entry") == self.attrs[b].get("entry")

    @staticmethod
    def _age(path: str, attrs: dict, line: int) -> tuple:
        """What "newer" means for an entry: the day it is about (its daily log's date, a date its
        heading carries, its ``observed`` date, else the day it was first indexed), then when it
        was first indexed, then its line. Never the file's modification time, which an edit
        anywhere else in the file moves."""
        seen = attrs.get("seen") if isinstance(attrs.get("seen"), int) else 0
        day = note_date(path) or _day(attrs.get("dated")) or _day(attrs.get("observed")) \
            or (date.fromtimestamp(seen) if seen else date.min)
        return (day, seen, line)

    def empty(self) -> bool:
        return not self.attrs

    def shift(self, rid: int) -> float:
        """The importance lift of one chunk, in standard deviations of the fused score."""
        imp = self.attrs.get(rid, {}).get("importance")
        return 0.0 if imp is None else IMPORTANCE_STEP * (int(imp) - NEUTRAL_IMPORTANCE)

    def importance(self, rid: int) -> int:
        return int(self.attrs.get(rid, {}).get("importance", NEUTRAL_IMPORTANCE))

    def expired(self, rid: int, today: date) -> bool:
        """Past its ``expires`` date, or marked as no longer holding (``status: superseded``)."""
        attrs = self.attrs.get(rid, {})
        until = attrs.get("expires")
        return (isinstance(until, str) and date.fromisoformat(until) < today) or retired(attrs)

    def newer(self, rid: int) -> Entry | None:
        """The entry that supersedes this chunk's, or None when it is current (or has no key)."""
        entry = self.entry_of.get(rid)
        if entry is None:
            return None
        best = self.current[entry.key]
        return None if best is entry else best


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def content(text: str) -> str:
    """What a chunk says: its lines without headings (structure) and comments (annotations)."""
    return "\n".join(strip_comments(line) for line in text.splitlines() if not line.lstrip().startswith("#"))


def says_nothing(text: str) -> bool:
    """Nothing but headings, annotations and blank lines: structure left on its own (a
    ``## Decisions`` whose entries became chunks of their own), which answers nothing."""
    return all(not strip_comments(line).strip() or HEADING.match(line) for line in text.splitlines())


def same_thing(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b or not (a <= b or b <= a):
        return False
    return len(a & b) / len(a | b) >= NEAR_DUPLICATE


def important_first(items: list, importance: Callable[[Any], int], text: Callable[[Any], str]) -> list:
    """``items`` in order, except that an item saying the same as one above it (NEAR_DUPLICATE)
    and more important moves up to just before it."""
    out: list = []
    tokens: list[frozenset[str]] = []
    for item in items:
        mine = similarity_tokens(text(item))
        weight = importance(item)
        place = len(out)
        for i, (other, theirs) in enumerate(zip(out, tokens, strict=True)):
            if importance(other) < weight and same_thing(mine, theirs):
                place = i
                break
        out.insert(place, item)
        tokens.insert(place, mine)
    return out


def today(clock: Callable[[], float]) -> date:
    return datetime.fromtimestamp(clock()).date()
