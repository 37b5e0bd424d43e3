"""Rules on top of recall's gate, tried on the records of one `benchmarks/recall.py` run.

    python benchmarks/recall_rules.py [--records bench-results/recall.records.jsonl]

Each record is one replayed LoCoMo message with every entry the search returned for it (its
score, the gate's features, its text, and whether its lines hold a question's evidence). Each
rule below decides, for a message whose entries passed the gate alone at minScore 0.9 (the rule
before corroboration), whether anything is injected at all; then what ships (a daily log's entry
comes only when two entries stand out, by 1.5 spreads: mnemoclaw.tools.recall.standing_out) and the
grid it was chosen from, on the fit half; the figures are the same as recall.py's (fit: the first half of the
conversations, held-out: the other half), so docs/recall.md's table comes from here. Last, a
logistic model of what is known of each passing entry (its score and gate features, its length
and the message's, a question, a number, a name, its rank, how many passed) is fitted on the fit
half: how well it tells entries that carry evidence from the rest (AUC) on each half, and the
share that carry evidence among the entries it ranks best.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mnemoclaw.config import RECALL_MIN_SCORE
from mnemoclaw.search.bm25 import idf
from mnemoclaw.tools.recall import MIN_SHARE_KEYWORD_ONLY, RARE_OF_MAX, Specific

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recall import CARRY_TARGET, QUIET_TARGET  # noqa: E402
from recall import shipped as injected  # noqa: E402

SPEAKER = re.compile(r"- \*\*[^*]+\*\* \(D\d+:\d+\): ")  # "- **Caroline** (D3:5): " before each turn
MAX_ENTRIES = 3
Rule = Callable[[dict, list[dict]], bool]


def body(text: str) -> str:
    return SPEAKER.sub("", text)


def alone(e: dict) -> bool:
    """One entry standing out on its own (the rule before corroboration, and still the one for
    curated memory): the score, and the gate (mnemoclaw.tools.recall.Specific)."""
    return e["score"] >= RECALL_MIN_SCORE and Specific(e["excess"], e["rarest"], e["share"], e["chunks"]).passes()


def stricter(e: dict) -> bool:
    """``alone`` with the entry standing out by 2.5 spreads instead of 2."""
    return alone(e) and (e["excess"] is None or e["excess"] >= 2.5)


def gate(excess: float, rarest: float, share: float) -> Callable[[dict], bool]:
    """The gate with other constants (mnemoclaw.tools.recall.Specific.passes's)."""
    def passes(e: dict) -> bool:
        if e["score"] < RECALL_MIN_SCORE or e["rarest"] < min(rarest, RARE_OF_MAX * idf(max(1, e["chunks"]), 1)):
            return False
        if e["excess"] is None:
            return e["share"] >= MIN_SHARE_KEYWORD_ONLY
        return e["excess"] >= excess and e["share"] >= share
    return passes


def measure_shipped(records: list[dict]) -> tuple[float, float, int]:
    """``measure`` for what ships: recall.py's ``shipped`` (mnemoclaw.tools.recall.standing_out)."""
    quiet = [r for r in records if not r["needs"]]
    got = [injected(r["entries"], RECALL_MIN_SCORE) for r in records]
    events = [g for g in got if g]
    kept_quiet = sum(1 for r, g in zip(records, got, strict=True) if not r["needs"] and not g)
    return kept_quiet / max(1, len(quiet)), sum(any(e["lenient"] for e in g) for g in events) / max(1, len(events)), \
        len(events)


def names(text: str, speakers: set[str]) -> set[str]:
    """Capitalised words past a sentence's first, the conversation's speakers left out."""
    return set(re.findall(r"(?<![.!?]\s)(?<=\s)[A-Z][a-z]{2,}", " " + body(text))) - speakers


def measure(records: list[dict], passes: Callable[[dict], bool], rule: Rule) -> tuple[float, float, int]:
    """(messages that need nothing given nothing, injections carrying evidence, injected messages)."""
    quiet = [r for r in records if not r["needs"]]
    injected = carried = kept_quiet = 0
    for r in records:
        got = [e for e in r["entries"] if passes(e)][:MAX_ENTRIES]
        if got and rule(r, got):
            injected += 1
            carried += any(e["lenient"] for e in got)
        elif not r["needs"]:
            kept_quiet += 1
    return kept_quiet / max(1, len(quiet)), carried / max(1, injected), injected


def entry_features(r: dict, e: dict, rank: int, passed: int) -> list[float]:
    text, said = body(e["text"]), r["message"].split(": ", 1)[-1]
    return [e["score"], e["excess"] or 0.0, e["rarest"], e["share"], len(text) / 300, len(said) / 200,
            float("?" in said), float(bool(re.search(r"\d", text))), float(passed), float(rank),
            float(bool(re.search(r"(?<=[a-z,] )[A-Z][a-z]+", text)))]


def auc(y: np.ndarray, s: np.ndarray) -> float:
    """The chance that an entry carrying evidence ranks above one that does not."""
    ranks = np.empty(len(s))
    ranks[np.argsort(s)] = np.arange(1, len(s) + 1)
    pos = y.sum()
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * (len(y) - pos)))


def learned(fit: list[dict], held: list[dict]) -> None:
    def rows(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = [], []
        for r in records:
            got = [e for e in r["entries"] if alone(e)][:MAX_ENTRIES]
            for i, e in enumerate(got):
                xs.append(entry_features(r, e, i, len(got)))
                ys.append(float(e["lenient"]))
        return np.array(xs), np.array(ys)

    (xf, yf), (xh, yh) = rows(fit), rows(held)
    mean, sd = xf.mean(0), xf.std(0) + 1e-9

    def design(x: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(x), 1)), (x - mean) / sd])

    zf, w = design(xf), np.zeros(xf.shape[1] + 1)
    for _ in range(50):  # Newton's method, a little L2
        p = 1 / (1 + np.exp(-zf @ w))
        w -= np.linalg.solve((zf.T * (p * (1 - p))) @ zf + 1e-3 * np.eye(len(w)), zf.T @ (p - yf) + 1e-3 * w)
    pf, ph = 1 / (1 + np.exp(-zf @ w)), 1 / (1 + np.exp(-design(xh) @ w))
    print(f"\na logistic model of the passing entries, fitted on the fit half: AUC {auc(yf, pf):.3f} / "
          f"{auc(yh, ph):.3f}; entries carrying evidence {yf.mean():.3f} / {yh.mean():.3f} of all")
    for best in (0.5, 0.3, 0.2):
        cut = np.quantile(pf, 1 - best)
        print(f"  its best {best:.0%} on the fit half (p >= {cut:.2f}): carrying {yf[pf >= cut].mean():.3f} / "
              f"{yh[ph >= cut].mean():.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", default="bench-results/recall.records.jsonl")
    args = ap.parse_args()
    records = [json.loads(line) for line in Path(args.records).read_text("utf-8").splitlines()]
    if not records or "text" not in (next((e for r in records for e in r["entries"]), {}) or {}):
        raise SystemExit(f"{args.records} holds no entry texts: run benchmarks/recall.py first")
    convs = sorted({r["conv"] for r in records})
    fit_names = set(convs[: len(convs) // 2 or 1])
    fit = [r for r in records if r["conv"] in fit_names]
    held = [r for r in records if r["conv"] not in fit_names]
    speakers = {r["message"].split(":")[0].strip() for r in records}
    every = [e for r in records for e in r["entries"]]
    print(f"of {len(every)} candidate entries, {sum(e['lenient'] for e in every) / len(every):.2f} hold some "
          "question's evidence")

    def question(r: dict, got: list[dict]) -> bool:
        return "?" in r["message"]

    def number(r: dict, got: list[dict]) -> bool:
        return any(re.search(r"\d", body(e["text"])) for e in got)

    def two(r: dict, got: list[dict]) -> bool:
        return len(got) >= 2

    def shares_name(r: dict, got: list[dict]) -> bool:
        said = names(r["message"].split(": ", 1)[-1], speakers)
        return any(said & names(e["text"], speakers) for e in got)

    rows: list[tuple[str, Callable[[dict], bool], Rule]] = [
        ("none: one entry standing out comes (before)", alone, lambda r, g: True),
        ("a stricter gate (excess 2.5 spreads)", stricter, lambda r, g: True),
        ("only when two or more entries pass", alone, two),
        ("only when the message is a question", alone, question),
        ("a question, a number in the entry, or two entries", alone,
         lambda r, g: question(r, g) or number(r, g) or two(r, g)),
        ("the message and the entry share a name", alone, shares_name),
    ]
    print("| rule on top of the gate | quiet when nothing is needed | injections carrying evidence | injected turns |")
    print("|---|---|---|---|")
    for label, passes, rule in rows:
        a, b = measure(fit, passes, rule), measure(held, passes, rule)
        print(f"| {label} | {a[0]:.3f} / {b[0]:.3f} | {a[1]:.3f} / {b[1]:.3f} | {a[2]} / {b[2]} |")
    a, b = measure_shipped(fit), measure_shipped(held)
    print(f"| shipped: corroborated (mnemoclaw.tools.recall.standing_out) | {a[0]:.3f} / {b[0]:.3f} | "
          f"{a[1]:.3f} / {b[1]:.3f} | {a[2]} / {b[2]} |")
    corroboration(fit, held)
    learned(fit, held)


def corroboration(fit: list[dict], held: list[dict]) -> None:
    """The gate's constants and how many entries must pass, chosen on the fit half: of the settings
    meeting both targets there, the one that injects most often."""
    grid = []
    for excess, rarest, share, k in itertools.product((1.0, 1.5, 2.0, 2.5), (1.5, 2.0, 2.5, 3.0),
                                                       (0.1, 0.2, 0.3, 0.4), (1, 2)):
        got = measure(fit, gate(excess, rarest, share), lambda r, g, k=k: len(g) >= k)
        if got[0] >= QUIET_TARGET and got[1] >= CARRY_TARGET:
            grid.append(((excess, rarest, share, k), got))
    grid.sort(key=lambda row: -row[1][2])
    print(f"\n{len(grid)} of 128 settings (excess, rarest, share, entries that must pass) meet both targets on the "
          "fit half; the six that inject most often, fit / held-out:")
    for (excess, rarest, share, k), a in grid[:6]:
        b = measure(held, gate(excess, rarest, share), lambda r, g, k=k: len(g) >= k)
        print(f"  excess {excess:g}, IDF {rarest:g}, share {share:g}, {k} entries: quiet {a[0]:.3f} / {b[0]:.3f}, "
              f"carrying {a[1]:.3f} / {b[1]:.3f}, injected turns {a[2]} / {b[2]}")


if __name__ == "__main__":
    main()
