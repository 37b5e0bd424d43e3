"""Fit and check the relevance score (search/relevance.py) on a family of benchmark memories.

    python benchmarks/calibration.py collect [--modes hybrid,keyword,vector]   # search, keep the evidence
    python benchmarks/calibration.py fit [--write]                            # fit, report, draw
    python benchmarks/calibration.py loco                                     # each corpus by a fit without it
    python benchmarks/calibration.py weak [--modes hybrid]                    # what failing soft does
    python benchmarks/calibration.py floors [--modes hybrid] [--floors ...]   # the shipped model at each floor

``collect`` runs the real indexer and searcher (``mnemoclaw eval``, default
configuration, ``min_score`` 0 so nothing is filtered) and records, for the first
results of every query, the evidence the score is computed from and whether the
result holds the answer. The family (benchmarks/quality.py SETS and FAMILY):

- in scope: LoCoMo as memory workspaces (one conversation, two people; the same cut to its
  first two sessions, a new memory; five conversations in one workspace, ten people), LoCoMo
  turns, XQuAD zh, XQuAD zh -> en, SciFact, CMRC 2018, and half of CMRC, XQuAD en, XQuAD zh
  and SciFact indexed (whole articles) with the questions on that half;
- out of scope, asked where nothing answers them: SciFact claims and XQuAD questions in
  English and Chinese asked of every LoCoMo workspace; questions about the other
  conversations (other people's lives); the questions on the half of a corpus left out (the
  same kind of question about something memory does not hold); and the other corpora's
  questions asked of each half-corpus memory.

``fit`` fits one model per search mode on half of the queries (split by a hash of the
query) and reports on the other half: what each candidate ``minScore`` keeps of every set's
recall, the share of in-scope questions answered with nothing, the share of out-of-scope
questions answered with nothing (failing soft as shipped). ``--write`` puts the models in
search/relevance_model.json; the pictures of docs/quality.md are redrawn (docs/img/*.svg).

``loco`` (leave one corpus out) fits on every record that draws on neither a corpus's
memories nor its questions and answers that corpus's sets with it: the figure for a corpus
the fit never saw.

``weak`` replays every query with the shipped model and floor and, for each coverage a weak
result needs (search/relevance.py ``WEAK_COVERAGE``), counts both errors: in-scope questions
answered with nothing, and out-of-scope questions answered with something (a weak result
included), on the half the threshold was chosen on and on the held-out half.

``floors`` answers every query with the shipped model at each candidate floor, as the searcher
does, and gives both kinds of error and recall per set on either half: how the default ``minScore``
is chosen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from mnemoclaw.eval.runner import IN_SCOPE, EvalOptions, evaluate, evidence_in
from mnemoclaw.search.relevance import (
    DEFAULT_MIN_SCORE,
    MODEL_FILE,
    Evidence,
    Model,
    adjusted,
    keyword_backed,
    models,
)
from mnemoclaw.search.relevance import features as evidence_features
from mnemoclaw.search.stages import WEAK_TAIL
from mnemoclaw.types import UnrelatedReference, VectorReference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import FAMILY, MEMORIES, OTHERS, SETS, WORK, default_bench, foreign_of, resolve  # noqa: E402

KEEP = 20  # results recorded per query
# sets a mode's model is not fitted on: keyword search does not cross languages, so its results
# for Chinese questions over English paragraphs hold the answer by chance
NOT_FITTED = {"keyword": ("xl",)}
# the corpus a set's memory comes from, and the corpus of each kind of foreign question: a
# leave-one-corpus-out fit sees neither
CORPUS = {"locomo": "locomo", "workspace": "locomo", "small": "locomo", "many": "locomo", "zh": "xquad",
          "xl": "xquad", "xquad-en-absent": "xquad", "xquad-zh-absent": "xquad", "scifact": "scifact",
          "scifact-absent": "scifact", "cmrc": "cmrc", "cmrc-absent": "cmrc"}
QUESTION_CORPUS = {"scifact/beir-test": "scifact", "xquad/en-paragraph": "xquad", "xquad/zh-paragraph": "xquad",
                   "locomo/turns": "locomo", "cmrc2018/dev-paragraph": "cmrc"}


def corpora(record: dict[str, Any]) -> set[str]:
    """The corpora a collected record draws on: its memory's, and its question's."""
    own = CORPUS[record["set"]]
    return {own, QUESTION_CORPUS.get(record["kind"], own)}


def collect(args: argparse.Namespace) -> None:
    bench = args.bench or default_bench()
    os.makedirs(args.data, exist_ok=True)
    for mode in args.modes.split(","):
        path = os.path.join(args.data, f"{mode}.jsonl")
        with open(path + ".tmp", "w") as out:
            for name in args.sets.split(","):
                directory, scope, queries, _ = SETS[name]

                def keep(scope_value: str, kind: str, text: str, hits: list[Any], relevant: Any,
                         name: str = name) -> None:
                    rows = []
                    for h in hits[:KEEP]:
                        e: Evidence = h.evidence
                        if name in MEMORIES:
                            holds = sorted(evidence_in(h, relevant))
                        else:
                            holds = [h.path] if h.path in relevant else []
                        ref, far = e.reference, e.unrelated
                        rows.append({"e": [e.coverage, e.bm25, e.cosine, e.date, e.vector_rel, e.text_rel, e.content,
                                           e.unseen, e.names_unseen, e.names_missing, e.other_script, e.crossing,
                                           e.named],
                                     "ref": [ref.mean, ref.sd, ref.pair_mean, ref.pair_sd] if ref else None,
                                     "far": [far.mean, far.best, far.pair_sd] if far else None,
                                     "holds": holds, "doc": h.path})
                    record = {"set": name, "kind": kind, "scope": scope_value, "query": text,
                              "relevant": len(relevant), "hits": rows}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")

                memories = name in MEMORIES
                foreign = tuple(os.path.join(bench, f) for f in foreign_of(name))
                opts = EvalOptions(mode=mode, scope_field=scope, min_score=0.0,
                                   queries_dir=resolve(bench, queries) if queries else None,
                                   work_dir=os.path.join(args.work_dir, WORK.get(name, name)), foreign_dirs=foreign,
                                   others=OTHERS if memories else 0, collect=keep, **FAMILY.get(name, {}))
                r = evaluate(resolve(bench, directory), opts)
                print(f"{mode:7} {name:9} {r['queries']} queries", file=sys.stderr, flush=True)
        # the sets collected now replace theirs; the rest of an earlier collection stays
        collected = set(args.sets.split(","))
        if os.path.exists(path):
            with open(path) as old, open(path + ".tmp", "a") as out:
                out.writelines(line for line in old if json.loads(line)["set"] not in collected)
        os.replace(path + ".tmp", path)


# -- fitting --------------------------------------------------------------------------------
def evidence(row: dict[str, Any]) -> Evidence:
    cov, bm, cos, date, vrel, trel, *more = row["e"]
    content, unseen, names_unseen, names_missing, other_script, crossing, named = (more + [None] * 7)[:7]
    ref = VectorReference(*row["ref"]) if row["ref"] else None
    far = UnrelatedReference(*row["far"]) if row.get("far") else None
    return Evidence(cov, bm, cos, ref, int(date), vrel, trel, far, content, unseen, names_unseen, names_missing,
                    bool(other_script), bool(crossing), bool(named))


def features(row: dict[str, Any], mode: str) -> tuple[float, ...]:
    return evidence_features(evidence(row), mode)


def scores(model: Model, hits: list[dict[str, Any]], mode: str) -> np.ndarray:
    """One query's recorded results scored as the searcher scores them (relevance.probabilities)."""
    if not hits:
        return np.array([])
    found = [evidence(h) for h in hits]
    return adjusted(found, predict(model, np.array([evidence_features(e, mode) for e in found])))


def held_out(record: dict[str, Any]) -> bool:
    key = f"{record['set']}|{record['scope']}|{record['query']}"
    return hashlib.sha256(key.encode()).digest()[0] % 2 == 1


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1e-3) -> np.ndarray:
    """Weighted logistic regression by Newton's method; intercept first."""
    X = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(X.shape[1])
    reg = np.full(X.shape[1], l2 * w.sum())
    reg[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(X @ beta, -40, 40)))
        grad = X.T @ (w * (p - y)) + reg * beta
        hess = (X * (w * p * (1 - p))[:, None]).T @ X + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def fit_network(x: np.ndarray, y: np.ndarray, w: np.ndarray, hidden: int = 16, l2: float = 1e-4,
                steps: int = 3000, seed: int = 0) -> Model:
    """One hidden layer of ``hidden`` tanh units and a logistic output, fitted to the weighted
    log loss by full-batch Adam from a fixed seed (so a fit is reproducible)."""
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 1 / math.sqrt(z.shape[1]), (z.shape[1], hidden)), np.zeros(hidden),
              rng.normal(0, 1 / math.sqrt(hidden), hidden), np.zeros(())]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    share = w / w.sum()
    for step in range(1, steps + 1):
        h = np.tanh(z @ params[0] + params[1])
        p = 1 / (1 + np.exp(-np.clip(h @ params[2] + params[3], -40, 40)))
        g = share * (p - y)
        back = np.outer(g, params[2]) * (1 - h * h)
        grads = [z.T @ back + l2 * params[0], back.sum(0), h.T @ g + l2 * params[2], np.array(g.sum())]
        for i, grad in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * grad
            second[i] = 0.999 * second[i] + 0.001 * grad * grad
            params[i] = params[i] - 0.01 * (first[i] / (1 - 0.9 ** step)) / (
                np.sqrt(second[i] / (1 - 0.999 ** step)) + 1e-8)
    return Model(mean, scale, params[0], params[1], params[2], float(params[3]))


def fit_model(x: np.ndarray, y: np.ndarray, w: np.ndarray, mode: str, args: argparse.Namespace) -> Model:
    """Vector-only search keeps a logistic model of its features; the modes with a keyword side
    a small network, whose units can weigh each kind of evidence by the others (the query's names
    memory never mentions against the vector match, say)."""
    if mode == "vector" or args.hidden == 0:
        beta = fit_logistic(x, y, w)
        return Model(out=beta[1:], out_bias=float(beta[0]))
    return fit_network(x, y, w, hidden=args.hidden, l2=args.l2)


def predict(model: Model, x: np.ndarray) -> np.ndarray:
    return model.predict(x) if len(x) else np.array([])


def load(data: str, mode: str) -> list[dict[str, Any]]:
    with open(os.path.join(data, f"{mode}.jsonl")) as fh:
        return [json.loads(line) for line in fh]


def query_weights(records: list[dict[str, Any]]) -> Any:
    """Each query's weight: in-scope and out-of-scope questions weigh the same in total, and
    so does every set within the first, and every kind of question asked of every set within
    the second."""
    per_set: dict[tuple[str, str], int] = defaultdict(int)
    for r in records:
        per_set[(r["set"], r["kind"])] += 1
    in_sets = sum(1 for (_, kind) in per_set if kind == IN_SCOPE)
    out_sets = len(per_set) - in_sets

    def weight(r: dict[str, Any]) -> float:
        inside = r["kind"] == IN_SCOPE
        return 1.0 / per_set[(r["set"], r["kind"])] / (in_sets if inside else out_sets)
    return weight


def training_rows(records: list[dict[str, Any]], mode: str, miss_weight: float,
                  chosen: Callable[[dict[str, Any]], bool] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first ten results of every training query; in-scope and out-of-scope queries weigh
    the same in total, and so does every set among the in-scope ones. An in-scope result that
    does not hold the answer weighs ``miss_weight``: it is often about the question (the
    same person, the same topic) without being the one chunk the set marks."""
    xs, ys, ws = [], [], []
    chosen = chosen or (lambda r: not held_out(r))
    records = [r for r in records if chosen(r) and r["set"] not in NOT_FITTED.get(mode, ())]
    weight_of = query_weights(records)
    for r in records:
        inside = r["kind"] == IN_SCOPE
        weight = weight_of(r)
        for h in r["hits"][:10]:
            if inside and not h["holds"] and not miss_weight:
                continue
            xs.append(features(h, mode))
            ys.append(1.0 if h["holds"] else 0.0)
            ws.append(weight * (miss_weight if inside and not h["holds"] else 1.0))
    return np.array(xs), np.array(ys), np.array(ws) * len(ws) / sum(ws)


def simulate(records: list[dict[str, Any]], mode: str, beta: Model, floor: float,
             chosen: Callable[[dict[str, Any]], bool] = held_out, weak: bool = False) -> dict[str, dict[str, float]]:
    """Each chosen query (the held-out half) answered with ``floor`` as minScore: recall@5
    (hit@5 for the workspace set) among the kept results, and the share answered with nothing;
    ``weak``: failing soft as the searcher does (search/relevance.py WEAK_COVERAGE), and what scored
    under the floor down to ``WEAK_TAIL`` of it after what passed (search/stages.py)."""
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if not chosen(r):
            continue
        hits = r["hits"]
        probs = scores(beta, hits, mode)
        kept = [h for h, p in zip(hits, probs, strict=True) if p >= floor]
        if not kept and weak and floor > 0 and hits and keyword_backed(evidence(hits[0])):
            kept = hits[:1]
        elif kept and weak and floor > 0:  # what else was found, after the answers (search/stages.py select)
            kept += [h for h, p in zip(hits, probs, strict=True) if floor * WEAK_TAIL <= p < floor]
        label = r["set"] if r["kind"] == IN_SCOPE else f"{r['set']} <- {r['kind']}"
        a = acc[label]
        a["empty"].append(float(not kept))
        if r["kind"] != IN_SCOPE:
            continue
        n = max(r["relevant"], 1)
        if r["set"] in MEMORIES:
            top = {e for h in kept[:5] for e in h["holds"]}
            a["recall@5"].append(len(top) / n)
            a["hit@5"].append(float(bool(top)))
        else:
            docs = list(dict.fromkeys(h["doc"] for h in kept))
            held = {h["doc"] for h in kept if h["holds"]}
            a["recall@5"].append(len([d for d in docs[:5] if d in held]) / n)
            a["recall@1"].append(len([d for d in docs[:1] if d in held]) / n)
    return {label: {k: float(np.mean(v)) for k, v in a.items()} for label, a in sorted(acc.items())}


def fit(args: argparse.Namespace) -> None:
    fitted = {}
    for mode in args.modes.split(","):
        records = load(args.data, mode)
        x, y, w = training_rows(records, mode, args.miss_weight)
        beta = fitted[mode] = fit_model(x, y, w, mode, args)
        print(f"\n## {mode}: {len(y)} training results, {int(y.sum())} hold the answer", flush=True)
        base = simulate(records, mode, beta, 0.0)
        for floor in [float(f) for f in args.floors.split(",")]:
            sim = simulate(records, mode, beta, floor, weak=mode != "vector")
            cells = []
            for label, m in sim.items():
                if "recall@5" in m:
                    key = "recall@1" if label.startswith("cmrc") else "recall@5"
                    cells.append(f"{label} {key} {m[key]:.3f} ({m[key] - base[label][key]:+.3f}) [] {m['empty']:.3f}")
                    if label in MEMORIES:
                        cells.append(f"hit@5 {m['hit@5']:.3f}")
                else:
                    cells.append(f"{label} empty {m['empty']:.2f}")
            print(f"minScore {floor:.2f}: " + "; ".join(cells), flush=True)
    if args.write:
        with open(MODEL_FILE, encoding="utf-8") as fh:
            shipped = json.load(fh)
        shipped.update({mode: model.to_json() for mode, model in fitted.items()})
        with open(MODEL_FILE, "w", encoding="utf-8") as fh:
            json.dump(shipped, fh, separators=(",", ":"))
            fh.write("\n")
        print(f"wrote {MODEL_FILE}", file=sys.stderr)
    if not args.no_draw:
        draw(args, fitted)


def loco(args: argparse.Namespace) -> None:
    """Leave one corpus out: fit on every record that draws on neither the corpus's memories nor
    its questions, and answer the corpus's own sets with that fit and the default floor (failing
    soft as shipped): in-scope recall and [] share, and each out-of-scope kind's [] share."""
    for mode in args.modes.split(","):
        records = load(args.data, mode)
        print(f"\n## {mode}, minScore {args.default_floor:g}, each corpus answered by a fit that never saw it")
        print("| left out | set | in scope: recall@5 (hit@5) | in scope: [] | out of scope: [] by kind |")
        print("|---|---|---|---|---|")
        for corpus in sorted(set(CORPUS.values())):
            x, y, w = training_rows(records, mode, args.miss_weight, lambda r, c=corpus: c not in corpora(r))
            beta = fit_model(x, y, w, mode, args)
            sim = simulate(records, mode, beta, args.default_floor, lambda r, c=corpus: CORPUS[r["set"]] == c,
                           weak=mode != "vector")
            for name in [n for n in args.sets.split(",") if CORPUS[n] == corpus]:
                m = sim.get(name)
                if not m:
                    continue
                key = "recall@1" if name.startswith("cmrc") else "recall@5"
                got = f"{key[-3:]} {m[key]:.3f}" + (f" ({m['hit@5']:.3f})" if "hit@5" in m else "")
                outs = "; ".join(f"{label.split(' <- ')[1]} {v['empty']:.3f}" for label, v in sim.items()
                                 if label.startswith(f"{name} <- "))
                print(f"| {corpus} | {name} | {got} | {m['empty']:.3f} | {outs} |", flush=True)


def weak(args: argparse.Namespace) -> None:
    """Both kinds of error with the shipped model and floor, by the coverage a weak result needs."""
    thresholds = [float(t) for t in args.weak_coverage.split(",")]
    for mode in args.modes.split(","):
        if mode == "vector":
            continue  # no keyword evidence to fail soft on
        records = load(args.data, mode)
        beta = models()[mode]
        print(f"\n## {mode}, minScore {args.default_floor:g}: share of questions "
              "in scope: [] / weak and right / weak and wrong; out of scope: answered (weak included)")
        for half, name in ((False, "chosen on"), (True, "held out")):
            rows: dict[str, dict[float, list[tuple[str, float]]]] = defaultdict(lambda: defaultdict(list))
            for r in records:
                if held_out(r) != half:
                    continue
                hits = r["hits"]
                probs = scores(beta, hits, mode)
                kept = [h for h, p in zip(hits, probs, strict=True) if p >= args.default_floor]
                inside = r["kind"] == IN_SCOPE
                label = r["set"] if inside else f"{r['set']} <- {r['kind']}"
                for t in [-1.0, *thresholds]:  # -1: no weak results
                    if kept:
                        rows[label][t].append(("answered", 1.0))
                        continue
                    best = hits[0] if hits else None
                    if t >= 0 and best is not None and (best["e"][0] or 0.0) >= t:
                        rows[label][t].append(("weak right" if best["holds"] else "weak wrong", 1.0))
                    else:
                        rows[label][t].append(("empty", 1.0))
            print(f"### {name} half")
            for label, by_t in sorted(rows.items()):
                cells = []
                for t, got in sorted(by_t.items()):
                    n = len(got)
                    share = {k: sum(1 for g, _ in got if g == k) / n for k in ("empty", "weak right", "weak wrong",
                                                                               "answered")}
                    head = "none" if t < 0 else f"{t:.2f}"
                    if " <- " in label:
                        cells.append(f"{head}: {share['answered'] + share['weak right'] + share['weak wrong']:.3f}")
                    else:
                        cells.append(f"{head}: {share['empty']:.3f}/{share['weak right']:.3f}/{share['weak wrong']:.3f}")
                print(f"{label} ({len(next(iter(by_t.values())))}): " + "; ".join(cells))


def floors(args: argparse.Namespace) -> None:
    """The shipped model at each candidate floor, as the searcher answers (failing soft, what else was
    found after the answers): per set, the share of in-scope questions answered with nothing and
    their recall, and the share of out-of-scope questions answered with nothing; each figure on the
    half a floor is chosen on / the held-out half."""
    for mode in args.modes.split(","):
        records = load(args.data, mode)
        beta = models()[mode]
        grid = [float(f) for f in args.floors.split(",")]
        halves = {f: (simulate(records, mode, beta, f, lambda r: not held_out(r), weak=mode != "vector"),
                      simulate(records, mode, beta, f, held_out, weak=mode != "vector")) for f in grid}
        print(f"\n## {mode}: chosen-on half / held-out half")
        print("| set | " + " | ".join(f"minScore {f:g}" for f in grid) + " |")
        print("|---" * (len(grid) + 1) + "|")
        for label in halves[grid[0]][1]:
            cells = []
            for f in grid:
                fit_half, held = (h.get(label, {}) for h in halves[f])
                if " <- " in label:
                    cells.append(f"[] {fit_half.get('empty', 0):.3f} / {held.get('empty', 0):.3f}")
                else:
                    key = "recall@1" if label.startswith("cmrc") else "recall@5"
                    cells.append(f"[] {fit_half.get('empty', 0):.3f} / {held.get('empty', 0):.3f}, "
                                 f"R {fit_half.get(key, 0):.3f} / {held.get(key, 0):.3f}")
            print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


# -- pictures -------------------------------------------------------------------------------
def draw(args: argparse.Namespace, fitted: dict[str, Model]) -> None:
    mode = "hybrid"
    if mode not in fitted:
        return
    beta = fitted[mode]
    everything = load(args.data, mode)
    weight_of = query_weights(everything)
    records = [r for r in everything if held_out(r)]
    relevant_top, unrelated_top = [], []
    # (probability, holds) of the held-out results the score is fitted on: those that hold
    # the answer and those of questions memory has nothing on
    pairs = []
    for r in records:
        hits = r["hits"][:10]
        if not hits:
            continue
        probs = predict(beta, np.array([features(h, mode) for h in hits]))
        inside = r["kind"] == IN_SCOPE
        pairs += [(float(p), bool(h["holds"]), weight_of(r)) for p, h in zip(probs, hits, strict=True)
                  if h["holds"] or not inside]
        if inside:
            good = [p for p, h in zip(probs, hits, strict=True) if h["holds"]]
            if good:
                relevant_top.append(max(good))
        else:
            unrelated_top.append(float(probs.max()))
    os.makedirs(args.img, exist_ok=True)
    with open(os.path.join(args.img, "score-histogram.svg"), "w") as fh:
        fh.write(histogram_svg(relevant_top, unrelated_top, args.default_floor))
    with open(os.path.join(args.img, "score-reliability.svg"), "w") as fh:
        fh.write(reliability_svg(pairs))
    print(f"wrote {args.img}/score-histogram.svg and score-reliability.svg", file=sys.stderr)


W, H, PAD = 560, 320, 48


def _frame(title: str, xlabel: str, ylabel: str) -> list[str]:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle">{xlabel}</text>',
           f'<text x="14" y="{H / 2}" text-anchor="middle" transform="rotate(-90 14 {H / 2})">{ylabel}</text>',
           f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD / 2}" y2="{H - PAD}" stroke="black"/>',
           f'<line x1="{PAD}" y1="{PAD - 12}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>']
    for i in range(11):
        x = PAD + i * (W - 1.5 * PAD) / 10
        out.append(f'<text x="{x:.1f}" y="{H - PAD + 16}" text-anchor="middle">{i / 10:.1f}</text>')
    return out


def histogram_svg(relevant: list[float], unrelated: list[float], floor: float) -> str:
    bins = 20
    plot_w, plot_h = W - 1.5 * PAD, H - 2 * PAD + 12
    series = [(relevant, "#2b7bba", "best relevant result, in scope"),
              (unrelated, "#d9534f", "best result, out of scope")]
    shares = []
    for values, _, _ in series:
        counts = np.histogram(np.clip(values, 0, 1 - 1e-9), bins=bins, range=(0, 1))[0]
        shares.append(counts / max(len(values), 1))
    top = max(float(s.max()) for s in shares) or 1.0
    out = _frame("Best score per question: answerable vs nothing in memory", "score", "share of questions")
    out.append(f'<text x="{PAD - 6}" y="{PAD - 8}" text-anchor="end">{top:.2f}</text>')
    out.append(f'<text x="{PAD - 6}" y="{H - PAD + 4}" text-anchor="end">0</text>')
    for (_, colour, _), share in zip(series, shares, strict=True):
        for i, s in enumerate(share):
            x = PAD + i * plot_w / bins
            h = s / top * plot_h
            out.append(f'<rect x="{x + 1:.1f}" y="{H - PAD - h:.1f}" width="{plot_w / bins - 2:.1f}" '
                       f'height="{h:.1f}" fill="{colour}" fill-opacity="0.55"/>')
    fx = PAD + floor * plot_w
    out.append(f'<line x1="{fx:.1f}" y1="{PAD - 12}" x2="{fx:.1f}" y2="{H - PAD}" stroke="black" '
               'stroke-dasharray="4 3"/>')
    out.append(f'<text x="{fx + 4:.1f}" y="{PAD}" >default minScore {floor:g}</text>')
    for j, (values, colour, label) in enumerate(series):
        y = PAD + 18 + j * 16
        out.append(f'<rect x="{W - 260}" y="{y - 10}" width="12" height="12" fill="{colour}" fill-opacity="0.55"/>')
        out.append(f'<text x="{W - 242}" y="{y}">{label} ({len(values)})</text>')
    out.append("</svg>\n")
    return "\n".join(out)


def reliability_svg(pairs: list[tuple[float, bool, float]]) -> str:
    bins = 10
    plot_w, plot_h = W - 1.5 * PAD, H - 2 * PAD + 12
    out = _frame("Reliability of the score (held-out half)", "score", "share that answer")
    out.append(f'<line x1="{PAD}" y1="{H - PAD}" x2="{PAD + plot_w:.1f}" y2="{H - PAD - plot_h:.1f}" '
               'stroke="#999" stroke-dasharray="4 3"/>')
    points = []  # weighted as in the fit: answered and unanswerable questions alike in total
    for i in range(bins):
        inside = [(p, h, w) for p, h, w in pairs if i / bins <= p < (i + 1) / bins or (i == bins - 1 and p == 1.0)]
        if len(inside) < 20:
            continue
        total = sum(w for _, _, w in inside)
        px = PAD + sum(p * w for p, _, w in inside) / total * plot_w
        py = H - PAD - sum(w for _, h, w in inside if h) / total * plot_h
        points.append((px, py, len(inside)))
    out.append('<polyline fill="none" stroke="#2b7bba" stroke-width="2" points="'
               + " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points) + '"/>')
    for x, y, n in points:
        r = 2 + math.log10(n)
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#2b7bba"/>')
    for i in range(0, 11, 2):
        y = H - PAD - i / 10 * plot_h
        out.append(f'<text x="{PAD - 6}" y="{y + 4:.1f}" text-anchor="end">{i / 10:.1f}</text>')
    out.append(f'<text x="{PAD + 10}" y="{PAD}">answers and out-of-scope results, weighed alike ({len(pairs)})</text>')
    out.append(f'<text x="{PAD + 10}" y="{PAD + 16}">dot size: results in the band</text>')
    out.append("</svg>\n")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("collect", "fit", "loco", "weak", "floors"))
    ap.add_argument("--bench", default=None)
    ap.add_argument("--sets", default="locomo,zh,xl,scifact,cmrc,workspace,small,many,cmrc-absent,xquad-en-absent,"
                                      "xquad-zh-absent,scifact-absent")
    ap.add_argument("--modes", default="hybrid,keyword,vector")
    ap.add_argument("--work-dir", default="bench-results/work")
    ap.add_argument("--data", default="bench-results/calibration")
    ap.add_argument("--img", default="docs/img")
    ap.add_argument("--floors", default="0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.5")
    ap.add_argument("--default-floor", type=float, default=DEFAULT_MIN_SCORE)
    ap.add_argument("--miss-weight", type=float, default=0.0)
    ap.add_argument("--no-draw", action="store_true")
    ap.add_argument("--write", action="store_true", help="fit: write the models to search/relevance_model.json")
    ap.add_argument("--hidden", type=int, default=16, help="hidden units (0: a logistic model)")
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--weak-coverage", default="0.4,0.5,0.6,0.7,0.8,0.9,1.0")
    args = ap.parse_args()
    {"collect": collect, "fit": fit, "loco": loco, "weak": weak, "floors": floors}[args.step](args)


if __name__ == "__main__":
    main()
