"""BM25 over analyzed terms. Pure.

The full-text index finds candidates; this scores them with parameters chosen for
memory notes. FTS5's built-in ``bm25()`` fixes ``b = 0.75``, which over-penalises
longer chunks among short notes and dialogue turns; measured on LoCoMo turns,
``b = 0.4`` lifts keyword recall@5 from 0.547 to 0.567 while SciFact abstracts
lose 0.01 nDCG@10 (docs/quality.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

K1 = 1.2
B = 0.4
# The best line's BM25 is added to the chunk's at this weight (measured in LoCoMo
# workspace mode, docs/quality.md).
LINE_WEIGHT = 0.5


def idf(n_docs: int, df: int) -> float:
    """Lucene's smoothed IDF: always positive, so a term in most documents still counts a little."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _phrase_count(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    n = len(phrase)
    first = phrase[0]
    return sum(1 for i, t in enumerate(tokens) if t == first and list(tokens[i : i + n]) == list(phrase))


class _Scorer:
    """BM25 for one query over documents given as term counts and a length."""

    def __init__(self, terms: Sequence[str], phrases: Sequence[Sequence[str]], df: Mapping[str, int], n_docs: int):
        n_docs = max(n_docs, 1)
        self.weights = {t: idf(n_docs, df.get(t, 0)) for t in terms}
        self.phrases = [
            (tuple(p), idf(n_docs, min((df.get(t, 0) for t in p), default=0))) for p in phrases if len(p) > 1
        ]
        # phrases may hold stop words that are not terms
        self.vocab = set(self.weights).union(*(p for p, _ in self.phrases))

    def counts(self, tokens: Sequence[str]) -> Counter[str]:
        """How often each query term or phrase word occurs in ``tokens``."""
        vocab = self.vocab
        return Counter(t for t in tokens if t in vocab)

    def __call__(self, counts: Mapping[str, int], length: int, tokens: Sequence[str], avgdl: float,
                 k1: float = K1, b: float = B) -> float:
        norm = k1 * (1.0 - b + b * length / (avgdl if avgdl > 0 else 1.0))
        s = 0.0
        weights = self.weights
        for t, f in counts.items():
            w = weights.get(t)
            if w is not None:
                s += w * f * (k1 + 1.0) / (f + norm)
        for p, w in self.phrases:
            if all(t in counts for t in p):
                f = _phrase_count(tokens, p)
                if f:
                    s += w * f * (k1 + 1.0) / (f + norm)
        return s


def score(
    terms: Sequence[str],
    phrases: Sequence[Sequence[str]],
    docs: Mapping[int, Sequence[str]],
    df: Mapping[str, int],
    n_docs: int,
    avgdl: float,
    k1: float = K1,
    b: float = B,
) -> dict[int, float]:
    """BM25 of each candidate document (its analyzed terms) for the query terms.

    A phrase (adjacent terms) scores as one more term whose document frequency is
    taken as its rarest word's: an upper bound, so the bonus is never overstated.
    """
    bm25 = _Scorer(terms, phrases, df, n_docs)
    return {doc_id: bm25(bm25.counts(tokens), len(tokens), tokens, avgdl, k1, b) for doc_id, tokens in docs.items()}


def with_best_line(
    terms: Sequence[str],
    phrases: Sequence[Sequence[str]],
    docs: Mapping[int, Sequence[Sequence[str]]],
    df: Mapping[str, int],
    n_docs: int,
    avgdl: float,
    line_weight: float = LINE_WEIGHT,
) -> dict[int, float]:
    """BM25 of each candidate (given as lines of terms) plus ``line_weight`` times its best line's.

    A memory note states one fact per line or bullet; a chunk whose query terms sit
    together on one line is a better answer than one that scatters them over ten.
    Lines are length-normalised against the candidates' mean line; IDF is the index's.
    """
    bm25 = _Scorer(terms, phrases, df, n_docs)
    n_lines = sum(len(lines) for lines in docs.values())
    avg_line = sum(len(line) for lines in docs.values() for line in lines) / n_lines if n_lines else 1.0
    vocab = bm25.vocab
    out: dict[int, float] = {}
    for doc_id, lines in docs.items():
        # plain dicts, not Counters: a long query makes most lines of most candidates count
        total: dict[str, int] = {}
        length = 0
        best = 0.0
        for line in lines:
            length += len(line)
            counts: dict[str, int] = {}
            for t in line:
                if t in vocab:
                    counts[t] = counts.get(t, 0) + 1
            if counts:
                for t, f in counts.items():
                    total[t] = total.get(t, 0) + f
                best = max(best, bm25(counts, len(line), line, avg_line))
        whole = [t for line in lines for t in line] if bm25.phrases and total else ()
        out[doc_id] = bm25(total, length, whole, avgdl) + line_weight * best
    return out
