"""How likely a chunk answers a query, on the same scale for every query and workspace. Pure.

The fused ranking is relative to its candidate pool: the best candidate of any query
ranks first, whether it answers or not. The score an agent reads is instead a
probability estimated from evidence measured mostly against the whole index:

- ``coverage``: the share of the query's IDF weight (index statistics) that the chunk
  contains; a query word the index has never seen counts against every chunk;
- ``bm25``: the chunk's BM25 (with its best line) per unit of query IDF;
- ``cosine`` against a ``reference``: what the same query scores against a fixed sample
  of the index's chunks (text that mostly does not answer it) and how the sample's chunks
  score against each other, so the excess is in the index's own units and carries over to
  another embedder;
- ``vector_rel`` / ``text_rel``: how far the chunk stands out of the query's candidates;
- ``date``: how precisely the note's date matches a date the query names (0-3).

``probability`` is a logistic model of these, fitted per search mode on the results of
benchmark questions memory answers (those that hold the answer) against the results of
questions it has nothing on, the two weighed alike
(``benchmarks/calibration.py``; coefficients and how they were measured:
docs/quality.md, "What a score means").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..types import UnrelatedReference, VectorReference


@dataclass(frozen=True, slots=True)
class Evidence:
    coverage: float | None = None  # None: no keyword side in this mode
    bm25: float | None = None
    cosine: float | None = None  # None: no vector side in this mode
    reference: VectorReference | None = None
    date: int = 0
    # how far the chunk stands out of this query's candidates (z over the pool), per side
    vector_rel: float | None = None
    text_rel: float | None = None
    unrelated: UnrelatedReference | None = None

    def features(self, mode: str) -> tuple[float, ...]:
        cov = self.coverage or 0.0
        bm = min(self.bm25 or 0.0, 3.0)
        date = float(self.date)
        trel = _cap(self.text_rel)
        vrel = _cap(self.vector_rel)
        ref = self.reference
        if self.cosine is None or ref is None or ref.pair_sd < MIN_SPREAD:
            excess, level = NO_REFERENCE
        else:  # in units of the index's own spread, so they carry over to another model
            excess = _cap((self.cosine - ref.mean) / ref.pair_sd, SPREADS)
            level = _cap((self.cosine - ref.pair_mean) / ref.pair_sd, SPREADS)
        far = self.unrelated
        if self.cosine is None or far is None or far.pair_sd < MIN_SPREAD:
            beyond, beats = NO_UNRELATED
        else:  # how far the chunk stands above sentences about nothing in memory
            beyond = _cap((self.cosine - far.mean) / far.pair_sd, SPREADS)
            beats = _cap((self.cosine - far.best) / far.pair_sd, SPREADS)
        if mode == "keyword":
            return (cov, cov * cov, bm, trel, date)
        if mode == "vector":
            return (excess, level, vrel, beyond, beats, date)
        none = 1.0 - cov
        return (cov, cov * cov, bm, trel, excess, vrel, excess * cov, none * excess, none * vrel, none * level,
                beyond, beats, none * beats, date)


# Without a usable reference (an index of fewer than a handful of vectors, or of chunks all
# alike, whose spread is near zero) the two reference features take the lower quartile of
# what answers scored in the fitting data: in so small a memory, showing what is there costs
# little, and the rest of the evidence still ranks and can still sink a result.
MIN_SPREAD = 0.02
NO_REFERENCE = (1.4, -2.1)
NO_UNRELATED = (3.3, 1.0)

# Bounds on each feature in spreads (standard deviations). The benchmark sets stay inside
# them; an index whose chunks are all alike (a spread near zero) would go far past them.
SPREADS = 10.0


def _cap(z: float | None, cap: float = 6.0) -> float:
    return max(-cap, min(cap, z or 0.0))


# The minScore a search uses unless told otherwise: the highest that keeps what the benchmark
# sets' recall needs while answering most out-of-scope questions with nothing (docs/quality.md).
DEFAULT_MIN_SCORE = 0.05

# Intercept first, then one weight per feature of ``Evidence.features`` for the mode.
COEFFICIENTS: dict[str, tuple[float, ...]] = {
    "hybrid": (0.922, 0.271, 0.119, 0.508, 0.182, -0.381, -0.267, 0.163, -0.543, -0.246, 1.88, 1.349, 0.331, 0.536,
               0.421),
    "keyword": (-4.039, 2.857, 1.599, 4.749, 0.243, 0.72),
    "vector": (-1.667, -0.212, 1.22, -0.296, 1.866, 0.743, 0.75),
}


# Fail soft: when no result reaches the floor, the best candidate is still returned, marked weak,
# if it holds this share of the query's IDF weight (docs/quality.md, "Weak results").
WEAK_COVERAGE = 0.6


def keyword_backed(evidence: Evidence) -> bool:
    """Enough of the query's words, weighed by their rarity in the index, to be worth showing
    when the score alone would show nothing."""
    return evidence.coverage is not None and evidence.coverage >= WEAK_COVERAGE


def probability(evidence: Evidence, mode: str) -> float:
    """P(the chunk answers the query | its evidence), by the model fitted for ``mode``."""
    weights = COEFFICIENTS[mode]
    x = weights[0] + sum(w * f for w, f in zip(weights[1:], evidence.features(mode), strict=True))
    return 1.0 / (1.0 + math.exp(-x)) if x > -50 else 0.0
