"""Search: keyword, vector or hybrid candidates, fused, decayed, diversified, thresholded."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ..embeddings.base import EmbeddingProvider
from ..errors import MnemoclawError
from ..store.sqlite import SQLiteStore
from ..text.tokenize import keyword_query
from ..types import Hit
from .fusion import date_of, decay_factor, fuse, mmr

MODES = ("hybrid", "keyword", "vector")
MAX_CANDIDATES = 200
# Z-score and min-max fusion estimate each signal's spread over a pool of this many
# candidates per side (measured: 30, 50, 100 and 200 compared in docs/quality.md).
MIN_CANDIDATES = 50


@dataclass(frozen=True)
class QueryOptions:
    max_results: int = 6
    min_score: float = 0.35
    hybrid: bool = True
    fusion: str = "zscore"
    vector_weight: float | None = None
    text_weight: float | None = None
    candidate_multiplier: int = 4
    mmr: bool = False
    mmr_lambda: float = 0.7
    decay: bool = False
    half_life_days: float = 30.0

    @classmethod
    def from_config(cls, q: dict[str, Any]) -> "QueryOptions":
        h = q["hybrid"]
        return cls(
            max_results=q["maxResults"],
            min_score=q["minScore"],
            hybrid=h["enabled"],
            fusion=h["fusion"],
            vector_weight=h.get("vectorWeight"),
            text_weight=h.get("textWeight"),
            candidate_multiplier=h["candidateMultiplier"],
            mmr=h["mmr"]["enabled"],
            mmr_lambda=h["mmr"]["lambda"],
            decay=h["temporalDecay"]["enabled"],
            half_life_days=h["temporalDecay"]["halfLifeDays"],
        )


@dataclass
class SearchOutcome:
    hits: list[Hit]
    mode: str
    candidates: int


class Searcher:
    def __init__(
        self,
        store: SQLiteStore,
        provider: EmbeddingProvider | None,
        options: QueryOptions,
        clock: Callable[[], float] = time.time,
    ):
        self.store = store
        self.provider = provider
        self.options = options
        self.clock = clock
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def default_mode(self) -> str:
        if self.provider is None:
            return "keyword"
        return "hybrid" if self.options.hybrid else "vector"

    def _embed_query(self, query: str) -> np.ndarray:
        vec = self._query_vectors.get(query)
        if vec is None:
            assert self.provider is not None
            vec = np.asarray(self.provider.embed([query], query=True)[0], dtype=np.float32)
            self._query_vectors[query] = vec
            if len(self._query_vectors) > 256:
                self._query_vectors.popitem(last=False)
        else:
            self._query_vectors.move_to_end(query)
        return vec

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        mode: str | None = None,
        sources: Sequence[str] | None = None,
    ) -> SearchOutcome:
        o = self.options
        k = max_results or o.max_results
        floor = o.min_score if min_score is None else min_score
        mode = mode or self.default_mode()
        if mode not in MODES:
            raise MnemoclawError(f"unknown search mode {mode!r}; expected one of {', '.join(MODES)}")
        if mode != "keyword" and self.provider is None:
            mode = "keyword"
        query = query.strip()
        if not query:
            return SearchOutcome([], mode, 0)
        if o.fusion in ("zscore", "minmax"):
            # a fixed pool: scores are normalised over it, so asking for 10 results
            # returns the same first 6 as asking for 6
            n_cand = min(MAX_CANDIDATES, max(k, MIN_CANDIDATES))
        else:
            n_cand = min(MAX_CANDIDATES, k * o.candidate_multiplier)

        text: dict[int, float] = {}
        vector: dict[int, float] = {}
        if mode in ("hybrid", "keyword"):
            text = dict(self.store.keyword_search(keyword_query(query), n_cand, sources))
        if mode in ("hybrid", "vector"):
            vector = dict(self.store.vector_search(self._embed_query(query), n_cand, sources))
        # fewer keyword hits than asked for: every other chunk matched no query term
        text_missing = 0.0 if len(text) < n_cand else None
        fused = fuse(vector, text, o.fusion, o.vector_weight, o.text_weight, text_missing)
        rows = self.store.chunks([f.id for f in fused])

        hits = []
        now = self.clock()
        for f in fused:
            row = rows.get(f.id)
            if row is None:  # deleted between the two queries
                continue
            score = f.score
            if o.decay:
                day = date_of(row.path)
                if day is not None:
                    ts = datetime(*day, tzinfo=timezone.utc).timestamp()
                    score *= decay_factor((now - ts) / 86400.0, o.half_life_days)
            hits.append(Hit(row.path, row.start_line, row.end_line, score, row.text, row.source, f.vector, f.text))
        if o.decay:
            hits.sort(key=lambda h: -h.score)
        if o.mmr and len(hits) > 1:
            # diversify the results that will be returned; the rest keep their order
            order = mmr([(h.score, h.text) for h in hits], k, o.mmr_lambda)
            chosen = set(order)
            hits = [hits[i] for i in order] + [h for i, h in enumerate(hits) if i not in chosen]

        kept = [h for h in hits if h.score >= floor]
        if not kept and o.fusion == "weighted" and mode == "hybrid":
            # OpenClaw's relaxed floor: a keyword-only hit can score at most textWeight,
            # so keyword-backed hits survive when nothing else passes.
            tw = 0.3 if o.text_weight is None else o.text_weight
            relaxed = min(floor, tw)
            kept = [h for h in hits if h.text_score is not None and h.score >= relaxed]
        return SearchOutcome(kept[:k], mode, len(fused))
