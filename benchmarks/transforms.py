"""Robustness transforms: every set's questions asked another way, with both kinds of error.

    python benchmarks/transforms.py [--sets workspace,locomo,zh,xl,scifact,cmrc,cmrc-absent,...,newcomer]
                                    [--transforms respelled,units,smalltalk,colloquial,merged,unheld]
                                    [--mode hybrid] [--seed 0] [--limit N] [--min-score 0.05]
                                    [--work-dir bench-results/work/transforms] [--index-dir bench-results/work]
                                    [--out bench-results/transforms.json]

Each set of benchmarks/quality.py is evaluated as it is there (the real indexer and searcher, the
default configuration) on its plain questions, then on its questions rewritten by each transform
(src/mnemoclaw/eval/transforms/): names respelled, numbers in other forms, small talk around the
question, colloquial forms; ``merged`` asks the plain questions of LoCoMo's ten conversations in
one memory; ``unheld`` replaces the people a question names by people nobody in memory has. The
rewritten query files are written under --work-dir (corpus and qrels unchanged: the qrels are
linked); the indexes are quality.py's, under --index-dir, so no transform re-indexes.

Both kinds of error are reported per set and transform, beside the plain questions: answerable
questions answered with nothing ([]) and their recall@5, and out-of-scope questions answered with
something. Out of scope are quality.py's (other corpora's questions, other conversations', the
half of a corpus left out) and, for sets quality.py asks none, the other corpora's questions
(EXTRA_FOREIGN), and every ``unheld`` question. A transform that applies to some questions only
(a name to respell, a number to rewrite) is measured on those, with the plain questions' figure
on the same questions in brackets. Every figure is given on the even and the odd questions (by
their place in the query file; another corpus's by their place among those drawn from it) apart
too, so a rule can be fitted on one half and read on the other.

``newcomer`` is a small hand-written memory (benchmarks/newcomer/: eighteen notes about one
person) asked questions it answers and general questions it does not (docs/quality.md,
"Robustness transforms").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from mnemoclaw.eval.runner import ABSENT, IN_SCOPE, OTHER_SCOPES, EvalOptions, evaluate, evidence_in, spread
from mnemoclaw.eval.transforms import OUT_OF_SCOPE, Lexicon, apply
from mnemoclaw.eval.transforms.names import GIVEN_NAMES, SURNAMES
from mnemoclaw.text.names import COMMON
from mnemoclaw.text.script import HAN, HAN_RUN

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality as q  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NEWCOMER = os.path.join(HERE, "newcomer")
DEFAULT_SETS = ("workspace", "locomo", "zh", "xl", "scifact", "cmrc", "cmrc-absent", "xquad-en-absent",
                "xquad-zh-absent", "scifact-absent", "newcomer")
VARIANTS = ("respelled", "units", "smalltalk", "colloquial", "merged", "unheld")
# out-of-scope questions for the sets quality.py asks none: the other corpora's (as its half-corpus sets)
EXTRA_FOREIGN = {"locomo": q.FOREIGN, "zh": q.ABSENT_FOREIGN["xquad-zh-absent"],
                 "xl": q.ABSENT_FOREIGN["xquad-en-absent"], "xl-rev": q.ABSENT_FOREIGN["xquad-zh-absent"],
                 "scifact": q.ABSENT_FOREIGN["scifact-absent"], "cmrc": q.ABSENT_FOREIGN["cmrc-absent"]}
# at most this many of each other corpus's questions (the runner's foreign_limit); LoCoMo turns asks them
# of each of its ten conversations, so fewer
FOREIGN_LIMIT = {"locomo": 100}
# the sets with many people's memories to put in one: LoCoMo's ten conversations
MERGED = {"workspace": {"together": 10}, "locomo": {"scope_field": None}}
MONTHS_DAYS = frozenset("January February March April May June July August September October November December "
                        "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split())
# a capitalised word after these is inside a sentence (not capitalised for starting one)
_MID = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+(?![A-Za-z])")
_LATIN = re.compile(r"[A-Za-z]+")
# the corpus speaks of a capitalised word as of a person: "Nicolas said", "told Aqib", "Tesla's father"
_PERSON_CUE = re.compile(r"\b(?:told|asked) ([A-Z][a-z]+)\b|\b([A-Z][a-z]+) (?:said|says|told|asked|wrote|replied|"
                         r"wants|thinks|was born|died)\b|\b([A-Z][a-z]+)'s (?:wife|husband|son|daughter|mother|"
                         r"father|brother|sister|friend|family)\b")
# the last character of a place or a building, not a person (田泽湖, 余杭站, 宫城)
_PLACE_ENDS = frozenset("湖山河江海站路街省市县区镇村桥城岛港寺宫馆园楼门州洲堡湾峰岭")
_TRANSLITERATED = re.compile(r"[\u4e00-\u9fff]+(?:·[\u4e00-\u9fff]+)+")


class Corpus:
    """What is known of one query folder's corpus: its words and names, for a Lexicon. (Plain
    classes here: a dataclass needs its module imported by name, which tests/test_lint.py does not.)"""

    def __init__(self) -> None:
        self.mid_caps: Counter[str] = Counter()  # capitalised inside a sentence
        self.caps: Counter[str] = Counter()  # capitalised anywhere
        self.lower: Counter[str] = Counter()
        self.speakers: set[str] = set()
        self.cued: set[str] = set()  # spoken of as a person (_PERSON_CUE)
        self.han = ""

    def is_name(self, word: str) -> bool:
        """Written capitalised inside a sentence, hardly ever in lower case (one stray nicolas_f allowed)."""
        if word in self.speakers:
            return True
        return (self.mid_caps[word] >= 1 and len(word) >= 3 and word not in MONTHS_DAYS
                and self.lower[word.lower()] <= 0.1 * self.caps[word] + (self.caps[word] >= 2))

    def is_person(self, word: str) -> bool:
        return self.is_name(word) and (word in self.speakers or word in GIVEN_NAMES or word in self.cued)


def read_jsonl(path: str) -> list[dict[str, Any]]:
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_if_changed(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


class Sources:
    """The query folders a run asks (a key: a path under the bench, or an absolute one), their
    corpora, and what every corpus holds (``taken``: no respelled or invented name may be there)."""

    def __init__(self, bench: str, corpora: Iterable[str]):
        self.bench = bench
        self.corpora: dict[str, Corpus] = {}
        self.vocab: set[str] = set()
        han: list[str] = []
        for key in dict.fromkeys(corpora):
            corpus = self._read(self.path(key))
            self.corpora[key] = corpus
            han.append(corpus.han)
        self.han = "\n".join(han)
        self._tagger: Any = None

    def path(self, key: str) -> str:
        return key if os.path.isabs(key) else os.path.join(self.bench, key)

    def _read(self, folder: str) -> Corpus:
        corpus = Corpus()
        docs = read_jsonl(os.path.join(folder, "corpus.jsonl"))
        texts = [f"{d.get('title') or ''}\n{d.get('text') or ''}" for d in docs]
        if not docs and os.path.isdir(folder):  # a folder of Markdown workspaces (locomo/markdown)
            for root, _, files in os.walk(folder):
                for name in sorted(f for f in files if f.endswith(".md")):
                    with open(os.path.join(root, name), encoding="utf-8") as fh:
                        texts.append(fh.read())
        for d in docs:
            speaker = (d.get("metadata") or {}).get("speaker")
            if speaker:
                corpus.speakers.add(str(speaker))
        han = []
        for text in texts:
            corpus.mid_caps.update(_MID.findall(text))
            corpus.cued.update(w for m in _PERSON_CUE.findall(text) for w in m if w)
            words = _LATIN.findall(text)
            corpus.caps.update(w for w in words if w[:1].isupper() and w[1:].islower())
            corpus.lower.update(w for w in words if w.islower())
            self.vocab.update(w.lower() for w in words)
            if HAN.search(text):
                han.append(text)
        corpus.han = "\n".join(han)
        return corpus

    def taken(self, text: str) -> bool:
        return text.lower() in self.vocab if text.isascii() else text in self.han

    def han_people(self, key: str) -> Callable[[str], tuple[str, ...]]:
        """The people a Chinese question names that its corpus mentions: transliterated names
        (托马斯·戴维斯), and the words jieba's tagger marks as a person's name (a transliteration, or a
        Chinese name of two or three characters after a common surname)."""
        corpus = self.corpora[key]

        def people(text: str) -> tuple[str, ...]:
            if not HAN.search(text):
                return ()
            if self._tagger is None:
                import rjieba

                self._tagger = rjieba
            found = _TRANSLITERATED.findall(text)
            for run in HAN_RUN.findall(_TRANSLITERATED.sub(" ", text)):
                for word, tag in self._tagger.tag(run):
                    common = self._tagger.has_word(word) and self._tagger.suggest_freq(word) >= COMMON
                    if len(word) < 2 or common or word[-1] in _PLACE_ENDS:
                        continue  # 卫星: a word the tagger took for a name; 田泽湖: a place
                    # a Chinese name is not a dictionary word (叶绿体, 黎巴嫩 are); a transliteration may be
                    if tag in ("nrt", "nrfg") or tag == "nr" and word[0] in SURNAMES and len(word) <= 3 \
                            and not self._tagger.has_word(word):
                        found.append(word)
            return tuple(n for n in dict.fromkeys(found) if n in corpus.han)

        return people

    def lexicon(self, key: str, seed: int) -> Lexicon:
        corpus = self.corpora[key]
        return Lexicon(is_name=corpus.is_name, is_person=corpus.is_person,
                       han_people=self.han_people(key), taken=self.taken, seed=seed)


class SetSpec(NamedTuple):
    name: str
    label: str
    corpus: str  # the folder evaluated
    queries: str  # the key of its questions
    foreign: tuple[str, ...]  # keys of the other corpora's questions asked of it
    options: dict[str, Any]  # EvalOptions fields: scope, family options, others
    work: str  # where its indexes live


def set_spec(name: str, bench: str, index_dir: str, data: str) -> SetSpec:
    if name == "newcomer":
        return SetSpec(name, "a newcomer's memory: 18 notes, one person", os.path.join(data, "memory"),
                       os.path.join(data, "memory"), (os.path.join(data, "general"),), {},
                       os.path.join(index_dir, "newcomer"))
    directory, scope, queries, _ = q.SETS[name]
    foreign = q.foreign_of(name) or EXTRA_FOREIGN.get(name, ())
    corpus = q.directory_of(bench, name)
    key = q.resolve(bench, queries) if queries else corpus
    key = os.path.relpath(key, bench) if key.startswith(bench + os.sep) else key
    options = {"scope_field": scope, "others": q.OTHERS if name in q.MEMORIES else 0, **q.FAMILY.get(name, {})}
    return SetSpec(name, q.LABELS.get(name, name), corpus, key, tuple(foreign), options,
                   os.path.join(index_dir, q.WORK.get(name, name)))


def newcomer_data(data: str) -> None:
    """benchmarks/newcomer/ in the BEIR layout: the notes as a corpus, the questions the notes answer
    with their notes as qrels, the general questions apart (asked as out of scope)."""
    notes = sorted(f for f in os.listdir(os.path.join(NEWCOMER, "notes")) if f.endswith(".md"))
    docs = []
    for name in notes:
        with open(os.path.join(NEWCOMER, "notes", name), encoding="utf-8") as fh:
            docs.append({"_id": name, "title": "", "text": fh.read().strip()})
    questions = read_jsonl(os.path.join(NEWCOMER, "questions.jsonl"))
    answerable = [x for x in questions if x["metadata"].get("notes")]
    general = [{"_id": x["_id"], "text": x["text"], "metadata": {}} for x in questions if not x["metadata"].get("notes")]

    def lines(rows: list[dict[str, Any]]) -> str:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)

    write_if_changed(os.path.join(data, "memory", "corpus.jsonl"), lines(docs))
    write_if_changed(os.path.join(data, "memory", "queries.jsonl"), lines(answerable))
    write_if_changed(os.path.join(data, "memory", "qrels.tsv"), "query-id\tcorpus-id\tscore\n" + "".join(
        f"{x['_id']}\t{n}\t1\n" for x in answerable for n in x["metadata"]["notes"]))
    write_if_changed(os.path.join(data, "general", "queries.jsonl"), lines(general))


def tail(key: str) -> str:
    """Where a key's rewritten copy goes (its last two folders: what the runner reports a foreign set as)."""
    return os.path.join(*os.path.normpath(key).split(os.sep)[-2:])


class Asked(NamedTuple):
    """A query folder as a run asks it: its directory, each question's place in the file (by text),
    the places the transform changed, and each place's half (0 even, 1 odd: by place in the file, or
    for another corpus's questions by place among those drawn, which are every 6th or 10th of a file)."""

    key: str
    directory: str
    place: dict[str, int]
    changed: set[int]
    total: int
    half: dict[int, int]
    kind: dict[int, str]  # respelled: how each changed question's name was ("transliteration", "typo", ...)


def prepare(sources: Sources, key: str, variant: str, work: str, seed: int, sample: int = 0) -> Asked:
    """The questions of ``key`` for ``variant``: as they are (plain, merged), or rewritten into
    ``work/variant/``. A set's own questions are all written, changed or not, so the out-of-scope
    questions the runner draws from them (other conversations', the half left out) stay the same;
    ``unheld`` writes only the changed ones (they are its out-of-scope questions). Another corpus's
    questions (``sample``: at most this many, spread over the file as the runner picks them) are
    written only where the transform changed them: the rest were asked as they are in the plain run."""
    src = sources.path(key)
    rows = read_jsonl(os.path.join(src, "queries.jsonl"))
    picked = spread(list(range(len(rows))), sample) if sample else list(range(len(rows)))
    half = {i: (rank if sample else i) % 2 for rank, i in enumerate(picked)}
    if variant in ("plain", "merged"):
        place: dict[str, int] = {}
        for i in picked:
            place.setdefault(rows[i].get("text") or "", i)
        return Asked(key, src, place, set(picked), len(picked), half, {})
    lex = sources.lexicon(key, seed)
    out, place, changed, kind = [], {}, set(), {}
    for i in picked:
        before = dict(lex.counts)
        new = apply(variant, rows[i].get("text") or "", lex, str(rows[i]["_id"]))
        if new is not None:
            changed.add(i)
            kind.update((i, k) for k, n in lex.counts.items() if n != before.get(k, 0))
        if new is not None or not sample and variant not in OUT_OF_SCOPE:
            text = new if new is not None else rows[i].get("text") or ""
            out.append({**rows[i], "text": text})
            place.setdefault(text, i)
    directory = os.path.join(work, variant, tail(key))
    write_if_changed(os.path.join(directory, "queries.jsonl"),
                     "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    qrels = os.path.join(src, "qrels.tsv")
    link = os.path.join(directory, "qrels.tsv")
    if os.path.isfile(qrels) and not os.path.exists(link):
        os.symlink(qrels, link)
    return Asked(key, directory, place, changed, len(picked), half, kind)


class Record(NamedTuple):
    key: str
    place: int
    half: int
    label: str
    answerable: bool
    empty: bool
    weak: bool
    recall5: float


def recall5(hits: list[Any], relevant: Any) -> float:
    if isinstance(relevant, dict):  # workspace mode: evidence id -> (file, line)
        if not relevant:
            return 0.0
        covered: set[str] = set()
        for h in hits[:5]:
            covered |= evidence_in(h, relevant)
        return len(covered) / len(relevant)
    if not relevant:
        return 0.0
    ranked = list(dict.fromkeys(h.path for h in hits))
    return len(set(ranked[:5]) & set(relevant)) / len(relevant)


def foreign_limit(spec: SetSpec, args: argparse.Namespace) -> int:
    limit = FOREIGN_LIMIT.get(spec.name, 300)
    return min(limit, args.limit) if args.limit else limit


def run(spec: SetSpec, variant: str, own: Asked, foreign: list[Asked], args: argparse.Namespace,
        progress: Callable[[str, int, int], None]) -> tuple[dict[str, Any], list[Record]]:
    records: list[Record] = []
    labels = {tail(a.directory): a for a in foreign}
    unmapped = 0

    def collect(scope: str, kind: str, text: str, hits: list[Any], relevant: Any) -> None:
        nonlocal unmapped
        asked = own if kind in (IN_SCOPE, OTHER_SCOPES, ABSENT) else labels.get(kind)
        place = asked.place.get(text, -1) if asked else -1
        if place < 0:
            unmapped += 1
            return
        answerable = kind == IN_SCOPE and variant not in OUT_OF_SCOPE
        label = variant if variant in OUT_OF_SCOPE else kind
        records.append(Record(asked.key, place, asked.half.get(place, place % 2), label, answerable, not hits,
                              bool(hits) and hits[0].weak, recall5(hits, relevant) if answerable else 0.0))

    options = dict(spec.options)
    if variant == "merged":
        options.update(MERGED[spec.name])
    if variant in OUT_OF_SCOPE:  # only the rewritten questions, of their own memory
        options["others"] = 0
    asked = () if variant in OUT_OF_SCOPE else tuple(a.directory for a in foreign if a.place)
    opts = EvalOptions(mode=args.mode, queries_dir=own.directory, work_dir=spec.work, min_score=args.min_score,
                       foreign_dirs=asked, foreign_limit=foreign_limit(spec, args), limit_queries=args.limit or None,
                       collect=collect, **options)
    report = evaluate(spec.corpus, opts, progress)
    if unmapped:
        print(f"  warning: {unmapped} searches whose question was not found in its file", file=sys.stderr)
    return report, records


def mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def summarise(records: list[Record]) -> dict[str, Any]:
    ans = [r for r in records if r.answerable]
    out = [r for r in records if not r.answerable]
    return {"answerable": len(ans), "empty": mean([float(r.empty) for r in ans]),
            "recall@5": mean([r.recall5 for r in ans]), "weak": mean([float(r.weak) for r in ans]),
            "out_of_scope": len(out), "oos_answered": mean([float(not r.empty) for r in out]),
            "oos_weak": mean([float(r.weak) for r in out]),
            "by_label": {label: {"questions": len(rs), "answered": mean([float(not r.empty) for r in rs])}
                         for label in dict.fromkeys(r.label for r in out)
                         for rs in [[r for r in out if r.label == label]]}}


def halves(records: list[Record]) -> dict[str, Any]:
    return {"all": summarise(records), "even": summarise([r for r in records if r.half == 0]),
            "odd": summarise([r for r in records if r.half == 1])}


def compare(records: list[Record], plain: list[Record], asked: list[Asked]) -> dict[str, Any]:
    """The variant's figures on the questions it changed, and the plain questions' on the same ones
    (the out-of-scope ones of the kinds the variant asked); for respelled, the answerable ones by
    how the name was respelled as well."""
    changed = {a.key: a.changed for a in asked}
    mine = [r for r in records if r.place in changed.get(r.key, set())]
    kinds = {r.label for r in records}
    same = [r for r in plain if r.place in changed.get(r.key, set()) and (r.answerable or r.label in kinds)]
    out: dict[str, Any] = {"transformed": halves(mine), "plain_same": halves(same)}
    how = {a.key: a.kind for a in asked}
    by_kind = {k: summarise([r for r in mine if r.answerable and how[r.key].get(r.place) == k])
               for k in sorted({k for a in asked[:1] for k in a.kind.values()})}
    if by_kind:
        out["by_kind"] = {k: {key: v[key] for key in ("answerable", "empty", "recall@5")} for k, v in by_kind.items()}
    return out


def cell(value: float | None, plain: float | None = None, digits: int = 3) -> str:
    if value is None:
        return "–"
    text = f"{value:.{digits}f}"
    return text + (f" ({plain:.{digits}f})" if plain is not None else "")


def table(name: str, result: dict[str, Any]) -> str:
    """One set's figures: a row for the plain questions and one for each transform."""
    rows = [f"### {result['label']} (`{name}`)", "",
            "| questions | answerable / out of scope | answerable answered [] | recall@5 | "
            "out of scope answered | weak: answerable / out of scope | even: [] / R@5 / OOS answered | "
            "odd: [] / R@5 / OOS answered |", "|---|---|---|---|---|---|---|---|"]
    for variant, r in result["variants"].items():
        if "skipped" in r:
            rows.append(f"| {variant} | {r['skipped']} | | | | | | |")
            continue
        t, p = r["transformed"], r["plain_same"]
        a, pa = t["all"], (p["all"] if variant != "plain" else {})
        within = (f" of {r['answerable_total']}" if variant not in ("plain", "merged", *OUT_OF_SCOPE) else "")
        half = [" / ".join(cell(t[h][k], digits=3) for k in ("empty", "recall@5", "oos_answered"))
                for h in ("even", "odd")]
        rows.append(f"| {variant} | {a['answerable']}{within} / {a['out_of_scope']} | "
                    f"{cell(a['empty'], pa.get('empty'))} | {cell(a['recall@5'], pa.get('recall@5'))} | "
                    f"{cell(a['oos_answered'], pa.get('oos_answered'))} | {cell(a['weak'])} / {cell(a['oos_weak'])} | "
                    f"{half[0]} | {half[1]} |")
    return "\n".join(rows) + "\n"


def summary(results: dict[str, Any]) -> str:
    """Every set on one line: each transform's headline error beside the plain questions' on the same ones."""
    def pair(r: dict[str, Any] | None, key: str) -> str:
        if not r or "skipped" in r:
            return "–"
        return cell(r["transformed"]["all"][key], r["plain_same"]["all"][key] if "plain_same" in r else None)

    rows = ["| set | plain: [] / R@5 / out of scope answered | respelled: [] | units: [] | smalltalk: [] / "
            "out of scope answered | colloquial: [] / out of scope answered | merged: R@5 / out of scope answered | "
            "unheld: answered |", "|---|---|---|---|---|---|---|---|"]
    for name, result in results.items():
        v = result["variants"]
        plain = v["plain"]["transformed"]["all"]
        rows.append(f"| {name} | {cell(plain['empty'])} / {cell(plain['recall@5'])} / {cell(plain['oos_answered'])} | "
                    f"{pair(v.get('respelled'), 'empty')} | {pair(v.get('units'), 'empty')} | "
                    f"{pair(v.get('smalltalk'), 'empty')} / {pair(v.get('smalltalk'), 'oos_answered')} | "
                    f"{pair(v.get('colloquial'), 'empty')} / {pair(v.get('colloquial'), 'oos_answered')} | "
                    f"{pair(v.get('merged'), 'recall@5')} / {pair(v.get('merged'), 'oos_answered')} | "
                    f"{pair(v.get('unheld'), 'oos_answered').split(' (')[0]} |")
    return "\n".join(rows) + "\n"


def commit() -> str | None:
    """The commit measured (the engine is this checkout's), with "+" when files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return None
    return head + ("+" if dirty else "") if head else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS),
                    help=f"comma-separated: newcomer, or quality.py's sets ({', '.join(q.SETS)})")
    ap.add_argument("--transforms", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--mode", default="hybrid", choices=("keyword", "vector", "hybrid"))
    ap.add_argument("--seed", type=int, default=0, help="seeds every choice a transform makes")
    ap.add_argument("--limit", type=int, default=0, help="at most this many questions of each kind (to develop)")
    ap.add_argument("--min-score", type=float, default=None, help="minScore (default: the configured one)")
    ap.add_argument("--work-dir", default="bench-results/work/transforms", help="the rewritten query files")
    ap.add_argument("--index-dir", default="bench-results/work", help="the indexes (quality.py's)")
    ap.add_argument("--out", default="bench-results/transforms.json")
    ap.add_argument("--from-json", default=None, metavar="PATH", help="print the tables of a saved run, run nothing")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as fh:
            saved = json.load(fh)
        print("\n".join(table(name, result) for name, result in saved["sets"].items()) + "\n" + summary(saved["sets"]))
        return
    started = time.monotonic()
    bench = args.bench or q.default_bench()
    names = [n for n in args.sets.split(",") if n]
    variants = [v for v in args.transforms.split(",") if v]
    unknown = [n for n in names if n != "newcomer" and n not in q.SETS] + [v for v in variants if v not in VARIANTS]
    if unknown:
        sys.exit(f"unknown set or transform: {', '.join(unknown)}; sets: newcomer, {', '.join(q.SETS)}; "
                 f"transforms: {', '.join(VARIANTS)}")
    work = os.path.abspath(args.work_dir)
    data = os.path.join(work, "data", "newcomer")
    if "newcomer" in names:
        newcomer_data(data)
    specs = [set_spec(n, bench, os.path.abspath(args.index_dir), data) for n in names]
    keys = [k for s in specs for k in (s.queries, *s.foreign)]
    print(f"reading the corpora of {len(dict.fromkeys(keys))} query folders", file=sys.stderr, flush=True)
    sources = Sources(bench, keys + [os.path.join(data, "memory")] * ("newcomer" in names))
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        if time.monotonic() - last[0] > 20:
            last[0] = time.monotonic()
            print(f"    {phase} {done}/{total}", file=sys.stderr, flush=True)

    results: dict[str, Any] = {}
    steps = len(specs) * (1 + len(variants))
    step = 0
    for spec in specs:
        result: dict[str, Any] = {"label": spec.label, "variants": {}}
        plain_records: list[Record] = []
        for variant in ["plain", *variants]:
            step += 1
            if variant == "merged" and spec.name not in MERGED:
                result["variants"][variant] = {"skipped": "n/a: one memory already" if not spec.options.get(
                    "scope_field") else "n/a"}
                continue
            t = time.monotonic()
            own = prepare(sources, spec.queries, variant, work, args.seed)
            foreign = [prepare(sources, k, variant, work, args.seed, foreign_limit(spec, args)) for k in spec.foreign]
            if variant != "plain" and not own.changed:
                result["variants"][variant] = {"skipped": "no question it applies to"}
                continue
            print(f"[{step}/{steps}] {spec.name} {variant}: {len(own.changed)} of {own.total} questions"
                  + (f", out of scope {sum(len(a.changed) for a in foreign)} of {sum(a.total for a in foreign)}"
                     if foreign and variant not in OUT_OF_SCOPE else ""), file=sys.stderr, flush=True)
            report, records = run(spec, variant, own, foreign, args, progress)
            if variant == "plain":
                plain_records = records
            entry = compare(records, plain_records, [own, *foreign])
            entry.update(changed={a.key: len(a.changed) for a in [own, *foreign]},
                         answerable_total=summarise(plain_records)["answerable"],
                         runner={k: report.get(k) for k in ("queries", "recall@5", "empty", "weak", "out_of_scope",
                                                             "latency_ms_p50", "latency_ms_p95")},
                         seconds=round(time.monotonic() - t, 1))
            result["variants"][variant] = entry
            a = entry["transformed"]["all"]
            print(f"    [] {cell(a['empty'])}  recall@5 {cell(a['recall@5'])}  out of scope answered "
                  f"{cell(a['oos_answered'])}  ({entry['seconds']} s)", file=sys.stderr, flush=True)
        results[spec.name] = result
        print(table(spec.name, result), flush=True)
    print(summary(results), flush=True)
    elapsed = round(time.monotonic() - started, 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"seconds": elapsed, "commit": commit(), "mode": args.mode, "seed": args.seed, "limit": args.limit,
                   "sets": results}, fh, indent=2, ensure_ascii=False)
    print(f"done in {elapsed / 60:.1f} min; figures in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
