"""Search: keyword, vector or hybrid candidates, fused, decayed, diversified, thresholded."""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, Protocol

import numpy as np

from ..embeddings.base import EmbeddingProvider
from ..errors import MnemoclawError
from ..markdown.annotations import decode, retired
from ..markdown.chunker import text_hash
from ..store.base import CacheKey, ChunkSource, EmbeddingCache, KeywordSource, VectorSource
from ..text.script import fold
from ..text.smalltalk import question_of
from ..types import Hit, SearchOutcome, UnrelatedReference
from ..vectors import pair_spread, unit_rows
from . import conversation, stages, unrelated
from .annotated import AnnotationView, says_nothing, today
from .relevance import DEFAULT_MIN_SCORE
from .stages import RELEVANCE_LOOKAHEAD

# how many names and nouns a searcher keeps the vectors of (_embed_names)
NAME_VECTORS = 4096
# how many files' speaker lines a searcher keeps (_sides_of: a conversation's daily logs)
SIDES_KEPT = 32

MODES = ("hybrid", "keyword", "vector")
NAMING_STEM = re.compile(r"[\d_-]")  # a word naming a file by its stem has one of these


def _bare(text: str) -> str:
    """``text`` lowercased without the quotes, brackets and end punctuation around a name."""
    return text.strip().strip("\"'`“”‘’()[]<>?!,;:。？！，").rstrip(".").lower()



@dataclass(frozen=True)
class QueryOptions:
    max_results: int = 6
    min_score: float = DEFAULT_MIN_SCORE
    hybrid: bool = True
    fusion: str = "zscore"
    vector_weight: float | None = None
    text_weight: float | None = None
    candidate_multiplier: int = 4
    mmr: bool = False
    mmr_lambda: float = 0.7
    decay: bool = False
    half_life_days: float = 30.0
    date_match: bool = True
    archive: bool = True  # search memory/archive/ (ranked below live notes)

    @classmethod
    def from_config(cls, q: dict[str, Any]) -> QueryOptions:
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
            date_match=h["dateMatch"]["enabled"],
            archive=q.get("archive", True),
        )


class SearchSources(KeywordSource, VectorSource, ChunkSource, EmbeddingCache, Protocol):
    """One index that is all four sources of a search (``Searcher.over``)."""


class Searcher:
    """A search over four sources, each the slice of an index it reads: ``keywords`` (the
    keyword side's candidates), ``vectors`` (the vector side), ``chunks`` (the chunks both sides
    found, their files, annotations) and ``cache`` (vectors of the fixed sentences a score is
    measured against). ``Searcher.over(store, ...)`` reads all four from one store; the QMD
    backend gives a keyword source of its own."""

    def __init__(
        self,
        *,
        keywords: KeywordSource,
        vectors: VectorSource,
        chunks: ChunkSource,
        cache: EmbeddingCache,
        provider: EmbeddingProvider | None,
        options: QueryOptions,
        clock: Callable[[], float] = time.time,
    ):
        self.keywords = keywords
        self.vectors = vectors
        self.chunks = chunks
        self.cache = cache
        self.provider = provider
        self.options = options
        self.clock = clock
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._name_vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # _embed_names
        self._name_lock = threading.Lock()
        self._sides: OrderedDict[tuple[str, str], list[tuple[int, str]]] = OrderedDict()  # _sides_of
        self._sides_lock = threading.Lock()
        self._unrelated: np.ndarray | None = None  # unit vectors of search/unrelated.py
        self._names: tuple[Any, dict[str, list[str]], dict[str, list[str]]] | None = None
        self._unrelated_spread = 0.0
        self._annotations = AnnotationView(chunks)

    @classmethod
    def over(cls, store: SearchSources, provider: EmbeddingProvider | None, options: QueryOptions,
             clock: Callable[[], float] = time.time) -> Searcher:
        """A searcher that reads every source from ``store``."""
        return cls(keywords=store, vectors=store, chunks=store, cache=store, provider=provider, options=options,
                   clock=clock)

    def default_mode(self) -> str:
        if self.provider is None:
            return "keyword"
        return "hybrid" if self.options.hybrid else "vector"

    def _embed_query(self, query: str) -> np.ndarray:
        vec = self._query_vectors.get(query)
        if vec is None:
            assert self.provider is not None
            # Chinese as the notes were embedded: in Simplified script (index/embedding.py vector_key)
            vec = np.asarray(self.provider.embed([fold(query)], query=True)[0], dtype=np.float32)
            self._query_vectors[query] = vec
            if len(self._query_vectors) > 256:
                self._query_vectors.popitem(last=False)
        else:
            self._query_vectors.move_to_end(query)
        return vec

    def _embed_names(self, texts: Sequence[str]) -> np.ndarray | None:
        """Unit vectors of short texts (names and nouns), each embedded once per searcher (the
        most recent ``NAME_VECTORS`` kept); None when the provider cannot embed them now."""
        wanted = list(dict.fromkeys(texts))
        with self._name_lock:
            found = {t: self._name_vectors[t] for t in wanted if t in self._name_vectors}
        missing = [t for t in wanted if t not in found]
        if missing:
            assert self.provider is not None
            try:
                vecs = np.asarray(self.provider.embed([fold(t) for t in missing]), dtype=np.float32)
            except MnemoclawError:
                return None
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            found.update(zip(missing, vecs, strict=True))
        with self._name_lock:
            for t in wanted:
                self._name_vectors[t] = found[t]
                self._name_vectors.move_to_end(t)
            while len(self._name_vectors) > NAME_VECTORS:
                self._name_vectors.popitem(last=False)
        return np.stack([found[t] for t in texts])

    def _unrelated_reference(self, qvec: np.ndarray) -> UnrelatedReference | None:
        """The query against sentences about nothing in memory, embedded once per searcher
        (None while the provider cannot embed them: the score then rests on the rest)."""
        if self._unrelated is None or self._unrelated.shape[1] != len(qvec):
            vecs = self._embed_unrelated()
            if vecs is None:
                return None
            if vecs.ndim != 2 or vecs.shape[1] != len(qvec):
                return None
            self._unrelated = unit_rows(vecs)
            self._unrelated_spread = pair_spread(self._unrelated)[1]
        sims = self._unrelated @ (qvec / (float(np.linalg.norm(qvec)) or 1.0))
        return UnrelatedReference(float(sims.mean()), float(sims.max()), self._unrelated_spread)

    def _embed_unrelated(self) -> np.ndarray | None:
        """The sentences' vectors from the index's embedding cache, else from the provider
        (once; then cached, so a cold ``mnemoclaw search`` does not embed them again)."""
        provider = self.provider
        assert provider is not None
        key = CacheKey(provider.id, provider.model, provider.provider_key)
        hashes = [text_hash(t) for t in unrelated.SENTENCES]
        try:
            found = self.cache.cache_get(key, hashes)
        except MnemoclawError:
            found = {}
        if all(h in found for h in hashes):
            return np.stack([np.asarray(found[h], dtype=np.float32) for h in hashes])
        try:
            vecs = np.asarray(provider.embed(list(unrelated.SENTENCES)), dtype=np.float32)
        except Exception:  # noqa: BLE001 - a provider that fails here failed the query too, or will
            return None
        try:
            self.cache.cache_put(key, dict(zip(hashes, vecs, strict=True)))
        except MnemoclawError:
            pass  # a busy or read-only index: embedded again next time
        return vecs

    def _named_files(self, query: str, sources: Sequence[str] | None) -> list[str]:
        """Indexed files the query names: the whole query is a file's path, name or stem, or one
        of its words is a path or name ("2026-11-12.md") or a stem with a digit, "-" or "_"
        ("2026-11-12", "project-heron"), so an ordinary word never names a file."""
        records = self.chunks.file_records()
        if self._names is None or self._names[0] is not records:
            names: dict[str, list[str]] = {}
            stems: dict[str, list[str]] = {}
            for path in records:
                low = path.lower()
                base = low.rsplit("/", 1)[-1]
                for key in {low, base}:
                    names.setdefault(key, []).append(path)
                stem = base.rsplit(".", 1)[0]
                if stem and stem != base:
                    stems.setdefault(stem, []).append(path)
            self._names = (records, names, stems)
        _, names, stems = self._names
        found: list[str] = []
        whole = _bare(query)
        found += names.get(whole, []) + stems.get(whole, [])
        for word in (_bare(w) for w in query.split()):
            if "." in word or "/" in word:
                found += names.get(word, [])
            elif NAMING_STEM.search(word):
                found += stems.get(word, [])
        return [p for p in dict.fromkeys(found) if not sources or records[p].source in sources]

    def _following(self, heading: Hit, answers: Callable[[str, int, dict[str, Any]], bool]) -> Hit | None:
        """The first chunk after ``heading`` in its file that says something and may answer
        (``answers``: not expired, not replaced), as a hit with the heading's evidence (what the
        query matched was the heading over it)."""
        got = self.chunks.file_chunks(heading.path)
        after = [c for c in (got.chunks if got else [])
                 if c.start_line > heading.start_line and not says_nothing(c.text)
                 and answers(c.path, c.start_line, decode(c.meta))]
        if not after:
            return None
        c = min(after, key=lambda c: c.start_line)
        return replace(heading, start_line=c.start_line, end_line=c.end_line, text=c.text, analysed=None,
                       annotations=decode(c.meta))

    def _replies(self, scored: Sequence[Hit]) -> Callable[[Hit], bool] | None:
        """For a question in the first person: whether a hit is the assistant's side of a
        conversation with the user (conversation.in_first_person), by the roles its own lines open, else
        by the last one above it in its file; None when no hit's lines open a message of either
        side (notes, or a log whose speakers are people by name), so nothing is read."""
        own = {(h.path, h.start_line): conversation.said_by(h.text) for h in scored}
        if not any(side in ("user", "assistant") for side in own.values()):
            return None

        def reply(h: Hit) -> bool:
            key = (h.path, h.start_line)
            side = own[key] if key in own else conversation.said_by(h.text)
            if side is None:
                side = conversation.said_before(self._sides_of(h.path), h.start_line)
            return side == "assistant"

        return reply

    def _sides_of(self, path: str) -> list[tuple[int, str]]:
        """The lines of ``path`` that open a message of either side (conversation.sides), kept for the
        last files read until the file is indexed again."""
        rec = self.chunks.file_records().get(path)
        key = (path, rec.hash if rec else "")
        with self._sides_lock:  # searches of one searcher may run in several threads (the MCP server)
            got = self._sides.get(key)
            if got is not None:
                self._sides.move_to_end(key)
                return got
        written = self.chunks.file_chunks(path)
        got = conversation.sides((c.start_line, c.text) for c in (written.chunks if written else []))
        with self._sides_lock:
            self._sides[key] = got
            if len(self._sides) > SIDES_KEPT:
                self._sides.popitem(last=False)
        return got

    def _first_chunk(self, path: str, terms: dict[str, float]) -> Hit | None:
        got = self.chunks.file_chunks(path)
        if got is None or not got.chunks:
            return None
        # its first chunk that says something (not a title alone)
        c = min(got.chunks, key=lambda c: (says_nothing(c.text), c.start_line))
        return Hit(c.path, c.start_line, c.end_line, 0.0, c.text, c.source, terms=terms)

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        mode: str | None = None,
        sources: Sequence[str] | None = None,
        kind: str | None = None,
        history: bool = False,
    ) -> SearchOutcome:
        """``kind``: only entries annotated with this type. ``history``: expired and superseded
        entries too, each after what replaced it and saying so. The stages are search/stages.py."""
        o = self.options
        k = max_results or o.max_results
        floor = o.min_score if min_score is None else min_score
        mode = mode or self.default_mode()
        if mode not in MODES:
            raise MnemoclawError(f"unknown search mode {mode!r}; expected one of {', '.join(MODES)}")
        if mode != "keyword" and self.provider is None:
            mode = "keyword"
        query = question_of(query).strip()  # the greeting and the weather around it say nothing
        if not query:
            return SearchOutcome([], mode, 0)
        notes = self._annotations.refresh()
        kind = (kind or "").strip().lower() or None

        g = stages.gather(query, mode, stages.pool_size(o.fusion, k, o.candidate_multiplier, kind), sources,
                          keywords=self.keywords, vectors=self.vectors, chunks=self.chunks, embed=self._embed_query)
        levels = stages.date_levels(query, g.rows, self.chunks.file_heads) if o.date_match else {}
        cands, fused = stages.fuse_candidates(
            g, stages.shifts(levels, g.rows, notes), fusion=o.fusion, vector_weight=o.vector_weight,
            text_weight=o.text_weight, archive=o.archive, decay=o.decay, half_life_days=o.half_life_days,
            now=self.clock())
        cands = stages.reorder(cands, decay=o.decay, use_mmr=o.mmr, mmr_lambda=o.mmr_lambda, k=k)
        superseded: dict[int, str] = {}
        if not notes.empty() or kind:
            cands, superseded = stages.honour_annotations(
                cands, g.rows, notes, kind, history, today(self.clock), o.max_results + RELEVANCE_LOOKAHEAD * 2,
                self.chunks.chunks)
        scored = stages.score(cands[: max(2 * k, k + RELEVANCE_LOOKAHEAD)], g, mode,
                              reference=self.vectors.vector_reference(g.qvec) if g.qvec is not None else None,
                              unrelated=self._unrelated_reference(g.qvec) if g.qvec is not None else None,
                              levels=levels, superseded=superseded,
                              spell=self._embed_names if mode == "hybrid" else None)
        day = today(self.clock)

        def answers(path: str, line: int, attrs: dict[str, Any]) -> bool:  # what honour_annotations leaves in
            if kind and attrs.get("type") != kind:
                return False
            if history:
                return True
            until, key = attrs.get("expires"), attrs.get("key")
            if (isinstance(until, str) and date.fromisoformat(until) < day) or retired(attrs):
                return False
            newest = notes.current.get(key) if isinstance(key, str) else None
            return newest is None or (newest.path == path and newest.start <= line <= newest.end)

        scored = stages.headings_give_way(scored, lambda h: self._following(h, answers))
        named = self._named_files(query, sources) if not kind else []
        front = stages.named_first(named, scored, lambda path: self._first_chunk(path, g.words.weights))
        relaxed = None
        if o.fusion == "weighted" and mode == "hybrid":
            # OpenClaw's relaxed floor: keyword-backed hits survive when nothing else passes
            relaxed = min(floor, 0.3 if o.text_weight is None else o.text_weight)
        order = "fused" if o.mmr else None  # what MMR chose stays chosen
        later = self._replies(scored) if conversation.in_first_person(query) else None
        # a floor the caller asked for is kept to the letter: failing soft is for the configured one
        return SearchOutcome(stages.select(scored, front, floor, k, relaxed_floor=relaxed, order=order,
                                           weak=min_score is None, later=later), mode, fused)
