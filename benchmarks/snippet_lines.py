"""What the snippets of LoCoMo workspace results show, by how long a shown line may be.

    python benchmarks/snippet_lines.py [--lengths 160/160,100/220,100/220+20,...] [--work-dir bench-results/work/workspace]

Searches every LoCoMo workspace question once (the real indexer and searcher, default
configuration), then cuts the snippets of the first five results again with each pair of line
lengths, ``LINE/BEST`` (search/snippets.py ``LINE_MAX`` for every line, ``BEST_LINE_MAX`` for the
line that matched best), ``+N`` after it: N of a speaker's characters kept in front of a cut line
do not count against its length (``PREFIX_ALLOWANCE``, 0 without), and reports, on the even and
the odd questions:

- snippet recall@5 by text: the evidence lines the snippets' text shows, of all the question's
  evidence (the eval's ``snippet_recall@5``: a line shows with who said it, its dialogue id and
  40 characters of what was said, ``eval.runner.holds``);
- by lines: the evidence lines the snippets' line ranges (``snippetLines``) name, shown or cut
  (``snippet_recall_lines@5``, what snippet recall counted before);
- answer words shown: of the answer's words the five chunks hold, the share the snippets show
  (the eval's ``snippet_answer@5``): what a line cut short loses.

About a minute on 2 cores once the indexes exist.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from statistics import mean
from typing import Any

from mnemoclaw.eval.runner import IN_SCOPE, EvalOptions, evaluate, snippets_show

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--lengths", default="100/100,120/120,140/140,160/160,200/200,100/180,100/200,100/220,"
                                         "100/240,110/220,120/220,140/200,100/220+10,100/220+20,100/220+40")
    ap.add_argument("--work-dir", default="bench-results/work/workspace")
    args = ap.parse_args()
    bench = args.bench or default_bench()
    answers = {}
    with open(os.path.join(bench, "locomo", "turns", "queries.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            answers[q["text"]] = q["metadata"].get("answer")
    asked: list[tuple[str, Any, list[Any]]] = []

    def keep(scope: str, kind: str, text: str, hits: list[Any], relevant: Any) -> None:
        if kind == IN_SCOPE:
            asked.append((text, relevant, hits[:5]))

    evaluate(os.path.join(bench, "locomo", "markdown"),
             EvalOptions(mode="hybrid", scope_field="conv", queries_dir=os.path.join(bench, "locomo", "turns"),
                         work_dir=args.work_dir, collect=keep))

    def measure(line_max: int, best_max: int, allowance: int,
                part: list[tuple[str, Any, list[Any]]]) -> tuple[float, float, float]:
        text_shown, lines, words = [], [], []
        for text, evidence, top in part:
            shown = snippets_show(top, evidence, answers.get(text), line_max, best_max, allowance)
            text_shown.append(shown.text)
            lines.append(shown.lines)
            if shown.words is not None:
                words.append(shown.words)
        return mean(text_shown), mean(lines), mean(words)

    halves = (asked[0::2], asked[1::2])
    print("| line length / the best line's (+ speaker allowance) | snippet recall@5 by text, even / odd questions "
          "| by lines, even / odd | answer words shown, even / odd |\n|---|---|---|---|")
    for spec in args.lengths.split(","):
        pair, _, allowance = spec.partition("+")
        line_max, best_max = (int(n) for n in pair.split("/"))
        (t0, l0, w0), (t1, l1, w1) = (measure(line_max, best_max, int(allowance or 0), h) for h in halves)
        print(f"| {line_max} / {best_max}{f' +{allowance}' if allowance else ''} | {t0:.4f} / {t1:.4f} "
              f"| {l0:.4f} / {l1:.4f} | {w0:.4f} / {w1:.4f} |", flush=True)


if __name__ == "__main__":
    main()
