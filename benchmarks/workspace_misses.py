"""Where LoCoMo workspace mode loses recall, and how far re-ranking the candidates can go.

    python benchmarks/workspace_misses.py [--bench ../shared/bench] [--work-dir bench-results/work/workspace]
                                          [--out bench-results/workspace-misses.json]

Indexes each ``locomo/markdown/<conv>/`` folder as `mnemoclaw eval` does (default
configuration, default embedder), takes the 50 best candidates of each side for every
question, and reports:

  ranks     where each evidence line of the multi-hop questions ranks, per mode
  slots     what the top-5 slots of multi-hop questions hold: new evidence, evidence
            another slot already covered, or none
  overlap   how many missed multi-hop evidence lines share a word with the question
            once the conversation's speaker names are set aside
  order     multi-hop recall@5 if the index's own chunks came in the best order (the five
            that hold the most of each question's evidence): what ranking alone could reach
  ceiling   a logistic re-ranker over per-candidate features (both signals, the
            adaptive weight, every line's cosine, query-word coverage, the date match,
            ranks, chunk position), trained on half of the conversations and tested on
            the other half, both ways: recall@5 next to the shipped ranking's. With
            ``--who-says``, three more features of who says a line (LoCoMo's turns name
            their speaker): the best cosine and the query-word coverage of the lines the
            question's person says, and the coverage of the query's words other than names

The re-ranker is an upper bound on what re-weighting these signals can do, not a
shipped feature.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict
from typing import NamedTuple

import numpy as np

from mnemoclaw.eval.beir import load_queries
from mnemoclaw.eval.metrics import mean
from mnemoclaw.eval.runner import (
    EvalOptions,
    _evidence_lines,
    _safe,
    _Session,
)
from mnemoclaw.search.fusion import adaptive_vector_weight, standardise
from mnemoclaw.search.stages import DATE_BOOST
from mnemoclaw.text.dates import note_date, query_dates
from mnemoclaw.text.tokenize import analyze, keyword_query

POOL = 50
FEATURES = ["wv*z_vec", "wt*z_text", "wv*z_best_line_cos", "coverage", "date", "first_chunk", "1/rank_text",
            "1/rank_vec"]
WHO_SAYS = ["wv*z_person_line_cos", "person_coverage", "coverage_without_names"]
_SPEAKER = re.compile(r"- \*\*([^*]+)\*\*")  # "- **Name** (D1:2): ..."


class Chunk(NamedTuple):
    """A returned chunk's place: what the eval's evidence scoring reads."""

    path: str
    start_line: int
    end_line: int


def _recall5(keys: list[Chunk], evidence: dict) -> float:
    """The share of the evidence lines the first five chunks hold (the eval's recall@5)."""
    held = {e for k in keys[:5] for e, (p, ln) in evidence.items() if p == k.path and k.start_line <= ln <= k.end_line}
    return len(held) / len(evidence)


def collect(bench: str, work_dir: str) -> list[dict]:
    root = os.path.join(bench, "locomo", "markdown")
    queries = [q for q in load_queries(os.path.join(bench, "locomo", "turns")) if q.metadata.get("evidence")]
    by_conv = defaultdict(list)
    for q in queries:
        by_conv[str(q.metadata["conv"])].append(q)
    session = _Session(EvalOptions(mode="hybrid", scope_field="conv", work_dir=work_dir), None)
    records = []
    for conv in sorted(os.listdir(root)):
        folder = os.path.join(root, conv)
        if not by_conv.get(conv):
            continue
        lines = _evidence_lines(folder)
        mem = session.memory(f"ws-{_safe(conv)}", {"extraPaths": [folder]})
        try:
            session.index(mem, conv)
            provider = mem.provider
            # every line of the conversation embedded once, for the best-line cosine
            texts: dict[str, list[str]] = {}
            for name in sorted(os.listdir(folder)):
                path = os.path.realpath(os.path.join(folder, name))
                with open(path, encoding="utf-8") as fh:
                    texts[path] = fh.read().split("\n")
            flat = [(p, i) for p, ls in texts.items() for i, line in enumerate(ls) if line.strip()]
            vecs = np.asarray(provider.embed([texts[p][i] for p, i in flat]), dtype=np.float32)
            line_vec = {key: vecs[j] for j, key in enumerate(flat)}
            names = set(analyze(next(iter(texts.values()))[0]))  # "# A & B — session 1"
            speaker = {(p, i): m.group(1) for p, ls in texts.items() for i, line in enumerate(ls)
                       if (m := _SPEAKER.match(line))}
            stored = {p: [(c.start_line, c.end_line) for c in got.chunks]
                      for p in texts if (got := mem.backend.store.file_chunks(p)) is not None}
            for q in by_conv[conv]:
                evidence = {e: lines[e] for e in q.metadata["evidence"] if e in lines}
                if not evidence:
                    continue
                rec = {"conv": conv, "q": q.text, "cat": q.metadata.get("category"), "ev": evidence, "names": names}
                rec["order"] = _best_five(stored, evidence)
                for mode in ("hybrid", "keyword", "vector"):
                    hits = mem.search(q.text, max_results=POOL, min_score=0, mode=mode, sync=False)
                    rec[mode] = [(Chunk(os.path.realpath(h.path), h.start_line, h.end_line), h.vector_score, h.text_score)
                                 for h in hits]
                qv = np.asarray(provider.embed([q.text], query=True)[0], dtype=np.float32)
                pool = {k for k, *_ in rec["keyword"]} | {k for k, *_ in rec["vector"]}
                rec["line_cos"] = {
                    k: max((float(line_vec[(k[0], i)] @ qv) for i in range(k[1] - 1, k[2]) if (k[0], i) in line_vec),
                           default=0.0)
                    for k in pool
                }
                rec["terms"] = {k: set(analyze("\n".join(texts[k[0]][k[1] - 1 : k[2]]))) for k in pool}
                person = {w for w in re.findall(r"[A-Z][a-z]+", q.text) if w.lower() in names}
                said = {k: [i for i in range(k[1] - 1, k[2]) if speaker.get((k[0], i)) in person] for k in pool}
                rec["person_cos"] = {k: max((float(line_vec[(k[0], i)] @ qv) for i in said[k] if (k[0], i) in line_vec),
                                            default=0.0) for k in pool}
                rec["person_terms"] = {k: set(analyze("\n".join(texts[k[0]][i] for i in said[k]))) for k in pool}
                heads = {k[0]: "\n".join(texts[k[0]][:8]) for k in pool}
                rec["dates"] = {k: note_date(k[0], heads[k[0]]) for k in pool}
                records.append(rec)
        finally:
            mem.close()
    session.close()
    return records


def _best_five(stored: dict[str, list[tuple[int, int]]], evidence: dict) -> float:
    """The share of ``evidence`` the five chunks that hold the most of it (chosen greedily) hold."""
    holds = [{e for e, (p, ln) in evidence.items() if p == path and a <= ln <= b}
             for path, spans in stored.items() for a, b in spans]
    got: set = set()
    for _ in range(5):
        best = max(holds, key=lambda h: len(h - got), default=set())
        got |= best
    return len(got) / len(evidence)


def features(rec: dict, who_says: bool = False) -> tuple[list, np.ndarray, np.ndarray]:
    text = {k: s for k, _, s in rec["keyword"]}
    vec = {k: s for k, s, _ in rec["vector"]}
    keys = list(dict.fromkeys([*vec, *text]))
    text_floor = 0.0 if len(text) < POOL else min(text.values())
    zt = standardise({k: text.get(k, text_floor) for k in keys})
    zv = standardise({k: vec.get(k, min(vec.values())) for k in keys})
    zl = standardise({k: rec["line_cos"][k] for k in keys})
    wv = adaptive_vector_weight({i: v for i, v in enumerate(vec.values())})
    q = keyword_query(rec["q"])
    df = Counter(t for k in keys for t in rec["terms"][k])
    idf = {t: np.log(1 + len(keys) / (1 + df[t])) for t in q.terms}
    total = sum(idf.values()) or 1.0
    refs = query_dates(rec["q"])
    rank_t = {k: i for i, k in enumerate(text)}
    rank_v = {k: i for i, k in enumerate(vec)}
    rows = []
    for k in keys:
        level = max((r.level(rec["dates"][k]) for r in refs), default=0)
        rows.append([wv * zv[k], (1 - wv) * zt[k], wv * zl[k],
                     sum(w for t, w in idf.items() if t in rec["terms"][k]) / total,
                     DATE_BOOST.get(level, 0.0), float(k[1] == 1),
                     1 / (1 + rank_t.get(k, POOL)), 1 / (1 + rank_v.get(k, POOL))])
    if who_says:
        zp = standardise({k: rec["person_cos"][k] for k in keys})
        content = {t: w for t, w in idf.items() if t not in rec["names"]}
        ctotal = sum(content.values()) or 1.0
        for row, k in zip(rows, keys, strict=True):
            row += [wv * zp[k], sum(w for t, w in content.items() if t in rec["person_terms"][k]) / ctotal,
                    sum(w for t, w in content.items() if t in rec["terms"][k]) / ctotal]
    labels = [float(any(p == k[0] and k[1] <= ln <= k[2] for p, ln in rec["ev"].values())) for k in keys]
    return keys, np.array(rows), np.array(labels)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 400) -> tuple[np.ndarray, float]:
    mu, sd = x.mean(0), x.std(0) + 1e-9
    xn = (x - mu) / sd
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xn @ w + b)))
        w -= xn.T @ (p - y) / len(y) + l2 * w
        b -= float((p - y).mean())
    return w / sd, b - float((mu / sd) @ w)


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.environ.get("MNEMOCLAW_BENCH_DIR") or os.path.join(here, "..", "..", "shared", "bench"))
    ap.add_argument("--work-dir", default="bench-results/work/workspace")
    ap.add_argument("--out", default="bench-results/workspace-misses.json")
    ap.add_argument("--who-says", action="store_true", help="add the features of who says a line to the re-ranker")
    args = ap.parse_args()
    records = collect(os.path.abspath(args.bench), os.path.abspath(args.work_dir))
    multi = [r for r in records if r["cat"] == 1]
    out: dict = {"questions": len(records), "multi_hop_questions": len(multi),
                 "questions_naming_a_date": sum(1 for r in records if query_dates(r["q"]))}

    ranks: dict = {}
    for mode in ("hybrid", "keyword", "vector"):
        c: Counter = Counter()
        for r in multi:
            keys = [k for k, *_ in r[mode]]
            for p, ln in r["ev"].values():
                rank = next((i for i, k in enumerate(keys, 1) if k[0] == p and k[1] <= ln <= k[2]), None)
                c["1-5" if rank and rank <= 5 else "6-10" if rank and rank <= 10 else
                  "11-20" if rank and rank <= 20 else "21-50" if rank else ">50"] += 1
        ranks[mode] = dict(c)
    out["multi_hop_evidence_ranks"] = ranks

    slots: Counter = Counter()
    overlap: Counter = Counter()
    for r in multi:
        seen: set = set()
        keys = [k for k, *_ in r["hybrid"]]
        for k in keys[:5]:
            inside = {e for e, (p, ln) in r["ev"].items() if p == k[0] and k[1] <= ln <= k[2]}
            slots["new evidence" if inside - seen else "repeated evidence" if inside else "no evidence"] += 1
            seen |= inside
        words = set(keyword_query(r["q"]).terms) - r["names"]
        for e, (p, ln) in r["ev"].items():
            if e in seen:
                continue
            with open(p, encoding="utf-8") as fh:
                line = fh.read().split("\n")[ln - 1]
            overlap["shares a word" if words & set(analyze(line)) else "shares no word"] += 1
    out["multi_hop_top5_slots"] = dict(slots)
    out["missed_multi_hop_evidence"] = dict(overlap)

    convs = sorted({r["conv"] for r in records})
    out["multi_hop_recall@5_in_the_best_order"] = round(mean([r["order"] for r in multi]), 4)
    feats = [features(r, args.who_says) for r in records]
    learned: dict[int, float] = {}
    shipped: dict[int, float] = {}
    weights = []
    for fold in (0, 1):
        train = [i for i, r in enumerate(records) if convs.index(r["conv"]) % 2 != fold]
        test = [i for i, r in enumerate(records) if convs.index(r["conv"]) % 2 == fold]
        w, b = fit(np.concatenate([feats[i][1] for i in train]), np.concatenate([feats[i][2] for i in train]))
        weights.append(dict(zip(FEATURES + WHO_SAYS, np.round(w, 3).tolist(), strict=False)))
        for i in test:
            keys, x, _ = feats[i]
            order = np.argsort(-(x @ w + b), kind="stable")
            learned[i] = _recall5([keys[j] for j in order], records[i]["ev"])
            shipped[i] = _recall5([k for k, *_ in records[i]["hybrid"]], records[i]["ev"])
    multi_ids = [i for i, r in enumerate(records) if r["cat"] == 1]
    out["ceiling"] = {
        "shipped_recall@5": round(mean(list(shipped.values())), 4),
        "learned_recall@5": round(mean(list(learned.values())), 4),
        "shipped_multi_hop_recall@5": round(mean([shipped[i] for i in multi_ids]), 4),
        "learned_multi_hop_recall@5": round(mean([learned[i] for i in multi_ids]), 4),
        "weights_per_fold": weights,
    }

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=2)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
