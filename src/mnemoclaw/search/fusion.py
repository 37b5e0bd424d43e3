"""Combining keyword and vector candidates into one ranking. Pure functions.

Scores from BM25 and from cosine similarity live on unrelated scales, and their
spread changes from query to query. The fusions here:

- ``zscore``: standardise each signal over its candidates, then add with weights.
  A keyword hit far above the other keyword candidates stays far above, so exact
  matches are not drowned by a weak vector signal (and vice versa).
- ``minmax``: rescale each signal to [0, 1] over its candidates, then add.
- ``rrf``: reciprocal-rank fusion, ``sum 1/(k + rank)``; ignores score gaps.
- ``weighted``: OpenClaw's merge, ``vectorWeight * cosine + textWeight * bm25/(1+bm25)``.

A candidate missing from one side gets that side's lowest observed value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..text.tokenize import similarity_tokens

RRF_K = 60
# Weights used when the configuration does not set them, per fusion. The weighted
# merge keeps OpenClaw's 0.7/0.3; z-score fusion adapts per query (below); the
# others use the fixed weights that measured best for them (docs/quality.md).
DEFAULT_WEIGHTS = {"weighted": (0.7, 0.3), "zscore": (0.3, 0.7), "minmax": (0.3, 0.7), "rrf": (0.3, 0.7)}
# Adaptive vector weight: how far the best vector match stands above the mean of
# the vector candidates (cosine units), times 2.2, clamped to [0.1, 0.5]. A small
# multilingual embedder is sharp on some queries (translations, paraphrases) and
# flat on others (chit-chat turns); trusting it only when it is sharp measured
# better than any fixed weight across LoCoMo, XQuAD zh and zh->en, CMRC and SciFact.
ADAPTIVE_SLOPE, ADAPTIVE_MIN, ADAPTIVE_MAX = 2.2, 0.1, 0.5


def adaptive_vector_weight(vector: dict[int, float]) -> float:
    if not vector:
        return 0.0
    values = list(vector.values())
    gap = max(values) - sum(values) / len(values)
    return min(ADAPTIVE_MAX, max(ADAPTIVE_MIN, ADAPTIVE_SLOPE * gap))


@dataclass(frozen=True, slots=True)
class Fused:
    id: int
    score: float  # in [0, 1], higher is better
    vector: float | None  # the raw signals, for explanation and debugging
    text: float | None


def bm25_to_unit(score: float) -> float:
    """OpenClaw's mapping of a BM25 score (positive, higher is better) into [0, 1)."""
    if score > 0:
        return score / (1 + score)
    return 1 / (1 - score)


def standardise(values: dict[int, float]) -> dict[int, float]:
    n = len(values)
    if n == 0:
        return {}
    mean = sum(values.values()) / n
    var = sum((v - mean) ** 2 for v in values.values()) / n
    std = math.sqrt(var)
    if std < 1e-9:
        return {k: 0.0 for k in values}
    return {k: (v - mean) / std for k, v in values.items()}


def _rescale(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 1e-12:
        return {k: 1.0 for k in values}
    return {k: (v - lo) / (hi - lo) for k, v in values.items()}


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x > -50 else 0.0


def fuse(
    vector: dict[int, float],
    text: dict[int, float],
    method: str = "zscore",
    vector_weight: float | None = None,
    text_weight: float | None = None,
    text_missing: float | None = None,
    boost: dict[int, float] | None = None,
) -> list[Fused]:
    """Fuse candidate scores (cosine similarity, positive BM25) into a sorted list.

    A candidate one side did not return gets that side's lowest returned score, or
    ``text_missing`` for the keyword side: when the keyword search returned every
    match, an unreturned chunk contains no query term and its BM25 is exactly 0.
    Standardising over the whole pool, not just one side's list, keeps a lone keyword
    hit far above chunks that share none of the query's words.

    ``boost`` adds to a candidate's fused z-score (z-score fusion only), in standard
    deviations: evidence from outside the two signals, such as a note's date.
    """
    if method not in DEFAULT_WEIGHTS:
        raise ValueError(f"unknown fusion {method!r}; expected one of {', '.join(DEFAULT_WEIGHTS)}")
    dv, dt = DEFAULT_WEIGHTS[method]
    if method == "zscore" and vector_weight is None and text_weight is None:
        dv = adaptive_vector_weight(vector)
        dt = 1.0 - dv
    wv = dv if vector_weight is None else vector_weight
    wt = dt if text_weight is None else text_weight
    if not vector:
        wv, wt = 0.0, 1.0
    elif not text:
        wv, wt = 1.0, 0.0
    total = wv + wt
    if total <= 0:
        wv, wt, total = 0.5, 0.5, 1.0
    wv, wt = wv / total, wt / total
    ids = list(dict.fromkeys([*vector, *text]))

    if method == "weighted":
        tu = {k: bm25_to_unit(v) for k, v in text.items()}
        scores = {k: wv * vector.get(k, 0.0) + wt * tu.get(k, 0.0) for k in ids}
    elif method == "rrf":
        rv = {k: i for i, k in enumerate(sorted(vector, key=vector.__getitem__, reverse=True), 1)}
        rt = {k: i for i, k in enumerate(sorted(text, key=text.__getitem__, reverse=True), 1)}
        raw = {k: wv * (1 / (RRF_K + rv[k]) if k in rv else 0.0) + wt * (1 / (RRF_K + rt[k]) if k in rt else 0.0)
               for k in ids}
        best = 1 / (RRF_K + 1)
        scores = {k: v / best for k, v in raw.items()}
    else:  # zscore, minmax
        norm = standardise if method == "zscore" else _rescale
        floor_v = min(vector.values(), default=0.0)
        floor_t = min(text.values(), default=0.0) if text_missing is None else text_missing
        nv = norm({k: vector.get(k, floor_v) for k in ids}) if vector else {}
        nt = norm({k: text.get(k, floor_t) for k in ids}) if text else {}
        raw = {k: wv * nv.get(k, 0.0) + wt * nt.get(k, 0.0) for k in ids}
        if boost and method == "zscore":
            for k, extra in boost.items():
                if k in raw:
                    raw[k] += extra
        scores = {k: _logistic(v) for k, v in raw.items()} if method == "zscore" else raw
    out = [Fused(k, scores[k], vector.get(k), text.get(k)) for k in ids]
    out.sort(key=lambda f: (-f.score, f.id))
    return out


def decay_factor(age_days: float, half_life_days: float) -> float:
    return math.exp(-math.log(2) / half_life_days * max(0.0, age_days))


def mmr(
    items: Sequence[tuple[float, str]], k: int, lam: float, similarity: Callable[[str, str], float] | None = None
) -> list[int]:
    """Maximal marginal relevance: indices of ``items`` ((relevance, text), best first) to keep."""
    if not items:
        return []
    rel = [r for r, _ in items]
    lo, hi = min(rel), max(rel)
    span = hi - lo if hi > lo else 1.0
    norm = [(r - lo) / span for r in rel]
    toks = [similarity_tokens(t) for _, t in items]

    def jaccard(a: int, b: int) -> float:
        if similarity is not None:
            return similarity(items[a][1], items[b][1])
        x, y = toks[a], toks[b]
        if not x or not y:
            return 0.0
        return len(x & y) / len(x | y)

    chosen: list[int] = []
    left = list(range(len(items)))
    while left and len(chosen) < k:
        best, best_val = left[0], -math.inf
        for i in left:
            penalty = max((jaccard(i, j) for j in chosen), default=0.0)
            val = lam * norm[i] - (1 - lam) * penalty
            if val > best_val:
                best, best_val = i, val
        chosen.append(best)
        left.remove(best)
    return chosen
