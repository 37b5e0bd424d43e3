"""benchmarks/recall.py's BEAM replay on a tiny made-up conversation: which user messages need
memory, what memory holds when each is asked, and how the figures count an injection. The
measurement itself is docs/quality.md's."""

import sys

from conftest import REPO, HashEmbedder

sys.path.insert(0, str(REPO / "benchmarks"))
import recall as recall_bench  # noqa: E402

CHAT = [
    {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [
        [{"role": "user", "id": 0, "content": "My budget tracker stores amounts in cents, never floats. ->-> 1,1"},
         {"role": "assistant", "id": 1, "content": "Cents it is: integers avoid rounding drift."}],
        [{"role": "user", "id": 2, "content": "The deadline for the analytics sprint is April 19."},
         {"role": "assistant", "id": 3, "content": "Noted, April 19 for analytics."}]]},
    {"batch_number": 2, "time_anchor": "March-29-2024", "turns": [
        [{"role": "user", "id": 4, "content": "Should the refund column hold cents like the amounts do?"},
         {"role": "assistant", "id": 5, "content": "Yes, refunds in cents too."}],
        [{"role": "user", "id": 6, "content": "I switched the charts to a bar layout today."},
         {"role": "assistant", "id": 7, "content": "Bar charts read well here."}],
        [{"role": "user", "id": 8, "content": "And the legend sits under the bar charts now."},
         {"role": "assistant", "id": 9, "content": "Good place for it."}]]},
    {"batch_number": 3, "time_anchor": "April-12-2024", "turns": [
        [{"role": "user", "id": 10, "content": "Is the analytics sprint still due April 19 for the budget tracker?"},
         {"role": "assistant", "id": 11, "content": "Yes, April 19."}],
        [{"role": "user", "id": 12, "content": "Hello again!"},
         {"role": "assistant", "id": 13, "content": "Hi!"}]]},
]
QUESTIONS = [
    {0, 4},   # asked across batches: message 4 holds the half that memory (message 0) completes
    {6, 8},   # both halves in one batch: nothing to recall for either
    {2, 10},  # across batches again
    {11},     # an assistant message only
]


def test_a_user_message_needs_memory_when_a_question_it_is_evidence_for_reaches_an_earlier_batch():
    got = {m["id"]: m for m in recall_bench.beam_messages(CHAT, QUESTIONS)}
    assert sorted(got) == [4, 6, 8, 10, 12]  # user messages only, the first batch (memory empty) left out
    assert {i for i, m in got.items() if m["needs"]} == {4, 10}
    assert got[4]["mine"] == {0, 4} and got[8]["mine"] == {6, 8} and got[12]["mine"] == set()
    assert [got[i]["batch"] for i in (4, 6, 8, 10, 12)] == [1, 1, 1, 2, 2]


def test_the_last_turn_is_the_message_before_in_the_same_batch():
    got = {m["id"]: m for m in recall_bench.beam_messages(CHAT, QUESTIONS)}
    assert got[4]["last"] is None and got[10]["last"] is None  # a batch starts a new day
    assert got[6]["last"] == "Yes, refunds in cents too."
    assert got[12]["last"] == "Yes, April 19."


def test_memory_holds_only_the_batches_before_the_message(tmp_path):
    records = recall_bench.replay_beam("1", CHAT, QUESTIONS, tmp_path, HashEmbedder())
    assert [(r["turn"], r["batch"], r["needs"]) for r in records] == [
        (4, 1, True), (6, 1, False), (8, 1, False), (10, 2, True), (12, 2, False)]
    batch_of = {m["id"]: k for k, b in enumerate(CHAT) for turn in b["turns"] for m in turn}
    shown = [(r["batch"], i) for r in records for e in r["entries"] for i in e["messages"]]
    assert shown, "nothing was ever found: the replay measured nothing"
    assert all(batch_of[i] < k for k, i in shown)
    by_turn = {r["turn"]: r for r in records}
    # an entry showing message 2 carries for message 10 (they are one question's two halves)
    assert any(e["strict"] for e in by_turn[10]["entries"])
    assert all(e["strict"] == (2 in e["messages"]) for e in by_turn[10]["entries"])
    assert all(e["lenient"] == bool({0, 2, 4, 6, 8, 10, 11} & set(e["messages"])) for r in records
               for e in r["entries"])


def entry(strict: bool, lenient: bool) -> dict:
    # standing out by three spreads, a rare shared word, half the message's word weight: the gate lets it come
    return {"score": 0.95, "strict": strict, "session": False, "lenient": lenient, "excess": 3.0, "rarest": 5.0,
            "share": 0.5, "chunks": 100}


def test_carrying_is_counted_over_all_injections_and_over_those_on_messages_that_need_memory():
    records = [
        {"needs": True, "entries": [entry(True, True), entry(False, True)]},
        {"needs": True, "entries": []},
        {"needs": False, "entries": [entry(False, False), entry(False, False)]},
        {"needs": False, "entries": [entry(False, True)]},  # one record of what was said alone: held back
        {"needs": False, "entries": []},
    ]
    row = recall_bench.measure(records, 0.9)
    assert (row["needMemory"], row["needNothing"], row["injectedTurns"], row["injectedNeeded"]) == (2, 3, 2, 1)
    assert row["quietKeptQuiet"] == round(2 / 3, 4) and row["injectedWhenNothingNeeded"] == round(1 / 3, 4)
    assert row["carriesStrict"] == 0.5 and row["carriesStrictWhenNeeded"] == 1.0
    assert row["carriesLenientWhenNeeded"] == 1.0 and row["silentWhenNeeded"] == 0.5
    assert recall_bench.measure(records, 0.96)["injectedTurns"] == 0  # under the threshold nothing comes
