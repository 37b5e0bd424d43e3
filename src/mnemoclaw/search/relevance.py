"""How likely a chunk answers a query, on the same scale for every query and workspace. Pure.

The fused ranking is relative to its candidate pool: the best candidate of any query
ranks first, whether it answers or not. The score an agent reads is instead a
probability estimated from evidence measured mostly against the whole index:

- ``coverage``: the share of the query's IDF weight (index statistics) that the chunk
  contains; a query word the index has never seen counts against every chunk; ``content``:
  the same without the words that only frame a question ("what did … say about …");
- ``unseen``: the share of the query's IDF weight on words no chunk holds, and
  ``names_unseen`` / ``names_missing``: the share of the query's names (people, places,
  identifiers) memory never mentions, or this chunk does not: a question about someone
  memory has never heard of is a question about someone else;
- ``bm25``: the chunk's BM25 (with its best line) per unit of query IDF;
- ``cosine`` against a ``reference``: what the same query scores against a fixed sample
  of the index's chunks (text that mostly does not answer it) and how the sample's chunks
  score against each other, so the excess is in the index's own units and carries over to
  another embedder; and against sentences about nothing a memory holds (search/unrelated.py);
- ``vector_rel`` / ``text_rel``: how far the chunk stands out of the query's candidates;
- ``date``: how precisely the note's date matches a date the query names (0-3).

``probability`` is a model of these fitted per search mode on the results of benchmark
questions memory answers against the results of questions it has nothing on, the two weighed
alike (``benchmarks/calibration.py``; the models are in relevance_model.json, a logistic model
or one hidden layer of tanh units; what each measured: docs/quality.md, "What a score means").
The shipped models are logistic and give the query's names, its unseen words and its
content coverage no weight yet: the network fitted on the wider family measured better on the
memories it was fitted on and worse on those it was not (docs/quality.md, "A score for a new
kind of memory").
A query whose names memory never mentions at all, or whose subject it never mentions (the person
in "what does Imogen think of The Witcher 3?"), is about someone or something else, whatever
the model says (``about_something_else``; docs/quality.md, "Names memory never mentions").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..types import Evidence

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


def features(e: Evidence, mode: str) -> tuple[float, ...]:
    """What the model of ``mode`` reads of ``e``, in the order it was fitted on."""
    cov = e.coverage or 0.0
    bm = min(e.bm25 or 0.0, 3.0)
    date = float(e.date)
    trel = _cap(e.text_rel)
    vrel = _cap(e.vector_rel)
    ref = e.reference
    if e.cosine is None or ref is None or ref.pair_sd < MIN_SPREAD:
        excess, level = NO_REFERENCE
    else:  # in units of the index's own spread, so they carry over to another model
        excess = _cap((e.cosine - ref.mean) / ref.pair_sd, SPREADS)
        level = _cap((e.cosine - ref.pair_mean) / ref.pair_sd, SPREADS)
    far = e.unrelated
    if e.cosine is None or far is None or far.pair_sd < MIN_SPREAD:
        beyond, beats = NO_UNRELATED
    else:  # how far the chunk stands above sentences about nothing in memory
        beyond = _cap((e.cosine - far.mean) / far.pair_sd, SPREADS)
        beats = _cap((e.cosine - far.best) / far.pair_sd, SPREADS)
    if mode == "vector":
        return (excess, level, vrel, beyond, beats, date)
    content = e.content if e.content is not None else cov
    unseen = e.unseen or 0.0
    gone = e.names_unseen or 0.0
    away = e.names_missing or 0.0
    if mode == "keyword":
        return (cov, cov * cov, bm, trel, date, content, unseen, gone, away)
    none = 1.0 - cov
    return (cov, cov * cov, bm, trel, excess, vrel, excess * cov, none * excess, none * vrel, none * level,
            beyond, beats, none * beats, date, content, unseen, gone, away)


# The minScore a search uses unless told otherwise: the highest that keeps what the benchmark
# sets' recall needs while answering most out-of-scope questions with nothing (docs/quality.md).
DEFAULT_MIN_SCORE = 0.05

# Fail soft: when no result reaches the floor, the best candidate is still returned, marked weak,
# if it holds this share of the query's IDF weight (docs/quality.md, "Weak results").
WEAK_COVERAGE = 0.6

# A question whose names memory never mentions is about someone else's life or another corpus:
# on the family of memories, at most 1.9 % of any set's answerable questions against 91 % of the
# questions about the other LoCoMo conversations (docs/quality.md, "Names memory never
# mentions"). Such a question's scores are this share of the model's: at most 0.02, under the
# default floor, and still in the model's order for a search with minScore 0.
NAMES_ABSENT_FACTOR = 0.02

# The fitted models, one per search mode (benchmarks/calibration.py fit --write): the features
# standardised, one hidden layer of tanh units, a logistic output; or a logistic model of the
# features themselves ("linear": intercept first).
MODEL_FILE = Path(__file__).with_name("relevance_model.json")


@dataclass(frozen=True)
class Model:
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    hidden: np.ndarray | None = None  # features x units
    hidden_bias: np.ndarray | None = None
    out: np.ndarray | None = None  # units (or features, for a linear model)
    out_bias: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Model:
        if "linear" in data:
            weights = np.asarray(data["linear"], dtype=np.float64)
            return cls(out=weights[1:], out_bias=float(weights[0]))
        arr = {k: np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "hidden", "hidden_bias", "out")}
        return cls(out_bias=float(data["out_bias"]), **arr)

    def to_json(self) -> dict[str, Any]:
        if self.hidden is None:
            assert self.out is not None
            return {"linear": [round(self.out_bias, 6), *(round(float(w), 6) for w in self.out)]}
        rounded = {k: np.round(getattr(self, k), 6).tolist() for k in ("mean", "scale", "hidden", "hidden_bias", "out")}
        return {**rounded, "out_bias": round(self.out_bias, 6)}

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The model's log-odds for each row of features ``x``."""
        assert self.out is not None
        if self.hidden is None:
            return x @ self.out + self.out_bias
        assert self.mean is not None and self.scale is not None and self.hidden_bias is not None
        return np.tanh(((x - self.mean) / self.scale) @ self.hidden + self.hidden_bias) @ self.out + self.out_bias

    def predict(self, x: np.ndarray) -> np.ndarray:
        """P(answers) for each row of features ``x``."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(x), -40.0, 40.0)))


@lru_cache(maxsize=1)
def models() -> dict[str, Model]:
    with open(MODEL_FILE, encoding="utf-8") as fh:
        return {mode: Model.from_json(data) for mode, data in json.load(fh).items()}


def keyword_backed(evidence: Evidence) -> bool:
    """Enough of the query's words, weighed by their rarity in the index, to be worth showing
    when the score alone would show nothing; never for a query about something else (the words
    it shares with memory are not about what it names)."""
    return (evidence.coverage is not None and evidence.coverage >= WEAK_COVERAGE
            and not about_something_else([evidence]))


def about_something_else(evidence: Sequence[Evidence]) -> bool:
    """Whether the query is about someone or something memory has never heard of: it names
    people, places or identifiers, and memory mentions none of them, whole or in parts, or not
    the one it is about (its subject: KeywordQuery.subjects); and its best candidate is not
    written in a script that may spell them another way (a CJK note, a Latin name; a note of
    Latin letters, a Chinese name)."""
    if not evidence:
        return False
    e = evidence[0]
    return ((e.names_unseen or 0.0) >= 1.0 or e.subject_unseen) and not e.other_script


# A chunk that holds under this share of the question's content words (its IDF weight, the frame
# left out) and means less to the question than the sentences about nothing in memory do is not
# an answer, whatever else the model reads: a question memory has nothing on, asked of a memory
# too small for the model's reference to tell (docs/quality.md, "Off the question").
OFF_TOPIC_CONTENT = 0.3
OFF_TOPIC_FACTOR = NAMES_ABSENT_FACTOR


def off_topic(e: Evidence) -> bool:
    """Whether a chunk neither holds the question's content words nor comes near its meaning:
    under ``OFF_TOPIC_CONTENT`` of the content words (the heaviest word no chunk holds left out:
    one unmatched word never decides), and a cosine under the best of the
    unrelated sentences (search/unrelated.py). Needs both sides: never in one mode alone, nor
    across scripts (an English question of a Chinese note shares no word with it), nor for a
    chunk that mentions every name the question gives."""
    far = e.unrelated
    if e.content is None or e.cosine is None or far is None or far.pair_sd < MIN_SPREAD or e.crossing:
        return False
    # a chunk that mentions everyone the question names is on it, however common the names are
    # in memory (a conversation's speakers are in every chunk and weigh next to nothing)
    if e.named and not e.names_missing:
        return False
    # one word memory never holds (a typo, another spelling) leaves the rest to decide
    rest = e.content / (1.0 - e.one_unseen) if e.one_unseen < 1.0 else 0.0
    return rest < OFF_TOPIC_CONTENT and e.cosine < far.best


def adjusted(evidence: Sequence[Evidence], p: np.ndarray) -> np.ndarray:
    """The model's chances ``p`` for one query's candidates, with the rules nothing is fitted in:
    ``NAMES_ABSENT_FACTOR`` of every one for a query about something else, ``OFF_TOPIC_FACTOR``
    of a chunk off the question (``off_topic``)."""
    if about_something_else(evidence):
        p = p * NAMES_ABSENT_FACTOR
    off = np.array([off_topic(e) for e in evidence], dtype=bool)
    return np.where(off, p * OFF_TOPIC_FACTOR, p) if off.any() else p


def probabilities(evidence: Sequence[Evidence], mode: str) -> list[float]:
    """P(the chunk answers the query | its evidence) for each of one query's candidates, by the
    model fitted for ``mode``, with the rules of ``adjusted``."""
    if not evidence:
        return []
    x = np.array([features(e, mode) for e in evidence], dtype=np.float64)
    p = adjusted(evidence, models()[mode].predict(x))
    return [float(v) for v in p]


def probability(evidence: Evidence, mode: str) -> float:
    return probabilities([evidence], mode)[0]
