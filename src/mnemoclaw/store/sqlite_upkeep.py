"""Upkeep of the SQLite index: a full rebuild built aside and swapped in (by tables in one
transaction, or page by page over a damaged file), and the scrub that leaves nothing forgotten
readable in its files.
"""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Sequence
from typing import Self

from ..errors import DiskFullError, StoreError
from .base import Store
from .sqlite_index import SQLiteIndex
from .sqlite_schema import DIMS, FTS_TABLE, VEC_STALE, VOCAB_TABLE, unlink_db

log = logging.getLogger(__name__)


class SQLiteUpkeep(SQLiteIndex):
    """Rebuilds and scrubbing over the index file's connection."""

    # -- leaving nothing forgotten readable ----------------------------------------
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
    def begin_rebuild(self) -> Self:
        """A throw-away database next to the index (speed over durability), to build into."""
        path = f"{self.path}.rebuild-{os.getpid()}.tmp"
        unlink_db(path)
        return type(self)(path, choice=self.choice, durable=False)

    def discard_rebuild(self, build: Store) -> None:
        assert isinstance(build, SQLiteUpkeep)
        build.close()
        unlink_db(build.path)

    def commit_rebuild(self, build: Store, *, repair: bool = False) -> None:
        """Swap the build in by tables, in one transaction (readers keep their snapshot
        until it commits); a damaged index, whose tables cannot be read to be replaced, is
        overwritten page by page instead."""
        assert isinstance(build, SQLiteUpkeep)
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
        self._forget_caches()
        mode = self.conn.one("PRAGMA journal_mode=WAL")
        if mode and str(mode[0]).lower() != "wal":
            log.warning("index %s could not use WAL after its repair (journal mode %s)", self.path, mode[0])
        self.clear_damaged()
        self.checkpoint()
