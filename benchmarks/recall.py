"""Recall before the reply, replayed on LoCoMo or BEAM: what comes unasked, and whether it should.

    python benchmarks/recall.py [--bench ../shared/bench] [--out bench-results/recall.json]
                                [--convs conv-26,conv-30] [--thresholds 0.5,0.6,...]
    python benchmarks/recall.py --set beam [--beam /work/.mirror/mohammadtavakoli78+BEAM/repo]
                                [--out bench-results/recall-beam.json] [--conversations 1,2]
                                [--work-dir DIR] [--thresholds 0.5,0.6,...]

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

``--set beam``: a set the gate and the threshold were not fitted on, BEAM's conversations between
a user and an assistant at the 100K scale (read as ``benchmarks/beam.py`` reads them, which
refuses every larger scale). Each conversation is a workspace of daily logs, one per batch by its
date, each message a ``## User`` / ``## Assistant`` block (``beam.build_logs``). It is replayed
batch by batch: memory holds the logs of the batches before the current one (synced after each
batch is added: a file already indexed is left as it is, and a vector already made comes from the
embedding cache), and each user message of the current batch is a message for recall, the
message before it in the batch as its last turn; the first batch, with memory empty, is not
measured. Evidence is ``beam.evidence_for``'s (cited ids, then named references, then the user
statement a question tests); a user message **needs memory** when it is evidence for a question
whose other evidence lies in an earlier batch, and every other user message needs nothing. An
injected entry holds the messages any of whose lines its snippet shows (what the model reads;
``cited`` in the records: the entry's whole line range). Strict, lenient and session carrying
read those messages as LoCoMo's read the ids in the text. Reported at every threshold over all
conversations and, at the shipped one, per conversation; nothing is fitted. Besides LoCoMo's
figures: the messages of each kind, and carrying among the injections on messages that need
memory.
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
from mnemoclaw.tools.recall import ENTRY_CHARS, Specific, _query, recall, specific, standing_out
from mnemoclaw.tools.wire import make_snippet, snippet_lines

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import beam  # noqa: E402
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


def beam_messages(chat: list[dict], qs: list[set[int]]) -> list[dict]:
    """The user messages of a BEAM conversation after its first batch, in order, each with its
    batch, the message before it in the batch (its last turn), the evidence of the questions it is
    evidence for (``mine``) and whether it needs memory: one of those questions has evidence in
    an earlier batch."""
    batch_of = {int(m["id"]): k for k, b in enumerate(chat) for m in beam.messages_of(b)}
    out = []
    for k, b in enumerate(chat):
        previous = None
        for m in beam.messages_of(b):
            text = beam.content_of(m)
            if k and m.get("role") == "user":
                mine = [q for q in qs if int(m["id"]) in q]
                out.append({"batch": k, "id": int(m["id"]), "message": text, "last": previous,
                            "mine": set().union(*mine), "needs": any(batch_of[e] < k for q in mine for e in q)})
            previous = text
    return out


def shown_lines(entry, message: str, last_turn: str | None) -> tuple[tuple[int, int], ...]:
    """The file lines an injected entry's snippet shows: the snippet recall made with the query
    that found the entry (the message, or the last turn and the message), told by its text."""
    for query in _query(message, last_turn):  # the queries recall searched with, never a second copy of them
        if entry.hit is not None and make_snippet(entry.hit.text, query, ENTRY_CHARS) == entry.text:
            return snippet_lines(entry.hit.text, entry.start_line, query, ENTRY_CHARS)
    return ((entry.start_line, entry.end_line),)


def replay_beam(name: str, chat: list[dict], qs: list[set[int]], root: Path, provider) -> list[dict]:
    """One record per user message after the first batch: what it needs and what recall would
    inject (scores, the gate's reading, the messages each entry shows)."""
    conv_root = root / name
    options = {"minScore": 0.0, "maxEntries": 10, "maxChars": 100000, "sources": ["curated", "daily"]}
    every = set().union(*qs) if qs else set()
    batch_of = {int(m["id"]): k for k, b in enumerate(chat) for m in beam.messages_of(b)}
    todo = beam_messages(chat, qs)
    records: list[dict] = []
    started = time.monotonic()
    mem, _ = beam.open_memory(str(conv_root), provider)
    try:
        for k in range(1, len(chat)):
            files, spans = beam.build_logs(chat[:k])  # a batch's lines only follow the earlier ones'
            ws = beam.write_workspace(str(conv_root), files, spans)
            report = mem.sync()
            if report.failed:
                raise SystemExit(f"{len(report.failed)} files failed to index, e.g. {report.failed[0]}")
            by_path: dict[str, list] = {}
            for sp in spans:
                by_path.setdefault(sp.path, []).append(sp)
            live = set().union(*(q for q in qs if any(batch_of[e] == k for e in q)))
            chunks = int(mem.backend.store.counts()["chunks"])
            batch = [t for t in todo if t["batch"] == k]
            for i, t in enumerate(batch):
                got = recall(mem.tools.services, t["message"], last_turn=t["last"], options=options, gate=None)
                entries = []
                for e in got.entries:
                    path = os.path.relpath(e.path, ws) if os.path.isabs(e.path) else e.path
                    held = beam.covered(((path, a, b) for a, b in shown_lines(e, t["message"], t["last"])), by_path)
                    cited = beam.covered([(path, e.start_line, e.end_line)], by_path)
                    entries.append({"score": e.score, "strict": bool(held & t["mine"]), "session": bool(held & live),
                                    "lenient": bool(held & every), "messages": sorted(held), "cited": sorted(cited),
                                    "path": path, "lines": [e.start_line, e.end_line], **features(e.hit, chunks)})
                records.append({"conv": name, "batch": k, "turn": t["id"], "needs": t["needs"],
                                "evidence": sorted(t["mine"]), "message": t["message"][:500], "entries": entries})
                beam.progress(f"beam {name}: batch {k}/{len(chat) - 1}", i + 1, len(batch), started)
    finally:
        mem.close()
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
    needed_events = [got for r, got in events if r["needs"]]
    return {
        "threshold": threshold,
        "turns": len(records),
        "needMemory": len(needed),
        "needNothing": len(quiet),
        "injectedTurns": len(events),
        "injectedNeeded": len(needed_events),
        "carriesStrictWhenNeeded": round(sum(1 for got in needed_events if any(e["strict"] for e in got))
                                         / max(1, len(needed_events)), 4),
        "carriesLenientWhenNeeded": round(sum(1 for got in needed_events if any(e["lenient"] for e in got))
                                          / max(1, len(needed_events)), 4),
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


def run_beam(args: argparse.Namespace, thresholds: list[float]) -> tuple[dict, list[dict]]:
    """BEAM's conversations replayed batch by batch: every threshold over all of them and, at the
    shipped one, each conversation alone."""
    source = beam.Beam(args.beam)
    names = source.conversations()
    if args.convs:
        wanted = args.convs.split(",")
        missing = set(wanted) - set(names)
        if missing:
            raise SystemExit(f"no such BEAM conversation: {', '.join(sorted(missing))} (there are {', '.join(names)})")
        names = [n for n in names if n in wanted]
    started = time.monotonic()
    records: list[dict] = []
    root = Path(args.work_dir or tempfile.mkdtemp(prefix="mnemoclaw-recall-beam-"))
    provider = None
    for name in names:
        chat = source.chat(name)
        messages = [m for b in chat for m in beam.messages_of(b)]
        qs = [set(ids) for category, items in source.questions(name).items() for q in items
              if (ids := beam.evidence_for(q, category, messages)[0])]
        if provider is None:
            provider = resolve_provider(load_settings(workspace=root, state_dir=root, config={}, env={}))
        records += replay_beam(name, chat, qs, root, provider)
        print(f"beam {name}: {sum(1 for r in records if r['conv'] == name)} messages "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return {"set": "beam", "scale": source.scale, "conversations": names, "seconds": round(time.monotonic() - started, 1),
            "default": RECALL_MIN_SCORE,
            "atDefault": {"all": measure(records, RECALL_MIN_SCORE),
                          **{n: measure([r for r in records if r["conv"] == n], RECALL_MIN_SCORE) for n in names}},
            "table": {"all": [measure(records, t) for t in thresholds]}}, records


def run_locomo(args: argparse.Namespace, thresholds: list[float]) -> tuple[dict, list[dict]]:
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
    table = {"fit": [measure(fit, t) for t in thresholds], "held-out": [measure(held, t) for t in thresholds]}
    chosen = next((row["threshold"] for row in table["fit"] if row["quietKeptQuiet"] >= QUIET_TARGET), None)
    out = {"fitConvs": sorted(fit_names), "heldOutConvs": sorted({r["conv"] for r in held}),
           "chosen": chosen, "seconds": round(time.monotonic() - started, 1),
           "atChosen": {k: next(row for row in v if row["threshold"] == chosen) for k, v in table.items()}
           if chosen is not None else None,
           "default": RECALL_MIN_SCORE,
           "atDefault": {k: next(row for row in v if row["threshold"] == RECALL_MIN_SCORE) for k, v in table.items()},
           "table": table}
    return out, records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="locomo", choices=("locomo", "beam"),
                    help="the conversations replayed: LoCoMo (the gate was fitted on half of it) or BEAM 100K")
    ap.add_argument("--bench", default=None, help="LoCoMo: the bench folder")
    ap.add_argument("--beam", default=beam.DEFAULT_BEAM, help="BEAM: a bare git mirror (read at HEAD) or a checkout")
    ap.add_argument("--out", default=None, help="default: bench-results/recall.json (beam: recall-beam.json)")
    ap.add_argument("--convs", "--conversations", dest="convs", default="",
                    help="comma-separated conversations (LoCoMo: conv-26; BEAM: 1,2; default: all)")
    ap.add_argument("--work-dir", default=None, help="BEAM: where the workspaces and indexes go (default: a new "
                    "temporary folder, kept)")
    ap.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    args = ap.parse_args()
    thresholds = sorted({float(t) for t in args.thresholds.split(",")} | {RECALL_MIN_SCORE})
    out, records = (run_beam if args.set == "beam" else run_locomo)(args, thresholds)
    path = Path(args.out or f"bench-results/recall{'-beam' if args.set == 'beam' else ''}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n", "utf-8")
    with open(path.with_suffix(".records.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    print(json.dumps(out["atDefault"], indent=1))


if __name__ == "__main__":
    main()
