"""The SQLite index: WAL, named migrations, FTS5 keyword search, sqlite-vec or numpy vectors.

Readers never block: WAL gives every reader a consistent snapshot while one writer
(serialised across processes by ``write_lock``) commits whole batches.

One class implements the whole ``Store`` protocol over one connection, so that every
transaction boundary (a batch, a rebuild's swap, a repair's page copy, the vector
table kept in step) is visible in one place; the schema and the file-level checks
live in ``sqlite_schema.py``.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..atomic import private_dir, private_file, write_atomic
from ..errors import DiskFullError, IndexCorruptError, IndexGoneError, ReadOnlyError, StoreError
from ..locks import file_lock, lock_busy, lock_holder
from ..markdown.annotations import searchable
from ..markdown.chunker import text_hash
from ..text.tokenize import KeywordQuery, fts_document
from ..types import ChunkRow, FileRecord, StoredChunk, VectorReference
from ..vectors import pair_spread, unit_rows, unit_vector
from .base import (
    CacheKey,
    FileWrite,
    KeywordCandidates,
    Store,
    VectorSearch,
    damage_reason,
    from_blob,
    to_blob,
)
from .dense import DenseVectors
from .driver import Connection, DriverChoice, choose_driver
from .sqlite_schema import (
    DIMS,
    FTS_TABLE,
    FTS_TOKENIZE,
    MIGRATIONS,
    OWN,
    VEC_STALE,
    VOCAB_TABLE,
    chunked,
    disk_full,
    fts_match,
    read_only_path,
    unlink_db,
)

log = logging.getLogger(__name__)


def _fts_top(conn: Connection, match: str, depth: int, sources: Sequence[str] | None,
             lo: int | None = None, hi: int | None = None) -> list[tuple[int, float]]:
    """(rowid, bm25) of the best ``depth`` matches, best (lowest) first; only rowids in
    [``lo``, ``hi``) when given."""
    where = "chunks_fts MATCH ?"
    params: list[Any] = [match]
    if lo is not None:
        where += " AND f.rowid >= ? AND f.rowid < ?"
        params += [lo, hi]
    if sources:
        sql = (f"SELECT f.rowid, bm25(chunks_fts) FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
               f"WHERE {where} AND c.source IN ({','.join('?' * len(sources))}) ORDER BY bm25(chunks_fts) LIMIT ?")
        params += list(sources)
    else:
        sql = f"SELECT f.rowid, bm25(chunks_fts) FROM chunks_fts f WHERE {where} ORDER BY bm25(chunks_fts) LIMIT ?"
    return conn.execute(sql, [*params, depth])


# ranks a split query's second range; its threads start on first use
_FTS_POOL = ThreadPoolExecutor(2, thread_name_prefix="mnemoclaw-fts")

# sqlite-vec serves the first vector searches of a process; after that an in-memory
# copy of the vectors does (store/dense.py). A one-shot CLI search never loads it.
WARM_AFTER = 3
# FTS5 computes bm25() for every chunk a query matches, which at 100 000 chunks is most of
# a search's time. Past this many chunks the matches are ranked in two rowid ranges at once,
# the second on a reader connection on another thread (SQLite lets go of the GIL while it
# works); the two best lists merged are the one list (measured, benchmarks/speed.py: 100 000
# chunks 76 -> 48 ms a query, 10 000 chunks 8.5 -> 7.4 ms, so not below this).
SPLIT_MIN_CHUNKS = 30_000
# what sqlite-vec allocates at once for the next 1 024 vectors, at the widest vectors a provider
# gives (4 096 float32), and a margin: less room than this when it fails is a full disk
VEC_CHUNK_BYTES = 1024 * 4096 * 4 + (1 << 20)
# The fixed sample a query's cosines are compared with (vector_reference): enough for a
# stable mean and spread, read by rowid in one query; below REFERENCE_MIN there is none.
REFERENCE_SAMPLE = 256
REFERENCE_MIN = 8


class SQLiteStore:
    """The default ``Store``. One instance per process per index file."""

    parallel_reads = False  # one connection, used by one thread at a time

    def __init__(
        self,
        path: str,
        *,
        vector_enabled: bool = True,
        extension_path: str | None = None,
        choice: DriverChoice | None = None,
        busy_timeout_ms: int = 30_000,
        durable: bool = True,
        state_dir: str | None = None,
    ):
        """``state_dir`` holds what is not the index (the write lock, the damage marker);
        by default they sit next to the index file."""
        self.path = path
        self.state_dir = state_dir
        self.lock_path = os.path.join(state_dir, "write.lock") if state_dir else path + ".lock"
        self._damage_path = os.path.join(state_dir, "damaged.json") if state_dir else path + ".damaged"
        self.choice = choice or choose_driver(vector_enabled, extension_path)
        self.driver = self.choice.driver
        self.busy_timeout_ms = busy_timeout_ms
        self.recovered: str | None = None  # set when a damaged index was moved aside
        self._damage: str | None = None
        self._dense = DenseVectors()
        self._vector_searches = 0
        self._stats_cache: tuple[Any, ...] | None = None
        self._df_cache: dict[str, int] = {}
        self._files_cache: tuple[Any, ...] | None = None
        self._meta_cache: tuple[Any, ...] | None = None
        self._notes_cache: tuple[Any, ...] | None = None  # annotations()
        self._reference: tuple[Any, np.ndarray, float, float] | None = None
        self._own_writes = 0
        self._reader: tuple[Connection, tuple[int, int]] | None = None  # the split's second connection
        self._reader_lock = threading.Lock()
        self._file_id: tuple[int, int] | None = None  # (device, inode) of the file opened, for _same_file
        parent = os.path.dirname(os.path.abspath(path))
        self.read_only = read_only_path(path)  # a mounted backup, a locked-down machine: serve, never write
        self.read_only_why = "read-only: its directory or file cannot be written"
        if self.read_only:
            if not os.path.exists(path):
                raise ReadOnlyError(f"there is no index at {path} and its directory is read-only, so none can be "
                                    "made; give a writable --state-dir (or store.path) and run `mnemoclaw index`")
            log.info("index %s is read-only: serving it as it is, without syncing", path)
        else:
            private_dir(parent)
            if state_dir:
                private_dir(state_dir)
            private_file(path)  # SQLite gives the -wal and -shm files the database file's mode
        self._durable = durable
        try:
            self._open(durable)
        except IndexCorruptError as exc:
            if self.read_only:
                raise
            with self.write_lock(timeout=60):
                self._quarantine(str(exc))
            self._open(durable)
        except StoreError:
            # a full disk cannot even give a WAL index its -shm file: serve what is there
            if self.read_only or not durable or not os.path.exists(path) or not disk_full(parent):
                raise
            self.read_only, self.read_only_why = True, "the disk is full"
            log.warning("the disk holding %s is full: serving the index as it is, without syncing", path)
            self._open(durable)

    def recover(self, why: str) -> None:
        """Damage found after opening: move the file aside and start an empty index."""
        self._close_quietly()
        self._stats_cache = self._files_cache = self._meta_cache = self._notes_cache = None
        self._dense = DenseVectors()
        self._df_cache = {}
        with self.write_lock(timeout=60):
            self._quarantine(why)
        self._open(self._durable)

    # -- opening ----------------------------------------------------------------
    def _connect_read_only(self) -> Connection:
        conn = self.driver.connect(self.path, busy_timeout_ms=self.busy_timeout_ms, readonly=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master")
            return conn
        except self.driver.error:
            conn.close()
            # a WAL index needs its -shm file, which a read-only directory (or a full disk) cannot
            # give it. With nothing waiting in the -wal, the main file is the whole index, and
            # reading it as immutable needs no -shm
            try:
                wal = os.path.getsize(self.path + "-wal")
            except OSError:
                wal = 0
            if wal:
                raise
            return self.driver.connect(self.path, busy_timeout_ms=self.busy_timeout_ms, immutable=True)

    def _open(self, durable: bool) -> None:
        try:
            if self.read_only:
                self.conn: Connection = self._connect_read_only()
            else:
                self.conn = self.driver.connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
            self.conn.translate = self._translate
            self.vec_loaded = False
            if self.choice.vec_path:
                try:
                    self.driver.load_extension(self.conn, self.choice.vec_path)
                    self.vec_loaded = True
                except self.driver.error as exc:
                    log.warning("could not load sqlite-vec (%s); using numpy vectors", exc)
            if self.read_only:
                pass
            elif durable:
                mode = self.conn.one("PRAGMA journal_mode=WAL")
                if mode and str(mode[0]).lower() != "wal":
                    log.warning("index %s could not use WAL (journal mode %s): readers may wait for writers",
                                self.path, mode[0])
                self.conn.execute("PRAGMA synchronous=NORMAL")
            else:  # a throw-away build database: speed over durability
                self.conn.execute("PRAGMA journal_mode=OFF")
                self.conn.execute("PRAGMA synchronous=OFF")
            self.conn.execute("PRAGMA temp_store=MEMORY")
            if not self.read_only:
                # a deleted row's bytes are zeroed, not left in its page or the free pages: what
                # is forgotten (or edited away by hand) leaves the file with the next sync;
                # the keyword index's segments and the -wal keep theirs until a scrub
                self.conn.execute("PRAGMA secure_delete=ON")
            self.conn.execute("SELECT count(*) FROM sqlite_master")
            st = os.stat(self.path)
            self._file_id = (st.st_dev, st.st_ino)
            if self.read_only:
                self._check_schema_read_only()
            else:
                self._migrate()
                self._repair_vectors()
        except self.driver.error as exc:
            self._close_quietly()
            translated = self._translate(exc, "open")
            if type(translated) is StoreError:
                raise StoreError(f"cannot open index {self.path}: {exc}") from exc
            raise translated from exc
        except BaseException:
            self._close_quietly()
            raise

    def _close_quietly(self) -> None:
        self._close_reader()
        try:
            self.conn.close()
        except Exception:
            pass

    def _close_reader(self) -> None:
        with self._reader_lock:
            self._drop_reader()

    def _drop_reader(self) -> None:  # with _reader_lock held
        reader, self._reader = self._reader, None
        if reader is not None:
            try:
                reader[0].close()
            except Exception:
                pass

    def _quarantine(self, why: str) -> None:
        """Move a damaged index aside (kept for inspection) and start a fresh one."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = f"{self.path}.corrupt-{stamp}-{os.getpid()}"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.path + suffix):
                os.replace(self.path + suffix, aside + suffix)
        log.warning("%s; moved to %s, rebuilding from the Markdown files", why, aside)
        self.recovered = aside
        self._file_id = None  # moved on purpose: the next open starts a new file

    def _check_schema_read_only(self) -> None:
        try:
            done = {r[0] for r in self.conn.execute("SELECT name FROM schema_migrations")}
        except StoreError:
            done = set()
        missing = [name for name, _ in MIGRATIONS if name not in done]
        if missing or done - {name for name, _ in MIGRATIONS}:
            raise StoreError(f"index {self.path} is read-only and was written by another version of mnemoclaw "
                             "(its schema cannot be upgraded here); copy it somewhere writable or rebuild it")

    def _migrate(self) -> None:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        done = {r[0] for r in self.conn.execute("SELECT name FROM schema_migrations")}
        known = {name for name, _ in MIGRATIONS}
        if done - known:
            raise StoreError(
                f"index {self.path} was written by a newer mnemoclaw (schema {sorted(done - known)[-1]}); "
                "upgrade mnemoclaw, or delete the index file to rebuild it from the Markdown"
            )
        pending = [(n, sql) for n, sql in MIGRATIONS if n not in done]
        if not pending:
            return
        with self.transaction():
            # re-check under the write lock: another process may have migrated meanwhile
            done = {r[0] for r in self.conn.execute("SELECT name FROM schema_migrations")}
            for name, sql in pending:
                if name in done:
                    continue
                for stmt in (s.strip() for s in sql.split(";")):
                    if stmt:
                        self.conn.execute(stmt)
                self.conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, time.time()))

    # -- transactions -----------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            # some errors (disk full, I/O) already rolled the transaction back
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        finally:
            self._own_writes += 1

    @contextmanager
    def write_lock(self, timeout: float | None = None) -> Iterator[None]:
        if self.read_only:
            raise ReadOnlyError(f"index {self.path} cannot be written ({self.read_only_why}): it is served as it "
                                "is, without syncing")
        with file_lock(self.lock_path, timeout, what=f"index {self.path}", index=self.path):
            if not self._same_file():  # deleted or replaced since it was opened: write to what is there now
                self._reopen()
            yield
            if not self._same_file():
                self._reopen()
                raise IndexGoneError(f"the index file {self.path} was deleted or replaced while a sync wrote to it; "
                                     "what that sync wrote went with it, and a new index file is open in its place")

    def _same_file(self) -> bool:
        """The index's path still names the file this store has open."""
        if self._file_id is None:
            return True
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._file_id

    def _reopen(self) -> None:
        log.warning("index %s was deleted or replaced under this process: opening the file there now", self.path)
        self._close_quietly()
        self._stats_cache = self._files_cache = self._meta_cache = self._notes_cache = None
        self._dense = DenseVectors()
        self._df_cache = {}
        self._open(self._durable)

    def lock_holder(self) -> int | None:
        return lock_holder(self.lock_path)

    def lock_busy(self) -> bool:
        return lock_busy(self.lock_path)

    # -- metadata ---------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The index's key/value metadata (read once per index version: searches ask often);
        the store's own keys (``OWN``) are not part of it."""
        return {k: v for k, v in self._all_meta().items() if not k.startswith(OWN)}

    def _all_meta(self) -> dict[str, str]:
        version = self._version()
        if self._meta_cache is None or self._meta_cache[0] != version:
            self._meta_cache = (version, dict(self.conn.execute("SELECT key, value FROM meta")))
        return self._meta_cache[1]

    def set_meta(self, items: dict[str, str]) -> None:
        with self.transaction():
            self._set_meta(items)

    def _set_meta(self, items: dict[str, str]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(items.items()))

    def delete_meta(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        with self.transaction():
            self.conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in keys])

    # -- chunks indexed without vectors (the provider was down) ------------------
    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str, str]]:
        """(rowid, chunk hash, text) of chunks that have no vector yet."""
        return self.conn.execute(
            "SELECT rowid, hash, text FROM chunks WHERE embedding IS NULL ORDER BY rowid LIMIT ?", (limit,))

    def count_without_vectors(self) -> int:
        return self.conn.scalar("SELECT count(*) FROM chunks WHERE embedding IS NULL")

    def add_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None:
        """Give chunks that were indexed without a vector their vector."""
        if not items:
            return
        rows = [(to_blob(v), rid) for rid, v in items]
        with self.transaction():
            if self.vec_loaded and self._vec_stale():
                self._rebuild_vec_table()
            self._ensure_vec_table(len(items[0][1]))
            self.conn.executemany("UPDATE chunks SET embedding = ? WHERE rowid = ? AND embedding IS NULL", rows)
            if self.vec_loaded:
                self.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                                      [(rid, blob) for blob, rid in rows])
            elif self._vec_table_exists():
                self._set_meta({VEC_STALE: "1"})

    # -- vectors table ----------------------------------------------------------
    def _vec_table_exists(self) -> bool:
        return self.conn.one("SELECT 1 FROM sqlite_master WHERE name='chunks_vec'") is not None

    def _ensure_vec_table(self, dims: int) -> None:
        """Create the sqlite-vec table for ``dims``; recreate it if the dimension changed."""
        current = self.conn.one("SELECT value FROM meta WHERE key = ?", (DIMS,))
        if current and int(current[0]) == dims and self._vec_table_exists():
            return
        if not self.vec_loaded:
            self._set_meta({DIMS: str(dims)})
            if self._vec_table_exists():
                self._set_meta({VEC_STALE: "1"})
            return
        self.conn.execute("DROP TABLE IF EXISTS chunks_vec")
        self.conn.execute(
            f"CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{dims}] distance_metric=cosine)"
        )
        self._set_meta({DIMS: str(dims), VEC_STALE: "0"})
        self.conn.execute(
            "INSERT INTO chunks_vec(rowid, embedding) SELECT rowid, embedding FROM chunks "
            "WHERE embedding IS NOT NULL AND length(embedding) = ?",
            (dims * 4,),
        )

    def _vec_stale(self) -> bool:
        stale = self.conn.one("SELECT value FROM meta WHERE key = ?", (VEC_STALE,))
        return stale is not None and stale[0] == "1"

    def _rebuild_vec_table(self) -> None:
        """Recreate chunks_vec from the vectors stored with the chunks (inside a transaction)."""
        dims = self.conn.one("SELECT value FROM meta WHERE key = ?", (DIMS,))
        self.conn.execute("DROP TABLE IF EXISTS chunks_vec")
        self.conn.execute("DELETE FROM meta WHERE key = ?", (DIMS,))
        if dims:
            self._ensure_vec_table(int(dims[0]))
        self._set_meta({VEC_STALE: "0"})

    def _repair_vectors(self) -> None:
        """A process without sqlite-vec may have written chunks; bring chunks_vec back in step."""
        if self.vec_loaded and self._vec_stale():
            with self.transaction():
                self._rebuild_vec_table()

    # -- files and chunks -------------------------------------------------------
    def file_records(self) -> dict[str, FileRecord]:
        """What the index holds per file (cached until the index changes; do not mutate)."""
        version = self._version()
        if self._files_cache is None or self._files_cache[0] != version:
            rows = self.conn.execute("SELECT path, source, hash, mtime_ns, size FROM files")
            self._files_cache = (version, {r[0]: FileRecord(*r) for r in rows})
        return self._files_cache[1]

    def annotations(self) -> dict[int, tuple[str, int, int, str]]:
        """The annotated chunks: rowid -> (path, start line, end line, meta), cached until the
        index changes (do not mutate)."""
        version = self._version()
        if self._notes_cache is None or self._notes_cache[0] != version:
            rows = self.conn.execute("SELECT rowid, path, start_line, end_line, meta FROM chunks WHERE meta != ''")
            self._notes_cache = (version, {r[0]: (r[1], r[2], r[3], r[4]) for r in rows})
        return self._notes_cache[1]

    def _delete_paths(self, paths: Sequence[str]) -> None:
        has_vec = self.vec_loaded and self._vec_table_exists()
        for group in chunked(list(paths)):
            marks = ",".join("?" * len(group))
            rowids = [r[0] for r in self.conn.execute(f"SELECT rowid FROM chunks WHERE path IN ({marks})", group)]
            for ids in chunked(rowids):
                idm = ",".join("?" * len(ids))
                self.conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({idm})", ids)
                if has_vec:
                    self.conn.execute(f"DELETE FROM chunks_vec WHERE rowid IN ({idm})", ids)
                self.conn.execute(f"DELETE FROM chunks WHERE rowid IN ({idm})", ids)
        if not has_vec and self._vec_table_exists():
            self._set_meta({VEC_STALE: "1"})

    def apply(
        self, writes: Sequence[FileWrite], removes: Iterable[str] = (), touches: Iterable[FileRecord] = ()
    ) -> None:
        removes = list(removes)
        touches = list(touches)
        if not writes and not removes and not touches:
            return
        now = time.time()
        with self.transaction():
            self._delete_paths([w.record.path for w in writes] + removes)
            if removes:
                for group in chunked(removes):
                    marks = ",".join("?" * len(group))
                    self.conn.execute(f"DELETE FROM files WHERE path IN ({marks})", group)
            next_id = (self.conn.one("SELECT coalesce(max(rowid), 0) FROM chunks") or (0,))[0] + 1
            chunk_rows, fts_rows, vec_rows = [], [], []
            dims = None
            for w in writes:
                for row, vec in zip(w.chunks, w.vectors, strict=False):
                    blob = None if vec is None else to_blob(vec)
                    if vec is not None:
                        dims = len(vec)
                        vec_rows.append((next_id, blob))
                    doc = fts_document(searchable(row.text, row.meta))
                    chunk_rows.append(
                        (next_id, row.id, row.path, row.source, row.start_line, row.end_line,
                         row.hash, row.model, row.text, blob, now, len(doc.split()), row.meta)
                    )
                    fts_rows.append((next_id, doc))
                    next_id += 1
            if self.vec_loaded and self._vec_stale():
                # a process without sqlite-vec wrote since this one opened the index
                self._rebuild_vec_table()
            if dims is not None:
                # before the new rows go in: creating the table back-fills existing chunks
                self._ensure_vec_table(dims)
            self.conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", chunk_rows)
            self.conn.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", fts_rows)
            if vec_rows and self.vec_loaded:
                self.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)", vec_rows)
            records = [w.record for w in writes] + touches
            self.conn.executemany(
                "INSERT OR REPLACE INTO files(path, source, hash, mtime_ns, size, indexed_at) VALUES (?,?,?,?,?,?)",
                [(r.path, r.source, r.hash, r.mtime_ns, r.size, now) for r in records],
            )

    def _out_of_room(self, exc: BaseException) -> bool:
        """The write failed for want of space. SQLite says so itself, but an I/O error, or
        sqlite-vec's "Could not insert a new vector chunk" (it replaces SQLite's SQLITE_FULL with
        its own message), count too when the disk has less room than that write needed: a vector
        chunk holds 1 024 vectors, allocated at once."""
        if self.driver.is_full(exc):
            return True
        directory = os.path.dirname(self.path)
        if self.driver.is_io(exc):
            return disk_full(directory)
        if "vector chunk" in str(exc).lower():
            return disk_full(directory, room=VEC_CHUNK_BYTES)
        return False

    def _translate(self, exc: BaseException, doing: str = "use") -> StoreError:
        if self.driver.is_corrupt(exc):
            return IndexCorruptError(f"index file {self.path} is damaged ({exc}); run `mnemoclaw index --full`")
        if self._out_of_room(exc):
            return DiskFullError(f"disk full: could not {doing} index {self.path}")
        if self.driver.is_busy(exc):
            return StoreError(f"index {self.path} is locked by another process ({exc}); try again")
        return StoreError(f"could not {doing} index {self.path}: {exc}")

    # -- damage -----------------------------------------------------------------
    # The index is a cache of the Markdown: damage anywhere in it (a torn write, a bad
    # sector) is noted in a marker file next to it, every reader keeps answering from
    # what can still be read, and the next sync rebuilds it from the files, reusing
    # every vector that can still be read (Indexer._repair).
    def mark_damaged(self, why: str) -> None:
        if self.damaged() is not None:
            # recorded already: writing it again could land just after a repair under way
            # cleared it, and mark the repaired index damaged
            return
        log.warning("index %s is damaged (%s): answering from what can be read; the next sync repairs it",
                    self.path, why)
        if not self.read_only:
            try:  # the marker is what every process (and the next sync) goes by
                write_atomic(self._damage_path, json.dumps({"why": why, "at": time.time(), "pid": os.getpid()}))
                return
            except OSError as exc:
                log.debug("could not record the damage in %s: %s", self._damage_path, exc)
        self._damage = why  # nowhere to write it: this process remembers

    def damaged(self) -> str | None:
        """Why the index is known to be damaged (by this process or another), or None."""
        try:
            with open(self._damage_path, encoding="utf-8") as fh:
                return str(json.load(fh).get("why") or "damaged")
        except FileNotFoundError:
            return self._damage
        except (OSError, ValueError, AttributeError):
            return "damaged (its marker file is unreadable)"

    def clear_damaged(self) -> None:
        self._damage = None
        try:
            os.unlink(self._damage_path)
        except FileNotFoundError:
            pass

    def check(self, *, deep: bool = False) -> list[str]:
        """What is wrong with the index; an empty list when it is sound.

        Every page's structure (``PRAGMA quick_check``) and every chunk's content (its text
        against its hash, its vector a unit vector of numbers, as every provider's are):
        about 0.5 s per 10 000 chunks. ``deep`` also checks the keyword index against the
        texts (FTS5's integrity check, another 0.35 s per 10 000 chunks).
        """
        try:
            rows = self.conn.execute("PRAGMA quick_check")
            lines = [line.strip() for r in rows for line in str(r[0]).splitlines()]
            problems = [line for line in lines if line and line != "ok" and not line.startswith("***")]
            if not problems:
                problems = self._check_content()
            if deep and not problems and not self.read_only:
                with self.transaction():  # a read despite its form: FTS5 takes its checks as an insert
                    self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
        except IndexCorruptError as exc:
            return [damage_reason(exc)]
        return problems

    def _check_content(self) -> list[str]:
        texts = vectors = 0
        for _, h, text, blob in self.conn.execute("SELECT rowid, hash, text, embedding FROM chunks"):
            if text_hash(text) != h:
                texts += 1
            if blob is not None:
                v = from_blob(blob)
                if not unit_vector(v):
                    vectors += 1
        out = [f"{texts} chunk texts do not match their hashes"] if texts else []
        return out + ([f"{vectors} stored vectors are not unit vectors of numbers"] if vectors else [])

    def _rows_of(self, sql: str, items: Sequence[Any], prefix: Sequence[Any] = ()) -> list[tuple]:
        """``sql`` (with ``{marks}``) for ``items`` in batches. A batch that meets a damaged
        page is read again one item at a time, and what cannot be read is left out: the
        caller gets everything readable, and the index is marked for repair."""
        out: list[tuple] = []
        for group in chunked(list(items)):
            try:
                out += self.conn.execute(sql.format(marks=",".join("?" * len(group))), [*prefix, *group])
            except IndexCorruptError as exc:
                self.mark_damaged(damage_reason(exc))
                for item in group:
                    try:
                        out += self.conn.execute(sql.format(marks="?"), [*prefix, item])
                    except IndexCorruptError:
                        continue
        return out

    def file_chunks(self, path: str) -> FileWrite | None:
        """Everything indexed for one file, in the shape ``apply`` takes (None if not indexed
        or not readable)."""
        rec = self.file_records().get(path)
        if rec is None:
            return None
        try:
            rows = self.conn.execute(
                "SELECT id, path, source, start_line, end_line, hash, model, text, meta, embedding FROM chunks "
                "WHERE path = ? ORDER BY start_line, rowid",
                (path,),
            )
        except IndexCorruptError as exc:
            self.mark_damaged(damage_reason(exc))
            return None
        readable = [r for r in rows if text_hash(r[7]) == r[5]]
        if len(readable) < len(rows):
            self.mark_damaged(f"{len(rows) - len(readable)} chunks of {path} do not match their hashes")
        rows = readable
        chunks = [ChunkRow(*r[:9]) for r in rows]
        vectors = [None if r[9] is None else from_blob(r[9]) for r in rows]
        return FileWrite(rec, chunks, vectors)

    def vectors_for_hashes(self, hashes: Iterable[str], model: str) -> dict[str, np.ndarray]:
        rows = self._rows_of("SELECT hash, embedding FROM chunks WHERE model = ? AND embedding IS NOT NULL "
                             "AND hash IN ({marks})", list(dict.fromkeys(hashes)), (model,))
        return {h: from_blob(blob) for h, blob in rows}

    def chunks(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks by rowid; a chunk whose text no longer matches its hash (a damaged
        page) is left out and the index marked for repair: nothing garbled is returned."""
        out: dict[int, StoredChunk] = {}
        rows = self._rows_of("SELECT rowid, path, source, start_line, end_line, text, hash, meta FROM chunks "
                             "WHERE rowid IN ({marks})", list(rowids))
        for r in rows:
            if text_hash(r[5]) != r[6]:
                self.mark_damaged(f"the text of chunk {r[0]} does not match its hash")
                continue
            out[r[0]] = StoredChunk(*r)
        return out

    def file_heads(self, paths: Iterable[str]) -> dict[str, str]:
        rows = self._rows_of("SELECT path, text, hash FROM chunks WHERE start_line = 1 AND path IN ({marks})",
                             list(dict.fromkeys(paths)))
        return {path: text for path, text, h in rows if text_hash(text) == h}

    def vector_dims(self) -> int | None:
        """The dimension of the vectors the index holds (None while it holds none)."""
        if self.conn.one("SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT 1") is None:
            return None
        dims = self._all_meta().get(DIMS)
        return int(dims) if dims else None

    def counts(self) -> dict[str, int]:
        files = self.conn.scalar("SELECT count(*) FROM files")
        chunks = self.conn.scalar("SELECT count(*) FROM chunks")
        vectors = self.conn.scalar("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")
        cache = self.conn.scalar("SELECT count(*) FROM embedding_cache")
        return {"files": files, "chunks": chunks, "vectors": vectors, "cacheEntries": cache}

    # -- search -----------------------------------------------------------------
    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates:
        """FTS5 finds the candidates (its own ``bm25()`` orders which ``depth`` are taken);
        search/keyword.py ranks them."""
        if query.empty or depth <= 0:
            return KeywordCandidates()
        n_docs, avgdl = self._corpus_stats()
        df = self._doc_freqs(query.counted)
        match = fts_match(query)
        ids = self._ranked(match, depth, sources, n_docs)
        # texts only for the candidates: reading them inside the ranked query would
        # load every matching row's text before the LIMIT applies
        lines: dict[int, list[list[str]]] = {}
        for group in chunked(ids):
            marks = ",".join("?" * len(group))
            for rid, text in self.conn.execute(f"SELECT rowid, text FROM chunks_fts WHERE rowid IN ({marks})", group):
                lines[rid] = [line.split(" ") for line in text.split("\n")]
        return KeywordCandidates(lines, df, n_docs, avgdl)

    def _ranked(self, match: str, depth: int, sources: Sequence[str] | None, n_docs: int) -> list[int]:
        """The rowids of the ``depth`` best matches by FTS5's ``bm25()``, best first."""
        if n_docs >= SPLIT_MIN_CHUNKS and not self.conn.in_transaction and self._reader_lock.acquire(blocking=False):
            try:
                reader = self._reader_connection()
                if reader is not None:
                    top = self.conn.scalar("SELECT coalesce(max(rowid), 0) FROM chunks")
                    middle = top // 2 + 1
                    other = _FTS_POOL.submit(_fts_top, reader, match, depth, sources, middle, top + 1)
                    try:
                        rows = _fts_top(self.conn, match, depth, sources, 0, middle)
                    finally:
                        rows += other.result()
                    # bm25() is the same number in either range: idf counts the whole table
                    return [rid for rid, _ in sorted(rows, key=lambda r: (r[1], r[0]))[:depth]]
            finally:
                self._reader_lock.release()
        return [rid for rid, _ in _fts_top(self.conn, match, depth, sources)]

    def _reader_connection(self) -> Connection | None:
        """A second connection to the index file for reads beside this one (None where there
        is none to have: an index in memory, or one that cannot be opened again)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        here = (st.st_dev, st.st_ino)
        if self._reader is not None and self._reader[1] != here:  # not the file it opened
            self._drop_reader()
        if self._reader is None:
            try:  # never as immutable beside a writer: that copy would not see its writes
                conn = (self._connect_read_only() if self.read_only else
                        self.driver.connect(self.path, busy_timeout_ms=self.busy_timeout_ms, readonly=True))
            except StoreError as exc:
                log.debug("no second connection to %s (%s): one range at a time", self.path, exc)
                return None
            conn.translate = self._translate
            self._reader = (conn, here)
        return self._reader[0]

    def file_candidates(self, query: KeywordQuery, paths: Sequence[str],
                        sources: Sequence[str] | None = None) -> KeywordCandidates:
        if query.empty or not paths:
            return KeywordCandidates()
        n_docs, avgdl = self._corpus_stats()
        df = self._doc_freqs(query.counted)
        match = fts_match(query)
        lines: dict[int, list[list[str]]] = {}
        for group in chunked(list(dict.fromkeys(paths))):
            marks = ",".join("?" * len(group))
            where = f"c.path IN ({marks})"
            params: list[Any] = [match, *group]
            if sources:
                where += f" AND c.source IN ({','.join('?' * len(sources))})"
                params += list(sources)
            for rid, text in self.conn.execute(
                    "SELECT f.rowid, f.text FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                    f"WHERE chunks_fts MATCH ? AND {where}", params):
                lines[rid] = [line.split(" ") for line in text.split("\n")]
        return KeywordCandidates(lines, df, n_docs, avgdl)

    def _version(self) -> tuple[int, int]:
        """Changes whenever any connection (this one included) commits a write."""
        return self.conn.scalar("PRAGMA data_version"), self._own_writes

    def corpus_size(self) -> int:
        return self._corpus_stats()[0]

    def _corpus_stats(self) -> tuple[int, float]:
        version = self._version()
        if self._stats_cache is None or self._stats_cache[0] != version:
            row = self.conn.one("SELECT count(*), coalesce(sum(ntok), 0) FROM chunks")
            n, total = row if row is not None else (0, 0)
            self._stats_cache = (version, n, total / n if n else 0.0)
            self._df_cache = {}
        return self._stats_cache[1], self._stats_cache[2]

    def _doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        """Document frequency per term, remembered until the index changes (call _corpus_stats first)."""
        cache = self._df_cache
        for term in terms:
            if term not in cache:
                if len(cache) > 100_000:
                    cache.clear()
                hit = self.conn.one("SELECT doc FROM chunks_vocab WHERE term = ?", (term,))
                cache[term] = hit[0] if hit else 0
        return {t: cache[t] for t in terms}

    def vector_search(
        self, vector: np.ndarray, limit: int, sources: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        self._vector_searches += 1
        # sqlite-vec answers a cold process without loading every vector; from the
        # WARM_AFTER-th search on, an in-memory copy is faster
        if self.vec_loaded and self._vector_searches < WARM_AFTER and self._dense.version is None \
                and self._vec_ready(len(q)):
            try:
                return self._vec0_search(q, limit, sources)
            except (IndexCorruptError, DiskFullError, ReadOnlyError):
                raise
            except StoreError as exc:
                # sqlite-vec reports a damaged page of its table as a plain error: look
                # before calling it damage, and answer from the vectors stored with the chunks
                problems = self.check()
                if problems:
                    self.mark_damaged("; ".join(problems[:3]))
                else:
                    log.warning("sqlite-vec failed (%s); searching the vectors stored with the chunks", exc)
        return self._warm_dense().search(q, limit, sources)

    def _warm_dense(self) -> DenseVectors:
        self._dense.refresh(self._version(), self._vector_ids, self._vector_rows)
        if self._dense.bad:
            self.mark_damaged(f"{self._dense.bad} stored vectors are not numbers")
        return self._dense

    def detached_vector_search(self) -> VectorSearch | None:
        if self._vector_searches + 1 < WARM_AFTER and self.vec_loaded and self._dense.version is None:
            return None  # a cold process asks sqlite-vec, on the connection
        self._vector_searches += 1
        return self._warm_dense().search  # brought up to date here, on the connection's thread

    def vector_reference(self, vector: np.ndarray) -> VectorReference | None:
        """``vector``'s cosine with a fixed sample of the index's chunks (text that mostly does
        not answer it), and the sample's own spread; None while the index has too few vectors."""
        version = self._version()
        if self._reference is None or self._reference[0] != version:
            self._reference = (version, *self._reference_sample(len(vector)))
        _, sample, pair_mean, pair_sd = self._reference
        if len(sample) < REFERENCE_MIN or sample.shape[1] != len(vector):
            return None
        q = np.asarray(vector, dtype=np.float32)
        sims = sample @ (q / (float(np.linalg.norm(q)) or 1.0))
        return VectorReference(float(sims.mean()), float(max(sims.std(), 1e-3)), pair_mean, pair_sd)

    def _reference_sample(self, dims: int) -> tuple[np.ndarray, float, float]:
        top = self.conn.scalar("SELECT coalesce(max(rowid), 0) FROM chunks")
        step = max(1, top // REFERENCE_SAMPLE)
        ids = list(range(1, top + 1, step))[:REFERENCE_SAMPLE]  # spread over the index, the same every time
        blobs = [r[2] for r in (self._vector_rows(ids) if ids else []) if r[2] is not None and len(r[2]) == dims * 4]
        if len(blobs) < REFERENCE_MIN:
            return np.zeros((0, dims), dtype=np.float32), 0.0, 1.0
        sample = unit_rows(np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims))
        pair_mean, pair_sd = pair_spread(sample)
        return sample, pair_mean, max(pair_sd, 1e-3)

    def _vector_ids(self) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT rowid FROM chunks WHERE embedding IS NOT NULL")]

    def _vector_rows(self, rowids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        return self._rows_of("SELECT rowid, source, embedding FROM chunks WHERE rowid IN ({marks})", rowids)

    def _vec_ready(self, dims: int) -> bool:
        meta = dict(self.conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (DIMS, VEC_STALE)))
        return meta.get(DIMS) == str(dims) and meta.get(VEC_STALE) != "1" and self._vec_table_exists()

    def _vec0_search(self, q: np.ndarray, limit: int, sources: Sequence[str] | None) -> list[tuple[int, float]]:
        k = min(4096, limit * 4 if sources else limit)
        rows = self.conn.execute(
            "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (to_blob(q), k),
        )
        hits = [(rowid, 1.0 - dist) for rowid, dist in rows]
        if sources:
            keep = {rid for rid, c in self.chunks([h[0] for h in hits]).items() if c.source in sources}
            hits = [h for h in hits if h[0] in keep]
        return hits[:limit]

    # -- embedding cache --------------------------------------------------------
    def cache_get(self, key: CacheKey, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        rows = self._rows_of("SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND "
                             "provider_key = ? AND hash IN ({marks})", list(dict.fromkeys(hashes)),
                             (key.provider, key.model, key.provider_key))
        return {h: from_blob(blob) for h, blob in rows}

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        rows = [(key.provider, key.model, key.provider_key, h, to_blob(v), len(v), now) for h, v in items.items()]
        with self.transaction():
            self.conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?,?,?,?)", rows)

    def cache_prune(self, max_entries: int) -> int:
        total = self.conn.scalar("SELECT count(*) FROM embedding_cache")
        excess = total - max_entries
        if excess <= 0:
            return 0
        with self.transaction():
            self.conn.execute(
                "DELETE FROM embedding_cache WHERE (provider, model, provider_key, hash) IN "
                "(SELECT provider, model, provider_key, hash FROM embedding_cache ORDER BY updated_at LIMIT ?)",
                (excess,),
            )
        return excess

    def cache_items(self, batch: int = 1000) -> Iterator[tuple[CacheKey, dict[str, np.ndarray]]]:
        keys = self.conn.execute("SELECT DISTINCT provider, model, provider_key FROM embedding_cache")
        for provider, model, pkey in keys:
            rows = self.conn.execute("SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? "
                                     "AND provider_key = ? ORDER BY hash", (provider, model, pkey))
            for i in range(0, len(rows), batch):
                yield CacheKey(provider, model, pkey), {h: from_blob(b) for h, b in rows[i : i + batch]}

    def cache_delete(self, hashes: Iterable[str]) -> int:
        """Forget the cached vectors of these chunk texts (every provider and model)."""
        hashes = list(dict.fromkeys(hashes))
        gone = 0
        with self.transaction():
            for group in chunked(hashes):
                marks = ",".join("?" * len(group))
                gone += self.conn.scalar(f"SELECT count(*) FROM embedding_cache WHERE hash IN ({marks})", group)
                self.conn.execute(f"DELETE FROM embedding_cache WHERE hash IN ({marks})", group)
        return gone

    def scrub(self) -> None:
        """Rewrite the index so that nothing deleted from it can still be read from its files:
        the keyword index merged (its segments keep deleted terms until then), the vector
        table rebuilt (it keeps deleted vectors' bytes), the database vacuumed (free pages
        keep deleted rows) and the write-ahead log emptied."""
        with self.transaction():
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")
            if self.vec_loaded and self._vec_table_exists():
                self._rebuild_vec_table()
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._reference = None

    def holds(self, texts: Sequence[str]) -> list[str]:
        """Which of ``texts`` the index file or its write-ahead log holds, byte for byte (what
        ``strings`` of them would show)."""
        blobs = []
        for suffix in ("", "-wal"):
            try:
                with open(self.path + suffix, "rb") as fh:
                    blobs.append(fh.read())
            except FileNotFoundError:
                continue
        return [t for t in texts if t and any(t.encode("utf-8") in b for b in blobs)]

    # -- full rebuild -----------------------------------------------------------
    def begin_rebuild(self) -> SQLiteStore:
        """A throw-away database next to the index (speed over durability), to build into."""
        path = f"{self.path}.rebuild-{os.getpid()}.tmp"
        unlink_db(path)
        return SQLiteStore(path, choice=self.choice, durable=False)

    def discard_rebuild(self, build: Store) -> None:
        assert isinstance(build, SQLiteStore)
        build.close()
        unlink_db(build.path)

    def commit_rebuild(self, build: Store, *, repair: bool = False) -> None:
        """Swap the build in by tables, in one transaction (readers keep their snapshot
        until it commits); a damaged index, whose tables cannot be read to be replaced, is
        overwritten page by page instead."""
        assert isinstance(build, SQLiteStore)
        build.close()
        try:
            if repair:
                self._replace_pages(build.path)
                return
            try:
                self._replace_tables(build.path)
            except StoreError as exc:
                problems = [] if isinstance(exc, DiskFullError) else self.check()
                if not problems:
                    raise
                self.mark_damaged("; ".join(problems[:3]))
                self._replace_pages(build.path)
        finally:
            unlink_db(build.path)

    def remove_stale_builds(self) -> None:
        for path in glob.glob(glob.escape(self.path) + ".rebuild-*.tmp"):
            log.info("removing unfinished rebuild %s", path)
            unlink_db(path)

    def _replace_tables(self, build_path: str) -> None:
        """Swap in everything a build database holds, in one transaction.

        Readers keep their snapshot of the old index until the commit; a crash before
        the commit leaves the old index exactly as it was.
        """
        self.conn.execute("ATTACH DATABASE ? AS build", (build_path,))
        try:
            with self.transaction():
                for table in ("files", "chunks", "meta"):
                    self.conn.execute(f"DELETE FROM main.{table}")
                    self.conn.execute(f"INSERT INTO main.{table} SELECT * FROM build.{table}")
                self.conn.execute("DROP TABLE main.chunks_vocab")
                self.conn.execute("DROP TABLE main.chunks_fts")
                self.conn.execute(FTS_TABLE)
                self.conn.execute(VOCAB_TABLE)
                self.conn.execute("INSERT INTO main.chunks_fts(rowid, text) SELECT rowid, text FROM build.chunks_fts")
                self.conn.execute("INSERT OR REPLACE INTO main.embedding_cache SELECT * FROM build.embedding_cache")
                if self.vec_loaded:
                    self.conn.execute("DROP TABLE IF EXISTS main.chunks_vec")
                    dims = self.conn.one("SELECT value FROM main.meta WHERE key = ?", (DIMS,))
                    self.conn.execute("DELETE FROM main.meta WHERE key IN (?, ?)", (DIMS, VEC_STALE))
                    if dims:
                        self._ensure_vec_table(int(dims[0]))
                elif self._vec_table_exists():
                    self._set_meta({VEC_STALE: "1"})
        except self.driver.error as exc:
            raise self._translate(exc, "swap the rebuilt index into") from exc
        finally:
            if not self.conn.in_transaction:
                self.conn.execute("DETACH DATABASE build")
        self.checkpoint()

    def _replace_pages(self, build_path: str) -> None:
        """Make this index a copy of a build database, page by page (a repair).

        The swap by tables (``replace_from``) must read the old tables, which a damaged
        index cannot always do; this overwrites every page instead, in one transaction, so
        other processes keep reading their snapshot until it commits and then see the
        repaired index, under the same file name (nothing is renamed under them).
        """
        source = self.driver.connect(build_path, busy_timeout_ms=self.busy_timeout_ms)
        try:
            self.driver.backup(source, self.conn)
        except self.driver.error as exc:
            raise self._translate(exc, "copy the repaired index into") from exc
        finally:
            source.close()
        self._own_writes += 1
        self._stats_cache = self._files_cache = self._meta_cache = self._notes_cache = None
        self._df_cache = {}
        self._dense = DenseVectors()
        mode = self.conn.one("PRAGMA journal_mode=WAL")
        if mode and str(mode[0]).lower() != "wal":
            log.warning("index %s could not use WAL after its repair (journal mode %s)", self.path, mode[0])
        self.clear_damaged()
        self.checkpoint()

    def checkpoint(self) -> None:
        try:
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except StoreError as exc:  # a busy reader just delays the checkpoint
            log.debug("checkpoint skipped: %s", exc)

    # -- description ------------------------------------------------------------
    def vector_path(self) -> str:
        if self.vec_loaded:
            vec_version = self.conn.scalar("SELECT vec_version()")
            return (f"sqlite-vec {vec_version} via {self.driver.name} (SQLite {self.driver.sqlite_version}); "
                    f"in-memory numpy copy from the {WARM_AFTER}rd search of a process")
        return f"numpy brute-force ({self.choice.note})"

    def describe(self) -> dict[str, str]:
        return {
            "path": self.path,
            "driver": f"{self.driver.name} (SQLite {self.driver.sqlite_version})",
            "vector": self.vector_path(),
            "ftsTokenizer": FTS_TOKENIZE,
        }

    def close(self) -> None:
        self._dense = DenseVectors()
        self._close_quietly()
