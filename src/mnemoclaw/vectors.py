"""Arithmetic on embedding vectors that both the stores and the search use (pure numpy)."""

from __future__ import annotations

import numpy as np


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    return vectors / norms[:, None]


def pair_spread(unit: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of the cosines between distinct rows of ``unit``."""
    pairs = (unit @ unit.T)[np.triu_indices(len(unit), k=1)]
    return float(pairs.mean()), float(pairs.std())


def unit_vector(vec: np.ndarray, dims: int | None = None) -> bool:
    """``vec`` is what an index keeps: numbers only, of length 1 (and ``dims`` long, if given).
    A vector read back from a damaged index or answered by a broken provider is not."""
    if not np.all(np.isfinite(vec)) or (dims is not None and len(vec) != dims):
        return False
    return abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3
