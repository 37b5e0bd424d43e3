
import pytest
from conftest import write

from mnemoclaw.errors import MnemoclawError
from mnemoclaw.search.fusion import adaptive_vector_weight, bm25_to_unit, date_of, decay_factor, fuse, mmr


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
    assert date_of("memory/2026-01-31.md") == (2026, 1, 31)
    assert date_of("memory/2026-01-31-standup.md") == (2026, 1, 31)
    assert date_of("MEMORY.md") is None and date_of("memory/projects/x.md") is None
    assert date_of("memory/2026-13-01.md") is None
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
    out = mem.memory_search("x", mode="fuzzy")
    assert out["disabled"] and "fuzzy" in out["error"]
