"""Retrieval quality on the shared benchmark sets, every mode, one command.

    python benchmarks/quality.py [--bench ../shared/bench] [--out bench-results/quality.json]
                                 [--sets locomo,zh,xl,scifact,cmrc,cmrc-hant,cmrc-cross,cmrc-cross-rev,workspace]
                                 [--sets family]   # small, many and the *-absent sets
                                 [--modes keyword,vector,hybrid] [--min-score 0.05]
                                 [--model multilingual-e5-small] [--vector-weight 0.3]
                                 [--override '{"query": {"hybrid": {"dateMatch": {"enabled": false}}}}']

Runs `mnemoclaw eval` (the real indexer and searcher, default configuration, the
default local embedder, the default minScore) on each set and prints a Markdown table;
the JSON holds every figure. Scratch indexes go to --work-dir (default
bench-results/work) so a second run only re-searches.

The workspace set is also asked questions nothing in it answers (SciFact claims, XQuAD
questions in English and Chinese, questions about the other conversations): the share
answered with nothing is reported beside recall. ``cmrc-hant`` is CMRC 2018 converted to
Traditional Chinese by benchmarks/zh_hant.py (written under bench-results on first use);
``cmrc-cross`` has its paragraphs in Taiwan's Traditional script and words (OpenCC s2twp) and
its questions as asked, ``cmrc-cross-rev`` the other way round: a question in one script, the
note in the other.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from mnemoclaw.eval.runner import EvalOptions, evaluate

ZH_HANT = "zh-hant:cmrc2018/dev-paragraph"  # made by zh_hant.py from the Simplified set
# across scripts: the paragraphs in Taiwan's Traditional (words included), the questions as
# asked; and the other way round (zh_hant.py, OpenCC s2twp)
ZH_TW_NOTES = "zh-tw-notes:cmrc2018/dev-paragraph"
ZH_TW_QUESTIONS = "zh-tw-questions:cmrc2018/dev-paragraph"
CONVERTED = {"zh-hant": ("s2t", ("corpus.jsonl", "queries.jsonl")), "zh-tw-notes": ("s2twp", ("corpus.jsonl",)),
             "zh-tw-questions": ("s2twp", ("queries.jsonl",))}
# questions asked of every LoCoMo workspace that nothing in it answers, and how many
FOREIGN = ("scifact/beir-test", "xquad/en-paragraph", "xquad/zh-paragraph")
OTHERS = 100  # questions about the other conversations, per workspace

# name -> (directory, scope field, queries directory, headline metric)
SETS = {
    "locomo": ("locomo/turns", "conv", None, "recall@5"),
    "zh": ("xquad/zh-sentence", None, None, "recall@5"),
    "xl": ("xquad/en-paragraph", None, "xquad/zh-paragraph", "recall@5"),
    "xl-rev": ("xquad/zh-paragraph", None, "xquad/en-paragraph", "recall@5"),
    "scifact": ("scifact/beir-test", None, None, "ndcg@10"),
    "cmrc": ("cmrc2018/dev-paragraph", None, None, "recall@1"),
    "cmrc-hant": (ZH_HANT, None, None, "recall@1"),
    "cmrc-cross": (ZH_TW_NOTES, None, None, "recall@1"),
    "cmrc-cross-rev": ("cmrc2018/dev-paragraph", None, ZH_TW_QUESTIONS, "recall@1"),
    "hkcancor": ("native:hkcancor", None, None, "recall@1"),
    "hkcancor-cross": ("native:hkcancor", None, "native:hkcancor-cross", "recall@1"),
    "workspace": ("locomo/markdown", "conv", "locomo/turns", "recall@5"),
    # the rest of the family the score is fitted on (benchmarks/calibration.py): not run by default
    "small": ("locomo/markdown", "conv", "locomo/turns", "recall@5"),
    "many": ("locomo/markdown", "conv", "locomo/turns", "recall@5"),
    "cmrc-absent": ("cmrc2018/dev-paragraph", None, None, "recall@1"),
    "xquad-en-absent": ("xquad/en-paragraph", None, None, "recall@5"),
    "xquad-zh-absent": ("xquad/zh-paragraph", None, None, "recall@5"),
    "scifact-absent": ("scifact/beir-test", None, None, "ndcg@10"),
}
DEFAULT_SETS = ("locomo", "zh", "xl", "xl-rev", "scifact", "cmrc", "cmrc-hant", "cmrc-cross", "cmrc-cross-rev", "hkcancor",
                "hkcancor-cross", "workspace")
SMALL_SESSIONS = 2  # "small": each LoCoMo workspace cut to its first two sessions (a new memory)
MANY = 5  # "many": five LoCoMo conversations in one workspace (ten people), the other five asked of it
# how the family's sets are made from their data
FAMILY = {
    "small": {"first_files": SMALL_SESSIONS},
    "many": {"together": MANY},
    # half of each corpus indexed, the questions on the other half asked of it: the same kind of
    # question about something memory does not hold
    "cmrc-absent": {"absent": True},
    "xquad-en-absent": {"absent": True},
    "xquad-zh-absent": {"absent": True},
    "scifact-absent": {"absent": True},
}
# what else each half-corpus memory is asked: the other corpora's questions (FOREIGN for LoCoMo's)
ABSENT_FOREIGN = {"cmrc-absent": ("locomo/turns", "scifact/beir-test", "xquad/en-paragraph"),
                  "xquad-en-absent": ("locomo/turns", "scifact/beir-test", "cmrc2018/dev-paragraph"),
                  "xquad-zh-absent": ("locomo/turns", "scifact/beir-test", "cmrc2018/dev-paragraph"),
                  "scifact-absent": ("locomo/turns", "xquad/en-paragraph", "cmrc2018/dev-paragraph")}
MEMORIES = ("workspace", "small", "many")  # LoCoMo as memory workspaces: evidence lines, foreign questions
# where a set's scratch indexes live: a family set shares the folder of the set it is made from
WORK = {"hkcancor-cross": "hkcancor", "xl-rev": "xquad-zh", "small": "workspace", "many": "workspace", "cmrc-absent": "cmrc", "xquad-en-absent": "xquad-en",
        "xquad-zh-absent": "xquad-zh", "scifact-absent": "scifact"}
LABELS = {
    "locomo": "locomo/turns (scoped by conv)",
    "zh": "xquad/zh-sentence",
    "xl": "zh queries -> xquad/en-paragraph",
    "xl-rev": "en queries -> xquad/zh-paragraph",
    "scifact": "scifact/beir-test",
    "cmrc": "cmrc2018/dev-paragraph",
    "cmrc-hant": "cmrc2018 in Traditional Chinese (OpenCC)",
    "cmrc-cross": "cmrc2018: Traditional (Taiwan) paragraphs, Simplified questions",
    "cmrc-cross-rev": "cmrc2018: Simplified paragraphs, Traditional (Taiwan) questions",
    "hkcancor": "HKCanCor: Hong Kong Cantonese, natively Traditional",
    "hkcancor-cross": "HKCanCor: Traditional notes, Simplified questions",
    "workspace": "LoCoMo workspace mode (400/80 chunks)",
    "small": "LoCoMo workspaces cut to their first two sessions",
    "many": "LoCoMo: five conversations (ten people) in one workspace",
    "cmrc-absent": "cmrc2018: half the articles indexed",
    "xquad-en-absent": "xquad/en-paragraph: half the articles indexed",
    "xquad-zh-absent": "xquad/zh-paragraph: half the articles indexed",
    "scifact-absent": "scifact: half the abstracts indexed",
}


def foreign_of(name: str) -> tuple[str, ...]:
    """The question folders (under the bench) a set's memories are asked and cannot answer."""
    return FOREIGN if name in MEMORIES else ABSENT_FOREIGN.get(name, ())


def default_bench() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("MNEMOCLAW_BENCH_DIR"), os.path.join(here, "..", "..", "shared", "bench"),
                      "/work/shared/bench"):
        if candidate and os.path.isfile(os.path.join(candidate, "README.md")):
            return os.path.abspath(candidate)
    sys.exit("benchmark data not found: pass --bench DIR or set MNEMOCLAW_BENCH_DIR")


def resolve(bench: str, spec: str, out_root: str = "bench-results/zh-hant") -> str:
    """The folder of a set's corpus or queries: under ``bench``, or converted by zh_hant.py."""
    kind, _, source = spec.partition(":")
    if kind == "native" and source:  # built from a corpus a package ships (hkcancor.py)
        from hkcancor import ensure

        return ensure(os.path.abspath("bench-results/hkcancor"), source)
    if kind in CONVERTED and source:
        from zh_hant import convert

        table, parts = CONVERTED[kind]
        folder = source.replace("/", "-") if kind == "zh-hant" else f"{kind}-{source.replace('/', '-')}"
        return convert(os.path.join(bench, source), os.path.join(os.path.abspath(out_root), folder), table, parts)
    return os.path.join(bench, spec)


def directory_of(bench: str, name: str, out_root: str = "bench-results/zh-hant") -> str:
    return resolve(bench, SETS[name][0], out_root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS),
                    help=f"comma-separated, or 'family' for the rest of the calibration family ({', '.join(FAMILY)})")
    ap.add_argument("--modes", default="keyword,vector,hybrid")
    ap.add_argument("--work-dir", default="bench-results/work")
    ap.add_argument("--out", default="bench-results/quality.json")
    ap.add_argument("--min-score", type=float, default=None, help="minScore (default: the configured one)")
    ap.add_argument("--fusion", default=None, help="query.hybrid.fusion to compare (default: the configured one)")
    ap.add_argument("--model", default=None, help="local model to compare (e.g. multilingual-e5-small)")
    ap.add_argument("--vector-weight", type=float, default=None,
                    help="a fixed hybrid vector weight (text weight 1 - it) instead of the adaptive one")
    ap.add_argument("--order", default=None, choices=("fused", "topk", "pool"),
                    help="how hits are ordered (search/stages.py ORDER; a measurement, not a setting)")
    ap.add_argument("--without-han-names", action="store_true",
                    help="compare: a Chinese question's names not looked for (src/mnemoclaw/text/names.py)")
    ap.add_argument("--han-common", type=float, default=None,
                    help="compare: how often the tagger's dictionary has seen a word for it to be no name (names.COMMON)")
    ap.add_argument("--han-pairs", type=float, default=None,
                    help="compare: the share of a Chinese name's character pairs that makes it mentioned "
                         "(search/keyword.py HAN_PAIRS_MENTION)")
    ap.add_argument("--translated", type=float, default=None,
                    help="compare: how close a Chinese note's noun must be to a Latin name to write it "
                         "(search/keyword.py TRANSLATED; -1: every Chinese note may, 2: none does)")
    ap.add_argument("--override", default=None, metavar="JSON",
                    help='memorySearch settings to change, e.g. \'{"query": {"hybrid": {"dateMatch": {"enabled": false}}}}\'')
    args = ap.parse_args()
    # memorySearch settings given as a config file's would be: validated, unknown keys named
    config = {"agents": {"defaults": {"memorySearch": json.loads(args.override)}}} if args.override else None
    bench = args.bench or default_bench()
    if args.order:
        from mnemoclaw.search import stages

        stages.ORDER = args.order
    if args.without_han_names or args.han_common is not None or args.han_pairs is not None:
        from mnemoclaw.search import keyword
        from mnemoclaw.text import names as han

        han.enabled = not args.without_han_names
        han.COMMON = han.COMMON if args.han_common is None else args.han_common
        keyword.HAN_PAIRS_MENTION = keyword.HAN_PAIRS_MENTION if args.han_pairs is None else args.han_pairs
    if args.translated is not None:
        from mnemoclaw.search import keyword

        keyword.TRANSLATED = args.translated
    results: dict[str, dict] = {}
    names = [n for part in args.sets.split(",") for n in (FAMILY if part == "family" else [part])]
    for name in names:
        directory, scope, queries, metric = SETS[name]
        for mode in args.modes.split(","):
            t = time.monotonic()
            # keyword runs share the embedded index: mode only changes how it is searched
            overrides: dict = {"query": {"hybrid": {"fusion": args.fusion}}} if args.fusion else {}
            if args.model:
                overrides.update(provider="local", model=args.model)
            if args.vector_weight is not None:
                hybrid = overrides.setdefault("query", {}).setdefault("hybrid", {})
                hybrid.update(vectorWeight=args.vector_weight, textWeight=1 - args.vector_weight)
            workspace = name in MEMORIES
            opts = EvalOptions(mode=mode, scope_field=scope, queries_dir=resolve(bench, queries) if queries else None,
                               work_dir=os.path.join(args.work_dir, WORK.get(name, name)), overrides=overrides,
                               config=config, min_score=args.min_score,
                               foreign_dirs=tuple(os.path.join(bench, f) for f in foreign_of(name)),
                               others=OTHERS if workspace else 0, **FAMILY.get(name, {}))
            r = evaluate(directory_of(bench, name), opts)
            r["wall_seconds"] = round(time.monotonic() - t, 1)  # includes indexing on the first mode
            results[f"{name}/{mode}"] = r
            print(f"{name:9} {mode:7} {metric} {r[metric]:.4f}  recall@5 {r['recall@5']:.4f}  "
                  f"[] {r['empty']:.3f} weak {r.get('weak', 0):.3f}  "
                  f"p50 {r['latency_ms_p50']} ms  ({r['wall_seconds']} s)", file=sys.stderr, flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=2)
    modes = args.modes.split(",")
    print("| set | metric | " + " | ".join(modes) + " | hybrid p50 / p95 ms | hybrid: answerable, [] / weak |")
    print("|---|---|" + "---|" * len(modes) + "---|---|")
    for name in names:
        metric = SETS[name][3]
        cells = [f"{results[f'{name}/{m}'][metric]:.3f}" for m in modes]
        h = results.get(f"{name}/hybrid", {})
        lat = f"{h.get('latency_ms_p50', '-')} / {h.get('latency_ms_p95', '-')}"
        errs = f"{h['empty']:.3f} / {h.get('weak', 0):.3f}" if h else "-"
        print(f"| {LABELS[name]} | {metric} | " + " | ".join(cells) + f" | {lat} | {errs} |")
    for name in names:
        for mode in modes:
            w = results.get(f"{name}/{mode}")
            if not w or "out_of_scope" not in w:
                continue
            print(f"\n{name} ({mode}): recall@5 {w['recall@5']:.3f}, answerable answered with nothing "
                  f"{w['empty']:.3f}")
            if name in MEMORIES:
                shown = w.get("snippet_answer@5", {}).get("shown")
                print(f"  hit@5 {w['hit@5']:.3f}, snippet recall@5 {w['snippet_recall@5']:.3f} "
                      f"(by lines {w['snippet_recall_lines@5']:.3f}), "
                      + (f"answer words the snippets show {shown:.3f}, " if shown is not None else "")
                      + f"multi-hop recall@5 {w['by_category'].get('1', {}).get('recall@5', 0):.3f}, "
                      f"average returned chunk {w['avg_chunk_chars@5']} chars")
            print("  out of scope, answered with nothing (weak results among the rest): " + ", ".join(
                f"{kind} {o['empty']:.3f} ({o.get('weak', 0):.3f})" for kind, o in w["out_of_scope"].items()))


if __name__ == "__main__":
    main()
