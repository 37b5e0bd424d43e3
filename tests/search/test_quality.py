"""Retrieval quality on the shared benchmark data, with the real default embedder.

Slow (minutes): run with `make test-slow`. The floors are the figures measured when
the defaults were chosen (docs/quality.md), so a change that makes search worse fails
here. Each set is indexed once for the whole run and every test searches that index; an
evaluation a test has already made is read back, not made again (see `Bench`).
"""

import json
import sys
import time
from pathlib import Path

import pytest

from mnemoclaw.eval.runner import EvalOptions, evaluate

from conftest import REPO, bench_dir, postgres_url

pytestmark = pytest.mark.slow

BENCH = bench_dir()
needs_bench = pytest.mark.skipif(BENCH is None, reason="benchmark data not found (set MNEMOCLAW_BENCH_DIR)")

# (set, scope, queries, metric, floor for hybrid)
CASES = [
    ("locomo/turns", "conv", None, "recall@5", 0.56),
    # measured 0.9252 (0.9286 before a chunk off the question scored next to nothing, 0.9294 before
    # Chinese names were looked for, docs/quality.md); the floor leaves room for two questions
    ("xquad/zh-sentence", None, None, "recall@5", 0.923),
    ("xquad/en-paragraph", None, "xquad/zh-paragraph", "recall@5", 0.90),
    ("scifact/beir-test", None, None, "ndcg@10", 0.68),
    ("cmrc2018/dev-paragraph", None, None, "recall@1", 0.97),
]


# CMRC 2018 is searched with every third of its questions (1 073 of 3 219: the 1st, 4th, 7th, …)
# over all 848 paragraphs. Its questions are the dearest to search (~27 ms each, hybrid) and were
# two fifths of the slow suite's time (seven evaluations of all 3 219). The whole set adds
# nothing a third does not show: recall@1 on the third / on the whole set, keyword 0.9720 /
# 0.9748, vector 0.7046 / 0.7058, hybrid 0.9758 / 0.9776; Traditional keyword 0.9609 / 0.9661,
# hybrid 0.9674 / 0.9699: the same order of the modes, hybrid ahead of keyword by about as much.
# The whole set's figures are benchmarks/quality.py's (docs/quality.md), which runs all of it.
SAMPLED = {"cmrc2018/dev-paragraph": 3}
# the floor on the sample, set as the whole set's was (0.97 under its 0.9776): 0.008 under the
# sample's measured hybrid 0.9758
SAMPLE_FLOORS = {"cmrc2018/dev-paragraph": 0.968}


def sample(source: Path, dest: Path, every: int) -> Path:
    """A BEIR queries folder holding every ``every``-th question of ``source`` that has a relevant
    document (in file order, from the first) and those questions' qrels; the corpus stays whole."""
    header, *qrels = (source / "qrels.tsv").read_text("utf-8").splitlines()
    relevant = {line.split("\t")[0] for line in qrels}
    questions = [line for line in (source / "queries.jsonl").read_text("utf-8").splitlines()
                 if json.loads(line)["_id"] in relevant][::every]
    kept = {json.loads(line)["_id"] for line in questions}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "queries.jsonl").write_text("".join(f"{line}\n" for line in questions), "utf-8")
    lines = [header, *(line for line in qrels if line.split("\t")[0] in kept)]
    (dest / "qrels.tsv").write_text("".join(f"{line}\n" for line in lines), "utf-8")
    return dest


class Bench:
    """The benchmark sets for the whole run: each set is indexed once, in ``work/<where>`` (the
    eval runner reuses a work_dir's index: every later evaluation only searches), and a figure
    one test has measured is given to the next that asks for the same evaluation (the Postgres
    parity test reads the SQLite figures the floor tests measured)."""

    def __init__(self, work: Path):
        self.work = work
        self._figures: dict[str, dict] = {}

    def queries(self, name: str, queries: str | None) -> str | None:
        """The questions a set is searched with: its own (None), another folder's, or its sample."""
        if name not in SAMPLED:
            return str(BENCH / queries) if queries else None
        return str(sample(BENCH / (queries or name), self.work / "samples" / name.replace("/", "_"), SAMPLED[name]))

    def evaluate(self, directory: str, where: str, **options) -> dict:
        key = json.dumps([directory, where, options], sort_keys=True)
        if key not in self._figures:
            t = time.monotonic()
            self._figures[key] = evaluate(directory, EvalOptions(work_dir=str(self.work / where), **options))
            print(f"{where} {options.get('mode')}: {time.monotonic() - t:.0f} s")  # shown when a test fails
        return self._figures[key]


@pytest.fixture(scope="session")
def bench(tmp_path_factory) -> Bench:
    return Bench(tmp_path_factory.mktemp("quality"))


@needs_bench
@pytest.mark.parametrize("name,scope,queries,metric,floor", CASES, ids=[c[0] for c in CASES])
def test_hybrid_meets_its_floor_and_is_never_worse_than_either_signal(bench, name, scope, queries, metric, floor):
    floor = SAMPLE_FLOORS.get(name, floor)
    scores = {}
    for mode in ("keyword", "vector", "hybrid"):
        scores[mode] = bench.evaluate(str(BENCH / name), name.replace("/", "_"), mode=mode, scope_field=scope,
                                      queries_dir=bench.queries(name, queries))[metric]
    print(name, metric, scores)
    assert scores["hybrid"] >= floor, scores
    assert scores["hybrid"] >= max(scores["keyword"], scores["vector"]) - 0.01, scores


FOREIGN = ("scifact/beir-test", "xquad/en-paragraph", "xquad/zh-paragraph")


@needs_bench
def test_locomo_workspace_mode_answers_what_it_holds_and_nothing_else(bench):
    """With the default minScore in force: recall, the snippets an agent reads, and the share
    of questions nothing in the workspace answers that get an empty list."""
    r = bench.evaluate(str(BENCH / "locomo" / "markdown"), "workspace", mode="hybrid", scope_field="conv",
                       queries_dir=str(BENCH / "locomo" / "turns"), foreign_dirs=tuple(str(BENCH / f) for f in FOREIGN),
                       others=100)
    print({k: r[k] for k in ("recall@5", "hit@5", "snippet_recall@5", "avg_chunk_chars@5")},
          r["by_category"]["1"], r["out_of_scope"])
    assert r["avg_chunk_chars@5"] <= 1500
    # measured 0.869 / 0.919 / 0.557, snippets 0.837 and the answer's words 0.868 (docs/quality.md,
    # "What a score means"; a question the floor answers keeps what else was found: 0.864 / 0.914 /
    # 0.550 / 0.833 without)
    assert r["recall@5"] >= 0.866
    assert r["hit@5"] >= 0.916
    assert r["by_category"]["1"]["recall@5"] >= 0.552
    # counted by the text an agent reads (a cut line keeps who said it): 0.856, and 0.856 by the
    # lines snippetLines names (0.843 and 0.855 before a cut line kept its speaker)
    assert r["snippet_recall@5"] >= 0.85
    assert r["snippet_recall_lines@5"] >= 0.85
    assert r["snippet_answer@5"]["shown"] >= 0.86
    # the other corpora's questions: measured 0.999 / 0.994 / 0.993 (the issue asks for 0.95)
    for label in FOREIGN:
        assert r["out_of_scope"][label]["empty"] >= 0.95, (label, r["out_of_scope"])
    # questions about the other conversations name people this one never mentions: 0.920 measured
    # (0.961 before a name spelt alike and one after a preposition stopped counting as unheard of;
    # docs/quality.md, "Asked another way"; the issue asks for 0.90)
    assert r["out_of_scope"]["other scopes"]["empty"] >= 0.90, r["out_of_scope"]


@needs_bench
def test_traditional_chinese_as_well_as_simplified(bench):
    """CMRC 2018 converted to Traditional Chinese with OpenCC: hybrid at least keyword-only."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from zh_hant import convert

    hant = convert(str(BENCH / "cmrc2018" / "dev-paragraph"), str(bench.work / "zh-hant" / "cmrc2018-dev-paragraph"))
    # the Simplified set's sample: the same questions (convert keeps ids and order)
    questions = sample(Path(hant), bench.work / "samples" / "zh-hant", SAMPLED["cmrc2018/dev-paragraph"])
    scores = {}
    for mode in ("keyword", "hybrid"):
        scores[mode] = bench.evaluate(hant, "cmrc-hant", mode=mode, queries_dir=str(questions))["recall@1"]
    print(scores)
    # measured on the sample keyword 0.9711, hybrid 0.9748 (whole set 0.9745 / 0.9773; before
    # Traditional was folded into Simplified 0.961 / 0.967, whole set 0.966 / 0.970)
    assert scores["hybrid"] >= 0.96 and scores["hybrid"] >= scores["keyword"], scores


@needs_bench
def test_a_question_in_traditional_chinese_finds_the_simplified_note_first(bench):
    """CMRC 2018's questions in Taiwan's script and words (OpenCC s2twp) against its Simplified
    paragraphs, the index of the floor test above: the note in the other script at rank 1."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from zh_hant import convert

    asked = convert(str(BENCH / "cmrc2018" / "dev-paragraph"), str(bench.work / "zh-tw" / "questions"), "s2twp",
                    ("queries.jsonl",))
    questions = sample(Path(asked), bench.work / "samples" / "zh-tw", SAMPLED["cmrc2018/dev-paragraph"])
    scores = {mode: bench.evaluate(str(BENCH / "cmrc2018" / "dev-paragraph"), "cmrc2018_dev-paragraph", mode=mode,
                                   queries_dir=str(questions))["recall@1"] for mode in ("keyword", "hybrid")}
    print(scores)
    # measured on the sample keyword 0.9711, hybrid 0.9748; whole set 0.9745 / 0.9773, and
    # 0.8524 / 0.8782 before Traditional was folded into Simplified (docs/quality.md)
    assert min(scores.values()) >= 0.95, scores


WORKSPACE = ("locomo/markdown", "conv", "locomo/turns", "recall@5")


@needs_bench
def test_the_postgres_store_gives_the_sqlite_figures_on_every_shared_set(bench):
    """Hybrid search, the default, on each set in both stores: within 0.002 (CMRC on its sample,
    as above). The SQLite indexes and figures of the tests above are reused; their embedding
    cache is copied into Postgres's (one for all namespaces), so nothing is embedded twice."""
    from mnemoclaw.store import StoreOptions, open_store
    from mnemoclaw.store.sqlite import SQLiteStore

    url = postgres_url(fresh=True)
    sets = [(name, scope, queries, metric) for name, scope, queries, metric, _ in CASES] + [WORKSPACE]

    def figure(name, scope, queries, metric, store=None):
        where = "workspace" if name == WORKSPACE[0] else name.replace("/", "_")  # the directories used above
        options = {"overrides": {"store": store}} if store else {}
        return bench.evaluate(str(BENCH / name), f"postgres/{where}" if store else where, mode="hybrid",
                              scope_field=scope, queries_dir=bench.queries(name, queries), **options)[metric]

    def cached() -> set:
        target = open_store(StoreOptions("postgres", "", url=url, namespace="seed"))
        try:
            return {(key, h) for key, items in target.cache_items() for h in items}
        finally:
            target.close()

    lite = {s[0]: figure(*s) for s in sets}
    copied = set()
    target = open_store(StoreOptions("postgres", "", url=url, namespace="seed"))
    try:
        for index in bench.work.glob("**/memory/*.sqlite"):
            source = SQLiteStore(str(index))
            try:
                for key, items in source.cache_items():
                    target.cache_put(key, items)
                    copied |= {(key, h) for h in items}
            finally:
                source.close()
    finally:
        target.close()
    assert cached() == copied
    pg = {s[0]: figure(*s, store={"driver": "postgres", "url": url}) for s in sets}
    print({name: (lite[name], pg[name]) for name in lite})
    for name in lite:
        assert abs(pg[name] - lite[name]) <= 0.002, (name, lite[name], pg[name])
    # indexing every set into Postgres embedded nothing: its cache holds only what was copied
    assert cached() == copied


@needs_bench
def test_english_questions_of_chinese_notes_are_answered_and_other_people_s_mostly_not(bench):
    """English questions of the Chinese XQuAD paragraphs find them; LoCoMo's questions, asked of
    half of those paragraphs, name people none of their nouns comes near (docs/quality.md, "Names
    across scripts")."""
    answered = bench.evaluate(str(BENCH / "xquad" / "zh-paragraph"), "xquad-zh", mode="hybrid",
                              queries_dir=str(BENCH / "xquad" / "en-paragraph"))
    # measured 0.926, 0.7 % answered with nothing
    assert answered["recall@5"] >= 0.92 and answered["empty"] <= 0.01, answered
    half = bench.evaluate(str(BENCH / "xquad" / "zh-paragraph"), "xquad-zh-absent", mode="hybrid", absent=True,
                          foreign_dirs=(str(BENCH / "locomo" / "turns"),))
    # measured 0.277 (0.037 when every Chinese note was taken to write any Latin name)
    assert half["out_of_scope"]["locomo/turns"]["empty"] >= 0.2, half["out_of_scope"]
    assert half["empty"] <= 0.01, half
