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


def idf(n_docs: int, df: int) -> float:
    """Lucene's smoothed IDF: always positive, so a term in most documents still counts a little."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _phrase_count(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    n = len(phrase)
    first = phrase[0]
    return sum(1 for i, t in enumerate(tokens) if t == first and list(tokens[i : i + n]) == list(phrase))


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
    n_docs = max(n_docs, 1)
    avgdl = avgdl if avgdl > 0 else 1.0
    weights = {t: idf(n_docs, df.get(t, 0)) for t in terms}
    phrase_weights = [
        (tuple(p), idf(n_docs, min((df.get(t, 0) for t in p), default=0))) for p in phrases if len(p) > 1
    ]
    out: dict[int, float] = {}
    for doc_id, tokens in docs.items():
        counts = Counter(tokens)
        norm = k1 * (1.0 - b + b * len(tokens) / avgdl)
        s = 0.0
        for t, w in weights.items():
            f = counts.get(t)
            if f:
                s += w * f * (k1 + 1.0) / (f + norm)
        for p, w in phrase_weights:
            if all(t in counts for t in p):
                f = _phrase_count(tokens, p)
                if f:
                    s += w * f * (k1 + 1.0) / (f + norm)
        out[doc_id] = s
    return out
