"""A Postgres namespace's vector side: pgvector columns, searched through an HNSW graph per
dimension (or exactly, where the planner finds that cheaper), the fixed sample a query's
cosines are measured against, and the chunks still waiting for their vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..types import VectorReference
from ..vectors import pair_spread, unit_rows
from .postgres_index import PostgresIndex
from .postgres_schema import vec_parse, vec_text, walk_width

REFERENCE_SAMPLE = 256
REFERENCE_MIN = 50


class PostgresVectors(PostgresIndex):
    """Vector search over the namespaces read."""

    parallel_reads = True  # every read takes a connection from the pool

    # -- chunks indexed without vectors -----------------------------------------------------
    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str, str]]:
        return [tuple(r) for r in self._rows(
            "SELECT id, hash, text FROM mc_chunks WHERE ns = %s AND embedding IS NULL ORDER BY id LIMIT %s",
            (self.ns, limit))]

    def count_without_vectors(self) -> int:
        return int(self._rows("SELECT count(*) FROM mc_chunks WHERE ns = %s AND embedding IS NULL", (self.ns,))[0][0])

    def add_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None:
        if not items:
            return
        with self._tx() as c:
            c.cursor().executemany("UPDATE mc_chunks SET embedding = %s::vector, dims = %s WHERE id = %s AND ns = %s "
                                   "AND embedding IS NULL", [(vec_text(v), len(v), rid, self.ns) for rid, v in items])
        self._ensure_vector_index(len(items[0][1]))

    # -- search -----------------------------------------------------------------------------
    def detached_vector_search(self) -> None:
        return None  # parallel_reads: the vector search itself runs beside the keyword side

    def vector_search(self, vector: np.ndarray, limit: int,
                      sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        d = len(vector)
        where = f"dims = {d} AND ns = ANY(%s)"
        params: list[Any] = [self._read_ns]
        if sources:
            where += " AND source = ANY(%s)"
            params.append(list(sources))
        q = vec_text(vector)
        # the planner chooses: a namespace that is a sliver of the table is read exactly through
        # its own index and sorted, a large one walks the HNSW graph with an iterative scan (both
        # measured at 1 000, 10 000 and 1 000 000 chunks beside a million: full results, recall
        # 1.0 for the small ones; docs/postgres.md)
        width = walk_width(self._corpus_stats()[0])
        with self._conn() as c:
            if self._walks.get(c) != width:  # once per pooled connection, not a round trip per search
                c.execute(f"SET hnsw.ef_search = {width}")
                c.commit()  # a session setting: it outlives this transaction
                self._walks[c] = width
            rows = c.execute(f"SELECT id, (embedding::vector({d}) <=> %s::vector({d})) AS dist FROM mc_chunks "
                             f"WHERE {where} ORDER BY embedding::vector({d}) <=> %s::vector({d}) LIMIT %s",
                             [q, *params, q, limit]).fetchall()
        # relaxed_order may return neighbours slightly out of order
        return sorted(((int(rid), 1.0 - float(dist)) for rid, dist in rows), key=lambda h: (-h[1], h[0]))

    def vector_reference(self, vector: np.ndarray) -> VectorReference | None:
        d = len(vector)

        def make() -> tuple[np.ndarray, float, float]:
            ids = [r[0] for r in self._rows(f"SELECT id FROM mc_chunks WHERE ns = ANY(%s) AND dims = {d} ORDER BY id",
                                            (self._read_ns,))]
            step = max(1, len(ids) // REFERENCE_SAMPLE)
            chosen = ids[::step][:REFERENCE_SAMPLE]
            if len(chosen) < REFERENCE_MIN:
                return np.zeros((0, d), np.float32), 0.0, 1.0
            rows = self._rows("SELECT embedding::text FROM mc_chunks WHERE id = ANY(%s) ORDER BY id", (chosen,))
            sample = unit_rows(np.stack([vec_parse(r[0]) for r in rows]))
            pm, ps = pair_spread(sample)
            return sample, pm, max(ps, 1e-3)

        sample, pair_mean, pair_sd = self._cached(f"reference{d}", make)
        if len(sample) < REFERENCE_MIN:
            return None
        q = np.asarray(vector, dtype=np.float32)
        sims = sample @ (q / (float(np.linalg.norm(q)) or 1.0))
        return VectorReference(float(sims.mean()), float(max(sims.std(), 1e-3)), pair_mean, pair_sd)
