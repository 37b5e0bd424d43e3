"""Ranking metrics against hand-computed values (binary relevance)."""

import math

from mnemoclaw.eval.metrics import mrr_at, ndcg_at, percentile, recall_at


def test_recall_mrr_and_ndcg_on_one_ranking():
    ranked = ["a", "x", "b", "y"]
    assert recall_at(ranked, {"a", "b", "c"}, 1) == 1 / 3
    assert recall_at(ranked, {"a", "b", "c"}, 5) == 2 / 3
    assert mrr_at(["x", "a"], {"a"}) == 0.5
    assert math.isclose(ndcg_at(ranked, {"a", "b"}), (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert recall_at(ranked, set(), 5) == 0.0 and ndcg_at(ranked, set()) == 0.0


def test_percentile_is_nearest_rank():
    assert percentile([5.0, 1.0, 3.0, 2.0], 50) == 2.0
    assert percentile([5.0, 1.0, 3.0, 2.0], 95) == 5.0
