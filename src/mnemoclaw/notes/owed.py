"""What a forget owes the index, recorded before it changes a file and paid after.

``forgetting`` wraps a forget: it records the new tombstones and the debt in one write
(``tombstones.record``: keyed hashes only), lets the forget change the files, then pays the
debt (``finish``). A forget killed at any point leaves the debt recorded; the next command that
syncs or searches pays it, and ``status`` names it until then. Paying it: the files the forget
touched are indexed again (even those unchanged on disk, which a tombstone now fences), the
cached vectors of the chunks that held the text are deleted, the index is scrubbed (nothing
deleted left readable in its files), and no chunk of those files may hold a removed line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..promote.events import RecallEvents
from ..store.base import ChunkSource, EmbeddingCache, FileIndex, Purge, WriteLock
from ..types import IndexReport
from . import tombstones
from .forget import reached


class Forgetting(ChunkSource, Purge, Protocol):
    """What a forget reads of the index around it: the chunks of its files, and what is still held."""


class Owed(FileIndex, EmbeddingCache, WriteLock, Purge, Protocol):
    """What paying a forget's debt touches: the files' records and chunks, the cached vectors of
    the chunks that held the text, the write lock, and the scrub."""


@dataclass
class Forgotten:
    """What the index did about lines a forget removed; ``changed``: the files changed (set by
    the forget), so a failure after it leaves the forget recorded, to be finished by the next
    command, not undone."""

    changed: bool = False
    report: IndexReport = field(default_factory=IndexReport)
    chunks_replaced: int = 0
    cached_vectors_deleted: int = 0
    still_in_index: list[str] = field(default_factory=list)


def _chunk_hashes(store: ChunkSource, paths: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for path in paths:
        got = store.file_chunks(path)
        out |= {c.hash for c in got.chunks} if got else set()
    return out


@contextmanager
def forgetting(store: Forgetting, state_dir: Path, at: str, paths: Sequence[str], texts: Sequence[str],
               fences: Sequence[tombstones.Tombstone], said: Sequence[str],
               finish: Callable[[set[str]], Forgotten | None]) -> Iterator[Forgotten]:
    """Around a forget that removes ``texts`` (``said``: the lines and messages, as tombstones
    know them) from the files at ``paths``, recording ``fences`` first. ``finish(before)`` pays
    the debt, given the chunk hashes found before (``Memory.finish_forgets``)."""
    before = _chunk_hashes(store, paths)
    recorded = tombstones.record(state_dir, fences, paths=paths, chunks=sorted(before), texts=said, at=at)
    reached("recorded")
    done = Forgotten()
    try:
        yield done
    except BaseException:
        if not done.changed:  # nothing was removed: nothing is fenced, nothing owed
            tombstones.undo(state_dir, recorded)
        raise
    reached("rewritten")
    finished = finish(before)
    if finished is not None:
        done.report = finished.report
        done.chunks_replaced = finished.chunks_replaced
        done.cached_vectors_deleted = finished.cached_vectors_deleted
    done.still_in_index = store.holds(list(texts))


def finish(store: Owed, state_dir: Path, sync: Callable[[], IndexReport], *,
           before: set[str] | None = None) -> Forgotten | None:
    """Pay what forgets owe (None: nothing is). ``sync`` indexes what changed; ``before``: the
    chunk hashes the one forget under way found (else its chunks are recognised by their keyed
    hashes among the cached vectors)."""
    fences = tombstones.load(state_dir, quiet=True)
    owed = fences.owed()
    if owed is None or fences.key is None:
        return None
    key, done = fences.key, Forgotten(changed=True)
    with store.write_lock(timeout=60):
        records = store.file_records()
        owed_paths = set(owed.paths)
        paths = [p for p in records if tombstones.keyed(key, "path", p) in owed_paths]
        store.apply([], (), [dataclasses.replace(records[p], hash="", mtime_ns=-1) for p in paths])
    done.report = sync()
    reached("synced")
    with store.write_lock(timeout=60):
        after = _chunk_hashes(store, paths)
        if before is not None and len(fences.pending) == 1:
            gone = before - after
        else:  # a forget killed half-way: its chunks are known by their keyed hashes only
            owed_chunks = set(owed.chunks)
            gone = {h for _, cached in store.cache_items() for h in cached
                    if h not in after and tombstones.keyed(key, "chunk", h) in owed_chunks}
            before = gone | {h for h in after if tombstones.keyed(key, "chunk", h) in owed_chunks}
        done.chunks_replaced = len(before - after)
        done.cached_vectors_deleted = store.cache_delete(gone)
        store.scrub()
    reached("scrubbed")
    # the recall events of what was forgotten go too (promote/events.py): the lines by their keyed
    # hashes, a forgotten session's transcript whole; again after a kill, until settled
    owed_paths_keyed = set(owed.paths)
    events = RecallEvents(state_dir)
    try:
        events.forget(set(owed.texts), lambda p: tombstones.keyed(key, "path", p) in owed_paths_keyed)
    finally:
        events.close()
    left = _still_said(store, paths, set(owed.texts), key)
    if left:
        done.report.warnings.append((tombstones.FILE, f"a forget was stopped before it removed {left} line(s) from "
                                     "the files: they are still there; run the forget again"))
    tombstones.settled(state_dir, [p.id for p in fences.pending])
    return done


def _still_said(store: ChunkSource, paths: Sequence[str], owed: set[str], key: bytes) -> int:
    """How many lines of these files' chunks read as a line a forget removed."""
    n = 0
    for path in paths if owed else ():
        got = store.file_chunks(path)
        for c in got.chunks if got else ():
            for line in c.text.split("\n"):
                if c.source == "sessions":  # "User: …", as the index renders a message
                    line = line.split(": ", 1)[-1]
                said = tombstones.said_key(line)
                n += bool(said) and tombstones.keyed(key, tombstones.TEXT, said) in owed
    return n
