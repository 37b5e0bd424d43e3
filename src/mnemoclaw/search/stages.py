"""A search as named stages over one candidate type, in the order ``Searcher.search`` runs them:

    gather   the keyword side and the vector side, and the chunks they found
    fuse     one ranking of the two (``fusion.py``), the shifts the query's dates and the
             annotations' importance give it, archived notes left out or below
    adjust   temporal decay, diversity (MMR), what the annotations say is not an answer
    score    each candidate's calibrated chance of being about the question (``relevance.py``)
    select   the floor, the files the query names first, at most ``k``

Each stage is a function of what the stages before it returned, so a test can call one alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

import numpy as np

from ..markdown.annotations import decode
from ..store.base import ChunkSource, KeywordSource, VectorSearch, VectorSource
from ..text.dates import note_date, query_dates
from ..text.names import han_names
from ..text.script import HAN_RUN, fold
from ..text.tokenize import CJK_RUN, WORD, KeywordQuery, analyze, count_cjk, keyword_query, mostly_cjk
from ..types import Hit, StoredChunk, UnrelatedReference, VectorReference
from . import keyword
from .annotated import (
    ARCHIVE_SHIFT,
    NEUTRAL_IMPORTANCE,
    AnnotationView,
    archived,
    content,
    important_first,
    says_nothing,
)
from .conversation import speakers_in
from .fusion import Fused, adaptive_vector_weight, decay_factor, fuse, mmr, standardise
from .keyword import KeywordEvidence
from .relevance import Evidence, keyword_backed, probabilities

MAX_CANDIDATES = 200
# Z-score and min-max fusion estimate each signal's spread over a pool of this many
# candidates per side (measured: 30, 50, 100 and 200 compared in docs/quality.md).
MIN_CANDIDATES = 50
# A query that names a day, month or year ("on 1 February, 2023", "2023年5月")
# lifts notes dated in that period by this many standard deviations of the fused
# score, by how precisely the date matches: same year, same month, same day
# (measured on LoCoMo's dated questions, docs/quality.md).
DATE_BOOST = {1: 0.5, 2: 1.0, 3: 2.0}
# How many candidates past the ``k`` asked for are scored for relevance, so that a few
# filtered out by ``min_score`` can be replaced by the next ones in the ranking.
RELEVANCE_LOOKAHEAD = 4
# A file the query names (Searcher.named_files) is taken as what was asked for.
NAMED_FILE_SCORE = 0.99
# How the hits are ordered: "pool", every scored candidate by its score; "topk", the first k of
# the fused ranking by their scores; "fused", the fused ranking, each score capped by the one
# above it (docs/quality.md compares them). A search diversified by MMR keeps MMR's order.
ORDER = "fused"
# A search the floor answers keeps what scored under the floor down to this share of it, after
# what passed and marked weak: the floor says whether memory has anything on the question, not
# which of what it found may be shown (LoCoMo workspace recall@5, both halves of the questions:
# docs/quality.md, "Weak results, headings and order").
WEAK_TAIL = 0.2


@dataclass(frozen=True, slots=True)
class Candidate:
    """One chunk on its way through a search: its place in the fused ranking (with the raw
    keyword and vector signals), the stored chunk, and its temporal decay (1.0: none)."""

    fused: Fused
    row: StoredChunk
    factor: float = 1.0

    @property
    def id(self) -> int:
        return self.fused.id


@dataclass
class Gathered:
    """What the two sides of a search found, and the chunks they found."""

    text: dict[int, float]  # chunk id -> BM25
    vector: dict[int, float]  # chunk id -> cosine
    words: KeywordEvidence
    qvec: np.ndarray | None
    rows: dict[int, StoredChunk]
    # fewer keyword hits than asked for: every other chunk matched no query term (scored 0)
    text_missing: float | None

    @property
    def pool(self) -> list[int]:
        return list(dict.fromkeys([*self.vector, *self.text]))


def pool_size(fusion: str, k: int, multiplier: int, kind: str | None) -> int:
    """How many candidates each side returns."""
    if kind:  # most candidates may be of other types
        return MAX_CANDIDATES
    if fusion in ("zscore", "minmax"):
        # a fixed pool: scores are normalised over it, so asking for 10 results returns the
        # same first 6 as asking for 6
        return min(MAX_CANDIDATES, max(k, MIN_CANDIDATES))
    return min(MAX_CANDIDATES, k * multiplier)


# runs a hybrid search's vector side beside its keyword side, for every searcher of the
# process; its threads start on first use
_SIDE = ThreadPoolExecutor(4, thread_name_prefix="mnemoclaw-search")


def gather(query: str, mode: str, n_cand: int, sources: Sequence[str] | None, *, keywords: KeywordSource,
           vectors: VectorSource, chunks: ChunkSource, embed: Callable[[str], np.ndarray]) -> Gathered:
    """Both sides' candidates (the vector side beside the keyword side where the store allows:
    on SQLite, over the in-memory vectors once they are warm), and their chunks."""
    def vector_side(search: VectorSearch | None) -> tuple[np.ndarray, dict[int, float]]:
        qvec = embed(query)
        return qvec, dict((search or vectors.vector_search)(qvec, n_cand, sources))

    text: dict[int, float] = {}
    vector: dict[int, float] = {}
    words = KeywordEvidence()
    qvec = None
    both: Future[tuple[np.ndarray, dict[int, float]]] | None = None
    embedding: Future[np.ndarray] | None = None
    if mode == "hybrid":
        detached = None if vectors.parallel_reads else vectors.detached_vector_search()
        if vectors.parallel_reads or detached is not None:
            both = _SIDE.submit(vector_side, detached)
        else:
            embedding = _SIDE.submit(embed, query)
    if mode in ("hybrid", "keyword"):
        ranked, words = keyword.search_explained(keywords, keyword_query(query), n_cand, sources,
                                                 named=lambda term: written_as_name(term, keywords, chunks))
        text = dict(ranked)
    if both is not None:
        qvec, vector = both.result()
    elif embedding is not None:
        qvec = embedding.result()
        vector = dict(vectors.vector_search(qvec, n_cand, sources))
    elif mode == "vector":
        qvec, vector = vector_side(None)
    if qvec is not None and words.respelled:
        # a name the question spells another way than memory: the embedder reads it as memory
        # writes it too (Marea is a stranger to it; Maria is the person the notes are about)
        qvec = embed(as_memory_spells(query, words.respelled))
        vector = dict(vectors.vector_search(qvec, n_cand, sources))
    text_missing = 0.0 if len(text) < n_cand else None
    rows = chunks.chunks(list(dict.fromkeys([*vector, *text])))
    return Gathered(text, vector, words, qvec, rows, text_missing)


def as_memory_spells(query: str, respelled: dict[str, str]) -> str:
    """``query`` with each name it spells another way than memory (KeywordEvidence.respelled)
    written as memory writes it."""
    for asked, held in respelled.items():
        query = re.sub(rf"(?<![^\W_]){re.escape(asked)}(?![^\W_])", held, query)
    return query


# how much of a chunk must be in the query's script (CJK characters, words of Latin letters; two
# characters taken for a word) for the query's words to be able to match it (Evidence.crossing):
# a bilingual note is written in both, a Chinese paragraph naming three English things is not
SCRIPT_WORDS = 3
SCRIPT_SHARE = 0.2


def written_in(text: str, *, cjk: bool) -> bool:
    """Whether ``text`` is written in the query's script: at least ``SCRIPT_WORDS`` of its words,
    and ``SCRIPT_SHARE`` of them."""
    han = count_cjk(text) / 2
    latin = sum(1 for w in WORD.findall(text) if not w.isdigit())
    mine = han if cjk else latin
    return mine >= SCRIPT_WORDS and mine >= SCRIPT_SHARE * (han + latin)


def written_as_name(term: str, keywords: KeywordSource, chunks: ChunkSource) -> str | None:
    """The word memory writes index term ``term`` as where it writes it as a name, in the first
    chunks that hold it (where a name the query spells another way is looked for): capitalised
    inside a sentence, or capitalised where a sentence starts and nowhere written in lower case
    (Dana; not Imagine, a word any sentence may start with); None when it is no name there."""
    if HAN_RUN.fullmatch(term):  # a Chinese name: one the tagger finds where memory writes it
        pairs = tuple(term[i:i + 2] for i in range(len(term) - 1))
        held = keywords.keyword_candidates(KeywordQuery(pairs), NAME_LOOKUP * 4)
        for row in chunks.chunks(list(held.lines)[:NAME_LOOKUP * 4]).values():
            # the tagger may take in a character more or less (特斯拉 in 尼古拉·特斯拉; 特斯拉是)
            if any(len(name) >= 2 and (name in term or term in name) for name in han_names(fold(row.text))):
                return term
        return None
    found = keywords.keyword_candidates(KeywordQuery((term,)), NAME_LOOKUP)
    opening = None
    lower = False
    for row in chunks.chunks(list(found.lines)[:NAME_LOOKUP]).values():
        for m in WORD.finditer(row.text):
            w = m.group()
            if analyze(w) != [term]:
                continue
            if not w[0].isupper():
                lower = True
            elif _inside_sentence(row.text, m.start()):
                return w
            else:
                opening = opening or w
    return None if lower else opening


def _inside_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` follows a word or a comma on its line (a capital there is
    a name's, not a sentence's)."""
    before = text[max(0, start - 40):start].rstrip(" \t")
    return bool(before) and (before[-1].isalnum() or before[-1] in ",;")


# how many chunks holding a term are read to see it written as a name
NAME_LOOKUP = 3


def date_levels(query: str, rows: dict[int, StoredChunk],
                heads: Callable[[list[str]], dict[str, str]]) -> dict[int, int]:
    """How precisely each candidate's note date matches a period the query names (1-3); a file
    without a date in its name is dated by a ``Date:`` line in its first chunk (``heads``)."""
    refs = query_dates(query)
    if not refs or not rows:
        return {}
    paths = {row.path for row in rows.values()}
    dates: dict[str, date | None] = {p: note_date(p) for p in paths}
    undated = [p for p, d in dates.items() if d is None]
    if undated:
        found = heads(undated)
        dates.update({p: note_date(p, found.get(p)) for p in undated})
    levels = {}
    for rid, row in rows.items():
        level = max(ref.level(dates[row.path]) for ref in refs)
        if level:
            levels[rid] = level
    return levels


def shifts(levels: dict[int, int], rows: dict[int, StoredChunk], notes: AnnotationView) -> dict[int, float]:
    """Each candidate's lift in standard deviations of the fused score: the query's date, the
    entry's importance, and below live notes when archived."""
    boost = {rid: float(DATE_BOOST[level]) for rid, level in levels.items()}
    for rid, chunk in rows.items():
        extra = notes.shift(rid) + (ARCHIVE_SHIFT if archived(chunk.path) else 0.0)
        if extra:
            boost[rid] = boost.get(rid, 0.0) + extra
    return boost


# A question in Latin letters whose nearest chunk by meaning is a CJK note: the keyword side can
# match only what that note keeps in Latin letters (a number, a name in brackets), so the vector
# side weighs at least this much (docs/quality.md, "Across scripts"). Not the other way: a Chinese
# question of English notes keeps the adaptive weight, which measured better there.
ACROSS_SCRIPTS_VECTOR_WEIGHT = 0.7


def latin_over_cjk(g: Gathered) -> bool:
    """Whether the query has no CJK term and its best vector candidate is a CJK note."""
    if not g.vector or any(CJK_RUN.match(t) for t in g.words.weights):
        return False
    best = g.rows.get(max(g.vector, key=g.vector.__getitem__))
    return best is not None and mostly_cjk(best.text)


# A question whose nearest chunks by meaning are each within one message of a conversation (a log
# chunked by message: markdown/chunker.py) weighs the vector side at least this much: such a
# chunk's vector is about one message, where a chunk of many turns averages them. Fitted on BEAM
# conversations 1-10 (docs/quality.md, "Long conversations"); LoCoMo's chunks hold many short
# turns each and keep the adaptive weight.
MESSAGE_VECTOR_WEIGHT = 0.7
# how many of the best vector candidates are looked at, and the largest share of those saying who
# speaks that may hold two messages or more
MESSAGE_LOOK, MESSAGE_MIXED = 10, 0.25


def over_messages(g: Gathered) -> bool:
    """Whether the query's best vector candidates are within single messages: some say who
    speaks, and few of those hold two messages or more."""
    best = [i for i in sorted(g.vector, key=g.vector.__getitem__, reverse=True)[:MESSAGE_LOOK] if i in g.rows]
    said = mixed = 0
    for i in best:
        n = speakers_in(g.rows[i].text)
        said += n > 0
        mixed += n > 1
        if mixed > MESSAGE_MIXED * len(best):  # more than the rest could make up for: chunks of many turns
            return False
    return said > 0 and mixed <= MESSAGE_MIXED * said


def fuse_candidates(g: Gathered, boost: dict[int, float], *, fusion: str, vector_weight: float | None,
                    text_weight: float | None, archive: bool, decay: bool, half_life_days: float,
                    now: float) -> tuple[list[Candidate], int]:
    """The fused ranking as candidates (a chunk deleted between the two reads, or archived when
    the archive is not searched, left out), each with its decay; and how many were fused."""
    if fusion == "zscore" and vector_weight is None and text_weight is None and latin_over_cjk(g):
        vector_weight = max(adaptive_vector_weight(g.vector), ACROSS_SCRIPTS_VECTOR_WEIGHT)
        text_weight = 1.0 - vector_weight
    elif fusion == "zscore" and vector_weight is None and text_weight is None and over_messages(g):
        vector_weight = max(adaptive_vector_weight(g.vector), MESSAGE_VECTOR_WEIGHT)
        text_weight = 1.0 - vector_weight
    fused = fuse(g.vector, g.text, fusion, vector_weight, text_weight, g.text_missing, boost or None)
    out = []
    for f in fused:
        row = g.rows.get(f.id)
        if row is None:  # deleted between the two queries
            continue
        if not archive and archived(row.path):
            continue
        factor = 1.0
        if decay:
            day = note_date(row.path)
            if day is not None:
                ts = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
                factor = decay_factor((now - ts) / 86400.0, half_life_days)
        out.append(Candidate(f, row, factor))
    return out, len(fused)


def reorder(cands: list[Candidate], *, decay: bool, use_mmr: bool, mmr_lambda: float, k: int) -> list[Candidate]:
    """Decayed scores in order, then the ``k`` to be returned diversified (MMR); the rest keep
    their order."""
    if decay:
        cands = sorted(cands, key=lambda c: (-c.fused.score * c.factor, c.id))
    if use_mmr and len(cands) > 1:
        picked = mmr([(c.fused.score * c.factor, c.row.text) for c in cands], k, mmr_lambda)
        chosen = set(picked)
        cands = [cands[i] for i in picked] + [c for i, c in enumerate(cands) if i not in chosen]
    return cands


def honour_annotations(cands: list[Candidate], rows: dict[int, StoredChunk], notes: AnnotationView,
                       kind: str | None, history: bool, day: date, window: int,
                       fetch: Callable[[list[int]], dict[int, StoredChunk]]) -> tuple[list[Candidate], dict[int, str]]:
    """Leave out what the annotations say is not an answer: other types, expired entries,
    and entries a newer one with the same key replaced; that newer one takes the old
    one's place (``fetch`` reads it when neither side found it). With ``history`` the old stay,
    each right after its replacement, marked. The first ``window`` put important entries ahead
    of less important ones saying the same."""
    wanted = [notes.current[e.key] for e in (notes.newer(c.id) for c in cands) if e is not None]
    missing = [e.ids[0] for e in wanted if not any(i in rows for i in e.ids)]
    if missing:
        rows.update(fetch(missing))
    out: list[Candidate] = []
    placed: set[int] = set()
    superseded: dict[int, str] = {}

    def add(c: Candidate) -> None:
        if c.id in placed or (kind and notes.attrs.get(c.id, {}).get("type") != kind):
            return
        placed.add(c.id)
        out.append(c)

    for c in cands:
        if notes.expired(c.id, day) and not history:
            continue
        newer = notes.newer(c.id)
        if newer is None:
            add(c)
            continue
        # the newer entry answers in the old one's place, with what the old one matched
        rid = next((i for i in newer.ids if i in placed), None)
        if rid is None:
            rid = next((i for i in newer.ids if i in rows), None)
            if rid is not None and not notes.expired(rid, day):
                add(Candidate(replace(c.fused, id=rid), rows[rid], c.factor))
        if history:
            superseded[c.id] = newer.citation
            add(c)
    out[:window] = important_first(out[:window], lambda c: notes.importance(c.id), lambda c: content(c.row.text))
    return out, superseded


def score(cands: Sequence[Candidate], g: Gathered, mode: str, *, reference: VectorReference | None,
          unrelated: UnrelatedReference | None, levels: dict[int, int],
          superseded: dict[int, str], spell: Callable[[Sequence[str]], np.ndarray | None] | None = None
          ) -> list[Hit]:
    """Each candidate as a hit scored with how likely it is to answer the query
    (search/relevance.py): the same scale for every query. ``spell`` (unit vectors of short
    texts): whether the best candidate, a Chinese note, writes the query's unseen names of Latin
    letters in its own script is asked of the embedder rather than assumed."""
    floor_cos = min(g.vector.values()) if g.vector else None
    pool = g.pool
    vrel = standardise({i: g.vector.get(i, floor_cos or 0.0) for i in pool}) if g.vector else {}
    trel = standardise({i: g.text.get(i, 0.0) for i in pool}) if g.text else {}
    found = []
    for c in cands:
        f, row = c.fused, c.row
        words = g.words
        present = words.present(f.id, row.text) if mode != "vector" else set()
        keyed = mode != "vector"
        evidence = Evidence(
            coverage=words.coverage(f.id, row.text, present) if keyed else None,
            bm25=words.bm25_share(f.text) if keyed else None,
            cosine=(f.vector if f.vector is not None else floor_cos) if mode != "keyword" else None,
            reference=reference,
            date=levels.get(f.id, 0), vector_rel=vrel.get(f.id), text_rel=trel.get(f.id), unrelated=unrelated,
            content=words.content_coverage(f.id, row.text, present) if keyed else None,
            unseen=words.unseen_share if keyed else None, names_unseen=words.names_unseen if keyed else None,
            names_missing=words.names_missing(present) if keyed else None,
            subject_unseen=keyed and words.subject_unseen,
            other_script=keyed and (words.names_unseen >= 1.0 or words.subject_unseen) and words.other_script(row.text),
            crossing=keyed and bool(words.weights) and not written_in(row.text, cjk=words.cjk),
            named=keyed and bool(words.names), one_unseen=words.one_unseen if keyed else 0.0)
        found.append((c, evidence))
    if found and spell is not None and found[0][1].other_script and g.words.written \
            and mostly_cjk(found[0][0].row.text) and not g.words.spelt_in(found[0][0].row.text, spell):
        found[0] = (found[0][0], replace(found[0][1], other_script=False))
    chances = probabilities([e for _, e in found], mode)
    return [Hit(c.row.path, c.row.start_line, c.row.end_line, p * c.factor, c.row.text, c.row.source, c.fused.vector,
                c.fused.text, evidence, g.words.weights, g.words.lines.get(c.id), decode(c.row.meta),
                superseded.get(c.id)) for (c, evidence), p in zip(found, chances, strict=True)]


def headings_give_way(scored: list[Hit], following: Callable[[Hit], Hit | None]) -> list[Hit]:
    """A hit of headings alone (a document's title over a long first line, a section heading
    left alone by annotated entries) gives its place to what it heads: ``following`` finds the
    next chunk of its file that says something, which takes the heading's place with the better
    of the two scores. A heading with nothing after it is no hit at all."""
    if not any(says_nothing(h.text) for h in scored):
        return scored
    out: list[Hit] = []
    placed: dict[tuple[str, int], int] = {}
    for h in scored:
        if says_nothing(h.text):
            nxt = following(h)
            if nxt is None:
                continue
            mine = next((s for s in scored if (s.path, s.start_line) == (nxt.path, nxt.start_line)), None)
            h = replace(mine or nxt, score=max(h.score, mine.score if mine else 0.0))
        key = (h.path, h.start_line)
        if key in placed:
            at = placed[key]
            if h.score > out[at].score:
                out[at] = replace(out[at], score=h.score)
            continue
        placed[key] = len(out)
        out.append(h)
    return out


def named_first(named: Sequence[str], scored: list[Hit], first_chunk: Callable[[str], Hit | None]) -> list[Hit]:
    """The files the query names, each as its best scored chunk (or its first chunk), scored as
    what was asked for."""
    front = []
    for path in named:
        best = next((h for h in scored if h.path == path and not says_nothing(h.text)), None) or first_chunk(path)
        if best is not None:
            front.append(replace(best, score=max(best.score, NAMED_FILE_SCORE)))
    return front


def in_score_order(hits: list[Hit], by_score: bool = True) -> list[Hit]:
    """``hits`` by score, highest first (``by_score``; else in the order given, diversified by
    MMR), but where the annotations place a hit: the more important of two entries saying the
    same thing first, and an entry a newer one replaced (asked for with history) right after its
    replacement. A hit placed so above a higher-scored one lends it its own score, so scores
    never rise down the list."""
    if not by_score:
        return _monotone(hits)
    ranked = sorted((h for h in hits if not h.superseded_by), key=lambda h: -h.score)
    ranked = important_first(ranked, lambda h: int(h.annotations.get("importance", NEUTRAL_IMPORTANCE)),
                             lambda h: content(h.text))
    for old in (h for h in hits if h.superseded_by):
        path, _, span = (old.superseded_by or "").partition("#L")
        lo, _, hi = span.partition("-L")
        at = next((i for i, h in enumerate(ranked) if h.path == path and lo.isdigit() and hi.isdigit()
                   and int(lo) <= h.start_line <= int(hi)), None)
        if at is None:
            at = next((i for i, h in enumerate(ranked) if h.score < old.score), len(ranked))
        else:
            at += 1
            while at < len(ranked) and ranked[at].superseded_by == old.superseded_by:
                at += 1
        ranked.insert(at, old)
    return _monotone(ranked)


def this_project_first(hits: list[Hit], project: str) -> list[Hit]:
    """``hits`` with the entries annotated with a project other than ``project`` moved after
    the rest (this project's and those naming none), in their order, each scored no higher
    than the hit before it: the list still reads best first."""
    mine = [h for h in hits if h.annotations.get("project") in (None, project)]
    return _monotone(mine + [h for h in hits if h.annotations.get("project") not in (None, project)])


def _monotone(hits: list[Hit]) -> list[Hit]:
    out: list[Hit] = []
    for h in hits:
        if out and h.score > out[-1].score:
            h = replace(h, score=out[-1].score)
        out.append(h)
    return out


def select(scored: list[Hit], front: list[Hit], floor: float, k: int, *,
           relaxed_floor: float | None = None, order: str | None = None, weak: bool = True,
           later: Callable[[Hit], bool] | None = None) -> list[Hit]:
    """The hits at ``floor`` or above that say something (a chunk of headings and annotations
    alone is never a hit), their scores in order (``ORDER``), those ``later`` picks after the
    others (each scored no higher than the hit before it), the named files first (scored at
    least as high as what follows them), at most ``k``. ``relaxed_floor`` (OpenClaw's weighted
    merge): when nothing passes, keyword-backed hits at or above it. ``weak``: when nothing
    passes, the best candidate with real keyword evidence (relevance.keyword_backed), marked; when
    something passes, the hits under the floor down to ``WEAK_TAIL`` of it after those that pass,
    marked."""
    order = order or ORDER
    kept = [h for h in scored if h.score >= floor and not says_nothing(h.text)]
    answered = bool(kept or front)
    if not kept and not front and relaxed_floor is not None:
        kept = [h for h in scored if h.text_score is not None and h.score >= relaxed_floor
                and not says_nothing(h.text)]
    if not kept and not front and weak and floor > 0:
        # fail soft: rather than "nothing", the best candidate whose keyword evidence is real,
        # marked as possibly not the answer
        best = next((h for h in scored if not says_nothing(h.text)), None)
        if best is not None and best.evidence is not None and keyword_backed(best.evidence):
            return [replace(best, weak=True)]
    if order == "topk":
        kept = in_score_order(kept[:k])
    else:
        kept = in_score_order(kept, by_score=order == "pool")
    if later is not None and kept:
        moved = [later(h) for h in kept]
        if any(moved):
            kept = _monotone([h for h, m in zip(kept, moved, strict=True) if not m]
                             + [h for h, m in zip(kept, moved, strict=True) if m])
    if weak and floor > 0 and answered and len(kept) < k:
        # a question the floor answers: what it also found down to a fraction of the floor comes
        # after the answers, marked weak, rather than being cut (the second evidence of a question
        # often shares fewer of its words)
        tail = floor * WEAK_TAIL
        shown = {(h.path, h.start_line) for h in kept}
        below = [replace(h, weak=True) for h in scored if tail <= h.score < floor and not says_nothing(h.text)
                 and (h.path, h.start_line) not in shown]
        if order == "pool":
            below.sort(key=lambda h: -h.score)
        kept = _monotone(kept + below[: k - len(kept)])
    if front:
        shown = {(h.path, h.start_line) for h in front}
        kept = [h for h in kept if (h.path, h.start_line) not in shown]
        top = max((h.score for h in kept), default=0.0)
        front = [replace(h, score=max(h.score, top)) for h in front]
        kept = _monotone(front + kept)
    return kept[:k]

