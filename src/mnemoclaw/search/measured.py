"""What the project's benchmarks measured for the choices a user can make (the search floor,
the fusion and its weights), and how ``status`` words the choice in force against them.

The figures are benchmarks/quality.py's (docs/quality.md); they live here, apart from the
ranking code, so that a change of measurement is a change of this file alone.
"""

from __future__ import annotations

from .fusion import DEFAULT_WEIGHTS
from .relevance import DEFAULT_MIN_SCORE
from .searcher import QueryOptions

# LoCoMo as memory workspaces, hybrid recall@5 with the bundled embedder
# (benchmarks/quality.py --sets workspace --modes hybrid [--fusion F | --vector-weight W];
# docs/quality.md): what a user choosing a fusion or fixed weights is choosing.
MEASURED_WORKSPACE_R5 = {"zscore": 0.872, "weighted": 0.794, "rrf": 0.832, "minmax": 0.858, "zscore@0.7": 0.802}


def floor_summary(o: QueryOptions) -> str:
    """What ``minScore`` does, and whether it is the measured default (for ``status``)."""
    what = "results less likely than this to be about the query are not returned (a calibrated chance)"
    if o.min_score == DEFAULT_MIN_SCORE:
        return f"{o.min_score:g}: {what}; the measured default (docs/quality.md, \"What a score means\")"
    return (f"{o.min_score:g} (query.minScore): {what}; the measured default is {DEFAULT_MIN_SCORE:g}, and a "
            "score is not OpenClaw's fused score, so a floor copied from OpenClaw (0.35) returns fewer results "
            "(docs/quality.md says what each floor costs)")


def ranking_summary(o: QueryOptions) -> str:
    """Which fusion and weights are in force, and what they measured (for ``status``)."""
    best = MEASURED_WORKSPACE_R5["zscore"]
    fixed = o.vector_weight is not None or o.text_weight is not None
    if o.fusion == "zscore" and not fixed:
        return (f"zscore fusion, vector weight adapted per query (0.1-0.5): the default and the measured best "
                f"(LoCoMo workspace recall@5 {best:.3f}, docs/quality.md)")
    dv, dt = DEFAULT_WEIGHTS[o.fusion]
    wv = dv if o.vector_weight is None else o.vector_weight
    wt = dt if o.text_weight is None else o.text_weight
    total = (wv + wt) or 1.0
    weights = f"vector {wv / total:.2f} / text {wt / total:.2f}"
    if o.fusion == "weighted" and (round(wv / total, 2), round(wt / total, 2)) == (0.7, 0.3):
        what = "weighted fusion, OpenClaw's 0.7/0.3 merge"
    elif o.fusion == "zscore":
        what = f"zscore fusion with fixed weights {weights} (query.hybrid.vectorWeight/textWeight)"
    else:
        what = f"{o.fusion} fusion, {weights}"
    share = round(wv / total, 2)
    if o.fusion == "zscore":
        key = f"zscore@{share:g}"
    else:  # the other fusions were measured at their default weights
        key = o.fusion if share == round(dv / ((dv + dt) or 1.0), 2) else ""
    measured = MEASURED_WORKSPACE_R5.get(key)
    if measured:
        score = (f"measured LoCoMo workspace recall@5 {measured:.3f}; the default (zscore, adaptive weight) "
                 f"{best:.3f}")
    else:
        score = f"not measured with these weights; every fixed weight measured scored below the default's {best:.3f}"
    return f"{what}: {score} (docs/quality.md). Remove query.hybrid.fusion/vectorWeight/textWeight for the default"
