"""benchmarks/promote.py's BEAM replay on a tiny made-up conversation: what a promoted line's
``from:`` names, and how its message is told. The measurement itself is docs/promote.md's."""

import sys

from mnemoclaw.config.dreaming import Dreaming

from conftest import REPO, HashEmbedder

sys.path.insert(0, str(REPO / "benchmarks"))
import promote as promote_bench  # noqa: E402

CHAT = [
    {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [
        [{"role": "user", "id": 0, "content": "My budget tracker stores every amount in cents, never as floats."},
         {"role": "assistant", "id": 1, "content": "Cents it is: integers avoid rounding drift."}]]},
    {"batch_number": 2, "time_anchor": "March-16-2024", "turns": [
        [{"role": "user", "id": 2, "content": "Does my budget tracker store refunds in cents too?"},
         {"role": "assistant", "id": 3, "content": "Yes, refunds in cents too."}]]},
    {"batch_number": 3, "time_anchor": "March-17-2024", "turns": [
        [{"role": "user", "id": 4, "content": "Which amounts does my budget tracker store in cents?"},
         {"role": "assistant", "id": 5, "content": "All of them."}]]},
    {"batch_number": 4, "time_anchor": "March-18-2024", "turns": [
        [{"role": "user", "id": 6, "content": "Remind me how my budget tracker stores an amount, cents or floats?"},
         {"role": "assistant", "id": 7, "content": "Cents."}]]},
]


def test_a_promoted_line_names_its_sources():
    line = "- Cents. <!-- origin: promoted; from: memory/2024-03-15.md#L5, memory/2024-03-16.md#L7-L9; observed: x -->"
    assert promote_bench.sources_of(line) == [("memory/2024-03-15.md", 5), ("memory/2024-03-16.md", 7)]
    assert promote_bench.sources_of("- written by hand") == []


def test_what_the_days_recalled_reaches_memory_md_and_is_told_by_its_message(tmp_path):
    gates = Dreaming(min_score=0.0, min_recall_count=2, min_unique_queries=2, limit=10)
    r = promote_bench.beam_replay("1", CHAT, [{0}, {5}], tmp_path, gates, HashEmbedder(), "search")
    assert r["uses"] == 3  # the user messages after the first day, each sent before its reply
    assert r["promoted"], "nothing was promoted: the replay measured nothing"
    assert [0] in r["promoted_ids"]  # the statement three later messages asked about
    assert all(ids for ids in r["promoted_ids"])  # every promoted line is told by its message
    score = promote_bench.score(r["promoted"], r["later_evidence"], r["promoted_ids"])
    assert score["lines"] == len(r["promoted"]) and score["any"] == 0.5 and score["junk"] == 0
