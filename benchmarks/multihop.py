"""Two ways to reach multi-hop evidence without a model call, measured in LoCoMo workspace mode.

    python benchmarks/multihop.py [--bench ../shared/bench] [--work-dir bench-results/work/workspace]
                                  [--variant none|feedback|diverse] [--feedback-from 3] [--feedback-terms 5]
                                  [--feedback-weight 0.5] [--diverse-factor 0.95]

``feedback`` searches again with the question plus the rarest words of its first results
(pseudo-relevance feedback: words in at least two lines and under 5 % of the conversation's
lines, ranked by how many of the first results hold them times their IDF) and fuses the two
lists by reciprocal rank (the second list at ``--feedback-weight``). ``diverse`` re-orders the
first ten results so that each further chunk from an already shown session counts its score
times ``--diverse-factor`` per chunk shown. Neither is shipped (docs/quality.md, "Open"); this
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

from mnemoclaw.api import Memory
from mnemoclaw.eval.runner import EvalOptions, evaluate
from mnemoclaw.text.tokenize import analyze

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench  # noqa: E402

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


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


def feedback(search, top: int, terms: int, weight: float):
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
            for word in _WORD.findall(h.text):
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
    ap.add_argument("--variant", default="feedback", choices=("none", "feedback", "diverse"))
    ap.add_argument("--feedback-from", type=int, default=3)
    ap.add_argument("--feedback-terms", type=int, default=5)
    ap.add_argument("--feedback-weight", type=float, default=0.5)
    ap.add_argument("--diverse-factor", type=float, default=0.95)
    args = ap.parse_args()
    bench = args.bench or default_bench()
    if args.variant == "feedback":
        Memory.search = feedback(Memory.search, args.feedback_from, args.feedback_terms, args.feedback_weight)
    elif args.variant == "diverse":
        Memory.search = diverse(Memory.search, args.diverse_factor)
    r = evaluate(os.path.join(bench, "locomo", "markdown"),
                 EvalOptions(mode="hybrid", scope_field="conv", queries_dir=os.path.join(bench, "locomo", "turns"),
                             work_dir=args.work_dir))
    print(json.dumps({"variant": vars(args), "recall@5": r["recall@5"], "hit@5": r["hit@5"],
                      "by_category_recall@5": {c: v["recall@5"] for c, v in sorted(r["by_category"].items())}}))


if __name__ == "__main__":
    main()
