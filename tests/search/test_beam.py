"""The pure parts of benchmarks/beam.py (long conversations as memory workspaces) on a tiny made-up
conversation: the daily logs and their line -> message map, the evidence rules, the budget cut and
the line -> message scoring. The measurement itself is docs/quality.md's."""

import json
import sys
from datetime import date

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import beam  # noqa: E402

CHAT = [
    {"batch_number": 1, "time_anchor": None, "turns": [
        [{"role": "user", "id": 0, "time_anchor": "March-15-2024",
          "content": "I'm Ada and my first sprint ends on March 29. ->-> 1,1"},
         {"role": "assistant", "id": 1, "content": "# Plan\nSprint one.\n```python\nprint('open fence')"}],
        [{"role": "user", "id": 2, "content": "## Not a new message\nI prefer quiet libraries for writing."},
         {"role": "assistant", "id": 3, "content": "Noted <!-- importance: 9 --> and kept."}]]},
    {"batch_number": 2, "time_anchor": None, "turns": [
        [{"role": "user", "id": 4, "content": "Back again."}, {"role": "assistant", "id": 5, "content": "Welcome."}]]},
    {"batch_number": 3, "time_anchor": "April-02-2024", "turns": [
        [{"role": "user", "id": 6, "content": "The dashboard now answers in 250ms."},
         {"role": "assistant", "id": 7, "content": "Good."}]]},
]
MESSAGES = [m for b in CHAT for m in beam.messages_of(b)]


def logs():
    files, spans = beam.build_logs(CHAT)
    return files, spans, {s.message: s for s in spans}


def test_a_batch_without_a_date_joins_the_previous_batch_s_log():
    assert beam.batch_dates(CHAT) == [date(2024, 3, 15), date(2024, 3, 15), date(2024, 4, 2)]
    files, _, by_id = logs()
    assert sorted(files) == ["memory/2024-03-15.md", "memory/2024-04-02.md"]
    assert [by_id[i].path for i in range(8)] == ["memory/2024-03-15.md"] * 6 + ["memory/2024-04-02.md"] * 2


def test_each_message_is_a_block_its_content_cannot_break():
    files, _, by_id = logs()
    lines = files["memory/2024-03-15.md"].split("\n")

    def block(i):
        s = by_id[i]
        return lines[s.start - 1:s.end]

    assert lines[0] == "# 2024-03-15"
    assert block(0) == ["## User", "", "I'm Ada and my first sprint ends on March 29."]  # the plan marker dropped
    # a heading in what was said goes two levels deeper; a fence left open is closed in its message
    assert block(1) == ["## Assistant", "", "### Plan", "Sprint one.", "```python", "print('open fence')", "```"]
    assert block(2)[2] == "#### Not a new message"
    assert block(2)[0] == "## User"
    assert "&lt;!--" in block(3)[2]  # what was said annotates nothing
    assert block(4) == ["## User", "", "Back again."]
    # the spans follow one another and never overlap
    spans = [s for s in beam.build_logs(CHAT)[1] if s.path == "memory/2024-03-15.md"]
    assert all(a.end < b.start for a, b in zip(spans, spans[1:], strict=False))


def test_evidence_comes_from_ids_first_then_named_references_then_the_user_s_statement():
    assert beam.evidence_for({"source_chat_ids": {"first": [6], "second": [0, 6, 99]}}, "knowledge_update",
                             MESSAGES) == ([6, 0], "ids")  # duplicates and unknown ids dropped
    assert beam.evidence_for({"source_chat_ids": [], "conversation_references": ["chat_id: 2", 4, "Session 6: x"]},
                             "multi_session_reasoning", MESSAGES) == ([2, 4], "named")
    assert beam.evidence_for({"source_chat_ids": [], "preference_being_tested": "I prefer writing in quiet libraries"},
                             "preference_following", MESSAGES) == ([2], "text")
    assert beam.evidence_for({"source_chat_ids": [], "preference_being_tested": "I love loud cafes downtown"},
                             "preference_following", MESSAGES) == ([], "none")
    assert beam.evidence_for({"question": "What did I say about Mars?"}, "abstention", MESSAGES) == ([], "abstention")


def test_the_statement_rule_reads_user_messages_only():
    best, share = beam.best_statement("the dashboard answers in 250ms", MESSAGES)
    assert best == 6 and share == 1.0
    best, _ = beam.best_statement("Sprint one print open fence", MESSAGES)  # only the assistant said it
    assert best != 1


def test_the_budget_takes_results_whole_then_cuts_the_one_that_crosses_it():
    a = beam.Result("m.md", 1, 2, "aaaa\nbbbb")  # 9 characters
    b = beam.Result("m.md", 10, 13, "cc\ndd\nee\nff")  # 11
    ranges, used = beam.within_budget([a, b], 9 + 1 + 5)
    assert ranges == [("m.md", 1, 2), ("m.md", 10, 11)] and used == 15  # "cc\ndd" fits after the newline
    ranges, used = beam.within_budget([a, b], 9 + 1 + 1)
    assert ranges == [("m.md", 1, 2)] and used == 9  # not even one line of b fits
    ranges, used = beam.within_budget([a, b], 100)
    assert ranges == [("m.md", 1, 2), ("m.md", 10, 13)] and used == 21
    assert beam.within_budget([b], 2) == ([("m.md", 10, 10)], 2)


def test_a_sliced_line_keeps_its_line_number():
    r = beam.Result("m.md", 5, 5, "x" * 10)
    assert beam.text_lines(r) == [(5, "x" * 10)]
    whole = beam.Result("m.md", 4, 5, "abc\ndefgh")
    assert beam.text_lines(whole, ["", "", "", "abc", "defgh"]) == [(4, "abc"), (5, "defgh")]


def test_a_message_counts_when_any_of_its_lines_is_read():
    files, spans, by_id = logs()
    spans_by_path = {}
    for s in spans:
        spans_by_path.setdefault(s.path, []).append(s)
    one = by_id[1]
    hit = beam.Result(one.path, one.end, one.end + 3, "x")  # the last line of 1 and the start of 2
    assert beam.covered([(hit.path, hit.start, hit.end)], spans_by_path) == {1, 2}
    got = beam.score([hit], [1, 6], spans_by_path, budget=100)
    assert got["recall"] == 0.5 and got["all_found"] == 0.0 and got["turns"] == 2 and got["chars"] == 1
    assert got["recall@5"] == 0.5
    far = beam.Result("memory/2024-04-02.md", by_id[6].start, by_id[6].start, "y" * 50)
    got = beam.score([hit, far], [1, 6], spans_by_path, budget=10)  # the second result is past the budget
    assert got["recall"] == 0.5 and got["recall@5"] == 1.0


def test_the_oracle_and_the_baseline_use_the_same_chunks():
    _, spans, by_id = logs()
    spans_by_path = {}
    for s in spans:
        spans_by_path.setdefault(s.path, []).append(s)
    chunks = [beam.Result(s.path, s.start, s.end, f"message {s.message} " + ("sprint" if s.message == 0 else ""))
              for s in spans]
    best = beam.oracle(chunks, [0, 6], spans_by_path, k=5)
    assert [c.start for c in best] == [by_id[0].start, by_id[6].start]
    found = beam.Fts5(chunks).search("When does my sprint end?", 30)
    assert found and found[0].start == by_id[0].start


def test_the_bootstrap_interval_holds_the_mean():
    mean, lo, hi = beam.bootstrap([0.0, 1.0, 0.5, 0.5], seed=1, n=500)
    assert mean == 0.5 and lo <= mean <= hi
    assert beam.bootstrap([], seed=1) == (0.0, 0.0, 0.0)


def test_only_the_100k_scale_is_read(tmp_path):
    with pytest.raises(SystemExit):
        beam.Beam(str(tmp_path), "1M")
    conv = tmp_path / "chats" / "100K" / "1"
    (conv / "probing_questions").mkdir(parents=True)
    (conv / "chat.json").write_text(json.dumps(CHAT))
    (conv / "probing_questions" / "probing_questions.json").write_text(json.dumps({"abstention": []}))
    data = beam.Beam(str(tmp_path))
    assert data.conversations() == ["1"] and data.chat("1") == CHAT
    with pytest.raises(ValueError):
        data._read("chats/1M/1/chat.json")


def test_the_newest_evidence_first_is_read_by_where_each_message_first_comes():
    _, spans, by_id = logs()
    spans_by_path = {}
    for s in spans:
        spans_by_path.setdefault(s.path, []).append(s)
    old, new = (beam.Result(by_id[i].path, by_id[i].start, by_id[i].end, "x") for i in (0, 6))
    assert beam.newest_first([new, old], [0, 6], spans_by_path) is True
    assert beam.newest_first([old, new], [0, 6], spans_by_path) is False
    assert beam.newest_first([new], [0, 6], spans_by_path) is None  # the older one is not returned
    assert beam.newest_first([old, new], [6], spans_by_path) is None  # one piece of evidence: no order


def test_a_transform_knows_the_conversation_s_names_by_how_it_writes_them():
    lex = beam.lexicon([{"content": "I met Kimberly at the festival, and Kimberly liked it. What a day. what else"}], 0)
    assert lex.is_name("Kimberly") and lex.is_person("Kimberly")
    assert not lex.is_name("What")  # written in lower case too: a word, not a name
    assert lex.taken("festival") and not lex.taken("Kimbarly")
