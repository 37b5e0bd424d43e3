"""A question in Latin letters whose names no note holds, asked of Chinese notes: are its names
written there in Chinese (卡罗琳 for Caroline, 黑豹队 for the Panthers), or is it about someone else?

    python benchmarks/names_across.py [--spans nouns|names] [--thresholds=-1,0.3,0.35,0.4] [--limit 1200]

A question whose names memory never mentions is about something else (search/relevance.py), unless
the best candidate is a Chinese note that may write them in its own script. Whether it may is asked
of the embedder: the question's names as written (each, and each run of them: "Denver Broncos")
against the note's nouns (``nouns``, text/names.py ``han_nouns``; ``names``: only the words jieba's
tagger marks as names), and the note may write them when one pair scores ``threshold``
(search/keyword.py ``TRANSLATED``) or more; -1 takes every Chinese note to write them, as before
this check. For each threshold, with the real searcher: English questions of the Chinese XQuAD
paragraphs (answerable) answered with nothing on the even and the odd questions, their recall@5
and latency; and, asked of half of CMRC and of half of the Chinese XQuAD paragraphs, LoCoMo's
questions and the other half's answered with nothing. docs/quality.md, "Names across scripts".
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

from mnemoclaw.eval.runner import IN_SCOPE, EvalOptions, evaluate
from mnemoclaw.search import keyword
from mnemoclaw.text.names import han_names

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench, resolve  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--spans", default="nouns", choices=("nouns", "names"))
    ap.add_argument("--thresholds", default="-1,0.3,0.35,0.4")
    ap.add_argument("--limit", type=int, default=1200, help="questions of each kind")
    args = ap.parse_args()
    bench = args.bench or default_bench()
    if args.spans == "names":
        keyword.han_nouns = han_names  # type: ignore[assignment]
    print("| threshold | EN questions of the Chinese paragraphs: [] (even / odd questions) | their recall@5 | "
          "their p50 / p95 ms | half of CMRC: LoCoMo's questions, [] | the other half's, [] | "
          "half of XQuAD zh: LoCoMo's questions, [] | the other half's, [] |\n|---|---|---|---|---|---|---|---|")
    empty: dict[str, list[bool]] = {}

    def keep(scope: str, kind: str, text: str, hits: list[Any], relevant: Any) -> None:
        empty.setdefault(kind, []).append(not hits)

    for threshold in [float(t) for t in args.thresholds.split(",")]:
        keyword.TRANSLATED = threshold
        empty.clear()
        xl = evaluate(resolve(bench, "xquad/zh-paragraph"),
                      EvalOptions(mode="hybrid", queries_dir=resolve(bench, "xquad/en-paragraph"), collect=keep,
                                  work_dir="bench-results/work/xquad-zh", limit_queries=args.limit))
        asked = empty.pop(IN_SCOPE)
        answerable = " / ".join(f"{np.mean(asked[h::2]):.3f}" for h in (0, 1))
        half: list[str] = []
        for corpus, work in (("cmrc2018/dev-paragraph", "cmrc"), ("xquad/zh-paragraph", "xquad-zh")):
            empty.clear()
            evaluate(resolve(bench, corpus),
                     EvalOptions(mode="hybrid", work_dir=f"bench-results/work/{work}", collect=keep, absent=True,
                                 limit_queries=args.limit, foreign_dirs=(resolve(bench, "locomo/turns"),),
                                 foreign_limit=args.limit))
            cells = {k: float(np.mean(v)) for k, v in empty.items()}
            half += [f"{next(v for k, v in cells.items() if 'locomo' in k):.3f}", f"{cells.get('not in memory', 0):.3f}"]
        print(f"| {threshold:g} | {answerable} | {xl['recall@5']:.3f} | {xl['latency_ms_p50']:.1f} / "
              f"{xl['latency_ms_p95']:.1f} | " + " | ".join(half) + " |", flush=True)


if __name__ == "__main__":
    main()
