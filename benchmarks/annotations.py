"""What the annotations in the Markdown do to search, on generated memories (no data needed).

    python benchmarks/annotations.py [--facts 300] [--pairs 200] [--mode hybrid]
                                     [--work-dir bench-results/work] [--out bench-results/annotations.json]

supersession: ``--facts`` facts (a person's employer, city, phone, ...) each set two or three
  times across dated daily logs among unrelated notes, every entry keyed
  (``<!-- key: maria-employer -->``). Asked "What is Maria's employer now?": how often the newest
  value is at rank 1, and how often no older value is in the top 5. The same logs without the
  keys are the baseline: what a memory that cannot tell old from new answers.
importance: ``--pairs`` pairs of near-duplicate entries (the same fact written twice), one
  marked ``<!-- importance: 8 -->``: how often the marked one comes first. And ``--pairs``
  questions whose answer is an unmarked entry while an entry on another subject of the same
  person is marked 9: how often the answer stays first (importance must not bury a clearly
  better match). Every entry has a key of its own (so each is one chunk); the baseline is the
  same memory without the importance marks.

Real indexer, searcher and default local embedder; prints a table, writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import time
from datetime import date, timedelta

from mnemoclaw.api import Memory, resolve_provider
from mnemoclaw.config import load_settings

PEOPLE = ["Maria", "Tomasz", "Aiko", "Jonas", "Priya", "Kwame", "Lucia", "Dmitri", "Wang Fang", "Oliver",
          "Sofia", "Mateo", "Hana", "Ravi", "Elena", "Samir", "Ingrid", "Chen Jie", "Nadia", "Pedro",
          "Yuki", "Amara", "Felix", "Leila", "Marco", "Zoe", "Ibrahim", "Greta", "Kenji", "Rosa"]
# attribute -> (how a question names it, sentence templates for a new value, value pool)
ATTRIBUTES = {
    "employer": ("employer", ["{p} now works at {v}", "{p} started a new job at {v}", "{p} joined {v}"],
                 ["Globex", "Initech", "Umbrella Labs", "Hooli", "Vandelay Industries", "Stark Logistics",
                  "Wayne Biotech", "Acme Robotics", "Soylent Foods", "Tyrell Systems", "Cyberdyne", "Oscorp"]),
    "city": ("home city", ["{p} moved to {v}", "{p} lives in {v} now", "{p} relocated to {v}"],
             ["Lisbon", "Osaka", "Toronto", "Nairobi", "Krakow", "Valparaiso", "Tallinn", "Hanoi", "Porto",
              "Bergen", "Adelaide", "Montreal"]),
    "phone": ("phone number", ["{p}'s phone number is {v}", "{p} changed phone number to {v}",
                               "new number for {p}: {v}"],
              [f"+1 555 01{n:02d}" for n in range(40)]),
    "car": ("car", ["{p} drives a {v}", "{p} bought a {v}", "{p} switched to a {v}"],
            ["blue Volvo estate", "red Mazda MX-5", "white Tesla Model 3", "green Skoda Octavia",
             "silver Toyota Prius", "black Ford Ranger", "yellow Fiat 500", "grey Subaru Outback"]),
    "dentist": ("dentist", ["{p}'s dentist is {v}", "{p} sees {v} for dental care", "{p} changed dentist to {v}"],
                ["Dr. Okafor", "Dr. Lindqvist", "Dr. Moreau", "Dr. Tanaka", "Dr. Haddad", "Dr. Novak",
                 "Dr. Silva", "Dr. Brennan"]),
    "manager": ("manager", ["{p} reports to {v}", "{p}'s manager is {v}", "{p} has a new manager, {v}"],
                ["Helga Strand", "Victor Huang", "Anita Desai", "Brian O'Neill", "Carmen Ruiz", "Yusuf Demir",
                 "Mei Lin", "Tobias Kerr"]),
    "gym": ("gym", ["{p} trains at {v}", "{p} signed up at {v}", "{p} goes to {v} for workouts"],
            ["Iron Temple", "Pulse Fitness", "Granite Gym", "Summit Climbing", "Blue Wave Pool", "Core Studio",
             "Atlas Club", "Northside Boxing"]),
    "laptop": ("laptop", ["{p} works on a {v}", "{p} got a {v}", "{p}'s laptop is a {v}"],
               ["ThinkPad X1", "MacBook Air", "Framework 13", "Dell XPS 15", "Surface Laptop", "ZenBook 14",
                "Pixelbook Go", "Latitude 7440"]),
    "team": ("team", ["{p} is on the {v} team", "{p} moved to the {v} team", "{p} joined the {v} team"],
             ["payments", "search", "billing", "mobile", "infrastructure", "growth", "security", "data"]),
    "restaurant": ("favourite restaurant", ["{p}'s favourite restaurant is {v}", "{p} loves eating at {v}",
                                            "{p} now prefers {v} for dinner"],
                   ["Casa Lupe", "Golden Lotus", "Trattoria Sole", "The Copper Pot", "Sakura House",
                    "Le Petit Zinc", "Spice Route", "Harbour Grill"]),
}
NOISE = ["standup ran long, mostly about the release checklist", "rain all afternoon, worked from the cafe",
         "reviewed the quarterly budget draft", "the printer on floor two jammed again",
         "read an article about sourdough starters", "backed up the photo library to the external drive",
         "planned the weekend hike, maybe the ridge trail", "the build server needed a restart",
         "watched a documentary about deep sea fish", "sorted the receipts for the tax return"]


def slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def supersession_logs(n_facts: int, rnd: random.Random, keyed: bool) -> tuple[dict[str, str], list[dict]]:
    """Daily logs (path -> text) and the questions with the newest and the older entries."""
    facts = [(p, a) for p in PEOPLE for a in ATTRIBUTES][:n_facts]
    start = date(2026, 1, 5)
    days: dict[date, list[str]] = {}
    questions = []
    for person, attr in facts:
        label, templates, pool = ATTRIBUTES[attr]
        versions = rnd.randint(2, 3)
        values = rnd.sample(pool, versions)
        when = sorted(rnd.sample(range(0, 300), versions))
        key = f"{slug(person)}-{attr}"
        lines = []
        for day, value in zip(when, values, strict=True):
            lines.append(rnd.choice(templates).format(p=person, v=value))
            note = f"- {lines[-1]}" + (f" <!-- key: {key} -->" if keyed else "")
            days.setdefault(start + timedelta(days=day), []).append(note)
        questions.append({"query": f"What is {person}'s {label} now?", "newest": lines[-1], "older": lines[:-1]})
    files = {}
    for day, notes in sorted(days.items()):
        lines = notes + [f"- {rnd.choice(NOISE)}" for _ in range(rnd.randint(1, 3))]
        rnd.shuffle(lines)
        files[f"memory/{day.isoformat()}.md"] = f"# {day.isoformat()}\n\n" + "\n".join(lines) + "\n"
    return files, questions


# (a sentence, the same in other words, a question, values)
PAIR_TEMPLATES = [
    ("{p} prefers {v}", "{p} really likes {v}", "What does {p} prefer?", ["window seats on flights",
     "oat milk in coffee", "morning meetings", "paper notebooks", "dark mode everywhere",
     "train travel over flying", "spicy food", "quiet hotel rooms"]),
    ("{p} is allergic to {v}", "{p} cannot have {v}, an allergy", "What is {p} allergic to?", ["peanuts",
     "shellfish", "sesame", "kiwi", "penicillin", "cats", "latex", "pollen"]),
    ("{p}'s birthday is on {v}", "{p} celebrates a birthday on {v}", "When is {p}'s birthday?", ["3 March",
     "17 July", "9 November", "22 January", "5 August", "30 April", "12 December", "26 June"]),
]
AGAIN = ["{} (mentioned again today)", "Note: {}", "{}, as before", "Reminder: {}", "{} - confirmed"]
SURNAMES = ["Berg", "Costa", "Ito", "Kowalski", "Mensah", "Novak", "Okoro", "Reyes", "Schmidt", "Tran", "Alvarez",
            "Dubois", "Eriksen", "Farouk", "Gallo"]


def importance_workspace(n_pairs: int, rnd: random.Random) -> tuple[str, list[dict], list[dict]]:
    """MEMORY.md with near-duplicate pairs (one marked) and decoys, and the two question sets."""
    people = [f"{first} {last}" for last in SURNAMES for first in PEOPLE]
    rnd.shuffle(people)
    if 2 * n_pairs > len(people):
        raise SystemExit(f"--pairs at most {len(people) // 2}")
    entries, near, decoy = [], [], []
    for i in range(n_pairs):
        person, other_person = people[2 * i], people[2 * i + 1]
        t = rnd.randrange(len(PAIR_TEMPLATES))
        plain, reworded, question, pool = PAIR_TEMPLATES[t]
        value = rnd.choice(pool)
        # what a memory gathers when the same fact is written down twice
        pair = [plain.format(p=person, v=value), rnd.choice(AGAIN).format(plain.format(p=person, v=value))]
        rnd.shuffle(pair)
        marked = rnd.randrange(2)
        entries += [f"- {text}" + (" <!-- importance: 8 -->" if k == marked else "") for k, text in enumerate(pair)]
        # (each entry gets a key of its own below, so that every entry is a chunk of its own
        # with or without importance, and the two runs differ only by importance)
        near.append({"query": question.format(p=person), "marked": pair[marked]})
        # the answer is unmarked; an entry on another subject of the same person is marked 9
        a_plain, _, a_question, a_pool = PAIR_TEMPLATES[(t + 1) % len(PAIR_TEMPLATES)]
        answer = a_plain.format(p=other_person, v=rnd.choice(a_pool))
        entries += [f"- {answer}", f"- {plain.format(p=other_person, v=rnd.choice(pool))} <!-- importance: 9 -->"]
        decoy.append({"query": a_question.format(p=other_person), "answer": answer})
    rnd.shuffle(entries)
    keyed = [e.replace(" <!-- importance:", f" <!-- key: entry-{n}; importance:") if "<!--" in e
             else f"{e} <!-- key: entry-{n} -->" for n, e in enumerate(entries)]
    return "# Memory\n\n" + "\n\n".join(keyed) + "\n", near, decoy


def build(root: str, files: dict[str, str], provider: object | None) -> Memory:
    shutil.rmtree(root, ignore_errors=True)
    ws = os.path.join(root, "workspace")
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(ws, rel)), exist_ok=True)
        with open(os.path.join(ws, rel), "w", encoding="utf-8") as fh:
            fh.write(text)
    os.makedirs(os.path.join(ws, "memory"), exist_ok=True)
    settings = load_settings(workspace=ws, state_dir=os.path.join(root, "state"), config={}, env={})
    mem = Memory(settings, provider=provider if provider is not None else resolve_provider(settings))
    report = mem.sync()
    if report.failed or report.warnings:
        raise SystemExit(f"indexing {root} failed: {report.as_dict()}")
    return mem


def run_supersession(args: argparse.Namespace, provider: object | None) -> dict:
    out = {}
    for keyed in (True, False):
        rnd = random.Random(7)
        files, questions = supersession_logs(args.facts, rnd, keyed)
        mem = build(os.path.join(args.work_dir, f"annotations-supersession-{'keyed' if keyed else 'plain'}"),
                    files, provider)
        newest_first = old_absent = 0
        t = time.monotonic()
        for q in questions:
            hits = mem.search(q["query"], max_results=5, mode=args.mode)
            texts = [h.text for h in hits]
            newest_first += bool(texts) and q["newest"] in texts[0]
            old_absent += not any(old in text for old in q["older"] for text in texts)
        seconds = time.monotonic() - t
        mem.close()
        out["keyed" if keyed else "without keys"] = {
            "questions": len(questions), "newest at rank 1": round(newest_first / len(questions), 3),
            "no older value in top 5": round(old_absent / len(questions), 3),
            "ms per search": round(1000 * seconds / len(questions), 1)}
    return out


def run_importance(args: argparse.Namespace, provider: object | None) -> dict:
    out = {}
    for marked in (True, False):
        rnd = random.Random(11)
        memory_md, near, decoy = importance_workspace(args.pairs, rnd)
        if not marked:  # the same memory with no importance written: the baseline
            memory_md = re.sub(r"; importance: \d+", "", memory_md)
        mem = build(os.path.join(args.work_dir, f"annotations-importance-{'marked' if marked else 'plain'}"),
                    {"MEMORY.md": memory_md}, provider)
        first = sum(bool(h) and q["marked"] in h[0].text
                    for q in near for h in [mem.search(q["query"], max_results=5, mode=args.mode)])
        kept = sum(bool(h) and q["answer"] in h[0].text
                   for q in decoy for h in [mem.search(q["query"], max_results=5, mode=args.mode)])
        mem.close()
        out["marked" if marked else "without marks"] = {
            "near-duplicate pairs": len(near), "marked one first": round(first / len(near), 3),
            "questions with a marked decoy": len(decoy), "answer first": round(kept / len(decoy), 3)}
    return out


def annotated_step() -> float:
    from mnemoclaw.search import annotated

    return annotated.IMPORTANCE_STEP


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=300)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--mode", default="hybrid", choices=("hybrid", "keyword", "vector"))
    ap.add_argument("--work-dir", default="bench-results/work")
    ap.add_argument("--out", default="bench-results/annotations.json")
    ap.add_argument("--step", type=float, help="importance step to measure instead of IMPORTANCE_STEP")
    ap.add_argument("--only", choices=("supersession", "importance"))
    args = ap.parse_args()
    if args.step is not None:
        from mnemoclaw.search import annotated

        annotated.IMPORTANCE_STEP = args.step
    provider = None
    t = time.monotonic()
    result = {"mode": args.mode, "importanceStep": annotated_step(),
              "supersession": run_supersession(args, provider) if args.only != "importance" else {},
              "importance": run_importance(args, provider) if args.only != "supersession" else {},
              "seconds": round(time.monotonic() - t, 1)}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    print(f"mode {args.mode}")
    for name, row in result["supersession"].items():
        print(f"supersession {name:>13}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    for name, row in result["importance"].items():
        print(f"importance {name:>13}: " + ", ".join(f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
