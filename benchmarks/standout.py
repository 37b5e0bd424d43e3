"""A question in one script, a chunk in the other: can the vector side alone tell an answer from nothing?

    python benchmarks/standout.py [--records bench-results/standout.jsonl] [--collect]

Across scripts the keyword side has almost nothing to say, so a result's score rests on how far
its cosine stands out. This tries the rule "a chunk in the other script than the question scores
0.02 of its score unless its vector feature reaches X" (``search/relevance.py`` feature names:
``excess`` above the query's mean over the index's sample, ``level`` above the index's own pair
similarity, ``beyond`` above the unrelated sentences' mean, ``beats`` above their best). For each
X it reports, at the default floor, both errors on the two halves of the questions (a hash of the
question): answerable questions answered with nothing and recall@5, on Chinese questions of
English paragraphs (``xl``) and English questions of Chinese paragraphs (``xl-rev``); and the share
of out-of-scope questions answered with nothing, for the other script's questions asked of each
half-corpus memory (docs/quality.md, "Open"). ``--collect`` runs the real searcher first (about
4 minutes on 2 cores once the indexes exist) and keeps each query's first ten results.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import defaultdict
from typing import Any

import numpy as np

from mnemoclaw.eval.runner import IN_SCOPE, EvalOptions, evaluate
from mnemoclaw.search.relevance import DEFAULT_MIN_SCORE, NAMES_ABSENT_FACTOR, features
from mnemoclaw.text.tokenize import CJK_RUN, keyword_query, mostly_cjk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import FAMILY, SETS, WORK, default_bench, foreign_of, resolve  # noqa: E402

ANSWERABLE = ("xl", "xl-rev")
MEMORIES = ("cmrc-absent", "xquad-zh-absent", "xquad-en-absent", "scifact-absent")
FEATURES = {"excess": 0, "level": 1, "beyond": 3, "beats": 4}  # in relevance.features(evidence, "vector")
GRID = {"excess": (1.0, 1.25, 1.5, 2.0, 2.5), "level": (0.0, 0.25, 0.5, 1.0), "beyond": (1.5, 2.0, 2.5),
        "beats": (-1.0, -0.5, 0.0)}
# the other script's questions of each memory: what the rule is for
ACROSS = {"cmrc-absent": ("locomo/turns", "scifact/beir-test", "xquad/en-paragraph"),
          "xquad-zh-absent": ("locomo/turns", "scifact/beir-test"),
          "xquad-en-absent": ("cmrc2018/dev-paragraph",), "scifact-absent": ("cmrc2018/dev-paragraph",)}


def collect(path: str, work_dir: str) -> None:
    bench = default_bench()
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        for name in ANSWERABLE + MEMORIES:
            directory, scope, queries, _ = SETS[name]

            def keep(scope_value: str, kind: str, text: str, hits: list[Any], relevant: Any,
                     name: str = name) -> None:
                cjk_query = any(CJK_RUN.match(t) for t in keyword_query(text).terms)
                rows = [{"score": h.score, "across": mostly_cjk(h.text) != cjk_query,
                         "f": list(features(h.evidence, "vector")), "doc": h.path, "holds": h.path in relevant}
                        for h in hits[:10]]
                out.write(json.dumps({"set": name, "kind": kind, "query": text, "relevant": len(relevant),
                                      "hits": rows}, ensure_ascii=False) + "\n")

            opts = EvalOptions(mode="hybrid", scope_field=scope, min_score=0.0,
                               queries_dir=resolve(bench, queries) if queries else None,
                               work_dir=os.path.join(work_dir, WORK.get(name, name)),
                               foreign_dirs=tuple(os.path.join(bench, f) for f in foreign_of(name)), collect=keep,
                               **FAMILY.get(name, {}))
            r = evaluate(resolve(bench, directory), opts)
            print(f"{name}: {r['queries']} questions", file=sys.stderr, flush=True)
    os.replace(path + ".tmp", path)


def half(record: dict[str, Any]) -> int:
    return hashlib.sha256(f"{record['set']}|{record['query']}".encode()).digest()[0] % 2


def simulate(records: list[dict[str, Any]], feature: str | None, threshold: float, which: int) -> dict[str, dict]:
    """Each query of one half at the default floor, chunks across scripts under ``threshold`` sunk."""
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if half(r) != which:
            continue
        kept = []
        for h in r["hits"]:
            score = h["score"]
            if feature and h["across"] and h["f"][FEATURES[feature]] < threshold:
                score *= NAMES_ABSENT_FACTOR
            if score >= DEFAULT_MIN_SCORE:
                kept.append(h)
        a = acc[r["set"] if r["kind"] == IN_SCOPE else f"{r['set']} <- {r['kind']}"]
        a["empty"].append(float(not kept))
        if r["kind"] == IN_SCOPE:
            docs = list(dict.fromkeys(h["doc"] for h in kept))[:5]
            held = {h["doc"] for h in kept if h["holds"]}
            a["recall@5"].append(len([d for d in docs if d in held]) / max(r["relevant"], 1))
    return {k: {m: float(np.mean(v)) for m, v in a.items()} for k, a in acc.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", default="bench-results/standout.jsonl")
    ap.add_argument("--work-dir", default="bench-results/work")
    ap.add_argument("--collect", action="store_true", help="search first (the records are kept for later runs)")
    args = ap.parse_args()
    if args.collect or not os.path.exists(args.records):
        collect(args.records, args.work_dir)
    with open(args.records, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    foreign = [f"{m} <- {k}" for m, kinds in ACROSS.items() for k in kinds]
    print("| rule | " + " | ".join(f"{s}: [] / R@5" for s in ANSWERABLE) + " | "
          + " | ".join(f"{f}: []" for f in foreign) + " |")
    print("|---" * (1 + len(ANSWERABLE) + len(foreign)) + "|")
    for feature, threshold in [(None, 0.0)] + [(f, x) for f, xs in GRID.items() for x in xs]:
        halves = [simulate(records, feature, threshold, w) for w in (0, 1)]
        cells = [" / ".join(f"{h[s]['empty']:.3f}, {h[s]['recall@5']:.3f}" for h in halves) for s in ANSWERABLE]
        cells += [" / ".join(f"{h[f]['empty']:.2f}" for h in halves) for f in foreign]
        label = f"{feature} < {threshold:g} sunk" if feature else "none (shipped)"
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
