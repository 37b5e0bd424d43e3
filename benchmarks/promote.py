"""Promotion over time: does MEMORY.md come to hold what later questions need?

    python benchmarks/promote.py [--bench DIR] [--conversations conv-26,conv-30] [--seed 7]
                                 [--min-score 0.8] [--min-recall-count 3] [--min-unique-queries 3]
                                 [--work-dir bench-results/work/promote] [--out bench-results/promote.json]
    python benchmarks/promote.py --set junk      # the hand-written set: junk, secrets, keyed changes, Chinese
    python benchmarks/promote.py --set beam [--use recall|search] [--conversations 1,2]
    python benchmarks/promote.py --set cost      # what recording recall events adds to a search

A replay. Each LoCoMo conversation (``locomo/markdown/conv-*``) arrives session by session as
the daily log of the session's date (``memory/YYYY-MM-DD.md``, its turns as the markdown writes
them: ``- **Speaker** (D1:3): ...``); MEMORY.md starts empty. Its questions (categories 1-4, those
with evidence turns) are split, seeded, into *use* (half) and *later* (the other half, disjoint).
A use question is asked through the agent tool (``memory_search``, which records recall events)
on the day its last evidence turn arrives and once more on a later day (seeded), as an agent
needing it again would; after each day ``mnemoclaw promote`` runs (plan, then apply) with the
clock at that day. Nothing about the later questions is seen by the replay.

Then, over the later questions: the share whose evidence (any / all of its turns, by their ids)
MEMORY.md now holds, i.e. what the agent has without searching (also over those whose need
recurs: evidence a use question needed too); of the promoted lines, the share
holding some later question's evidence (precision) and the share the guard rails' own rules
(``promote/entries.junk``, run again on each line) call junk; MEMORY.md's characters over the days
against its bootstrap budget. Beside it: no promotion (nothing in MEMORY.md), and the naive rule
"promote the most retrieved" (the entries recalled most often, no gates and no guard rails),
taken at the same number of lines. Both kinds of error: a needed entry not promoted (evidence of a
later question that use recalled, left out), a useless one promoted (a line no later question
needs).

``--set beam`` replays BEAM's conversations between a user and an assistant (the 100K scale only,
read as ``benchmarks/beam.py`` reads them; ``--beam``): each batch of a conversation is the daily
log of its date, and each user message of a batch is first sent the way the agent runtime sends it
before its reply, over the days before (``--use recall``: recall before the reply, daily logs among
its sources, its shipped gate; ``--use search``: the agent's ``memory_search`` with the message),
both of which record recall events; promote runs each night. The later questions are BEAM's own
(every category but abstention, evidence by ``beam.evidence_for``), asked of none of it: a promoted
line holds a question's evidence when the message it came from (its ``from:`` line) is cited.

``--set junk`` replays ``benchmarks/promote_junk/`` the same way: daily logs of one person's work
in English and Chinese where junk (commands, tool output, code, scores, small talk), secrets and
keyed values that change sit beside facts, with questions that recall each kind. It reports every
junk line, secret or older keyed value MEMORY.md ends with (target: none) and whether the Chinese
entries are promoted as written.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
from mnemoclaw.config.dreaming import Dreaming
from mnemoclaw.promote import run as promote
from mnemoclaw.promote.entries import body, entry_at, junk
from mnemoclaw.promote.select import signals, weighted
from mnemoclaw.text.secrets import redactions

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench  # noqa: E402

HERE = Path(__file__).resolve().parent
JUNK_SET = HERE / "promote_junk"
_DATE = re.compile(r"^Date:\s*(.+)$", re.M)
_ID = re.compile(r"\(D(\d+):(\d+)\)")


def session_date(text: str) -> datetime:
    raw = _DATE.search(text).group(1).strip()  # "1:56 pm on 8 May, 2023"
    return datetime.strptime(raw, "%I:%M %p on %d %B, %Y")


def sessions(conv_dir: Path) -> list[tuple[datetime, int, str]]:
    out = []
    for path in conv_dir.glob("session_*.md"):
        text = path.read_text("utf-8")
        out.append((session_date(text), int(path.stem.split("_")[1]), text))
    return sorted(out)


def questions(bench: Path, conv: str) -> list[dict]:
    data = json.loads((bench / "locomo" / "locomo10.json").read_text("utf-8"))
    for c in data:
        if c["sample_id"] == conv:
            out = []
            for q in c["qa"]:
                ev = {e.strip() for e in q.get("evidence") or [] if re.fullmatch(r"D\d+:\d+", e.strip())}
                if ev and q.get("category") in (1, 2, 3, 4):
                    out.append({"question": q["question"], "evidence": ev, "category": q["category"]})
            return out
    raise SystemExit(f"no conversation {conv} in locomo10.json")


def ids_in(text: str) -> set[str]:
    return {f"D{a}:{b}" for a, b in _ID.findall(text)}


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


SWEEP_SCORES = (0.5, 0.6, 0.7, 0.8, 0.9)
SWEEP_COUNTS = (2, 3, 4)
SWEEP_QUERIES = (2, 3, 4)


def nightly(mem: Memory, opts: Dreaming, ws: Path, at: float):
    """The nightly run at ``at``: plan, apply what it promotes; the plan and MEMORY.md's size after."""
    plan = promote.plan(mem, opts, now=at)
    if not plan.empty:
        promote.apply(mem, plan)
    return plan, len((ws / "MEMORY.md").read_text("utf-8"))


def replay(conv_dir: Path, qs: list[dict], root: Path, opts: Dreaming, seed: int, provider,
           sweep: bool = False) -> dict:
    rng = random.Random(f"{seed}:{conv_dir.name}")
    order = list(range(len(qs)))
    rng.shuffle(order)
    use = {i for n, i in enumerate(order) if n % 2 == 0}
    days = sessions(conv_dir)
    session_day = {num: k for k, (_, num, _) in enumerate(days)}
    asks: dict[int, list[int]] = {}  # day index -> use questions asked that day
    for i in use:
        ready = max(session_day[int(e[1:].split(":")[0])] for e in qs[i]["evidence"] if
                    int(e[1:].split(":")[0]) in session_day)
        asks.setdefault(ready, []).append(i)
        if ready + 1 < len(days):
            asks.setdefault(rng.randrange(ready + 1, len(days)), []).append(i)
    ws, state = root / conv_dir.name / "workspace", root / conv_dir.name / "state"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n", "utf-8")
    clock = Clock(days[0][0].timestamp())
    settings = load_settings(workspace=ws, state_dir=state, config={}, env={})
    sizes, searches = [], 0
    t0 = time.time()
    with Memory(settings, provider=provider, clock=clock, background=False) as mem:
        for k, (when, _num, text) in enumerate(days):
            clock.t = when.timestamp()
            path = ws / "memory" / f"{when.date().isoformat()}.md"
            old = path.read_text("utf-8") + "\n" if path.exists() else ""
            path.write_text(old + text, "utf-8")
            mem.sync()
            for i in asks.get(k, []):
                clock.t += 60
                mem.tools.memory_search(qs[i]["question"])
                searches += 1
            clock.t = when.timestamp() + 23 * 3600  # the nightly run
            plan, size = nightly(mem, opts, ws, clock.t)
            sizes.append(size)
        entries = mem.recall_events.entries(mem.settings.agent_id)
        budget = plan.budget
        memory_md = (ws / "MEMORY.md").read_text("utf-8")
        grid = {}
        if sweep:  # every gate over the final recall events, from an empty MEMORY.md, nothing written
            (ws / "MEMORY.md").write_text("# Memory\n", "utf-8")
            for ms in SWEEP_SCORES:
                for rc in SWEEP_COUNTS:
                    for uq in SWEEP_QUERIES:
                        g = Dreaming(min_score=ms, min_recall_count=rc, min_unique_queries=uq, limit=1000)
                        p = promote.plan(mem, g, now=clock.t)
                        grid[f"{ms}/{rc}/{uq}"] = [c.line for c in p.promoted]
            (ws / "MEMORY.md").write_text(memory_md, "utf-8")
    promoted = [line for line in memory_md.split("\n") if "origin: promoted" in line]
    later = [qs[i] for i in range(len(qs)) if i not in use]
    naive = naive_lines(ws, entries, len(promoted))
    needed = set().union(*(q["evidence"] for q in later)) if later else set()
    rankings = ranked_precision(ws, entries, needed, clock.t)
    return {"rankings": rankings, "oracle": oracle([qs[i]["evidence"] for i in use], needed),"conv": conv_dir.name, "days": len(days), "use": len(use), "later": len(later), "searches": searches,
            "promoted": promoted, "naive": naive, "sizes": sizes, "budget": budget, "seconds": time.time() - t0,
            "later_evidence": [sorted(q["evidence"]) for q in later],
            "use_evidence": [sorted(qs[i]["evidence"]) for i in use],
            "grid": grid, "recalled_ids": sorted(set().union(*(ids_in(entry_text(ws, e)) for e in entries)) if entries else set())}


# ways of ranking the final recall events, each scored by the share of its first K entries (junk
# left out) that hold a later question's evidence: does any signal beat the weighted score?
RANKINGS = {
    "weighted score": lambda e, sig: weighted(sig),
    "recalls": lambda e, sig: (e.recalls, e.mean_score),
    "distinct questions": lambda e, sig: (len(e.queries), e.mean_score),
    "mean score": lambda e, sig: e.mean_score,
    "score sum": lambda e, sig: e.recalls * e.mean_score,
    "days": lambda e, sig: (len(e.days), len(e.queries)),
}
TOP = (5, 10, 20, 40)


def ranked_precision(ws: Path, entries, needed: set[str], now: float) -> dict:
    rows = []
    for e in entries:
        text = entry_text(ws, e)
        if text and not junk(text):
            rows.append((e, signals(e, text, now), bool(ids_in(text) & needed)))
    return {name: {k: [sum(y for _, _, y in sorted(rows, key=lambda r: key(r[0], r[1]), reverse=True)[:k]),
                       min(k, len(rows))] for k in TOP} for name, key in RANKINGS.items()}


def oracle(use_evidence: list[set[str]], needed: set[str]) -> dict:
    """The bound: of the turns use questions needed (once, or three times and more), the share
    a later question needs too."""
    counts: dict[str, int] = {}
    for ev in use_evidence:
        for t in ev:
            counts[t] = counts.get(t, 0) + 1
    out = {}
    for least in (1, 3):
        turns = {t for t, n in counts.items() if n >= least}
        out[f"needed {least}+"] = [len(turns & needed), len(turns)]
    return out


def entry_text(ws: Path, e) -> str:
    try:
        lines = (ws / e.path).read_text("utf-8").split("\n")
        a, b = entry_at(lines, e.start_line - 1)
        return "\n".join(lines[a:b])
    except (OSError, IndexError):
        return ""


def naive_lines(ws: Path, entries, n: int) -> list[str]:
    """The rule OpenClaw's users complain about: the n entries recalled most often, as they are."""
    ranked = sorted(entries, key=lambda e: (-e.recalls, -e.last_at))
    return [body(t) for t in (entry_text(ws, e) for e in ranked[:n]) if t]


def score(lines: list[str], later: list[list], ids: list[list] | None = None) -> dict:
    """Promoted (or naive) lines against the later questions' evidence: each line's evidence ids
    are ``ids`` (BEAM: the messages its sources cite), else the turn ids its text holds (LoCoMo)."""
    ids = ids if ids is not None else [sorted(ids_in(x)) for x in lines]
    held = set().union(*(set(x) for x in ids)) if ids else set()
    needed = set().union(*(set(ev) for ev in later)) if later else set()
    useful = sum(bool(set(x) & needed) for x in ids)
    bad = [x for x in lines if junk(_as_entry(x)) or redactions(x)]
    return {"lines": len(lines), "any": sum(bool(set(ev) & held) for ev in later) / max(1, len(later)),
            "all": sum(set(ev) <= held for ev in later) / max(1, len(later)),
            "precision": useful / len(lines) if lines else None, "junk": len(bad),
            "useless": len(lines) - useful, "chars": sum(len(x) + 1 for x in lines)}


def _as_entry(line: str) -> str:
    """A MEMORY.md line as its entry was written (the junk rules read a list item)."""
    return "- " + re.sub(r"\s*<!--.*?-->\s*$", "", line.lstrip("- ").strip())


def locomo(args, provider) -> dict:
    bench = Path(args.bench)
    convs = args.conversations.split(",") if args.conversations else sorted(
        p.name for p in (bench / "locomo" / "markdown").iterdir() if p.is_dir())
    opts = Dreaming(min_score=args.min_score, min_recall_count=args.min_recall_count,
                    min_unique_queries=args.min_unique_queries, limit=args.limit)
    root = Path(args.work_dir or tempfile.mkdtemp(prefix="mc-promote-"))
    runs = []
    for n, conv in enumerate(convs, 1):
        print(f"[{n}/{len(convs)}] {conv}", flush=True)
        r = replay(bench / "locomo" / "markdown" / conv, questions(bench, conv), root, opts, args.seed, provider,
                   sweep=args.sweep)
        r["grid_scores"] = {k: score(v, r["later_evidence"]) for k, v in r.pop("grid").items()}
        r["promote"] = score(r["promoted"], r["later_evidence"])
        r["naive_score"] = score(r["naive"], r["later_evidence"])
        # the later questions whose need recurs: their evidence was a use question's too
        used = set().union(*(set(ev) for ev in r["use_evidence"]))
        again = [ev for ev in r["later_evidence"] if set(ev) & used]
        r["recurring"] = {"questions": len(again), "promote": score(r["promoted"], again)["any"],
                          "naive": score(r["naive"], again)["any"]}
        needed = set().union(*(set(ev) for ev in r["later_evidence"]))
        r["missed"] = len((needed & set(r["recalled_ids"])) - set().union(set(), *(ids_in(x) for x in r["promoted"])))
        print(f"    {r['days']} days, {r['searches']} searches, {outcome(r, 'later questions')}", flush=True)
        runs.append(r)
    return {"set": "locomo", "options": vars(args), "runs": runs, "summary": summary(runs)}


def outcome(r: dict, asked: str) -> str:
    """One replay's promoted lines beside the naive rule's, as each conversation's progress line
    prints them: evidence of the ``asked`` questions in MEMORY.md, precision, junk, size."""
    p, v = r["promote"], r["naive_score"]

    def precision(x: dict) -> float | None:
        return None if x["precision"] is None else round(x["precision"], 3)

    return (f"{p['lines']} lines promoted: {asked} with evidence in MEMORY.md {p['any']:.3f} (naive {v['any']:.3f}), "
            f"precision {precision(p)} (naive {precision(v)}), junk {p['junk']} (naive {v['junk']}); "
            f"MEMORY.md max {max(r['sizes'], default=0)} of {r['budget']} chars ({r['seconds']:.0f} s)")


def pooled(runs: list[dict], key: str) -> dict:
    """One scoring (``key``) over every run: the questions' shares weighed by each run's questions."""
    later = sum(r["later"] for r in runs)
    lines = sum(r[key]["lines"] for r in runs)
    useful = sum(r[key]["lines"] - r[key]["useless"] for r in runs)
    return {"lines": lines, "any": sum(r[key]["any"] * r["later"] for r in runs) / max(1, later),
            "all": sum(r[key]["all"] * r["later"] for r in runs) / max(1, later),
            "precision": useful / lines if lines else None, "junk": sum(r[key]["junk"] for r in runs),
            "useless": lines - useful}


def summary(runs: list[dict]) -> dict:
    grid = {}
    for key in runs[0]["grid_scores"] if runs else ():
        later = sum(r["later"] for r in runs)
        lines = sum(r["grid_scores"][key]["lines"] for r in runs)
        useful = sum(r["grid_scores"][key]["lines"] - r["grid_scores"][key]["useless"] for r in runs)
        grid[key] = {"lines": lines, "precision": useful / lines if lines else None,
                     "any": sum(r["grid_scores"][key]["any"] * r["later"] for r in runs) / max(1, later)}
    def share(pairs: list[list[int]]) -> float | None:
        return round(sum(a for a, _ in pairs) / sum(b for _, b in pairs), 3) if sum(b for _, b in pairs) else None

    rankings = {name: {k: share([r["rankings"][name][k] for r in runs]) for k in TOP} for name in RANKINGS}
    bound = {key: share([r["oracle"][key] for r in runs]) for key in (runs[0]["oracle"] if runs else {})}
    again = sum(r["recurring"]["questions"] for r in runs)
    recurring = {"questions": again, **{k: sum(r["recurring"][k] * r["recurring"]["questions"] for r in runs)
                                        / max(1, again) for k in ("promote", "naive")}}
    return {"promote": pooled(runs, "promote"), "naive": pooled(runs, "naive_score"), "grid": grid, "recurring": recurring,
            "rankings_precision_at": rankings, "oracle_precision": bound,
            "missed_evidence_turns": sum(r["missed"] for r in runs),
            "max_chars": max(max(r["sizes"]) for r in runs), "budget": runs[0]["budget"] if runs else None}


def cost(provider) -> dict:
    """What recording recall events adds to a memory_search: 28 daily logs of 40 entries, 200
    questions, six rounds with and without recording, alternating (median ms of each round)."""
    import statistics

    rng = random.Random(1)
    words = ("billing postgres sqlite staging server invoice deploy window review budget roadmap hiring laptop vpn "
             "office coffee tea").split()
    root = Path(tempfile.mkdtemp(prefix="mc-promote-cost-"))
    ws = root / "workspace"
    (ws / "memory").mkdir(parents=True)
    for d in range(1, 29):
        lines = [f"# 2026-11-{d:02d}", ""] + [f"- {' '.join(rng.choices(words, k=8))} note {d}-{i}" for i in range(40)]
        (ws / "memory" / f"2026-11-{d:02d}.md").write_text("\n".join(lines) + "\n", "utf-8")
    qs = [" ".join(rng.sample(words, 3)) for _ in range(200)]
    with Memory(load_settings(workspace=ws, state_dir=root / "state", config={}, env={}), provider=provider,
                background=False) as mem:
        mem.sync()
        services = type(mem.tools.services)
        recording = services.recalled
        for q in qs[:20]:
            mem.tools.memory_search(q)

        def one_round() -> float:
            times = []
            for q in qs:
                t = time.perf_counter()
                mem.tools.memory_search(q)
                times.append((time.perf_counter() - t) * 1000)
            return statistics.median(times)

        on, off = [], []
        try:
            for _ in range(6):
                services.recalled = recording
                on.append(one_round())
                services.recalled = lambda self, *a, **k: None
                off.append(one_round())
        finally:
            services.recalled = recording
        counts = mem.recall_events.counts()
    out = {"with_ms": [round(x, 2) for x in on], "without_ms": [round(x, 2) for x in off],
           "median_with": round(statistics.median(on), 2), "median_without": round(statistics.median(off), 2),
           "store": counts}
    print(json.dumps(out))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--set", choices=("locomo", "junk", "cost", "beam"), default="locomo",
                    help="cost: what recording recall events adds to a search")
    ap.add_argument("--conversations", default=None, help="comma-separated (default: all of the set)")
    ap.add_argument("--beam", default=None, help="BEAM: a bare git mirror (read at HEAD) or a checkout")
    ap.add_argument("--use", choices=("recall", "search"), default="recall",
                    help="BEAM: how each user message is sent before its reply")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--min-score", type=float, default=Dreaming().min_score)
    ap.add_argument("--min-recall-count", type=int, default=Dreaming().min_recall_count)
    ap.add_argument("--min-unique-queries", type=int, default=Dreaming().min_unique_queries)
    ap.add_argument("--limit", type=int, default=Dreaming().limit)
    ap.add_argument("--entries-per-result", type=int, default=None, help="compare: promote/record.py's bound")
    ap.add_argument("--match-weight", type=float, default=None, help="compare: promote/record.py's MATCH_WEIGHT")
    ap.add_argument("--sweep", action="store_true",
                    help="also plan, over each conversation's final recall events, every gate of a grid (no writes)")
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.bench = args.bench or default_bench()
    from mnemoclaw.promote import record

    if args.entries_per_result is not None:
        record.ENTRIES_PER_RESULT = args.entries_per_result
    if args.match_weight is not None:
        record.MATCH_WEIGHT = args.match_weight
    from mnemoclaw.api import resolve_provider

    provider = resolve_provider(load_settings(env={}))
    if args.set == "cost":
        out = cost(provider)
    else:
        run_set = {"locomo": locomo, "junk": junk_set, "beam": beam_set}[args.set]
        out = run_set(args, provider)
        print(json.dumps(out["summary"], indent=1))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1, default=sorted), "utf-8")


_FROM = re.compile(r"from: ([^>]*?)(?:;| -->)")


def sources_of(line: str) -> list[tuple[str, int]]:
    """The (path, line) each source of a promoted MEMORY.md line cites (``from: a.md#L3, b.md#L5``)."""
    m = _FROM.search(line)
    out = []
    for ref in (m.group(1).split(",") if m else ()):
        path, _, at = ref.strip().partition("#L")
        if at.split("-")[0].isdigit():
            out.append((path, int(at.split("-")[0])))
    return out


def beam_replay(name: str, chat: list[dict], later: list[set[int]], root: Path, opts: Dreaming, provider,
                use: str) -> dict:
    import beam
    from mnemoclaw.tools.recall import recall

    dates = beam.batch_dates(chat)
    ws, state = root / name / "workspace", root / name / "state"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n", "utf-8")
    clock = Clock(datetime(dates[0].year, dates[0].month, dates[0].day, 9).timestamp())
    settings = load_settings(workspace=ws, state_dir=state, config={}, env={})
    options = {"sources": ["curated", "daily"]}
    sizes, uses, t0 = [], 0, time.time()
    spans: list = []
    with Memory(settings, provider=provider, clock=clock, background=False) as mem:
        for k, batch in enumerate(chat):
            day = dates[k]
            clock.t = max(clock.t, datetime(day.year, day.month, day.day, 9).timestamp())
            previous = None
            for m in beam.messages_of(batch):  # the days before this batch are memory
                text = beam.content_of(m)
                if k and m.get("role") == "user" and text.strip():
                    clock.t += 60
                    if use == "recall":
                        recall(mem.tools.services, text, last_turn=previous, options=options)
                    else:
                        mem.tools.memory_search(text[:2000])
                    uses += 1
                previous = text
            files, spans = beam.build_logs(chat[: k + 1])
            beam.write_workspace(str(root / name), files, spans)
            mem.sync()
            last = k + 1 == len(chat) or dates[k + 1] != day
            if last:  # the nightly run, once a day
                clock.t = datetime(day.year, day.month, day.day, 23).timestamp()
                plan, size = nightly(mem, opts, ws, clock.t)
                sizes.append(size)
        entries = mem.recall_events.entries(mem.settings.agent_id)
        budget = plan.budget
    memory_md = (ws / "MEMORY.md").read_text("utf-8")
    by_path: dict[str, list] = {}
    for sp in spans:
        by_path.setdefault(sp.path, []).append(sp)

    def message_at(path: str, line: int) -> set[int]:
        return beam.covered([(path, line, line)], by_path)

    promoted = [line for line in memory_md.split("\n") if "origin: promoted" in line]
    promoted_ids = [set().union(*(message_at(p, n) for p, n in sources_of(x))) if sources_of(x) else set()
                    for x in promoted]
    ranked = sorted(entries, key=lambda e: (-e.recalls, -e.last_at))[: len(promoted)]
    naive = [body(t) for t in (entry_text(ws, e) for e in ranked) if t]
    naive_ids = [message_at(e.path, e.start_line) for e in ranked if entry_text(ws, e)]
    recalled_ids = set().union(*(message_at(e.path, e.start_line) for e in entries)) if entries else set()
    return {"conv": name, "days": len(sizes), "uses": uses, "recall_entries": len(entries), "promoted": promoted,
            "promoted_ids": [sorted(x) for x in promoted_ids], "naive": naive, "naive_ids": [sorted(x) for x in naive_ids],
            "recalled_ids": sorted(recalled_ids), "later": len(later),
            "later_evidence": [sorted(q) for q in later], "sizes": sizes, "budget": budget,
            "seconds": round(time.time() - t0, 1)}


def beam_set(args, provider) -> dict:
    """BEAM's conversations as an agent lives them: which of what was recalled day by day
    reaches MEMORY.md, and whether BEAM's own questions need it."""
    import beam

    source = beam.Beam(args.beam or beam.DEFAULT_BEAM)
    names = args.conversations.split(",") if args.conversations else source.conversations()
    opts = Dreaming(min_score=args.min_score, min_recall_count=args.min_recall_count,
                    min_unique_queries=args.min_unique_queries, limit=args.limit)
    root = Path(args.work_dir or tempfile.mkdtemp(prefix="mc-promote-beam-"))
    runs = []
    for n, name in enumerate(names, 1):
        chat = source.chat(name)
        messages = [m for b in chat for m in beam.messages_of(b)]
        later = [set(ids) for cat, items in source.questions(name).items() if cat != beam.NO_EVIDENCE
                 for q in items if (ids := beam.evidence_for(q, cat, messages)[0])]
        r = beam_replay(name, chat, later, root, opts, provider, args.use)
        r["promote"] = score(r["promoted"], r["later_evidence"], r["promoted_ids"])
        r["naive_score"] = score(r["naive"], r["later_evidence"], r["naive_ids"])
        needed = set().union(*(set(q) for q in r["later_evidence"]))
        r["base_rate"] = [len(needed & set(r["recalled_ids"])), len(r["recalled_ids"])]
        r["missed"] = len((needed & set(r["recalled_ids"])) - set().union(set(), *(set(x) for x in r["promoted_ids"])))
        print(f"[{n}/{len(names)}] BEAM {name}: {r['days']} days, {r['uses']} messages sent, {r['recall_entries']} "
              f"entries recalled, {outcome(r, 'questions')}", flush=True)
        runs.append(r)

    base = [sum(r["base_rate"][i] for r in runs) for i in (0, 1)]
    summary = {"use": args.use, "questions": sum(r["later"] for r in runs), "promote": pooled(runs, "promote"),
               "naive": pooled(runs, "naive_score"), "recalled_messages_needed": base,
               "base_rate": round(base[0] / base[1], 3) if base[1] else None,
               "missed_evidence_messages": sum(r["missed"] for r in runs),
               "max_chars": max(max(r["sizes"], default=0) for r in runs), "budget": runs[0]["budget"] if runs else None}
    return {"set": "beam", "options": vars(args), "runs": runs, "summary": summary}


def junk_set(args, provider) -> dict:
    """The hand-written set: which junk, secrets and older keyed values reach MEMORY.md (none may)."""
    root = Path(args.work_dir or tempfile.mkdtemp(prefix="mc-promote-junk-"))
    ws, state = root / "workspace", root / "state"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n", "utf-8")
    asked = json.loads((JUNK_SET / "questions.json").read_text("utf-8"))["use"]
    logs = sorted((JUNK_SET / "memory").glob("*.md"))
    opts = Dreaming(min_score=args.min_score, min_recall_count=args.min_recall_count,
                    min_unique_queries=args.min_unique_queries, limit=args.limit)
    clock = Clock(datetime.fromisoformat(logs[0].stem).timestamp())
    with Memory(load_settings(workspace=ws, state_dir=state, config={}, env={}), provider=provider, clock=clock,
                background=False) as mem:
        for log_path in logs:
            day = log_path.stem
            clock.t = datetime.fromisoformat(day).timestamp() + 9 * 3600
            (ws / "memory" / log_path.name).write_text(log_path.read_text("utf-8"), "utf-8")
            mem.sync()
            for when, q in asked:
                if when == day:
                    clock.t += 60
                    mem.tools.memory_search(q)
            clock.t = datetime.fromisoformat(day).timestamp() + 23 * 3600
            nightly(mem, opts, ws, clock.t)
        entries = mem.recall_events.entries(mem.settings.agent_id)
    memory_md = (ws / "MEMORY.md").read_text("utf-8")
    promoted = [line for line in memory_md.split("\n") if "origin: promoted" in line]
    naive = naive_lines(ws, entries, max(len(promoted), 10))
    older = ("db-billing-1.internal", "db-billing-2.internal")

    never = json.loads((JUNK_SET / "questions.json").read_text("utf-8"))["never"]

    def judged(lines: list[str]) -> dict:
        # by the hand-written labels, and by the guard rails' rules run again
        bad = [x for x in lines if any(n in x for n in never) or junk(_as_entry(x)) or redactions(x)]
        return {"lines": len(lines), "junk": bad, "older_values": [x for x in lines if any(o in x for o in older)],
                "chinese": [x for x in lines if re.search(r"[\u4e00-\u9fff]", x)]}

    out = {"set": "junk", "options": vars(args), "promoted": promoted, "naive": naive,
           "summary": {"promote": judged(promoted), "naive": judged(naive), "recalled_entries": len(entries)}}
    for name in ("promote", "naive"):
        j = out["summary"][name]
        print(f"{name}: {j['lines']} lines, junk or secrets {len(j['junk'])}, older keyed values "
              f"{len(j['older_values'])}, Chinese lines {len(j['chinese'])}")
        for x in j["junk"] + j["older_values"]:
            print(f"    {x[:140]}")
    return out


if __name__ == "__main__":
    main()
