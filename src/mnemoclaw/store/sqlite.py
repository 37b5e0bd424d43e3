"""The SQLite index: WAL, named migrations, FTS5 keyword search, sqlite-vec or numpy vectors.

Readers never block: WAL gives every reader a consistent snapshot while one writer
(serialised across processes by ``write_lock``) commits whole batches.

One object implements the whole ``Store`` protocol over one connection, so that every
transaction boundary (a batch, a rebuild's swap, a repair's page copy, the vector table
kept in step) is one process-wide order. Its parts are cut by job, each a class in its own
module over the one below: the file, its connection and its health (``sqlite_file.py``),
files, chunks, metadata and the embedding cache (``sqlite_index.py``), the vector side
(``sqlite_vectors.py``), rebuilds and scrubbing (``sqlite_upkeep.py``), and here the keyword
side. The schema and the file-level checks live in ``sqlite_schema.py``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import StoreError
from ..text.tokenize import KeywordQuery
from .base import KeywordCandidates, StoreInfo
from .driver import Connection
from .sqlite_schema import FTS_TOKENIZE, chunked, fts_match
from .sqlite_upkeep import SQLiteUpkeep
from .sqlite_vectors import SQLiteVectors

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

# FTS5 computes bm25() for every chunk a query matches, which at 100 000 chunks is most of
# a search's time. Past this many chunks the matches are ranked in two rowid ranges at once,
# the second on a reader connection on another thread (SQLite lets go of the GIL while it
# works); the two best lists merged are the one list (measured, benchmarks/speed.py: 100 000
# chunks 76 -> 48 ms a query, 10 000 chunks 8.5 -> 7.4 ms, so not below this).
SPLIT_MIN_CHUNKS = 30_000


class SQLiteStore(SQLiteVectors, SQLiteUpkeep):
    """The default ``Store``. One instance per process per index file."""

    # -- keyword search ---------------------------------------------------------
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

    def terms_starting(self, letters: str, shortest: int, longest: int) -> list[str]:
        out: list[str] = []
        for ch in dict.fromkeys(letters):
            out += [t for (t,) in self.conn.execute(
                "SELECT term FROM chunks_vocab WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ?",
                (ch, chr(ord(ch) + 1), shortest, longest))]
        return out

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        self._corpus_stats()
        return self._doc_freqs(terms)

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

    # -- description ------------------------------------------------------------
    def describe(self) -> StoreInfo:
        return StoreInfo(self.path, f"{self.driver.name} (SQLite {self.driver.sqlite_version})", self.vector_path(),
                         FTS_TOKENIZE)
