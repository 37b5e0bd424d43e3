"""Which recalled entries earn a place in MEMORY.md: six signals weighted into one score, three
gates, and near-duplicates told apart by their words. Pure: recall counts and texts in, a ranked
choice with a reason for every entry left out.

The signals, each 0 to 1: *relevance* (the mean calibrated score the entry was recalled with),
*frequency* (recalls, on a log scale), *diversity* (how many different questions recalled it),
*recency* (half-life ``RECENCY_HALF_LIFE_DAYS`` since it was last recalled), *consolidation*
(on how many days), *richness* (how many content words it holds). An entry is promoted when its
weighted score, its recall count and its distinct questions each pass their gate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..text.tokenize import content_words, estimate_tokens, similarity_tokens
from .entries import Entry

WEIGHTS = {"relevance": 0.30, "frequency": 0.24, "diversity": 0.15, "recency": 0.15, "consolidation": 0.10,
           "richness": 0.06}
FREQUENCY_SATURATION = 10  # recalls that count as "very often"
DIVERSITY_SATURATION = 5  # distinct questions that count as "asked every way"
RECENCY_HALF_LIFE_DAYS = 14.0
CONSOLIDATION_DAYS = 3  # recalled on this many different days counts fully
RICHNESS_WORDS = 10
# near-duplicates by words: a candidate this close to a MEMORY.md line, or to a better candidate
NEAR_JACCARD = 0.9


@dataclass(frozen=True)
class Gates:
    min_score: float = 0.8
    min_recall_count: int = 3
    min_unique_queries: int = 3


@dataclass
class Candidate:
    """One recalled entry as it stands in its file now, with what promotion decided of it."""

    entry: Entry
    path: str
    start_line: int  # where it stands now (1-based)
    end_line: int
    text: str  # the entry's lines as the daily log holds them
    line: str  # as a line of MEMORY.md
    key: str | None = None  # a keyed entry's key (markdown/annotations.py)
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    why_not: str | None = None  # None: promoted (or would be)
    also: list[str] = field(default_factory=list)  # the other entries a merged line was made of (promote/merge.py)

    @property
    def source(self) -> str:
        return f"{self.path}#L{self.start_line}" + (f"-L{self.end_line}" if self.end_line > self.start_line else "")

    def as_dict(self) -> dict:
        out = {"from": ", ".join([self.source, *self.also]), "line": self.line, "score": round(self.score, 4),
               "signals": {k: round(v, 4) for k, v in self.signals.items()}, "recalls": self.entry.recalls,
               "uniqueQueries": len(self.entry.queries), "days": len(self.entry.days)}
        if self.key:
            out["key"] = self.key
        if self.why_not:
            out["leftOut"] = self.why_not
        return out


def signals(entry: Entry, text: str, now: float) -> dict[str, float]:
    age_days = max(0.0, (now - entry.last_at) / 86400)
    return {
        "relevance": min(1.0, max(0.0, entry.mean_score)),
        "frequency": min(1.0, math.log1p(entry.recalls) / math.log1p(FREQUENCY_SATURATION)),
        "diversity": min(1.0, len(entry.queries) / DIVERSITY_SATURATION),
        "recency": 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS),
        "consolidation": min(1.0, max(0, len(entry.days) - 1) / max(1, CONSOLIDATION_DAYS - 1)),
        "richness": min(1.0, len(set(content_words(text))) / RICHNESS_WORDS),
    }


def weighted(sig: dict[str, float], weights: dict[str, float] = WEIGHTS) -> float:
    return sum(weights[k] * sig[k] for k in weights)


def gate(c: Candidate, gates: Gates) -> str | None:
    """Why ``c`` fails a gate, or None."""
    if c.entry.recalls < gates.min_recall_count:
        return f"recalled {c.entry.recalls} time(s), under --min-recall-count {gates.min_recall_count}"
    if len(c.entry.queries) < gates.min_unique_queries:
        return f"recalled by {len(c.entry.queries)} different question(s), under --min-unique-queries " \
               f"{gates.min_unique_queries}"
    if c.score < gates.min_score:
        return f"score {c.score:.3f}, under --min-score {gates.min_score:g}"
    return None


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def near_duplicate(line: str, others: Iterable[str], threshold: float = NEAR_JACCARD) -> str | None:
    """The first of ``others`` whose words ``line`` nearly repeats, or None."""
    mine = similarity_tokens(line)
    for other in others:
        if jaccard(mine, similarity_tokens(other)) >= threshold:
            return other
    return None


def too_long(line: str, max_tokens: int) -> bool:
    return estimate_tokens(line) > max_tokens


def rank(candidates: Sequence[Candidate], gates: Gates, now: float) -> list[Candidate]:
    """Score every candidate, mark those a gate stops, best first."""
    for c in candidates:
        c.signals = signals(c.entry, c.text, now)
        c.score = weighted(c.signals)
        if c.why_not is None:
            c.why_not = gate(c, gates)
    return sorted(candidates, key=lambda c: (c.why_not is not None, -c.score, c.path, c.start_line))


__all__ = ["NEAR_JACCARD", "WEIGHTS", "Candidate", "Gates", "gate", "jaccard", "near_duplicate", "rank", "signals",
           "too_long", "weighted"]
