"""Each stage of a search, called alone (search/stages.py); the whole search is tested in
test_search.py and measured by benchmarks/quality.py."""

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from mnemoclaw.search import conversation, stages
from mnemoclaw.search.annotated import AnnotationView
from mnemoclaw.search.fusion import Fused
from mnemoclaw.search.keyword import KeywordEvidence
from mnemoclaw.types import FileRecord, Hit, StoredChunk


class Chunks:
    """A chunk source over a dict: annotations and file records as a store would give them."""

    def __init__(self, rows, notes=None):
        self.rows = rows
        self.notes = notes or {}
        self.records = {r.path: FileRecord(r.path, "memory", "h", 1, 1) for r in rows.values()}

    def annotations(self):
        return self.notes

    def file_records(self):
        return self.records

    def chunks(self, ids):
        return {i: self.rows[i] for i in ids if i in self.rows}


def row(rid, path, text="a note"):
    return StoredChunk(rid, path, "memory", 1, 1, text)


def test_the_pool_is_fixed_for_normalised_fusions_and_full_when_filtering_by_type():
    assert stages.pool_size("zscore", 6, 4, None) == stages.pool_size("zscore", 10, 4, None) == 50
    assert stages.pool_size("weighted", 6, 4, None) == 24
    assert stages.pool_size("zscore", 6, 4, "preference") == stages.MAX_CANDIDATES


def test_dates_named_by_the_query_lift_notes_of_that_day_more_than_of_that_month():
    rows = {1: row(1, "memory/2026-03-04.md"), 2: row(2, "memory/2026-03-20.md"), 3: row(3, "notes.md"),
            4: row(4, "memory/2025-01-01.md")}
    heads = {"notes.md": "Date: 2026-03-04\n- a note"}
    levels = stages.date_levels("what happened on 4 March 2026", rows, lambda paths: {p: heads[p] for p in paths})
    assert levels == {1: 3, 3: 3}  # the day, and the day from a Date: line; another day of March is not it
    assert stages.date_levels("in March 2026", rows, lambda paths: {p: heads[p] for p in paths}) == {1: 2, 2: 2, 3: 2}
    notes = AnnotationView(Chunks(rows)).refresh()
    assert stages.shifts({1: 3, 2: 2}, rows, notes) == {1: 2.0, 2: 1.0}
    archived = {5: row(5, "memory/archive/2026-03-04.md")}
    assert stages.shifts({5: 3}, archived, notes) == {5: 2.0 - 0.5}


def _gathered(rows, text, vector=None):
    return stages.Gathered(text, vector or {}, KeywordEvidence({"note": 1.0}), None, rows, 0.0)


def test_fusing_leaves_out_what_is_gone_or_archived_and_decays_older_notes():
    rows = {1: row(1, "memory/2026-03-01.md"), 2: row(2, "memory/archive/2025-01-01.md"), 4: row(4, "MEMORY.md")}
    g = _gathered(rows, {1: 3.0, 2: 2.0, 3: 1.0, 4: 0.5})  # 3 was deleted between the two reads
    now = datetime(2026, 3, 31, tzinfo=UTC).timestamp()
    cands, fused = stages.fuse_candidates(g, {}, fusion="zscore", vector_weight=None, text_weight=None,
                                          archive=False, decay=True, half_life_days=30.0, now=now)
    assert fused == 4 and [c.id for c in cands] == [1, 4]
    assert abs(cands[0].factor - 0.5) < 1e-9 and cands[1].factor == 1.0  # 30 days: half; MEMORY.md never decays


def test_reordering_sorts_by_decayed_score_and_diversifies_the_first_k():
    def cand(rid, score, factor=1.0, text=None):
        return stages.Candidate(Fused(rid, score, None, 1.0), row(rid, f"{rid}.md", text or f"note {rid}"), factor)

    cands = [cand(1, 0.9, 0.1), cand(2, 0.5), cand(3, 0.4)]
    assert [c.id for c in stages.reorder(cands, decay=True, use_mmr=False, mmr_lambda=0.7, k=2)] == [2, 3, 1]
    same = "the deploy key rotates every ninety days"
    cands = [cand(1, 0.9, text=same), cand(2, 0.89, text=same), cand(3, 0.5, text="lunch is at noon")]
    assert [c.id for c in stages.reorder(cands, decay=False, use_mmr=True, mmr_lambda=0.5, k=2)] == [1, 3, 2]


def test_an_expired_entry_is_left_out_and_a_newer_keyed_entry_answers_in_its_place():
    rows = {1: row(1, "memory/2026-01-01.md", "- db host is pg1"), 2: row(2, "memory/2026-02-01.md", "- db host is pg2"),
            3: row(3, "MEMORY.md", "- the office wifi")}
    notes = {1: ("memory/2026-01-01.md", 1, 1, '{"key":"db-host"}'), 2: ("memory/2026-02-01.md", 1, 1, '{"key":"db-host"}'),
             3: ("MEMORY.md", 1, 1, '{"expires":"2026-01-15"}')}
    view = AnnotationView(Chunks(rows, notes)).refresh()
    cands = [stages.Candidate(Fused(1, 0.9, None, 2.0), rows[1]), stages.Candidate(Fused(3, 0.8, None, 1.0), rows[3])]
    got = {2: rows[2]}
    out, superseded = stages.honour_annotations(cands, {1: rows[1], 3: rows[3]}, view, None, False,
                                                datetime(2026, 3, 1).date(), 10, lambda ids: got)
    assert [c.id for c in out] == [2] and out[0].fused.text == 2.0 and superseded == {}  # with what 1 matched
    out, superseded = stages.honour_annotations(cands, {1: rows[1], 3: rows[3]}, view, None, True,
                                                datetime(2026, 3, 1).date(), 10, lambda ids: got)
    assert [c.id for c in out] == [2, 1, 3] and superseded == {1: "memory/2026-02-01.md#L1-L1"}


def test_scores_come_from_the_evidence_and_decay():
    rows = {1: row(1, "a.md", "the deploy note"), 2: row(2, "b.md", "nothing relevant")}
    g = stages.Gathered({1: 4.0}, {}, KeywordEvidence({"deploy": 2.0, "note": 1.0}, {1: [["deploy", "note"]]}, True),
                        None, rows, 0.0)
    cands = [stages.Candidate(Fused(1, 1.0, None, 4.0), rows[1]), stages.Candidate(Fused(2, 0.0, None, None), rows[2])]
    hits = stages.score(cands, g, "keyword", reference=None, unrelated=None, levels={}, superseded={})
    assert hits[0].score > hits[1].score and hits[0].evidence.coverage == 1.0 and hits[1].evidence.coverage == 0.0
    halved = stages.score([stages.Candidate(cands[0].fused, rows[1], 0.5)], g, "keyword", reference=None,
                          unrelated=None, levels={}, superseded={})
    assert np.isclose(halved[0].score, hits[0].score * 0.5)


def test_selection_keeps_the_floor_puts_named_files_first_and_relaxes_only_when_asked():
    def hit(path, score, text_score=None):
        return Hit(path, 1, 1, score, "t", "memory", None, text_score)

    scored = [hit("a.md", 0.8), hit("b.md", 0.04, 1.0), hit("2026-11-12.md", 0.02)]
    assert [h.path for h in stages.select(scored, [], 0.05, 6, weak=False)] == ["a.md"]
    front = stages.named_first(["2026-11-12.md"], scored, lambda p: None)
    assert front[0].score == stages.NAMED_FILE_SCORE
    assert [h.path for h in stages.select(scored, front, 0.05, 6, weak=False)] == ["2026-11-12.md", "a.md"]
    assert [h.path for h in stages.select(scored, front, 0.05, 1)] == ["2026-11-12.md"]
    assert stages.select(scored[1:], [], 0.5, 6) == []
    assert [h.path for h in stages.select(scored[1:], [], 0.5, 6, relaxed_floor=0.03)] == ["b.md"]


def test_a_question_the_floor_answers_keeps_what_else_it_found_after_the_answers_marked_weak():
    def hit(path, score, text="a note"):
        return Hit(path, 1, 1, score, text, "memory")

    tail = 0.05 * stages.WEAK_TAIL
    scored = [hit("low.md", 0.04), hit("answer.md", 0.9), hit("heading.md", 0.03, "## Decisions"),
              hit("junk.md", tail * 0.9), hit("also.md", 0.3), hit("edge.md", tail)]
    got = stages.select(scored, [], 0.05, 6)
    # what passes first, in the ranking's order; then what else was found, marked; junk and headings never
    assert [(h.path, h.weak) for h in got] == [("answer.md", False), ("also.md", False), ("low.md", True),
                                                ("edge.md", True)]
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
    assert all(h.score < 0.05 for h in got if h.weak)
    assert [h.path for h in stages.select(scored, [], 0.05, 3)] == ["answer.md", "also.md", "low.md"]
    assert [h.path for h in stages.select(scored, [], 0.05, 2)] == ["answer.md", "also.md"]
    # a floor asked for is kept to the letter; a question nothing answers gets no tail
    assert [h.path for h in stages.select(scored, [], 0.05, 6, weak=False)] == ["answer.md", "also.md"]
    assert stages.select([hit("low.md", 0.04), hit("edge.md", 0.02)], [], 0.05, 6) == []
    # by score ("pool"): the tail by score too
    pooled = stages.select(scored, [], 0.05, 6, order="pool")
    assert [h.path for h in pooled] == ["answer.md", "also.md", "low.md", "edge.md"]


def test_selection_never_returns_a_chunk_of_headings_and_annotations_alone():
    def hit(text, score):
        return Hit("a.md", 1, 1, score, text, "memory")

    bare = ["## Decisions", "# Project\n\n## Decisions\n", "## Log <!-- type: event -->\n<!-- key: k -->", "  ### x"]
    said = ["## Decisions\n- use Postgres", "#123 is the ticket", "#hashtag note", "- ## not a heading"]
    got = stages.select([hit(t, 0.9) for t in bare + said], [], 0.05, 10)
    assert [h.text for h in got] == said


def test_scores_never_rise_down_the_list_and_the_annotations_keep_their_places():
    def hit(path, score, line=1, importance=None, superseded_by=None, text="a note"):
        return Hit(path, line, line, score, text, "memory",
                   annotations={} if importance is None else {"importance": importance}, superseded_by=superseded_by)

    fused = [hit("a.md", 0.7), hit("b.md", 0.99), hit("c.md", 0.5)]
    got = stages.select(fused, [], 0.05, 6)  # the fused order is kept, each score capped by the one above
    assert [h.path for h in got] == ["a.md", "b.md", "c.md"] and [h.score for h in got] == [0.7, 0.7, 0.5]
    by_score = stages.select(fused, [], 0.05, 6, order="pool")
    assert [h.path for h in by_score] == ["b.md", "a.md", "c.md"] and [h.score for h in by_score] == [0.99, 0.7, 0.5]
    # ordered by score, an old value asked for with history stays right after what replaced it,
    # and the more important of two notes saying the same thing comes first
    hits = [hit("old.md", 0.95, 3, superseded_by="new.md#L2-L4"), hit("new.md", 0.6, 3),
            hit("x.md", 0.8, text="editor is helix"), hit("y.md", 0.7, importance=9, text="editor is helix")]
    got = stages.select(hits, [], 0.05, 6, order="pool")
    assert [h.path for h in got] == ["y.md", "x.md", "new.md", "old.md"]
    assert all(a.score >= b.score for a, b in zip(got, got[1:], strict=False))
    # a named file leads, scored at least as high as anything after it
    front = stages.named_first(["c.md"], fused, lambda p: None)
    got = stages.select([hit("a.md", 0.995)] + fused, front, 0.05, 6)
    assert got[0].path == "c.md" and got[0].score == 0.995


def test_when_nothing_reaches_the_floor_the_best_candidate_with_real_keyword_evidence_comes_back_weak():
    from mnemoclaw.search.relevance import WEAK_COVERAGE, Evidence
    from mnemoclaw.tools.wire import SearchAnswer

    def hit(path, score, coverage, text="a note"):
        return Hit(path, 1, 1, score, text, "memory", evidence=Evidence(coverage=coverage))

    held = [hit("t.md", 0.03, 1.0, "## Heron"), hit("a.md", 0.02, WEAK_COVERAGE), hit("b.md", 0.04, 0.2)]
    got = stages.select(held, [], 0.05, 6)
    assert [(h.path, h.weak) for h in got] == [("a.md", True)]  # the first that says something, marked
    assert stages.select([hit("b.md", 0.04, WEAK_COVERAGE - 0.01)], [], 0.05, 6) == []  # too few of its words
    assert stages.select(held, [], 0.05, 6, weak=False) == []
    assert not any(h.weak for h in stages.select(held, [], 0.0, 6))  # no floor: nothing is weak
    wire = SearchAnswer(got, "heron budget", citations=True, provider="p", model=None, fallback=False,
                        mode="hybrid", min_score=0.05).wire()
    assert wire["results"][0]["weak"] is True
    assert "may not be the answer" in wire["note"] and "under the floor 0.05" in wire["note"]
    strong = SearchAnswer([hit("a.md", 0.9, 1.0)], "heron", citations=True, provider="p", model=None,
                          fallback=False, mode="hybrid", min_score=0.05).wire()
    assert "weak" not in strong["results"][0] and "note" not in strong
    tailed = SearchAnswer([hit("a.md", 0.9, 1.0), replace(hit("b.md", 0.02, 0.2), weak=True)], "heron",
                          citations=True, provider="p", model=None, fallback=False, mode="hybrid",
                          min_score=0.05).wire()
    assert [r.get("weak", False) for r in tailed["results"]] == [False, True] and "note" not in tailed


def test_a_heading_gives_its_place_to_what_it_heads():
    def hit(path, line, score, text):
        return Hit(path, line, line, score, text, "memory")

    body = hit("a.md", 3, 0.4, "the text under the title")
    scored = [hit("a.md", 1, 0.9, "# A title"), hit("b.md", 1, 0.8, "other"), body, hit("c.md", 1, 0.7, "## Alone")]
    following = {("a.md", 1): body, ("c.md", 1): None}
    got = stages.headings_give_way(scored, lambda h: following[(h.path, h.start_line)])
    # a.md's text takes its title's place and score, once; a heading with nothing after it is gone
    assert [(h.path, h.start_line, h.score) for h in got] == [("a.md", 3, 0.9), ("b.md", 1, 0.8)]
    unscored = hit("a.md", 3, 0.0, "the text under the title")
    got = stages.headings_give_way(scored[:2], lambda h: unscored)
    assert [(h.path, h.start_line, h.score) for h in got] == [("a.md", 3, 0.9), ("b.md", 1, 0.8)]


def test_an_english_question_whose_nearest_note_is_chinese_leans_on_the_vector_side():
    rows = {1: StoredChunk(1, "memory/a.md", "memory", 1, 1, "黑豹队的防守只丢了 308分，在联赛中排名第六 (NFL)"),
            2: StoredChunk(2, "memory/b.md", "memory", 1, 1, "The Panthers defense gave up 308 points")}

    def gathered(vector: dict[int, float], terms: dict[str, float]) -> stages.Gathered:
        return stages.Gathered(text={2: 1.0}, vector=vector, words=KeywordEvidence(terms), qvec=None, rows=rows,
                        text_missing=None)

    assert stages.latin_over_cjk(gathered({1: 0.8, 2: 0.3}, {"panther": 2.0, "defens": 1.0}))
    assert not stages.latin_over_cjk(gathered({1: 0.3, 2: 0.8}, {"panther": 2.0}))  # its nearest note is English
    assert not stages.latin_over_cjk(gathered({1: 0.8, 2: 0.3}, {"黑豹": 2.0}))  # a Chinese question keeps the adaptive weight
    assert not stages.latin_over_cjk(gathered({}, {"panther": 2.0}))  # keyword mode: no vector side


def test_a_question_over_single_messages_leans_on_the_vector_side_and_one_over_many_turns_does_not():
    message = "## User\n\nI'm moving the app to Postgres next week."
    piece = "Use a connection pool.\n\nSet the timeout to 30 seconds."  # the middle of a long reply
    turns = "- **Caroline** (D1:1): I went hiking.\n- **Melanie** (D1:2): Where to?"
    note = "Deploy with docker compose."

    def gathered(*texts: str) -> stages.Gathered:
        rows = {i: StoredChunk(i, "memory/2024-01-01.md", "memory", i, i, t) for i, t in enumerate(texts, 1)}
        vector = {i: 0.9 - 0.01 * i for i in rows}
        return stages.Gathered(text={1: 1.0}, vector=vector, words=KeywordEvidence({"postgr": 1.0}), qvec=None,
                               rows=rows, text_missing=None)

    assert stages.over_messages(gathered(message, piece, piece, message))
    assert not stages.over_messages(gathered(turns, turns, message))  # the conversation's chunks hold many turns
    assert not stages.over_messages(gathered(note, note, piece))  # nobody speaks: notes, not a conversation

    def first(*texts: str) -> int:
        # the vector side barely prefers 1 (the adaptive weight is its least), the keyword side holds 3 alone
        g = gathered(*texts)
        g = replace(g, vector={1: 0.80, 2: 0.78, 3: 0.76}, text={3: 2.0}, text_missing=0.0)
        cands, _ = stages.fuse_candidates(g, {}, fusion="zscore", vector_weight=None, text_weight=None,
                                          archive=True, decay=False, half_life_days=30.0, now=0.0)
        return cands[0].id

    assert first(message, piece, message) == 1
    assert first(note, note, note) == 3
    assert stages.speakers_in(turns) == 2 and stages.speakers_in(message) == 1 and stages.speakers_in(piece) == 0


def test_who_speaks_a_chunk_is_read_from_its_roles_or_the_last_one_above_it():
    assert conversation.in_first_person("What did I say about the tracker?")
    assert conversation.in_first_person("how is my app deployed") and conversation.in_first_person("我用的手机是什么牌子？")
    assert not conversation.in_first_person("What did Caroline say about the tracker?")
    assert not conversation.in_first_person("我们什么时候开会？")  # "we" is both sides
    assert not conversation.in_first_person("World War II")

    assert conversation.said_by("## User\n\nI picked SQLite.") == "user"
    assert conversation.said_by("User: I picked SQLite.\nAssistant: Good pick.") == "both"
    assert conversation.said_by("### Assistant (10:32)\n\nUse a pool.") == "assistant"
    assert conversation.said_by("- **Caroline** (D1:1): I went hiking.") is None  # people by name, not sides
    assert conversation.said_by("Use a connection pool.\n\n**Note:** set a timeout.") is None  # within a message

    chunks = [(1, "# 2026-03-02\n\n## User\n\nI picked SQLite."), (7, "## Assistant\n\n1. SQLite is one file."),
              (10, "2. Back it up by copying."), (13, "3. Keep a test per route."), (16, "## User\n\nThanks.")]
    opened = conversation.sides(chunks)
    assert opened == [(3, "user"), (7, "assistant"), (16, "user")]
    assert [conversation.said_before(opened, line) for line in (1, 5, 10, 13, 16, 18)] == \
        [None, "user", "assistant", "assistant", "assistant", "user"]


def test_what_later_picks_follows_the_rest_and_scores_never_rise():
    hits = [Hit("m.md", n, n, s, f"line {n}", "memory") for n, s in ((1, 0.99), (2, 0.98), (3, 0.97), (4, 0.5))]
    out = stages.select(hits, [], 0.05, 3, later=lambda h: h.start_line in (1, 3))
    assert [h.start_line for h in out] == [2, 4, 1]  # what is picked later is cut first
    assert [h.score for h in out] == [0.98, 0.5, 0.5]
    assert [h.start_line for h in stages.select(hits, [], 0.05, 3)] == [1, 2, 3]
