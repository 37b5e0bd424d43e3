
import datetime

import pytest

from mnemoclaw.errors import MnemoclawError
from mnemoclaw.search.fusion import adaptive_vector_weight, bm25_to_unit, decay_factor, fuse, mmr
from mnemoclaw.text.dates import DateRef, note_date, query_dates

from conftest import write


def ranks(fused):
    return [f.id for f in fused]


def test_zscore_keeps_a_lone_keyword_hit_on_top():
    # one chunk has the exact identifier; vectors are flat and favour another chunk slightly
    vector = {1: 0.40, 2: 0.41, 3: 0.39, 4: 0.40}
    text = {3: 12.0}
    fused = fuse(vector, text, "zscore", text_missing=0.0)
    assert ranks(fused)[0] == 3


def test_zscore_without_text_is_vector_order_and_scores_are_unit_interval():
    fused = fuse({1: 0.9, 2: 0.5, 3: 0.1}, {}, "zscore")
    assert ranks(fused) == [1, 2, 3]
    assert all(0 <= f.score <= 1 for f in fused)


def test_fixed_weights_override_the_adaptive_default():
    vector = {1: 0.9, 2: 0.1}
    text = {2: 5.0, 1: 1.0}
    assert ranks(fuse(vector, text, "zscore", vector_weight=1.0, text_weight=0.0))[0] == 1
    assert ranks(fuse(vector, text, "zscore", vector_weight=0.0, text_weight=1.0))[0] == 2


def test_adaptive_weight_grows_with_a_sharp_vector_match():
    flat = adaptive_vector_weight({i: 0.5 + i * 0.001 for i in range(50)})
    sharp = adaptive_vector_weight({0: 0.95, **{i: 0.3 for i in range(1, 50)}})
    assert flat == pytest.approx(0.1) and sharp == pytest.approx(0.5)


def test_weighted_is_openclaws_formula():
    fused = fuse({1: 0.8}, {1: 3.0}, "weighted")
    assert fused[0].score == pytest.approx(0.7 * 0.8 + 0.3 * 0.75)
    assert bm25_to_unit(3.0) == pytest.approx(0.75)
    assert bm25_to_unit(-1.0) == pytest.approx(0.5)


def test_rrf_and_minmax_rank_agreement_first():
    vector = {1: 0.9, 2: 0.8, 3: 0.1}
    text = {1: 9.0, 3: 8.0}
    for method in ("rrf", "minmax", "zscore"):
        assert ranks(fuse(vector, text, method))[0] == 1, method
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse(vector, text, "max")


def test_dates_and_decay():
    assert note_date("memory/2026-01-31.md") == datetime.date(2026, 1, 31)
    assert note_date("memory/2026-01-31-standup.md") == datetime.date(2026, 1, 31)
    assert note_date("MEMORY.md") is None and note_date("memory/projects/x.md") is None
    assert note_date("memory/2026-13-01.md") is None
    assert decay_factor(30, 30) == pytest.approx(0.5)
    assert decay_factor(0, 30) == 1.0 and decay_factor(-5, 30) == 1.0


def test_mmr_prefers_diverse_results():
    items = [(1.0, "apple banana cherry"), (0.95, "apple banana cherry"), (0.9, "kiwi mango papaya")]
    assert mmr(items, 2, 0.5) == [0, 2]
    assert mmr(items, 3, 1.0) == [0, 1, 2]  # lambda 1: relevance only


def test_temporal_decay_ranks_recent_notes_first(workspace, make_memory):
    write(workspace / "memory" / "2020-01-01.md", "- the wifi password is in the drawer")
    write(workspace / "memory" / "2026-11-28.md", "- the wifi password is in the drawer")
    write(workspace / "MEMORY.md", "- unrelated evergreen note about cooking")
    now = 1795900000.0  # 2026-11-28
    mem = make_memory(workspace, overrides={"query": {"hybrid": {"temporalDecay": {"enabled": True}}}},
                      clock=lambda: now)
    mem.sync()
    hits = mem.search("wifi password", min_score=0)
    assert hits[0].path == "memory/2026-11-28.md"
    old = next(h for h in hits if h.path == "memory/2020-01-01.md")
    assert old.score < hits[0].score * 0.01


def test_mmr_in_search(workspace, make_memory):
    write(workspace / "memory" / "a.md", "- deploy checklist: tag, build, push")
    write(workspace / "memory" / "b.md", "- deploy checklist: tag, build, push")
    write(workspace / "memory" / "c.md", "- deploy rollback steps: revert and redeploy")
    mem = make_memory(workspace, overrides={"query": {"hybrid": {"mmr": {"enabled": True, "lambda": 0.3}}}})
    mem.sync()
    paths = [h.path for h in mem.search("deploy checklist", min_score=0)]
    assert paths[1] == "memory/c.md"  # the duplicate is pushed down


def test_openclaw_weighted_mode_with_relaxed_keyword_floor(workspace, make_memory):
    write(workspace / "memory" / "a.md", "- the backup token is ZX-9931")
    write(workspace / "memory" / "b.md", "- gardening notes")
    mem = make_memory(workspace, overrides={"query": {"hybrid": {"fusion": "weighted"}}})
    mem.sync()
    hits = mem.search("ZX-9931", min_score=0.99)  # nothing reaches 0.99; keyword hits survive
    assert [h.path for h in hits] == ["memory/a.md"]


def test_search_modes(workspace, make_memory):
    write(workspace / "memory" / "a.md", "- espresso machine descaling")
    mem = make_memory(workspace)
    mem.sync()
    for mode in ("keyword", "vector", "hybrid"):
        assert mem.search("espresso", mode=mode, min_score=0)[0].path == "memory/a.md"
    with pytest.raises(MnemoclawError, match="unknown search mode 'fuzzy'"):
        mem.search("x", mode="fuzzy")
    out = mem.tools.memory_search("x", mode="fuzzy")
    assert out["disabled"] and "fuzzy" in out["error"]


@pytest.mark.parametrize(
    "query, refs",
    [
        ("What did Gina find for her store on 1 February, 2023?", [DateRef(2023, 2, 1)]),
        ("the painting from October 13th, 2023", [DateRef(2023, 10, 13)]),
        ("What setback did Melanie face in Oct 2023?", [DateRef(2023, 10)]),
        ("How many times did she go to the beach in 2023?", [DateRef(2023)]),
        ("notes of 2026-03-04 and of 2026-03", [DateRef(2026, 3, 4), DateRef(2026, 3)]),
        ("2023年5月8日的会议", [DateRef(2023, 5, 8)]),
        ("2023年5月的计划", [DateRef(2023, 5)]),
        ("PR-4821 deploy", []),
        ("what did I do in may", []),
        ("on 31 February, 2023", [DateRef(2023, 2)]),  # no such day: the month still counts
    ],
)
def test_query_dates(query, refs):
    assert list(query_dates(query)) == refs


def test_note_dates_from_name_or_header():
    assert note_date("notes/s1.md", "# Chat\n\nDate: 1:56 pm on 8 May, 2023\n- hi") == datetime.date(2023, 5, 8)
    assert note_date("notes/s1.md", "---\ndate: 2023-05-08\n---\n# x") == datetime.date(2023, 5, 8)
    assert note_date("notes/s1.md", "日期：2023年5月8日") == datetime.date(2023, 5, 8)
    # the file name wins; a date deep in the text or a month alone is not the note's date
    assert note_date("memory/2026-01-02.md", "Date: 8 May, 2023") == datetime.date(2026, 1, 2)
    assert note_date("notes/s1.md", "\n".join(["x"] * 10 + ["Date: 8 May, 2023"])) is None
    assert note_date("notes/s1.md", "Date: May 2023") is None
    assert DateRef(2023, 5).level(datetime.date(2023, 5, 8)) == 2
    assert DateRef(2023, 5, 9).level(datetime.date(2023, 5, 8)) == 0
    assert DateRef(2023).level(None) == 0


def test_fuse_boost_lifts_a_candidate():
    vector = {1: 0.9, 2: 0.8, 3: 0.2}
    text = {1: 5.0, 2: 4.8, 3: 0.5}
    assert [f.id for f in fuse(vector, text, "zscore")][:2] == [1, 2]
    assert [f.id for f in fuse(vector, text, "zscore", boost={2: 2.0})][:2] == [2, 1]
    # other fusions ignore it
    assert [f.id for f in fuse(vector, text, "rrf", boost={2: 2.0})][0] == 1


def test_a_named_date_ranks_notes_of_that_day_first(workspace, make_memory):
    # the same fact in several notes; the query's date picks the daily log of that
    # day, or the note whose "Date:" header falls on it
    for name in ("2026-03-03.md", "2026-03-04.md", "2026-04-01.md", "ideas.md"):
        write(workspace / "memory" / name, "- standup: the release slipped again")
    mem = make_memory(workspace)
    mem.sync()
    for query, path in [("what happened at standup on 4 March 2026?", "memory/2026-03-04.md"),
                        ("standup 2026-03-03 release", "memory/2026-03-03.md"),
                        ("release slipped, April 1st, 2026", "memory/2026-04-01.md")]:
        for mode in ("hybrid", "keyword"):
            assert mem.search(query, min_score=0, mode=mode)[0].path == path, (query, mode)
    # a month lifts that month's notes over another month's and over undated ones
    hits = mem.search("release slipped in March 2026", min_score=0, mode="keyword")
    assert {h.path for h in hits[:2]} == {"memory/2026-03-03.md", "memory/2026-03-04.md"}

    write(workspace / "memory" / "review.md", "# Review\n\nDate: 2:10 pm on 6 May, 2026\n\n- the release slipped again")
    write(workspace / "memory" / "retro.md", "# Retro\n\nDate: 3:30 pm on 9 May, 2026\n\n- the release slipped again")
    mem.sync()
    assert mem.search("release on 9 May 2026", min_score=0)[0].path == "memory/retro.md"
    assert mem.search("release on 6 May 2026", min_score=0)[0].path == "memory/review.md"

    off = make_memory(workspace, overrides={"query": {"hybrid": {"dateMatch": {"enabled": False}}}})
    off.sync()
    scores = [h.score for h in off.search("standup on 4 March 2026", min_score=0, mode="keyword")]
    assert scores[0] == scores[1]  # without it the daily logs tie


def test_best_line_prefers_terms_that_sit_together():
    from mnemoclaw.search import bm25

    df = {"wifi": 2, "password": 2, "drawer": 3}
    together = [["the", "wifi", "password", "is", "in", "the", "drawer"], ["lunch", "was", "good"]]
    scattered = [["wifi", "was", "slow"], ["password", "reset", "done"], ["the", "drawer", "is", "stuck"]]
    docs = {1: together, 2: scattered}
    terms = ["wifi", "password", "drawer"]
    plain = bm25.score(terms, [], {k: [t for ln in v for t in ln] for k, v in docs.items()}, df, 10, 10.0)
    lined = bm25.with_best_line(terms, [], docs, df, 10, 10.0)
    assert lined[1] > lined[2]
    assert lined[1] - plain[1] > lined[2] - plain[2] > 0
    # weight 0 is the chunk's BM25 alone; phrases made partly of stop words still score
    assert bm25.with_best_line(terms, [], docs, df, 10, 10.0, line_weight=0) == pytest.approx(plain)
    with_phrase = bm25.with_best_line(["state", "art"], [("state", "of", "the", "art")],
                                      {1: [["state", "of", "the", "art"]], 2: [["state", "art"]]}, {"state": 2, "art": 2}, 10, 4.0)
    assert with_phrase[1] > with_phrase[2]


def test_a_query_that_names_a_file_ranks_that_file_first(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the team meets on Mondays\n- project heron ships in March\n")
    write(workspace / "memory" / "2026-11-12.md", "- lunch with Wang Fang\n- the heron budget was approved\n")
    write(workspace / "memory" / "2026-11-13.md", "- the heron launch moved to April\n")
    write(workspace / "notes" / "project-heron.md", "- owner: Marta\n- kickoff on Friday\n")
    mem = make_memory(workspace, overrides={"extraPaths": ["notes"]})
    mem.sync()
    for query, path in (("2026-11-12.md", "memory/2026-11-12.md"), ("memory/2026-11-12.md", "memory/2026-11-12.md"),
                        ("2026-11-12", "memory/2026-11-12.md"), ("what is in `2026-11-13.md`?", "memory/2026-11-13.md"),
                        ("project-heron", "notes/project-heron.md"), ("MEMORY", "MEMORY.md")):
        out = mem.tools.memory_search(query)
        assert out["results"][0]["path"] == path, (query, out["results"])
        assert out["results"][0]["score"] >= 0.99
    # an ordinary word is not a file's name, even when a file's name holds it
    assert mem.tools.memory_search("project")["results"][0]["path"] == "MEMORY.md"
    assert [r["path"] for r in mem.tools.memory_search("2026-11-12.md", mode="keyword")["results"]][0] == \
        "memory/2026-11-12.md"


def test_a_question_in_the_present_finds_a_note_in_the_past(workspace, make_memory):
    """"did she win" is asked of a note that says "won": the keyword side matches the verb."""
    write(workspace / "memory" / "2026-05-02.md", "- Maya won the regional chess tournament\n")
    write(workspace / "memory" / "2026-05-03.md", "- the chess club moved to Tuesdays\n")
    write(workspace / "memory" / "2026-05-04.md", "- we went to the coast and bought a kite\n")
    mem = make_memory(workspace)
    mem.sync()
    hits = mem.search("did Maya win at chess", mode="keyword", min_score=0)
    assert hits[0].path == "memory/2026-05-02.md" and hits[0].text_score > hits[-1].text_score
    assert mem.search("when did we go buy a kite", mode="keyword", min_score=0)[0].path == "memory/2026-05-04.md"
    snippet = mem.tools.memory_search("did Maya win at chess")["results"][0]["snippet"]
    assert "won the regional chess tournament" in snippet


def test_a_question_in_the_first_person_reads_what_the_user_said_before_the_replies(workspace, make_memory):
    """In a log of a conversation between the user and an assistant, "what did I say…" is about
    the user's messages: the assistant's replies, which repeat the question's words at length,
    come after them, the pieces of a long reply with no speaker line of their own too."""
    paragraph = ("A budget tracker database in SQLite is a good pick: the SQLite database is one file, the budget "
                 "tracker database needs no server, and you can back up the whole budget tracker database by "
                 "copying it. ") * 3
    reply = "\n\n".join(f"{n}. {paragraph}" for n in range(1, 7))
    write(workspace / "memory" / "2026-03-02.md",
          "# 2026-03-02\n\n## User\n\nFor my budget tracker I picked SQLite, with the charts drawn in the browser.\n\n"
          f"## Assistant\n\n{reply}\n\n## User\n\nThanks. Next week I want charts.\n")
    mem = make_memory(workspace)
    mem.sync()
    user = 1  # the chunk of the day's heading and the user's message

    def firsts(query: str) -> list[int]:
        return [h.start_line for h in mem.search(query, max_results=4)]

    chunks = mem.backend.store.file_chunks("memory/2026-03-02.md").chunks
    assert sum("## Assistant" not in c.text and "## User" not in c.text for c in chunks) >= 2  # a long reply's pieces
    asked = firsts("Which database did I pick for my budget tracker?")
    assert asked[0] == user, asked
    # the same words without the first person: the replies hold them more often and come first
    assert firsts("which database for a budget tracker")[0] != user
