"""Keyword ranking: BM25 and the best line over the candidates a store's full-text index
found. Pure, so every store ranks the same candidates the same way.

The store's own ranking (FTS5's ``bm25()``, b = 0.75) only decides which candidates are
looked at; the order comes from here (search/bm25.py: k1 1.2, b 0.4, plus half the
best line's score; docs/quality.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..text.tokenize import KeywordQuery
from ..types import KeywordCandidates
from . import bm25

# How many full-text candidates, per result asked for, BM25 re-ranks (measured: 1, 2 and
# 4 gave the same quality within 0.001; 4 doubled keyword latency on long CJK chunks).
RESCORE_DEPTH = 2
MAX_DEPTH = 400


class CandidateSource(Protocol):
    """A store, as far as keyword search needs one."""

    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates: ...


def rank(query: KeywordQuery, candidates: KeywordCandidates, limit: int) -> list[tuple[int, float]]:
    """(chunk id, BM25 with the best line) best first, at most ``limit``."""
    if not candidates.lines or limit <= 0:
        return []
    scores = bm25.with_best_line(query.terms, query.phrases, candidates.lines, candidates.df, candidates.n_docs,
                                 candidates.avgdl)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def search(store: CandidateSource, query: KeywordQuery, limit: int,
           sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
    """The best ``limit`` chunks of ``store`` for ``query`` by keywords."""
    if query.empty or limit <= 0:
        return []
    # the store's ranking may bury what BM25 with our parameters promotes: look deeper
    return rank(query, store.keyword_candidates(query, min(limit * RESCORE_DEPTH, MAX_DEPTH), sources), limit)
