"""What the score floor costs LoCoMo workspace recall@5, and where: answers emptied, or results cut.

    python benchmarks/floor_cost.py [--floors 0.02,0.03,0.05,0.1] [--work-dir bench-results/work/workspace]

Searches every LoCoMo workspace question once with minScore 0 (the real indexer and searcher,
default configuration otherwise), scores each result as the searcher does before it applies a
floor, then answers with each floor two ways:

- ``cut``: every result under the floor left out (a floor given per search);
- ``tail``: as the default search answers, a question with a result at the floor or above keeps
  what else was found down to ``WEAK_TAIL`` of the floor, after the answers and marked weak.

Against no floor, it splits what recall@5 loses into the part lost with questions answered with
nothing and the part lost with results cut from a list that is answered. The questions about the
other conversations (100 per workspace) are asked too: the share answered with nothing depends on
the best result only, so it is the same both ways. About half a minute on 2 cores once the
indexes exist.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from mnemoclaw.eval.runner import IN_SCOPE, OTHER_SCOPES, EvalOptions, evaluate, evidence_in
from mnemoclaw.search.relevance import probabilities
from mnemoclaw.search.stages import WEAK_TAIL

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import OTHERS, default_bench  # noqa: E402

Scored = list[tuple[float, frozenset[str]]]


def recall(hits: Scored, n: int) -> float:
    return len(set().union(*(held for _, held in hits[:5]))) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--floors", default="0.02,0.03,0.05,0.1")
    ap.add_argument("--work-dir", default="bench-results/work/workspace")
    args = ap.parse_args()
    bench = args.bench or default_bench()
    asked: list[tuple[str, int, Scored]] = []

    def keep(scope: str, kind: str, text: str, hits: list[Any], relevant: Any) -> None:
        raw = probabilities([h.evidence for h in hits], "hybrid")  # the scores before the floor and the cap
        asked.append((kind, len(relevant), [(p, frozenset(evidence_in(h, relevant)) if relevant else frozenset())
                                            for p, h in zip(raw, hits, strict=True)]))

    evaluate(os.path.join(bench, "locomo", "markdown"),
             EvalOptions(mode="hybrid", scope_field="conv", queries_dir=os.path.join(bench, "locomo", "turns"),
                         min_score=0.0, work_dir=args.work_dir, others=OTHERS, collect=keep))
    inside = [(n, hits) for kind, n, hits in asked if kind == IN_SCOPE]
    others = [hits for kind, _, hits in asked if kind == OTHER_SCOPES]
    q = len(inside)

    print("| floor | recall@5, cut | recall@5, tail | lost with empty answers | lost with results cut (tail) | "
          "answerable, [] | other conversations, [] |\n|---|---|---|---|---|---|---|")
    for floor in [0.0] + [float(f) for f in args.floors.split(",")]:
        cut = tail = emptied = lost_cut = lost_tail = empty = 0.0
        for n, hits in inside:
            full = recall(hits, n)
            passed = [h for h in hits if h[0] >= floor]
            if not passed:
                empty += 1
                emptied += full
                continue
            kept = passed + [h for h in hits if floor * WEAK_TAIL <= h[0] < floor]
            cut += recall(passed, n)
            tail += recall(kept, n)
            lost_cut += full - recall(passed, n)
            lost_tail += full - recall(kept, n)
        silent = sum(1 for hits in others if not any(s >= floor for s, _ in hits)) / max(1, len(others))
        print(f"| {floor:g} | {cut / q:.4f} | {tail / q:.4f} | {emptied / q:.4f} | {lost_cut / q:.4f} "
              f"({lost_tail / q:.4f}) | {empty / q:.3f} | {silent:.3f} |")


if __name__ == "__main__":
    main()
