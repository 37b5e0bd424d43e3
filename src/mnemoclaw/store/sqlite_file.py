"""The SQLite index file and its one connection, what every other part of the store stands on.

Opening it (read-only, or as immutable where its -shm file cannot be made, or on a full disk),
its named migrations, transactions, the write lock and the file's identity under it, every
driver error translated into the store's own, and the health of the file: the damage marker
every process goes by, the check that finds damage, reads that go around a damaged page, and a
file that cannot be opened at all set aside. The sqlite-vec table is kept in step with the
vectors stored with the chunks here too: every write and every swap touches it.

The parts above it (``sqlite_index.py``, ``sqlite_vectors.py``, ``sqlite_upkeep.py``,
``sqlite.py``) are the same object over the same connection, so every transaction boundary
stays in one process-wide order.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..atomic import private_dir, private_file, write_atomic
from ..errors import DiskFullError, IndexCorruptError, IndexGoneError, ReadOnlyError, StoreError
from ..locks import file_lock, lock_busy, lock_holder
from ..markdown.chunker import text_hash
from ..vectors import unit_vector
from .base import damage_reason, from_blob
from .dense import DenseVectors
from .driver import Connection, DriverChoice, choose_driver
from .sqlite_schema import DIMS, MIGRATIONS, VEC_STALE, chunked, disk_full, read_only_path

log = logging.getLogger(__name__)

# what sqlite-vec allocates at once for the next 1 024 vectors, at the widest vectors a provider
# gives (4 096 float32), and a margin: less room than this when it fails is a full disk
VEC_CHUNK_BYTES = 1024 * 4096 * 4 + (1 << 20)


class SQLiteFile:
    """The connection to one index file and its health. One instance per process per index file."""

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
        self._recovered: str | None = None  # where a damaged index was moved aside (take_recovery)
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

    # -- opening ------------------------------------------------------------------
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

    def close(self) -> None:
        self._dense = DenseVectors()
        self._close_quietly()

    def _forget_caches(self) -> None:
        """What was read from a file this connection no longer has open (reopened, repaired)."""
        self._stats_cache = self._files_cache = self._meta_cache = self._notes_cache = None
        self._dense = DenseVectors()
        self._df_cache = {}

    # -- transactions and the write lock ------------------------------------------
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
        self._forget_caches()
        self._open(self._durable)

    def lock_holder(self) -> int | None:
        return lock_holder(self.lock_path)

    def lock_busy(self) -> bool:
        return lock_busy(self.lock_path)

    def _version(self) -> tuple[int, int]:
        """Changes whenever any connection (this one included) commits a write."""
        return self.conn.scalar("PRAGMA data_version"), self._own_writes

    def checkpoint(self) -> None:
        try:
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except StoreError as exc:  # a busy reader just delays the checkpoint
            log.debug("checkpoint skipped: %s", exc)

    # -- errors -------------------------------------------------------------------
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

    # -- health -------------------------------------------------------------------
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

    def recover(self, why: str) -> None:
        """Damage found after opening: move the file aside and start an empty index."""
        self._close_quietly()
        self._forget_caches()
        with self.write_lock(timeout=60):
            self._quarantine(why)
        self._open(self._durable)

    def take_recovery(self) -> str | None:
        aside, self._recovered = self._recovered, None
        return aside

    def _quarantine(self, why: str) -> None:
        """Move a damaged index aside (kept for inspection) and start a fresh one."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = f"{self.path}.corrupt-{stamp}-{os.getpid()}"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.path + suffix):
                os.replace(self.path + suffix, aside + suffix)
        log.warning("%s; moved to %s, rebuilding from the Markdown files", why, aside)
        self._recovered = aside
        self._file_id = None  # moved on purpose: the next open starts a new file

    # -- the sqlite-vec table, kept in step with the vectors stored with the chunks --
    def _set_meta(self, items: dict[str, str]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(items.items()))

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
