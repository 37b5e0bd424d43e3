"""Retrieval quality on the shared benchmark data, with the real default embedder.

Slow (minutes): run with `make test-slow`. The floors are the figures measured when
the defaults were chosen (docs/quality.md), so a change that makes search worse fails
here. Each set is indexed once; the three modes search the same index.
"""

import pytest

from mnemoclaw.eval.runner import EvalOptions, evaluate

from conftest import bench_dir

pytestmark = pytest.mark.slow

BENCH = bench_dir()
needs_bench = pytest.mark.skipif(BENCH is None, reason="benchmark data not found (set MNEMOCLAW_BENCH_DIR)")

# (set, scope, queries, metric, floor for hybrid)
CASES = [
    ("locomo/turns", "conv", None, "recall@5", 0.56),
    # measured 0.930 (the target); the floor leaves room for one tie that a newer
    # numpy could order differently
    ("xquad/zh-sentence", None, None, "recall@5", 0.928),
    ("xquad/en-paragraph", None, "xquad/zh-paragraph", "recall@5", 0.90),
    ("scifact/beir-test", None, None, "ndcg@10", 0.68),
    ("cmrc2018/dev-paragraph", None, None, "recall@1", 0.97),
]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("quality")


@needs_bench
@pytest.mark.parametrize("name,scope,queries,metric,floor", CASES, ids=[c[0] for c in CASES])
def test_hybrid_meets_its_floor_and_is_never_worse_than_either_signal(work, name, scope, queries, metric, floor):
    scores = {}
    for mode in ("keyword", "vector", "hybrid"):
        opts = EvalOptions(mode=mode, scope_field=scope, queries_dir=str(BENCH / queries) if queries else None,
                           work_dir=str(work / name.replace("/", "_")))
        scores[mode] = evaluate(str(BENCH / name), opts)[metric]
    print(name, metric, scores)
    assert scores["hybrid"] >= floor, scores
    assert scores["hybrid"] >= max(scores["keyword"], scores["vector"]) - 0.01, scores


@needs_bench
def test_locomo_workspace_mode(work):
    opts = EvalOptions(mode="hybrid", scope_field="conv", queries_dir=str(BENCH / "locomo" / "turns"),
                       work_dir=str(work / "workspace"))
    r = evaluate(str(BENCH / "locomo" / "markdown"), opts)
    print({k: r[k] for k in ("recall@5", "hit@5", "avg_chunk_chars@5")}, r["by_category"]["1"])
    assert r["avg_chunk_chars@5"] <= 1500
    # measured 0.872 / 0.922 / 0.564 (docs/quality.md); the targets 0.88 and 0.60 for
    # recall@5 and multi-hop are open work, hit@5 >= 0.92 is met
    assert r["recall@5"] >= 0.868
    assert r["hit@5"] >= 0.92
    assert r["by_category"]["1"]["recall@5"] >= 0.558
