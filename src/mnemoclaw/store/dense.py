"""An in-memory copy of the index's vectors for brute-force cosine search.

Used when sqlite-vec cannot be loaded, and in warm processes, where a matrix product
over a normalised float32 matrix beats a sqlite-vec scan by an order of magnitude
(100 000 x 512: 5 ms against 63 ms, docs/speed.md). Refreshed incrementally (only
rows added since the last refresh are read; removed rows are dropped) and in place,
so memory peaks near one matrix, not two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..embeddings.blas import blas_threads

# rows read per query while loading, so the transient memory stays small
_LOAD_BATCH = 4096


class DenseVectors:
    def __init__(self) -> None:
        self._buf = np.zeros((0, 0), dtype=np.float32)  # capacity x dims, first _n rows used
        self._ids = np.zeros(0, dtype=np.int64)
        self._src = np.empty(0, dtype=object)
        self._n = 0
        self.version: object = None
        self.bad = 0  # rows left out of the last refresh: not finite (a damaged page)

    @property
    def ids(self) -> np.ndarray:
        return self._ids[: self._n]

    @property
    def dims(self) -> int:
        return self._buf.shape[1]

    def refresh(
        self,
        version: object,
        current_ids: Callable[[], Sequence[int]],
        fetch: Callable[[Sequence[int]], Iterable[tuple[int, str, bytes]]],
    ) -> None:
        """Bring the copy up to ``version``: ``current_ids`` lists rowids that have vectors,
        ``fetch`` returns (rowid, source, float32 blob) for the given rowids."""
        if version == self.version:
            return
        self.bad = 0
        now = np.fromiter(current_ids(), dtype=np.int64)
        keep = np.isin(self.ids, now)
        if not keep.all():
            self._compact(np.nonzero(keep)[0])
        new = now[~np.isin(now, self.ids)]
        for i in range(0, len(new), _LOAD_BATCH):
            rows = list(fetch(new[i : i + _LOAD_BATCH].tolist()))
            if not rows:
                continue
            if not self._n and self.dims != len(rows[0][2]) // 4:
                self._buf = np.empty((0, len(rows[0][2]) // 4), dtype=np.float32)
            rows = [r for r in rows if len(r[2]) == self.dims * 4]
            block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dims)
            finite = np.asarray(np.isfinite(block).all(axis=1))
            if not finite.all():  # garbage where a vector was: leave it out, and say so
                self.bad += int((~finite).sum())
                rows = [r for r, ok in zip(rows, finite.tolist(), strict=True) if ok]
                block = block[finite]
            norms = np.linalg.norm(block, axis=1)
            norms[norms == 0] = 1.0
            start, end = self._n, self._n + len(rows)
            self._reserve(max(end, self._n + len(new) - i))
            np.divide(block, norms[:, None], out=self._buf[start:end])
            self._ids[start:end] = [r[0] for r in rows]
            self._src[start:end] = [r[1] for r in rows]
            self._n = end
        self.version = version

    def _compact(self, keep: np.ndarray) -> None:
        # rows only move towards the front (keep[j] >= j), so block-wise copies are safe
        for i in range(0, len(keep), _LOAD_BATCH):
            part = keep[i : i + _LOAD_BATCH]
            self._buf[i : i + len(part)] = self._buf[part]
            self._ids[i : i + len(part)] = self._ids[part]
            self._src[i : i + len(part)] = self._src[part]
        self._n = len(keep)

    def _reserve(self, rows: int) -> None:
        if self._buf.shape[0] >= rows:
            return
        # realloc: large blocks grow by remapping, without a second copy in memory
        self._buf.resize((rows, self.dims), refcheck=False)
        self._ids.resize(rows, refcheck=False)
        self._src.resize(rows, refcheck=False)

    def search(self, q: np.ndarray, limit: int, sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        if not self._n or self.dims != len(q) or limit <= 0:
            return []
        norm = float(np.linalg.norm(q)) or 1.0
        with blas_threads(1):  # memory-bound: a second thread gains little and spins after
            sims = self._buf[: self._n] @ (q.astype(np.float32) / norm)
        if sources:
            sims = np.where(np.isin(self._src[: self._n], list(sources)), sims, -np.inf)
        k = min(limit, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        ids = self._ids
        return [(int(ids[i]), float(sims[i])) for i in top if np.isfinite(sims[i])]
