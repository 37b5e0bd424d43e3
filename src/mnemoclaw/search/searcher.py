"""Search: keyword, vector or hybrid candidates, fused, decayed, diversified, thresholded."""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..embeddings.base import EmbeddingProvider
from ..errors import MnemoclawError
from ..markdown.annotations import decode
from ..markdown.chunker import text_hash
from ..store.base import CacheKey, ChunkSource, EmbeddingCache, KeywordSource, Store, VectorSearch, VectorSource
from ..text.dates import note_date, query_dates
from ..text.tokenize import keyword_query
from ..types import Hit, SearchOutcome, StoredChunk, UnrelatedReference
from ..vectors import pair_spread, unit_rows
from . import keyword, unrelated
from .annotated import ARCHIVE_SHIFT, AnnotationView, archived, content, important_first, today
from .fusion import Fused, decay_factor, fuse, mmr, standardise
from .keyword import KeywordEvidence
from .relevance import DEFAULT_MIN_SCORE, Evidence, probability

MODES = ("hybrid", "keyword", "vector")
MAX_CANDIDATES = 200
# Z-score and min-max fusion estimate each signal's spread over a pool of this many
# candidates per side (measured: 30, 50, 100 and 200 compared in docs/quality.md).
MIN_CANDIDATES = 50
# A query that names a day, month or year ("on 1 February, 2023", "2023年5月")
# lifts notes dated in that period by this many standard deviations of the fused
# score, by how precisely the date matches: same year, same month, same day
# (measured on LoCoMo's dated questions, docs/quality.md).
DATE_BOOST = {1: 0.5, 2: 1.0, 3: 2.0}
# A file the query names (search._named_files) is taken as what was asked for.
NAMED_FILE_SCORE = 0.99
NAMING_STEM = re.compile(r"[\d_-]")  # a word naming a file by its stem has one of these


def _bare(text: str) -> str:
    """``text`` lowercased without the quotes, brackets and end punctuation around a name."""
    return text.strip().strip("\"'`“”‘’()[]<>?!,;:。？！，").rstrip(".").lower()


# How many candidates past the ``k`` asked for are scored for relevance, so that a few
# filtered out by ``min_score`` can be replaced by the next ones in the ranking.
RELEVANCE_LOOKAHEAD = 4


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


# LoCoMo as memory workspaces, hybrid recall@5 with the bundled embedder
# (benchmarks/quality.py --sets workspace --modes hybrid [--fusion F | --vector-weight W];
# docs/quality.md): what a user choosing a fusion or fixed weights is choosing.
MEASURED_WORKSPACE_R5 = {"zscore": 0.872, "weighted": 0.794, "rrf": 0.832, "minmax": 0.858, "zscore@0.7": 0.802}


def floor_summary(o: QueryOptions) -> str:
    """What ``minScore`` does, and whether it is the measured default (for ``status``)."""
    what = "results less likely than this to be about the query are not returned (a calibrated chance)"
    if o.min_score == DEFAULT_MIN_SCORE:
        return f"{o.min_score:g}: {what}; the measured default (docs/quality.md, \"What a score means\")"
    return (f"{o.min_score:g} (query.minScore): {what}; the measured default is {DEFAULT_MIN_SCORE:g}, and a "
            "score is not OpenClaw's fused score, so a floor copied from OpenClaw (0.35) returns fewer results "
            "(docs/quality.md says what each floor costs)")


def ranking_summary(o: QueryOptions) -> str:
    """Which fusion and weights are in force, and what they measured (for ``status``)."""
    best = MEASURED_WORKSPACE_R5["zscore"]
    fixed = o.vector_weight is not None or o.text_weight is not None
    if o.fusion == "zscore" and not fixed:
        return (f"zscore fusion, vector weight adapted per query (0.1-0.5): the default and the measured best "
                f"(LoCoMo workspace recall@5 {best:.3f}, docs/quality.md)")
    from .fusion import DEFAULT_WEIGHTS

    dv, dt = DEFAULT_WEIGHTS[o.fusion]
    wv = dv if o.vector_weight is None else o.vector_weight
    wt = dt if o.text_weight is None else o.text_weight
    total = (wv + wt) or 1.0
    weights = f"vector {wv / total:.2f} / text {wt / total:.2f}"
    if o.fusion == "weighted" and (round(wv / total, 2), round(wt / total, 2)) == (0.7, 0.3):
        what = "weighted fusion, OpenClaw's 0.7/0.3 merge"
    elif o.fusion == "zscore":
        what = f"zscore fusion with fixed weights {weights} (query.hybrid.vectorWeight/textWeight)"
    else:
        what = f"{o.fusion} fusion, {weights}"
    share = round(wv / total, 2)
    if o.fusion == "zscore":
        key = f"zscore@{share:g}"
    else:  # the other fusions were measured at their default weights
        key = o.fusion if share == round(dv / ((dv + dt) or 1.0), 2) else ""
    measured = MEASURED_WORKSPACE_R5.get(key)
    if measured:
        score = (f"measured LoCoMo workspace recall@5 {measured:.3f}; the default (zscore, adaptive weight) "
                 f"{best:.3f}")
    else:
        score = f"not measured with these weights; every fixed weight measured scored below the default's {best:.3f}"
    return f"{what}: {score} (docs/quality.md). Remove query.hybrid.fusion/vectorWeight/textWeight for the default"


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
        self._unrelated: np.ndarray | None = None  # unit vectors of search/unrelated.py
        self._names: tuple[Any, dict[str, list[str]], dict[str, list[str]]] | None = None
        self._unrelated_spread = 0.0
        self._annotations = AnnotationView(chunks)

    @classmethod
    def over(cls, store: Store, provider: EmbeddingProvider | None, options: QueryOptions,
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
            vec = np.asarray(self.provider.embed([query], query=True)[0], dtype=np.float32)
            self._query_vectors[query] = vec
            if len(self._query_vectors) > 256:
                self._query_vectors.popitem(last=False)
        else:
            self._query_vectors.move_to_end(query)
        return vec

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

    def _vector_side(self, query: str, n_cand: int, sources: Sequence[str] | None,
                     search: VectorSearch | None = None) -> tuple[np.ndarray, dict[int, float]]:
        qvec = self._embed_query(query)
        return qvec, dict((search or self.vectors.vector_search)(qvec, n_cand, sources))

    def _first_chunk(self, path: str, terms: dict[str, float]) -> Hit | None:
        got = self.chunks.file_chunks(path)
        if got is None or not got.chunks:
            return None
        c = min(got.chunks, key=lambda c: c.start_line)
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
        entries too, each after what replaced it and saying so."""
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
        notes = self._annotations.refresh()
        kind = (kind or "").strip().lower() or None
        if o.fusion in ("zscore", "minmax"):
            # a fixed pool: scores are normalised over it, so asking for 10 results
            # returns the same first 6 as asking for 6
            n_cand = min(MAX_CANDIDATES, max(k, MIN_CANDIDATES))
        else:
            n_cand = min(MAX_CANDIDATES, k * o.candidate_multiplier)
        if kind:  # most candidates may be of other types
            n_cand = MAX_CANDIDATES

        text: dict[int, float] = {}
        vector: dict[int, float] = {}
        words = KeywordEvidence()
        qvec = None
        both: Future[tuple[np.ndarray, dict[int, float]]] | None = None
        embedding: Future[np.ndarray] | None = None
        if mode == "hybrid":
            # the query's embedding and the vector search run on another thread while the
            # keyword side runs here (on SQLite, over the in-memory vectors once they are warm)
            detached = None if self.vectors.parallel_reads else self.vectors.detached_vector_search()
            if self.vectors.parallel_reads or detached is not None:
                both = _SIDE.submit(self._vector_side, query, n_cand, sources, detached)
            else:
                embedding = _SIDE.submit(self._embed_query, query)
        if mode in ("hybrid", "keyword"):
            ranked, words = keyword.search_explained(self.keywords, keyword_query(query), n_cand, sources)
            text = dict(ranked)
        if both is not None:
            qvec, vector = both.result()
        elif embedding is not None:
            qvec = embedding.result()
            vector = dict(self.vectors.vector_search(qvec, n_cand, sources))
        elif mode == "vector":
            qvec, vector = self._vector_side(query, n_cand, sources)
        # fewer keyword hits than asked for: every other chunk matched no query term
        text_missing = 0.0 if len(text) < n_cand else None
        rows = self.chunks.chunks(list(dict.fromkeys([*vector, *text])))
        levels = self._date_levels(query, rows) if o.date_match else {}
        boost = {rid: DATE_BOOST[level] for rid, level in levels.items()}
        for rid, chunk in rows.items():
            extra = notes.shift(rid) + (ARCHIVE_SHIFT if archived(chunk.path) else 0.0)
            if extra:
                boost[rid] = boost.get(rid, 0.0) + extra
        fused = fuse(vector, text, o.fusion, o.vector_weight, o.text_weight, text_missing, boost or None)

        # the order: the fused ranking (decayed and diversified when asked)
        order = []
        now = self.clock()
        for f in fused:
            row = rows.get(f.id)
            if row is None:  # deleted between the two queries
                continue
            if not o.archive and archived(row.path):
                continue
            factor = 1.0
            if o.decay:
                day = note_date(row.path)
                if day is not None:
                    ts = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
                    factor = decay_factor((now - ts) / 86400.0, o.half_life_days)
            order.append((f, row, factor))
        if o.decay:
            order.sort(key=lambda c: (-c[0].score * c[2], c[0].id))
        if o.mmr and len(order) > 1:
            # diversify the results that will be returned; the rest keep their order
            picked = mmr([(c[0].score * c[2], c[1].text) for c in order], k, o.mmr_lambda)
            chosen = set(picked)
            order = [order[i] for i in picked] + [c for i, c in enumerate(order) if i not in chosen]
        superseded: dict[int, str] = {}
        if not notes.empty() or kind:
            order, superseded = self._honour_annotations(order, rows, notes, kind, history)

        # the score: how likely each chunk answers the query (search/relevance.py), the
        # same scale for every query; ``min_score`` filters on it
        reference = self.vectors.vector_reference(qvec) if qvec is not None else None
        far = self._unrelated_reference(qvec) if qvec is not None else None
        floor_cos = min(vector.values()) if vector else None
        pool = list(dict.fromkeys([*vector, *text]))
        vrel = standardise({i: vector.get(i, floor_cos or 0.0) for i in pool}) if vector else {}
        trel = standardise({i: text.get(i, 0.0) for i in pool}) if text else {}
        scored = []
        for f, row, factor in order[: max(2 * k, k + RELEVANCE_LOOKAHEAD)]:
            evidence = Evidence(
                coverage=words.coverage(f.id, row.text) if mode != "vector" else None,
                bm25=words.bm25_share(f.text) if mode != "vector" else None,
                cosine=(f.vector if f.vector is not None else floor_cos) if mode != "keyword" else None,
                reference=reference,
                date=levels.get(f.id, 0), vector_rel=vrel.get(f.id), text_rel=trel.get(f.id), unrelated=far)
            score = probability(evidence, mode) * factor
            scored.append(Hit(row.path, row.start_line, row.end_line, score, row.text, row.source, f.vector, f.text,
                              evidence, words.weights, words.lines.get(f.id), decode(row.meta),
                              superseded.get(f.id)))
        kept = [h for h in scored if h.score >= floor]
        named = self._named_files(query, sources) if not kind else []
        if named:  # a file the query names is what was asked for: it comes first
            front = []
            for path in named:
                best = next((h for h in scored if h.path == path), None) or self._first_chunk(path, words.weights)
                if best is not None:
                    front.append(replace(best, score=max(best.score, NAMED_FILE_SCORE)))
            shown = {(h.path, h.start_line) for h in front}
            kept = front + [h for h in kept if (h.path, h.start_line) not in shown]
        if not kept and o.fusion == "weighted" and mode == "hybrid":
            # OpenClaw's relaxed floor: keyword-backed hits survive when nothing else passes
            tw = 0.3 if o.text_weight is None else o.text_weight
            relaxed = min(floor, tw)
            kept = [h for h in scored if h.text_score is not None and h.score >= relaxed]
        return SearchOutcome(kept[:k], mode, len(fused))

    def _honour_annotations(self, order: list, rows: dict[int, StoredChunk], notes: AnnotationView,
                            kind: str | None, history: bool) -> tuple[list, dict[int, str]]:
        """Leave out what the annotations say is not an answer: other types, expired entries,
        and entries a newer one with the same key replaced; that newer one takes the old
        one's place. With ``history`` the old stay, each right after its replacement, marked."""
        day = today(self.clock)
        wanted = [notes.current[e.key] for e in (notes.newer(f.id) for f, _, _ in order) if e is not None]
        missing = [e.ids[0] for e in wanted if not any(i in rows for i in e.ids)]
        if missing:
            rows.update(self.chunks.chunks(missing))
        out: list = []
        placed: set[int] = set()
        superseded: dict[int, str] = {}

        def add(f: Fused, row: StoredChunk, factor: float) -> None:
            if f.id in placed or (kind and notes.attrs.get(f.id, {}).get("type") != kind):
                return
            placed.add(f.id)
            out.append((f, row, factor))

        for f, row, factor in order:
            if notes.expired(f.id, day) and not history:
                continue
            newer = notes.newer(f.id)
            if newer is None:
                add(f, row, factor)
                continue
            # the newer entry answers in the old one's place, with what the old one matched
            rid = next((i for i in newer.ids if i in placed), None)
            if rid is None:
                rid = next((i for i in newer.ids if i in rows), None)
                if rid is not None and not notes.expired(rid, day):
                    add(replace(f, id=rid), rows[rid], factor)
            if history:
                superseded[f.id] = newer.citation
                add(f, row, factor)
        window = self.options.max_results + RELEVANCE_LOOKAHEAD * 2
        out[:window] = important_first(out[:window], lambda c: notes.importance(c[0].id),
                                       lambda c: content(c[1].text))
        return out, superseded

    def _date_levels(self, query: str, rows: dict[int, StoredChunk]) -> dict[int, int]:
        """How precisely each candidate's note date matches a period the query names (1-3)."""
        refs = query_dates(query)
        if not refs or not rows:
            return {}
        paths = {row.path for row in rows.values()}
        dates = {p: note_date(p) for p in paths}
        undated = [p for p, d in dates.items() if d is None]
        if undated:
            heads = self.chunks.file_heads(undated)
            dates.update({p: note_date(p, heads.get(p)) for p in undated})
        levels = {}
        for rid, row in rows.items():
            level = max(ref.level(dates[row.path]) for ref in refs)
            if level:
                levels[rid] = level
        return levels


# runs a hybrid search's vector side beside its keyword side, for every searcher of the
# process; its threads start on first use
_SIDE = ThreadPoolExecutor(4, thread_name_prefix="mnemoclaw-search")
