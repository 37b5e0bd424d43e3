"""The storage interface the indexer and searcher are written against.

SQLite implements it today; a Postgres implementation (pgvector + full text) plugs in
behind the same methods. Vectors cross this boundary as float32 numpy arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..text.tokenize import KeywordQuery
from ..types import ChunkRow, FileRecord, StoredChunk


def to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class FileWrite:
    """Replace everything indexed for one file with these chunks (vectors may be None)."""

    record: FileRecord
    chunks: Sequence[ChunkRow]
    vectors: Sequence[np.ndarray | None]


@dataclass(frozen=True, slots=True)
class CacheKey:
    provider: str
    model: str
    provider_key: str


class Store(Protocol):
    path: str

    # -- metadata ---------------------------------------------------------------
    def meta(self) -> dict[str, str]: ...
    def set_meta(self, items: dict[str, str]) -> None: ...

    # -- files and chunks -------------------------------------------------------
    def file_records(self) -> dict[str, FileRecord]: ...
    def apply(self, writes: Sequence[FileWrite], removes: Iterable[str], touches: Iterable[FileRecord]) -> None:
        """Apply one batch atomically: readers see all of it or none of it."""
    def file_chunks(self, path: str) -> FileWrite | None:
        """Everything indexed for one file, in the shape ``apply`` takes."""
    def vectors_for_hashes(self, hashes: Iterable[str], model: str) -> dict[str, np.ndarray]:
        """Vectors of chunks already indexed with ``model``, by chunk text hash."""
    def chunks(self, rowids: Sequence[int]) -> dict[int, StoredChunk]: ...
    def file_heads(self, paths: Iterable[str]) -> dict[str, str]:
        """The text of each file's first chunk (the one starting at line 1), by path."""
    def counts(self) -> dict[str, int]: ...

    # -- search -----------------------------------------------------------------
    def keyword_search(
        self, query: KeywordQuery, limit: int, sources: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        """(rowid, bm25) best first; bm25 is positive, higher is better."""
    def vector_search(
        self, vector: np.ndarray, limit: int, sources: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        """(rowid, cosine similarity) best first."""

    # -- embedding cache --------------------------------------------------------
    def cache_get(self, key: CacheKey, hashes: Iterable[str]) -> dict[str, np.ndarray]: ...
    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None: ...
    def cache_prune(self, max_entries: int) -> int: ...

    # -- lifecycle --------------------------------------------------------------
    def write_lock(self, timeout: float | None = None) -> AbstractContextManager[None]: ...
    def describe(self) -> dict[str, str]: ...
    def close(self) -> None: ...
