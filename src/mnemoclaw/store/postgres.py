"""The index in PostgreSQL with pgvector, for agents on several hosts (``store.driver: "postgres"``).

One database holds every agent's index, each in its own namespace; a store writes its own
namespace and reads it plus the shared ones it names. Keyword search runs on an inverted index
of mnemoclaw's own analysed terms (text/tokenize.py's output: term -> chunk, frequency, length),
so Chinese of any length, stems and identifiers match exactly as on SQLite on a plain Postgres
with no extension but ``vector``; the candidates are the top of FTS5's own bm25() over it, and
the BM25 above the store ranks them from exact per-namespace statistics, so both stores rank
alike. Vectors are pgvector columns with
an HNSW cosine index per dimension. One embedding cache serves every namespace and host.

Writers take a per-namespace advisory lock (a session lock on a connection of its own, with the
holder's host and pid recorded for messages); each batch is one transaction; readers never wait
(MVCC). Every write bumps the namespace's generation, which is what caches and the dirty check of
other hosts compare. A rebuild is written under a build namespace and swapped in by one
transaction.

The store is cut by job, each part a class in its own module over the one below: the server and
the connections to it (``postgres_connection.py``), files, chunks, metadata and the embedding
cache (``postgres_index.py``), the vector side (``postgres_vectors.py``), the write lock,
rebuilds, damage and scrubbing (``postgres_upkeep.py``), and here the keyword side. The schema
is ``postgres_schema.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..text.tokenize import KeywordQuery
from ..types import KeywordCandidates
from .base import StoreInfo
from .postgres_upkeep import PostgresUpkeep
from .postgres_vectors import PostgresVectors

# FTS5 bm25()'s parameters: the SQLite store chooses its candidates with them
FTS_K1 = 1.2
FTS_K1_PLUS_1 = FTS_K1 + 1.0
FTS_B = 0.75
POSTINGS_PER_TERM = 5000  # the most of one term's postings a search reads (its best)


def fts_idf(n_docs: int, df: int) -> float:
    """FTS5's bm25() IDF, which is never below 1e-6. ``df`` may exceed ``n_docs`` for a moment (the
    two are read at different times while another host writes), which FTS5 never sees."""
    ratio = (n_docs - df + 0.5) / (df + 0.5)
    return math.log(ratio) if ratio > 1.000001 else 1e-6


class PostgresStore(PostgresVectors, PostgresUpkeep):
    """``Store`` over PostgreSQL + pgvector (store/base.py)."""

    # -- keyword search ---------------------------------------------------------------------
    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates:
        if query.empty or depth <= 0:
            return KeywordCandidates()
        n_docs, avgdl = self._corpus_stats()
        df = self._doc_freqs(query.counted)
        # a phrase's words are looked up too (FTS5 matches the phrase as a part of the query);
        # BM25 (search/bm25.py) gives the phrase its bonus from the terms column
        words = list(dict.fromkeys([*query.terms, *(t for p in query.phrases for t in p if t)]))
        extra = self._doc_freqs([w for w in words if w not in df])
        # which ``depth`` candidates are read: FTS5's own bm25() (k1 1.2, b 0.75, its IDF), which
        # is how the SQLite store chooses them, over at most POSTINGS_PER_TERM of each term's
        # postings, its best for this weight: a term in most chunks adds little to any of them
        weights = [FTS_K1_PLUS_1 * fts_idf(n_docs, df.get(w, extra.get(w, 0))) for w in words]
        score = "sum(q.w * p.tf / (p.tf + %s + %s * p.dl))"
        matched = ("FROM unnest(%s::text[], %s::float8[]) q(term, w) CROSS JOIN unnest(%s::text[]) n(ns) "
                   "CROSS JOIN LATERAL (SELECT id, tf, dl FROM mc_postings p WHERE p.ns = n.ns AND p.term = q.term "
                   "ORDER BY p.imp DESC, p.id LIMIT %s) p GROUP BY p.id")
        params: list[Any] = [FTS_K1 * (1 - FTS_B), FTS_K1 * FTS_B / (avgdl or 1.0), words, weights, self._read_ns,
                             POSTINGS_PER_TERM]
        if sources:
            sql = (f"WITH s AS (SELECT p.id, {score} AS score {matched}) SELECT c.id, c.terms FROM s "
                   "JOIN mc_chunks c ON c.id = s.id WHERE c.source = ANY(%s) ORDER BY s.score DESC, s.id LIMIT %s")
            params += [list(sources), depth]
        else:
            sql = (f"WITH s AS (SELECT p.id, {score} AS score {matched} ORDER BY score DESC, p.id LIMIT %s) "
                   "SELECT c.id, c.terms FROM s JOIN mc_chunks c ON c.id = s.id")
            params += [depth]
        rows = self._rows(sql, params)
        lines = {rid: [line.split(" ") for line in terms.split("\n")] for rid, terms in rows}
        return KeywordCandidates(lines, df, n_docs, avgdl)

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        self._corpus_stats()
        return self._doc_freqs(terms)

    def terms_starting(self, letters: str, shortest: int, longest: int) -> list[str]:
        out: list[str] = []
        for ch in dict.fromkeys(letters):  # mc_df's key (ns, term) reads a range of terms
            out += [t for (t,) in self._rows(
                "SELECT DISTINCT term FROM mc_df WHERE ns = ANY(%s) AND term >= %s AND term < %s AND df > 0 "
                "AND length(term) BETWEEN %s AND %s", (self._read_ns, ch, chr(ord(ch) + 1), shortest, longest))]
        return out

    def file_candidates(self, query: KeywordQuery, paths: Sequence[str],
                        sources: Sequence[str] | None = None) -> KeywordCandidates:
        if query.empty or not paths:
            return KeywordCandidates()
        n_docs, avgdl = self._corpus_stats()
        df = self._doc_freqs(query.counted)
        wanted = set(query.terms) | {t for p in query.phrases for t in p}
        sql = "SELECT id, terms FROM mc_chunks WHERE ns = %s AND path = ANY(%s)"
        params: list[Any] = [self.ns, list(dict.fromkeys(paths))]
        if sources:
            sql += " AND source = ANY(%s)"
            params.append(list(sources))
        lines = {}
        for rid, terms in self._rows(sql, params):
            split = [line.split(" ") for line in terms.split("\n")]
            if any(t in wanted for line in split for t in line):
                lines[int(rid)] = split
        return KeywordCandidates(lines, df, n_docs, avgdl)

    # -- description --------------------------------------------------------------------------
    def describe(self) -> StoreInfo:
        (server,), = self._rows("SHOW server_version")
        rows = self._rows("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        shared = f"; shared: {', '.join(self.shared)}" if self.shared else ""
        return StoreInfo(self.path, f"postgres (PostgreSQL {server})",
                         f"pgvector {rows[0][0] if rows else '?'} HNSW cosine, iterative scan",
                         "postings of mnemoclaw's analysed terms, BM25 in SQL", self.ns + shared)
