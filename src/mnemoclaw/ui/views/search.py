"""``/search?q=…&mode=…``: results with why each ranked, each a link to its lines."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from ...errors import MnemoclawError
from ...search.searcher import MODES
from ...text import script
from ...text.tokenize import irregular_in
from ..pages import Pages

MAX_RESULTS = 20


def search(pages: Pages, request: Request) -> Response:
    mem = pages.mem
    q = request.query_params.get("q", "").strip()
    mode = request.query_params.get("mode") or mem.backend.default_mode()

    def answer(status: int = 200, results: list | None = None, error: str | None = None,
               warning: str | None = None, took: float | None = None) -> Response:
        return pages.page("search.html", status, request, q=q, mode=mode, modes=MODES, results=results or [],
                          error=error, warning=warning, took=took)

    if mode not in MODES:
        return answer(400, error=f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
    if not q:
        return answer()
    started = time.perf_counter()
    try:
        hits = mem.search(q, mode=mode, max_results=MAX_RESULTS, corpus="all")
    except (MnemoclawError, ValueError, OSError) as exc:
        return answer(503, error=str(exc))
    took = (time.perf_counter() - started) * 1000
    wire = mem.tools.for_person().answer(hits, q, mode, citations=True).wire()
    results = [explained(hit, item, q) for hit, item in zip(hits, wire["results"], strict=True)]
    return answer(results=results, warning=wire.get("warning"), took=took)


def explained(hit: Any, item: dict[str, Any], query: str) -> dict[str, Any]:
    """A result with why it ranked: the keyword score and the query terms it holds, the
    vector similarity, the fused score; and the query's Chinese words as the snippet writes
    them in the other script (``marks``: 資料庫 for 数据库) and the irregular forms of its words
    (won for win), for the highlighter."""
    words = {t for line in (hit.analysed or []) for t in line}
    matched = [t for t in hit.terms if t in words] if words else []
    words_typed = query.split()
    marks = [*script.marks(item["snippet"], words_typed), *irregular_in(item["snippet"], words_typed)]
    return {**item, "href": f"/file/{quote(hit.path)}#L{hit.start_line}-L{hit.end_line}", "keyword": hit.text_score,
            "vector": hit.vector_score, "matched": matched, "marks": marks}
