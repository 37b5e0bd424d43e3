"""English questions of Chinese notes: the vector side's weight across scripts, half the questions at a time.

    python benchmarks/across_scripts.py [--weights 0.5,0.6,0.7,0.8,0.9] [--work-dir bench-results/work/xquad-zh]

The XQuAD paragraphs in Chinese are indexed, and their questions are asked in English. For
each weight tried as ``search/stages.py ACROSS_SCRIPTS_VECTOR_WEIGHT``, recall@5 (a result's
paragraph answers the question) is reported on the odd and the even questions apart, so a weight
chosen on one half is read on the other (docs/quality.md, "Across scripts").
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from mnemoclaw.eval.runner import EvalOptions, evaluate
from mnemoclaw.search import stages
from quality import default_bench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--weights", default="0.5,0.6,0.7,0.8,0.9")
    ap.add_argument("--work-dir", default="bench-results/work/xquad-zh")
    args = ap.parse_args()
    bench = args.bench or default_bench()
    print("| vector weight at least | first half | second half | all |\n|---|---|---|---|")
    for weight in (float(w) for w in args.weights.split(",")):
        stages.ACROSS_SCRIPTS_VECTOR_WEIGHT = weight
        found: list[bool] = []

        def collect(scope: str, kind: str, text: str, hits: list[Any], relevant: Any,
                    found: list[bool] = found) -> None:
            if kind == "in scope":
                found.append(any(h.path in relevant for h in hits[:5]))

        evaluate(os.path.join(bench, "xquad/zh-paragraph"),
                 EvalOptions(mode="hybrid", queries_dir=os.path.join(bench, "xquad/en-paragraph"),
                             work_dir=args.work_dir, collect=collect))
        first, second = found[0::2], found[1::2]
        print(f"| {weight} | {sum(first) / len(first):.4f} | {sum(second) / len(second):.4f} "
              f"| {sum(found) / len(found):.4f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
