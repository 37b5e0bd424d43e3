"""Recall before the reply, replayed on LoCoMo: what comes unasked, and whether it should.

    python benchmarks/recall.py [--bench ../shared/bench] [--out bench-results/recall.json]
                                [--convs conv-26,conv-30] [--thresholds 0.5,0.6,...]

Each conversation is replayed in order. Memory holds the sessions before the current one (each
``memory/session_NN.md``, the daily-log layout; recall is asked with ``sources: ["curated",
"daily"]`` since the sessions are daily logs). Every turn of the current session is a message:
``mnemoclaw.tools.recall`` runs on it, with the turn before as its last turn, and what it would inject
is recorded with its scores and what recall's gate reads (``mnemoclaw.tools.recall.specific``); each
threshold is then applied to the record with the gate, as recall applies them, three entries at most.

What a turn needs, from LoCoMo's questions and their evidence turns (``D3:5``):

- a turn **needs memory** when it is evidence for a question whose other evidence lies in an
  earlier session: memory holds the other half of a fact someone will ask about;
- every other turn **needs nothing** (greetings, small talk, the first mention of a thing).

An injection (a turn where anything is injected) **carries what a later question needs** when an
injected entry's lines hold an evidence turn of a question the message is evidence for too
(strict: the message and the memory are two halves of one asked fact). The lenient figure counts
an injected evidence turn of any question about the conversation.

The gate's constants were chosen on the first half of the conversations (``fit``: the highest
lenient precision at which turns that need nothing get nothing at least 90 % of the time), and so
is the threshold here (the lowest that keeps 90 % of those turns quiet); both are reported on the
other half (``held-out``). Both error kinds are reported: injected when nothing was needed, and silent when
memory was needed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from mnemoclaw.api import Memory, resolve_provider
from mnemoclaw.config import RECALL_MIN_SCORE, load_settings
from mnemoclaw.tools.recall import Specific, recall, specific, standing_out

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench  # noqa: E402

_TURN = re.compile(r"^- \*\*(?P<who>[^*]+)\*\* \((?P<id>D\d+:\d+)\): (?P<text>.*)$")
_ID = re.compile(r"\(D(\d+):(\d+)\)")
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99)
QUIET_TARGET = 0.90
CARRY_TARGET = 0.80


def session_of(dia: str) -> int:
    return int(dia[1:].split(":")[0])


def turns(path: Path) -> list[tuple[str, str]]:
    out = []
    for line in path.read_text("utf-8").splitlines():
        m = _TURN.match(line)
        if m:
            out.append((m.group("id"), f"{m.group('who')}: {m.group('text')}"))
    return out


def questions(bench: Path) -> dict[str, list[set[str]]]:
    by_conv: dict[str, list[set[str]]] = {}
    with open(bench / "locomo" / "turns" / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            meta = q["metadata"]
            ev = {e.strip() for e in meta.get("evidence") or [] if re.fullmatch(r"D\d+:\d+", e.strip())}
            if ev:
                by_conv.setdefault(meta["conv"], []).append(ev)
    return by_conv


def replay(conv_dir: Path, qs: list[set[str]], root: Path, provider) -> list[dict]:
    """One record per turn: what it needs and what recall would inject (scores, evidence ids)."""
    ws, state = root / conv_dir.name / "workspace", root / conv_dir.name / "state"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    settings = load_settings(workspace=ws, state_dir=state, config={}, env={})
    records = []
    options = {"minScore": 0.0, "maxEntries": 10, "maxChars": 100000, "sources": ["curated", "daily"]}
    with Memory(settings, provider=provider) as mem:
        for path in sorted(conv_dir.glob("session_*.md")):
            session = int(path.stem.split("_")[1])
            previous = None
            for dia, text in turns(path):
                mine = [q for q in qs if dia in q]
                needs = any(session_of(e) < session for q in mine for e in q)
                if session == 1:  # memory is empty: nothing to measure
                    previous = text
                    continue
                got = recall(mem.tools.services, text, last_turn=previous, options=options, gate=None)
                entries = []
                live = [q for q in qs if any(session_of(x) == session for x in q)]
                chunks = int(mem.backend.store.counts()["chunks"])
                for e in got.entries:
                    ids = {f"D{a}:{b}" for a, b in _ID.findall(e.text)}
                    entries.append({"score": e.score, "strict": bool(ids & set().union(*mine)) if mine else False,
                                    "session": any(ids & q for q in live), "lenient": any(ids & q for q in qs),
                                    "text": e.text, **features(e.hit, chunks)})
                records.append({"conv": conv_dir.name, "turn": dia, "needs": needs, "message": text,
                                "entries": entries})
                previous = text
            (ws / "memory" / path.name).write_text(path.read_text("utf-8"), "utf-8")
            mem.sync()
    return records


def features(hit, chunks: int) -> dict:
    """What recall's gate reads of an entry (mnemoclaw.tools.recall.specific)."""
    f = specific(hit, chunks)
    return {"excess": f.excess, "rarest": f.rarest, "share": f.share, "chunks": chunks}


def shipped(entries: list[dict], threshold: float) -> list[dict]:
    """What the shipped rule injects at ``threshold``: the entries scoring it that the gate lets
    come (mnemoclaw.tools.recall.standing_out; every entry here is a daily log), three at most."""
    scored = [e for e in entries if e["score"] >= threshold]
    comes = standing_out([(Specific(e["excess"], e["rarest"], e["share"], e["chunks"]), True) for e in scored])
    return [e for e, ok in zip(scored, comes, strict=True) if ok][:3]  # maxEntries 3


def measure(records: list[dict], threshold: float) -> dict:
    quiet = [r for r in records if not r["needs"]]
    needed = [r for r in records if r["needs"]]
    injected = [shipped(r["entries"], threshold) for r in records]
    events = [(r, got) for r, got in zip(records, injected, strict=True) if got]
    got_of = {id(r): got for r, got in zip(records, injected, strict=True)}
    return {
        "threshold": threshold,
        "turns": len(records),
        "injectedTurns": len(events),
        "quietKeptQuiet": round(sum(1 for r in quiet if not got_of[id(r)]) / max(1, len(quiet)), 4),
        "carriesStrict": round(sum(1 for _, got in events if any(e["strict"] for e in got)) / max(1, len(events)), 4),
        "carriesSession": round(sum(1 for _, got in events if any(e["session"] for e in got)) / max(1, len(events)),
                                4),
        "carriesLenient": round(sum(1 for _, got in events if any(e["lenient"] for e in got)) / max(1, len(events)),
                                4),
        "neededAndInjected": round(sum(1 for r in needed if got_of[id(r)]) / max(1, len(needed)), 4),
        "neededAndCarried": round(sum(1 for r in needed if any(e["strict"] for e in got_of[id(r)]))
                                  / max(1, len(needed)), 4),
        "injectedWhenNothingNeeded": round(sum(1 for r in quiet if got_of[id(r)]) / max(1, len(quiet)), 4),
        "silentWhenNeeded": round(sum(1 for r in needed if not got_of[id(r)]) / max(1, len(needed)), 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--out", default="bench-results/recall.json")
    ap.add_argument("--convs", default="")
    ap.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    args = ap.parse_args()
    bench = Path(args.bench or default_bench())
    convs = sorted(p for p in (bench / "locomo" / "markdown").iterdir() if p.is_dir())
    if args.convs:
        convs = [p for p in convs if p.name in args.convs.split(",")]
    qs = questions(bench)
    started = time.monotonic()
    records: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="mnemoclaw-recall-") as tmp:
        provider = None
        for conv in convs:
            if provider is None:
                provider = resolve_provider(load_settings(workspace=tmp, state_dir=tmp, config={}, env={}))
            records += replay(conv, qs.get(conv.name, []), Path(tmp), provider)
            print(f"{conv.name}: {sum(1 for r in records if r['conv'] == conv.name)} turns "
                  f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    half = len(convs) // 2 or 1
    fit_names = {c.name for c in convs[:half]}
    fit = [r for r in records if r["conv"] in fit_names]
    held = [r for r in records if r["conv"] not in fit_names]
    thresholds = sorted({float(t) for t in args.thresholds.split(",")} | {RECALL_MIN_SCORE})
    table = {"fit": [measure(fit, t) for t in thresholds], "held-out": [measure(held, t) for t in thresholds]}
    chosen = next((row["threshold"] for row in table["fit"] if row["quietKeptQuiet"] >= QUIET_TARGET), None)
    out = {"fitConvs": sorted(fit_names), "heldOutConvs": sorted({r["conv"] for r in held}),
           "chosen": chosen, "seconds": round(time.monotonic() - started, 1),
           "atChosen": {k: next(row for row in v if row["threshold"] == chosen) for k, v in table.items()}
           if chosen is not None else None,
           "default": RECALL_MIN_SCORE,
           "atDefault": {k: next(row for row in v if row["threshold"] == RECALL_MIN_SCORE) for k, v in table.items()},
           "table": table}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", "utf-8")
    with open(Path(args.out).with_suffix(".records.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    print(json.dumps(out["atDefault"], indent=1))


if __name__ == "__main__":
    main()
