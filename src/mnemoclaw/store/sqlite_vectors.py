"""The SQLite index's vector side: sqlite-vec for a cold process, an in-memory copy of the
vectors (store/dense.py) once a process searches often, the fixed sample a query's cosines are
measured against, and the chunks still waiting for their vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..errors import DiskFullError, IndexCorruptError, ReadOnlyError, StoreError
from ..types import VectorReference
from ..vectors import pair_spread, unit_rows
from .base import VectorSearch, to_blob
from .dense import DenseVectors
from .sqlite_index import SQLiteIndex
from .sqlite_schema import DIMS, VEC_STALE

log = logging.getLogger(__name__)

# sqlite-vec serves the first vector searches of a process; after that an in-memory
# copy of the vectors does (store/dense.py). A one-shot CLI search never loads it.
WARM_AFTER = 3
# The fixed sample a query's cosines are compared with (vector_reference): enough for a
# stable mean and spread, read by rowid in one query; below REFERENCE_MIN there is none.
REFERENCE_SAMPLE = 256
REFERENCE_MIN = 8


class SQLiteVectors(SQLiteIndex):
    """Vector search over the index file's connection."""

    parallel_reads = False  # one connection, used by one thread at a time

    # -- chunks indexed without vectors (the provider was down) ------------------
    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str, str]]:
        """(rowid, chunk hash, text) of chunks that have no vector yet."""
        return self.conn.execute(
            "SELECT rowid, hash, text FROM chunks WHERE embedding IS NULL ORDER BY rowid LIMIT ?", (limit,))

    def count_without_vectors(self) -> int:
        return self.conn.scalar("SELECT count(*) FROM chunks WHERE embedding IS NULL")

    def add_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None:
        """Give chunks that were indexed without a vector their vector."""
        if not items:
            return
        rows = [(to_blob(v), rid) for rid, v in items]
        with self.transaction():
            if self.vec_loaded and self._vec_stale():
                self._rebuild_vec_table()
            self._ensure_vec_table(len(items[0][1]))
            self.conn.executemany("UPDATE chunks SET embedding = ? WHERE rowid = ? AND embedding IS NULL", rows)
            if self.vec_loaded:
                self.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                                      [(rid, blob) for blob, rid in rows])
            elif self._vec_table_exists():
                self._set_meta({VEC_STALE: "1"})

    # -- search -----------------------------------------------------------------
    def vector_search(
        self, vector: np.ndarray, limit: int, sources: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        self._vector_searches += 1
        # sqlite-vec answers a cold process without loading every vector; from the
        # WARM_AFTER-th search on, an in-memory copy is faster
        if self.vec_loaded and self._vector_searches < WARM_AFTER and self._dense.version is None \
                and self._vec_ready(len(q)):
            try:
                return self._vec0_search(q, limit, sources)
            except (IndexCorruptError, DiskFullError, ReadOnlyError):
                raise
            except StoreError as exc:
                # sqlite-vec reports a damaged page of its table as a plain error: look
                # before calling it damage, and answer from the vectors stored with the chunks
                problems = self.check()
                if problems:
                    self.mark_damaged("; ".join(problems[:3]))
                else:
                    log.warning("sqlite-vec failed (%s); searching the vectors stored with the chunks", exc)
        return self._warm_dense().search(q, limit, sources)

    def _warm_dense(self) -> DenseVectors:
        self._dense.refresh(self._version(), self._vector_ids, self._vector_rows)
        if self._dense.bad:
            self.mark_damaged(f"{self._dense.bad} stored vectors are not numbers")
        return self._dense

    def detached_vector_search(self) -> VectorSearch | None:
        if self._vector_searches + 1 < WARM_AFTER and self.vec_loaded and self._dense.version is None:
            return None  # a cold process asks sqlite-vec, on the connection
        self._vector_searches += 1
        return self._warm_dense().search  # brought up to date here, on the connection's thread

    def vector_reference(self, vector: np.ndarray) -> VectorReference | None:
        """``vector``'s cosine with a fixed sample of the index's chunks (text that mostly does
        not answer it), and the sample's own spread; None while the index has too few vectors."""
        version = self._version()
        if self._reference is None or self._reference[0] != version:
            self._reference = (version, *self._reference_sample(len(vector)))
        _, sample, pair_mean, pair_sd = self._reference
        if len(sample) < REFERENCE_MIN or sample.shape[1] != len(vector):
            return None
        q = np.asarray(vector, dtype=np.float32)
        sims = sample @ (q / (float(np.linalg.norm(q)) or 1.0))
        return VectorReference(float(sims.mean()), float(max(sims.std(), 1e-3)), pair_mean, pair_sd)

    def _reference_sample(self, dims: int) -> tuple[np.ndarray, float, float]:
        top = self.conn.scalar("SELECT coalesce(max(rowid), 0) FROM chunks")
        step = max(1, top // REFERENCE_SAMPLE)
        ids = list(range(1, top + 1, step))[:REFERENCE_SAMPLE]  # spread over the index, the same every time
        blobs = [r[2] for r in (self._vector_rows(ids) if ids else []) if r[2] is not None and len(r[2]) == dims * 4]
        if len(blobs) < REFERENCE_MIN:
            return np.zeros((0, dims), dtype=np.float32), 0.0, 1.0
        sample = unit_rows(np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims))
        pair_mean, pair_sd = pair_spread(sample)
        return sample, pair_mean, max(pair_sd, 1e-3)

    def _vector_ids(self) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT rowid FROM chunks WHERE embedding IS NOT NULL")]

    def _vector_rows(self, rowids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        return self._rows_of("SELECT rowid, source, embedding FROM chunks WHERE rowid IN ({marks})", rowids)

    def _vec_ready(self, dims: int) -> bool:
        meta = dict(self.conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (DIMS, VEC_STALE)))
        return meta.get(DIMS) == str(dims) and meta.get(VEC_STALE) != "1" and self._vec_table_exists()

    def _vec0_search(self, q: np.ndarray, limit: int, sources: Sequence[str] | None) -> list[tuple[int, float]]:
        k = min(4096, limit * 4 if sources else limit)
        rows = self.conn.execute(
            "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (to_blob(q), k),
        )
        hits = [(rowid, 1.0 - dist) for rowid, dist in rows]
        if sources:
            keep = {rid for rid, c in self.chunks([h[0] for h in hits]).items() if c.source in sources}
            hits = [h for h in hits if h[0] in keep]
        return hits[:limit]

    def vector_path(self) -> str:
        if self.vec_loaded:
            vec_version = self.conn.scalar("SELECT vec_version()")
            return (f"sqlite-vec {vec_version} via {self.driver.name} (SQLite {self.driver.sqlite_version}); "
                    f"in-memory numpy copy from the {WARM_AFTER}rd search of a process")
        return f"numpy brute-force ({self.choice.note})"
