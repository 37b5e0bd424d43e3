"""Ways to reach multi-hop evidence without a model call, measured in LoCoMo workspace mode.

    python benchmarks/multihop.py [--bench ../shared/bench] [--work-dir bench-results/work/workspace]
                                  [--variant none|feedback|entities|neighbours|diverse] [--feedback-from 3]
                                  [--feedback-terms 5] [--feedback-weight 0.5] [--neighbours-from 2]
                                  [--neighbours-factor 0.9] [--diverse-factor 0.95]

``feedback`` searches again with the question plus the rarest words of its first results
(pseudo-relevance feedback: words in at least two lines and under 5 % of the conversation's
lines, ranked by how many of the first results hold them times their IDF) and fuses the two
lists by reciprocal rank (the second list at ``--feedback-weight``). ``entities`` does the same
with the names of the first results only (entity links: capitalised words past a sentence's
start, the conversation's speakers and the question's own words left out). ``neighbours`` puts
the chunks before and after each of the first ``--neighbours-from`` results (the same file, the
next lines of the same session) among the first ten, each scored its result's score times
``--neighbours-factor``. ``diverse`` re-orders the
first ten results so that each further chunk from an already shown session counts its score
times ``--diverse-factor`` per chunk shown. None is shipped (docs/quality.md, "Open"); this
wraps ``Memory.search`` inside the eval to measure them on the real index.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import sys
from collections import Counter
from dataclasses import replace

from mnemoclaw.api import Memory
from mnemoclaw.eval.runner import EvalOptions, evaluate
from mnemoclaw.text.tokenize import analyze

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench  # noqa: E402

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
# a capitalised word that does not open a sentence or a turn ("- **Name** (D1:2): ")
_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}(?:'s)?")
_SPEAKER = re.compile(r"\*\*([^*]+)\*\*")


def _line_df(mem: Memory, cache: dict) -> tuple[Counter, int]:
    """Document frequency of each term over the lines of the memory's Markdown."""
    roots = [str(mem.settings.workspace), *mem.settings.memory_search.get("extraPaths", [])]
    key = tuple(roots)
    if key not in cache:
        df: Counter = Counter()
        n = 0
        for root in roots:
            for path in glob.glob(os.path.join(root, "**", "*.md"), recursive=True):
                with open(path, encoding="utf-8") as fh:
                    for line in fh:
                        terms = set(analyze(line))
                        if terms:
                            n += 1
                            df.update(terms)
        cache[key] = (df, n)
    return cache[key]


def feedback(search, top: int, terms: int, weight: float, names_only: bool = False):
    cache: dict = {}

    def wrapped(self, text, **kw):
        hits = search(self, text, **kw)
        if not hits:
            return hits
        df, n = _line_df(self, cache)
        asked = set(analyze(text))
        held: Counter = Counter()
        surface: dict[str, str] = {}
        for h in hits[:top]:
            seen: set[str] = set()
            speakers = {w.lower() for w in _SPEAKER.findall(h.text)}
            words = [w.removesuffix("'s") for w in _NAME.findall(h.text)] if names_only else _WORD.findall(h.text)
            for word in (w for w in words if w.lower() not in speakers):
                t = analyze(word)
                if len(t) == 1 and t[0] not in asked and t[0] not in seen:
                    seen.add(t[0])
                    surface.setdefault(t[0], word.lower())
                    held[t[0]] += 1
        rare = [t for t in sorted(held, key=lambda t: -held[t] * math.log(n / (1 + df.get(t, 0))))
                if 2 <= df.get(t, 0) < 0.05 * n][:terms]
        if not rare:
            return hits
        again = search(self, text + " " + " ".join(surface[t] for t in rare), **kw)

        def key(h):
            return h.path, h.start_line

        first = {key(h): i for i, h in enumerate(hits)}
        second = {key(h): i for i, h in enumerate(again)}
        by = {key(h): h for h in again} | {key(h): h for h in hits}
        fused = sorted(by, key=lambda k: -(1 / (60 + first.get(k, 100)) + weight / (60 + second.get(k, 100))))
        return [by[k] for k in fused][: kw.get("max_results") or len(by)]

    return wrapped


def neighbours(search, top: int, factor: float, depth: int = 10):
    def wrapped(self, text, **kw):
        hits = search(self, text, **kw)
        placed = {(h.path, h.start_line): h for h in hits[:depth]}
        for h in hits[:top]:
            got = self.store.file_chunks(h.path)
            chunks = sorted(got.chunks if got else [], key=lambda c: c.start_line)
            at = next((i for i, c in enumerate(chunks) if c.start_line == h.start_line), None)
            if at is None:
                continue
            for c in (chunks[j] for j in (at - 1, at + 1) if 0 <= j < len(chunks)):
                key = (c.path, c.start_line)
                score = h.score * factor
                if key not in placed or placed[key].score < score:
                    base = placed.get(key) or replace(h, start_line=c.start_line, end_line=c.end_line, text=c.text,
                                                      analysed=None)
                    placed[key] = replace(base, score=score)
        ranked = sorted(placed.values(), key=lambda h: -h.score)
        return (ranked + [h for h in hits[depth:] if (h.path, h.start_line) not in placed])[: kw.get("max_results")
                                                                                           or len(hits)]

    return wrapped


def diverse(search, factor: float, depth: int = 10):
    def wrapped(self, text, **kw):
        hits = search(self, text, **kw)
        pool, out, shown = list(hits[:depth]), [], Counter()
        while pool:
            best = max(pool, key=lambda h: h.score * factor ** shown[h.path])
            pool.remove(best)
            out.append(best)
            shown[best.path] += 1
        return out + hits[depth:]

    return wrapped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--work-dir", default="bench-results/work/workspace")
    ap.add_argument("--variant", default="feedback", choices=("none", "feedback", "entities", "neighbours", "diverse"))
    ap.add_argument("--feedback-from", type=int, default=3)
    ap.add_argument("--feedback-terms", type=int, default=5)
    ap.add_argument("--feedback-weight", type=float, default=0.5)
    ap.add_argument("--neighbours-from", type=int, default=2)
    ap.add_argument("--neighbours-factor", type=float, default=0.9)
    ap.add_argument("--diverse-factor", type=float, default=0.95)
    args = ap.parse_args()
    bench = args.bench or default_bench()
    if args.variant == "feedback":
        Memory.search = feedback(Memory.search, args.feedback_from, args.feedback_terms, args.feedback_weight)
    elif args.variant == "entities":
        Memory.search = feedback(Memory.search, args.feedback_from, args.feedback_terms, args.feedback_weight,
                                 names_only=True)
    elif args.variant == "neighbours":
        Memory.search = neighbours(Memory.search, args.neighbours_from, args.neighbours_factor)
    elif args.variant == "diverse":
        Memory.search = diverse(Memory.search, args.diverse_factor)
    r = evaluate(os.path.join(bench, "locomo", "markdown"),
                 EvalOptions(mode="hybrid", scope_field="conv", queries_dir=os.path.join(bench, "locomo", "turns"),
                             work_dir=args.work_dir))
    print(json.dumps({"variant": vars(args), "recall@5": r["recall@5"], "hit@5": r["hit@5"],
                      "by_category_recall@5": {c: v["recall@5"] for c, v in sorted(r["by_category"].items())}}))


if __name__ == "__main__":
    main()
