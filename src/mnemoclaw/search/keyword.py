"""Keyword ranking: BM25 and the best line over the candidates a store's full-text index
found. Pure, so every store ranks the same candidates the same way.

The store's own ranking (FTS5's ``bm25()``, b = 0.75) only decides which candidates are
looked at; the order comes from here (search/bm25.py: k1 1.2, b 0.4, plus half the
best line's score; docs/quality.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from ..text import sounds, spelling
from ..text.names import han_nouns
from ..text.script import HAN_RUN
from ..text.tokenize import (
    CALENDAR_WORDS,
    FRAME_WORDS,
    STOP_WORDS,
    KeywordQuery,
    analyze,
    cjk_grams,
    mostly_cjk,
    name_parts,
)
from ..types import KeywordCandidates
from . import bm25

# How many full-text candidates, per result asked for, BM25 re-ranks (measured: 1, 2 and
# 4 gave the same quality within 0.001; 4 doubled keyword latency on long CJK chunks).
RESCORE_DEPTH = 2
MAX_DEPTH = 400
# the index terms of the words that frame a question (text/tokenize.py FRAME_WORDS)
FRAME_TERMS = frozenset(t for w in FRAME_WORDS for t in analyze(w))


class CandidateSource(Protocol):
    """A store, as far as keyword search needs one."""

    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates: ...

    def terms_starting(self, letters: str, shortest: int, longest: int) -> list[str]: ...

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]: ...


def rank(query: KeywordQuery, candidates: KeywordCandidates, limit: int) -> list[tuple[int, float]]:
    """(chunk id, BM25 with the best line) best first, at most ``limit``."""
    if not candidates.lines or limit <= 0:
        return []
    scores = bm25.with_best_line(query.terms, query.phrases, candidates.lines, candidates.df, candidates.n_docs,
                                 candidates.avgdl)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


@dataclass
class KeywordEvidence:
    """What a chunk's words say about a query, against the index's statistics."""

    weights: dict[str, float] = field(default_factory=dict)  # IDF of each query term
    lines: dict[int, list[list[str]]] = field(default_factory=dict)  # the candidates' analysed lines
    complete: bool = False  # every chunk holding a query term is among the candidates
    unseen: frozenset[str] = frozenset()  # query terms no chunk of the index holds
    names: tuple[str, ...] = ()  # the query's names (KeywordQuery.names)
    absent: frozenset[str] = frozenset()  # those memory never mentions, whole or in parts
    parts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # each name's parts (KeywordQuery.parts)
    written: tuple[str, ...] = ()  # the names in Latin letters as the query writes them (KeywordQuery.written)
    subjects: tuple[tuple[str, ...], ...] = ()  # whom the question is about (KeywordQuery.subjects)
    # the names the query spells another way than memory: as the query writes each, as memory does
    respelled: dict[str, str] = field(default_factory=dict)
    cjk: bool = False  # the query is written mostly in CJK characters (KeywordQuery.cjk)

    @property
    def total(self) -> float:
        return sum(self.weights.values())

    def present(self, rowid: int, text: str) -> set[str]:
        """The chunk's index terms (those of a candidate as the index analysed them)."""
        lines = self.lines.get(rowid)
        if lines is None:
            # not a candidate, and every chunk holding a query term was one: it holds none
            return set() if self.complete else set(analyze(text))
        return {t for line in lines for t in line}

    def coverage(self, rowid: int, text: str, present: set[str] | None = None) -> float:
        """The share of the query's IDF weight the chunk contains (0 to 1). A query term the
        index has never seen weighs most (its IDF is the highest) and is in no chunk."""
        if not self.total:
            return 0.0
        present = self.present(rowid, text) if present is None else present
        return sum(w for t, w in self.weights.items() if t in present) / self.total

    def content_coverage(self, rowid: int, text: str, present: set[str] | None = None) -> float:
        """``coverage`` of the words that say what the question is about, without those that
        only frame it ("what did … say about …"); a query of frame words alone keeps them."""
        content = {t: w for t, w in self.weights.items() if t not in FRAME_TERMS} or self.weights
        total = sum(content.values())
        if not total:
            return 0.0
        present = self.present(rowid, text) if present is None else present
        return sum(w for t, w in content.items() if t in present) / total

    @property
    def one_unseen(self) -> float:
        """The share of the content words' weight (``content_coverage``) on the heaviest word no
        chunk holds: one unmatched word (a typo, a word memory writes another way), which alone
        should not take a chunk off the question."""
        content = {t: w for t, w in self.weights.items() if t not in FRAME_TERMS} or self.weights
        total = sum(content.values())
        return max((w for t, w in content.items() if t in self.unseen), default=0.0) / total if total else 0.0

    @property
    def unseen_share(self) -> float:
        """The share of the query's IDF weight on words no chunk holds: what memory never mentions."""
        total = self.total
        return sum(w for t, w in self.weights.items() if t in self.unseen) / total if total else 0.0

    @property
    def names_unseen(self) -> float:
        """The share of the query's names no chunk of the index mentions (0 without names)."""
        return sum(1 for t in self.names if t in self.absent) / len(self.names) if self.names else 0.0

    @property
    def subject_unseen(self) -> bool:
        """Whether no chunk of the index mentions someone the question is about, though it may
        mention other names the question gives ("What does Imogen think of The Witcher 3?")."""
        return any(all(t in self.absent for t in subject) for subject in self.subjects)

    def names_missing(self, present: set[str]) -> float:
        """The share of the query's names the chunk does not mention (0 without names)."""
        held = present.__contains__
        return sum(1 for t in self.names if not mentioned(t, self.parts.get(t, ()), held)) / len(self.names) \
            if self.names else 0.0

    def other_script(self, text: str) -> bool:
        """Whether the chunk is written in a script the query's names may be spelt in too, so
        that memory may mention them after all: a Latin name in a CJK note (Saturday as 周六),
        a Chinese name in a note of Latin letters (张伟 as Zhang Wei)."""
        han = [bool(HAN_RUN.fullmatch(t)) for t in self.names]
        cjk = mostly_cjk(text)
        return (cjk and not all(han)) or (not cjk and any(han))

    def spelt_in(self, text: str, embed: Callable[[Sequence[str]], np.ndarray | None]) -> bool:
        """Whether a Chinese note may write one of the query's names of Latin letters in its own
        script: one of the note's nouns means nearly the same to the embedder (卡罗琳 for
        Caroline, 黑豹队 for the Panthers). ``embed`` gives unit vectors, or None when it cannot
        (then the note may), as it may where the tagger cannot read it (text/names.py han_nouns)."""
        if not self.written:
            return False
        han = han_nouns(text)
        if han is None:
            return True
        if not han:
            return False
        vecs = embed([*self.written, *han])
        if vecs is None:
            return True
        return float((vecs[: len(self.written)] @ vecs[len(self.written):].T).max()) >= TRANSLATED

    def bm25_share(self, score: float | None) -> float:
        """A keyword score per unit of the query's IDF weight."""
        return (score or 0.0) / self.total if self.total else 0.0


# A name of Latin letters may be written in a Chinese note when the embedder puts one of the note's
# nouns at least this close to it: the highest that kept English questions of Chinese paragraphs
# answered with nothing under 1 % on either half of them (docs/quality.md, "Names across scripts")
TRANSLATED = 0.35

# the share of a Chinese name's character pairs memory must hold for the name to count as mentioned
# (docs/quality.md, "Chinese names": all of them silenced twice as many answerable questions)
HAN_PAIRS_MENTION = 0.5


def mentioned(name: str, parts: Sequence[str], held: Callable[[str], bool]) -> bool:
    """Whether text whose terms ``held`` says it has mentions a name: the name's own term, or its
    parts (KeywordQuery.parts): all of a name of letters and digits ("mir", "7a"), at least half
    the character pairs of a Chinese name (a name is written in more than one way: 伯尔尼 and
    伯恩, 美国宇航局 and 美国国家航空航天局)."""
    if held(name):
        return True
    if not parts:
        return False
    found = sum(1 for p in parts if held(p))
    return found >= HAN_PAIRS_MENTION * len(parts) if HAN_RUN.fullmatch(name) else found == len(parts)


def search_explained(store: CandidateSource, query: KeywordQuery, limit: int,
                     sources: Sequence[str] | None = None, *, named: Callable[[str], str | None] | None = None,
                     ) -> tuple[list[tuple[int, float]], KeywordEvidence]:
    """``search``, and the evidence behind it for the relevance score (search/relevance.py).
    ``named``: whether memory writes an index term as a name (where a name the query spells
    another way is looked for; None: any term alike counts)."""
    if query.empty or limit <= 0:
        return [], KeywordEvidence()
    depth = min(limit * RESCORE_DEPTH, MAX_DEPTH)
    candidates = store.keyword_candidates(query, depth, sources)
    spellings: dict[str, str] = {}
    respelled = _respelled(store, query, candidates.df, named, spellings)
    if respelled is not query:  # a name memory spells another way: look for it as memory spells it
        query = respelled
        candidates = store.keyword_candidates(query, depth, sources)
    n_docs = max(candidates.n_docs, 1)
    df = candidates.df
    query = _held_forms(query, df)
    weights = {t: bm25.idf(n_docs, df.get(t, 0)) for t in query.terms}
    unseen = frozenset(t for t in query.terms if not df.get(t, 0))
    names = [(t, parts) for t, parts in zip(query.names, query.parts or [()] * len(query.names), strict=True)
             if t in weights or parts]
    absent = frozenset(t for t, parts in names if not mentioned(t, parts, lambda u: bool(df.get(u, 0))))
    kept = dict(names)
    subjects = tuple(s for s in (tuple(t for t in subject if t in kept) for subject in query.subjects) if s)
    evidence = KeywordEvidence(weights, candidates.lines, complete=len(candidates.lines) < depth, unseen=unseen,
                               names=tuple(kept), absent=absent, parts=kept, written=query.written,
                               subjects=subjects, respelled=spellings, cjk=query.cjk)
    return rank(query, candidates, limit), evidence


def _held_forms(query: KeywordQuery, df: dict[str, int]) -> KeywordQuery:
    """``query`` without the forms of a measurement memory does not hold when it holds another
    (175cm asked, 175厘米 written: "175" counts, "175cm" is not held against the note); when it
    holds none, one form (the number) counts against every note, not each."""
    unheld: set[str] = set()
    for group in query.variants:
        if any(df.get(t, 0) for t in group):
            unheld.update(t for t in group if not df.get(t, 0))
        else:  # none held: one form counts against the notes, not each
            unheld.update(t for t in group if t != group[-1])
    return replace(query, terms=tuple(t for t in query.terms if t not in unheld)) if unheld else query


# terms that are words before they are names: not taken for another spelling of one (Marcus / March)
NOT_NAMES = frozenset(t for w in (*STOP_WORDS, *FRAME_WORDS, *CALENDAR_WORDS) for t in analyze(w))
# the most spellings of one name a query looks for (the closest first)
SPELLINGS_MAX = 3
SPELLINGS_LOOKED_UP = 3 * SPELLINGS_MAX  # index terms looked up for them


def _respelled(store: CandidateSource, query: KeywordQuery, df: dict[str, int],
               named: Callable[[str], str | None] | None, spellings: dict[str, str]) -> KeywordQuery:
    """``query`` with each name that memory never mentions replaced by the terms that spell it
    another way in memory and that memory writes as a name (``named``: the word as memory writes
    it), or ``query`` itself when there is none: a name of letters alike by sound or a typo
    (text/spelling.py: Muhammad for Muhhamed, Aqib for Akib), a Chinese name with one character
    for another of the same sound (text/sounds.py: 特斯拉 for 特思拉). ``spellings`` is given each
    name as the query writes it and as memory writes its closest spelling."""
    found: dict[str, list[str]] = {}  # a query term -> the terms memory spells it with
    renamed: dict[str, str] = {}  # a name -> memory's closest spelling of it
    for name, parts in zip(query.names, query.parts or [()] * len(query.names), strict=True):
        if HAN_RUN.fullmatch(name):
            if mentioned(name, parts, lambda u: bool(df.get(u, 0))):
                continue
            near = _han_spellings(store, name, named)
            if near:
                renamed[name] = spellings[name] = near[0]
                for asked, held in zip(cjk_grams(name), cjk_grams(near[0]), strict=True):
                    if asked != held:
                        found[asked] = [held]
            continue
        if df.get(name, 0) or parts:
            continue
        written = next((spelling.plain(w) for w in query.written if analyze(w) == [name]), None)
        if written is None or not spelling.is_word(written):
            continue
        shortest, longest = spelling.length_range(written)
        near = [t for t in store.terms_starting(spelling.first_letters(written), shortest, longest)
                if t not in NOT_NAMES and spelling.alike(written, t)]
        # the term that spells the name's own term first (Thuring: ture before three), then the
        # nearest in length; each looked up where memory writes it, a few at most
        near.sort(key=lambda t: (not spelling.alike(name, t, stemmed=False), abs(len(t) - len(name)), t))
        spelt: dict[str, str | None] = {}
        for t in near[:SPELLINGS_LOOKED_UP]:
            word = named(t) if named is not None else None
            if named is None or _spells(written, name, t, word):
                spelt[t] = word
                if len(spelt) == SPELLINGS_MAX:
                    break
        near = list(spelt)
        if near:
            found[name] = near
            renamed[name] = near[0]
            as_memory = spelt.get(near[0])
            if as_memory:
                spellings[next(w for w in query.written if analyze(w) == [name])] = as_memory
    if not renamed:
        return query

    def swap(terms: Sequence[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for t in terms for v in found.get(t, [t])))

    names = tuple(renamed.get(n, n) for n in query.names)
    return replace(query, terms=swap(query.terms), names=names, parts=tuple(name_parts(n) for n in names),
                   subjects=tuple(tuple(renamed.get(n, n) for n in s) for s in query.subjects),
                   phrases=tuple(tuple(found[t][0] if t in found else t for t in p) for p in query.phrases))


def _spells(written: str, name: str, term: str, word: str | None) -> bool:
    """Whether index term ``term``, which memory writes as ``word`` (None: not as a name), spells
    a name the question writes as ``written`` and holds as term ``name``. The ending an index term
    may have lost is put back only to find it: the word memory writes spells the name as the
    question writes it (Muhammad / Muhhamed), or the index term spells the name's own term
    (Mungols / Mongol, both held without the s); not Manning (man) / MA (ma), Kennedy / Kenya."""
    return word is not None and (spelling.alike(written, spelling.plain(word), stemmed=False)
                                 or spelling.alike(name, term, stemmed=False))


def _han_spellings(store: CandidateSource, name: str, named: Callable[[str], str | None] | None) -> list[str]:
    """The spellings of Chinese name ``name`` with one character for another of the same sound
    (text/sounds.py) that memory mentions (the pairs the new character is in, and as many of
    the others as ``mentioned`` asks) and writes as a name, the most held first, at most
    ``SPELLINGS_MAX``."""
    near: list[tuple[int, str]] = []
    for i, ch in enumerate(name):
        others = sounds.alike(ch)
        if not others:
            continue
        for other, n in store.doc_freqs(sorted(others)).items():
            if not n:
                continue
            variant = name[:i] + other + name[i + 1:]
            changed = [variant[j:j + 2] for j in (i - 1, i) if 0 <= j < len(variant) - 1]
            held = store.doc_freqs(changed)
            if not all(held.values()):
                continue
            pairs = name_parts(variant)  # a name of three characters or more: mentioned by its pairs
            if pairs and not mentioned(variant, pairs, lambda u: bool(store.doc_freqs([u])[u])):
                continue
            near.append((min(held.values()), variant))
    near.sort(key=lambda x: (-x[0], x[1]))
    return [v for _, v in near[:SPELLINGS_MAX] if named is None or named(v)]


def search(store: CandidateSource, query: KeywordQuery, limit: int,
           sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
    """The best ``limit`` chunks of ``store`` for ``query`` by keywords."""
    if query.empty or limit <= 0:
        return []
    # the store's ranking may bury what BM25 with our parameters promotes: look deeper
    return rank(query, store.keyword_candidates(query, min(limit * RESCORE_DEPTH, MAX_DEPTH), sources), limit)
