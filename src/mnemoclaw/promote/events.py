"""Recall events: which daily-log and transcript entries searches returned, kept in the state
directory (``recall.sqlite``) for ``mnemoclaw promote``.

One row per entry holds what promotion reads (how often and how well it was recalled, by how
many different questions, on how many days, in which sessions; the content words of those
questions, redacted first), and a bounded log of the single events beside it. The store is
bounded without ever evicting what is most recalled: past ``MAX_ENTRIES`` the entries recalled
least, and longest ago, go first; past ``MAX_EVENTS`` the oldest single events of the entries
with the most go, their counts kept. A forget reaches it by the keyed hashes of the lines it
removed, and a forgotten session's transcript whole (``forget``; notes/owed.py calls it when
it settles a forget, so a forget killed half-way reaches it when the next command finishes it).
A damaged store is set aside with one line and started afresh: recording never fails a search.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..atomic import private_dir, private_file
from ..text.secrets import redact
from ..text.tokenize import content_words
from .entries import Entry

log = logging.getLogger(__name__)

FILE = "recall.sqlite"  # under the state directory
MAX_ENTRIES = 20_000
MAX_EVENTS = 100_000
# what one entry's row keeps of its recalls: distinct questions, days, sessions, query words
MAX_QUERIES, MAX_DAYS, MAX_SESSIONS, MAX_WORDS = 64, 64, 32, 48
BUSY_MS = 2_000  # a writer in another process is waited for this long, then the event is dropped
BOUND_EVERY = 50  # recordings between two checks of the bounds (so the bounds hold to within that)
VIA = ("tool", "recall", "cli")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id TEXT PRIMARY KEY, agent TEXT NOT NULL, path TEXT NOT NULL, source TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    recalls INTEGER NOT NULL, score_sum REAL NOT NULL, score_max REAL NOT NULL,
    first_at REAL NOT NULL, last_at REAL NOT NULL,
    queries TEXT NOT NULL, days TEXT NOT NULL, sessions TEXT NOT NULL, words TEXT NOT NULL,
    line_keys TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_agent ON entries(agent, recalls);
CREATE TABLE IF NOT EXISTS events (
    entry TEXT NOT NULL, at REAL NOT NULL, query TEXT NOT NULL, score REAL NOT NULL,
    via TEXT NOT NULL, session TEXT
);
CREATE INDEX IF NOT EXISTS events_entry ON events(entry, at);
CREATE TABLE IF NOT EXISTS line_keys (key TEXT NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (key, entry));
"""


@dataclass(frozen=True)
class Recalled:
    """One entry one search returned (promote/entries.py says what an entry is)."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    score: float
    line_keys: tuple[str, ...] = ()  # its lines as a forget knows them (notes/tombstones.line_keys)


def query_words(query: str) -> tuple[str, list[str]]:
    """A question as the store keeps it: a hash of its redacted, case-folded words, and its
    content words (redacted first: no secret a question held is kept)."""
    clean = redact(query)
    words = [w.casefold() for w in content_words(clean)]
    digest = hashlib.sha256(" ".join(clean.casefold().split()).encode()).hexdigest()[:16]
    return digest, words


class RecallEvents:
    """The recall-event store of one state directory (every agent's, by an ``agent`` column)."""

    def __init__(self, state_dir: str | Path, *, clock=time.time):
        self.path = Path(state_dir) / FILE
        self._clock = clock
        self._db: sqlite3.Connection | None = None
        self.set_aside: str | None = None  # where a damaged store was moved, this process
        self._lock = threading.RLock()  # one connection, shared by a server's threads
        self._unbounded = BOUND_EVERY  # recordings since the bounds were last checked (checked at the first)

    # -- opening ---------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        private_dir(self.path.parent)
        private_file(self.path)  # 0600 before SQLite opens it (its -wal and -shm take its mode)
        try:
            db = self._connect()
        except sqlite3.DatabaseError as exc:
            db = self._afresh(exc)
        self._db = db
        return db

    def _connect(self) -> sqlite3.Connection:
        new = not self.path.exists() or self.path.stat().st_size == 0
        db = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a recall lost to a power cut is no loss
            db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            if not new:
                ok = db.execute("PRAGMA quick_check").fetchone()
                if not ok or ok[0] != "ok":
                    raise sqlite3.DatabaseError(f"quick_check: {ok[0] if ok else 'no answer'}")
            db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def _afresh(self, exc: Exception) -> sqlite3.Connection:
        """Set the damaged store aside (never deleted: it is the owner's to look at) and start anew."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(self._clock()))
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                src.replace(Path(str(aside) + suffix))
        self.set_aside = str(aside)
        private_file(self.path)
        log.warning("the recall-event store %s was damaged (%s); set aside as %s, recording starts afresh "
                    "(promotion counts recalls from now)", self.path, exc, aside)
        return self._connect()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- writing ---------------------------------------------------------------------------
    def record(self, agent: str, query: str, recalled: Sequence[Recalled], *, via: str,
               session: str | None = None) -> int:
        """One search's entries, one event each; how many were recorded."""
        if not recalled:
            return 0
        if via not in VIA:
            raise ValueError(f"via must be one of {', '.join(VIA)}; got {via!r}")
        digest, words = query_words(query)
        now = self._clock()
        day = time.strftime("%Y-%m-%d", time.localtime(now))
        unique = list({r.id: r for r in recalled}.values())
        with self._write() as db:
            marks = ",".join("?" * len(unique))
            rows = {row[0]: row[1:] for row in db.execute(
                "SELECT id, recalls, score_sum, score_max, queries, days, sessions, words FROM entries "
                f"WHERE id IN ({marks})", [r.id for r in unique])}
            inserts, updates, keys = [], [], []
            for r in unique:
                row = rows.get(r.id)
                if row is None:
                    inserts.append((r.id, agent, r.path, r.source, r.start_line, r.end_line, r.score, r.score, now, now,
                                    json.dumps([digest]), json.dumps([day]), json.dumps([session] if session else []),
                                    json.dumps(_counted({}, words)), json.dumps(list(r.line_keys))))
                    keys += [(k, r.id) for k in r.line_keys]
                else:
                    queries, days, sessions = (json.loads(v) for v in row[3:6])
                    updates.append((row[0] + 1, row[1] + r.score, max(row[2], r.score), now, r.start_line, r.end_line,
                                    json.dumps(_added(queries, digest, MAX_QUERIES)),
                                    json.dumps(_added(days, day, MAX_DAYS)),
                                    json.dumps(_added(sessions, session, MAX_SESSIONS)),
                                    json.dumps(_counted(json.loads(row[6]), words)), r.id))
            db.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,1,?,?,?,?,?,?,?,?,?)", inserts)
            db.executemany("UPDATE entries SET recalls = ?, score_sum = ?, score_max = ?, last_at = ?, "
                           "start_line = ?, end_line = ?, queries = ?, days = ?, sessions = ?, words = ? "
                           "WHERE id = ?", updates)
            db.executemany("INSERT OR IGNORE INTO line_keys VALUES (?, ?)", keys)
            db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?)",
                           [(r.id, now, digest, r.score, via, session) for r in unique])
            self._unbounded += 1
            if self._unbounded >= BOUND_EVERY:  # counting rows reads them all: now and then, not each time
                self._bound(db)
        return len(unique)

    def _bound(self, db: sqlite3.Connection) -> None:
        self._unbounded = 0
        (entries,) = db.execute("SELECT count(*) FROM entries").fetchone()
        if entries > MAX_ENTRIES:  # the least recalled, longest ago, go; never the most recalled
            gone = [r[0] for r in db.execute("SELECT id FROM entries ORDER BY recalls ASC, last_at ASC LIMIT ?",
                                             (entries - MAX_ENTRIES,))]
            self._delete(db, gone)
        (events,) = db.execute("SELECT count(*) FROM events").fetchone()
        if events > MAX_EVENTS:  # the single events of the entries with the most: their counts stay
            db.execute("DELETE FROM events WHERE rowid IN (SELECT e.rowid FROM events e JOIN entries n "
                       "ON n.id = e.entry ORDER BY n.recalls DESC, e.at ASC LIMIT ?)", (events - MAX_EVENTS,))

    @staticmethod
    def _delete(db: sqlite3.Connection, ids: Sequence[str]) -> None:
        for i in range(0, len(ids), 500):
            part = list(ids[i:i + 500])
            marks = ",".join("?" * len(part))
            for table, column in (("entries", "id"), ("events", "entry"), ("line_keys", "entry")):
                db.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", part)

    def forget(self, lines: Iterable[str], transcripts: Callable[[str], bool] = lambda path: False) -> int:
        """Remove every entry holding one of ``lines`` (keyed hashes, as a forget records them)
        and every entry of a transcript ``transcripts`` names (a forgotten session), with their
        events; how many entries went."""
        keys = list(lines)
        if not self.path.exists():
            return 0
        with self._write() as db:
            ids: set[str] = set()
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                ids |= {r[0] for r in db.execute(
                    f"SELECT entry FROM line_keys WHERE key IN ({','.join('?' * len(part))})", part)}
            ids |= {r[0] for r in db.execute("SELECT id, path FROM entries WHERE source = 'sessions'")
                    if transcripts(r[1])}
            self._delete(db, sorted(ids))
        return len(ids)

    def drop(self, ids: Iterable[str]) -> int:
        """Remove these entries and their events (what no longer stands in its file)."""
        ids = sorted(set(ids))
        if ids and self.path.exists():
            with self._write() as db:
                self._delete(db, ids)
        return len(ids)

    def clear(self, agent: str) -> int:
        """Every event of ``agent`` gone (``mnemoclaw reset``); how many entries there were."""
        if not self.path.exists():
            return 0
        with self._write() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM entries WHERE agent = ?", (agent,))]
            self._delete(db, ids)
        return len(ids)

    # -- reading ---------------------------------------------------------------------------
    def entries(self, agent: str) -> list[Entry]:
        """Every entry of ``agent`` the store holds, most recalled first."""
        if not self.path.exists():
            return []
        with self._lock:
            rows = self._open().execute(
            "SELECT id, agent, path, source, start_line, end_line, recalls, score_sum, score_max, first_at, last_at, "
                "queries, days, sessions, words FROM entries WHERE agent = ? ORDER BY recalls DESC, last_at DESC",
                (agent,)).fetchall()
        return [Entry(id=r[0], agent=r[1], path=r[2], source=r[3], start_line=r[4], end_line=r[5], recalls=r[6],
                      score_sum=r[7], score_max=r[8], first_at=r[9], last_at=r[10], queries=json.loads(r[11]),
                      days=json.loads(r[12]), sessions=json.loads(r[13]), words=json.loads(r[14])) for r in rows]

    def counts(self) -> dict[str, int]:
        if not self.path.exists():
            return {"entries": 0, "events": 0}
        with self._lock:
            db = self._open()
            return {"entries": db.execute("SELECT count(*) FROM entries").fetchone()[0],
                    "events": db.execute("SELECT count(*) FROM events").fetchone()[0]}


def _added(values: list, value, cap: int) -> list:
    if value is None or value in values:
        return values
    return [*values, value][-cap:]


def _counted(words: dict[str, int], new: Iterable[str]) -> dict[str, int]:
    for w in set(new):
        words[w] = words.get(w, 0) + 1
    if len(words) > MAX_WORDS:
        words = dict(sorted(words.items(), key=lambda kv: -kv[1])[:MAX_WORDS])
    return words


__all__ = ["FILE", "MAX_ENTRIES", "MAX_EVENTS", "VIA", "Entry", "RecallEvents", "Recalled", "query_words"]
