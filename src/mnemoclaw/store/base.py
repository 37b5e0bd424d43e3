"""The storage interface the indexer, the searcher and ``Memory`` are written against.

``store/sqlite.py`` and ``store/postgres.py`` implement it (``store/__init__.py:open_store``
chooses). Vectors cross this boundary as float32 numpy arrays; keyword *candidates* cross it
with the statistics BM25 needs, and ``search/keyword.py`` ranks them, so two stores that return
the same candidates rank identically. tests/store/test_store_contract.py is the suite every store
must pass.

``Store`` is cut by job into slices of at most a dozen members each (the keyword side, the
vector side, the chunks a search reads, the embedding cache, what the indexer writes, the write
lock, rebuilds, health, purging, the handle); each caller is typed on the slices it uses, and
what only some stores can do is a protocol of its own, checked with ``isinstance``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import StoreError
from ..text.tokenize import KeywordQuery
from ..types import ChunkRow, FileRecord, KeywordCandidates, StoredChunk, VectorReference


def to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def damage_reason(exc: BaseException) -> str:
    """What the database said about the damage, without a store's wrapping of it."""
    cause = exc.__cause__
    return str(cause) if cause is not None and not isinstance(cause, StoreError) else str(exc)


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


# ``vector_search`` as a function: (query vector, limit, sources) -> (chunk id, cosine) best first
VectorSearch = Callable[[np.ndarray, int, Sequence[str] | None], list[tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """Where an index is and how to open it (config.Settings.store_options builds it)."""

    driver: str  # "sqlite" | "postgres"
    path: str  # the index file (sqlite)
    state_dir: str | None = None  # what belongs to the index but is not it: the write lock, markers
    vector_enabled: bool = True
    extension_path: str | None = None  # a sqlite-vec build of the user's own
    url: str | None = None  # postgres: the server
    namespace: str = "main"  # postgres: the namespace this agent writes
    shared: tuple[str, ...] = ()  # postgres: namespaces it also reads
    host: str | None = None  # postgres: this host's name in rows and messages (MNEMOCLAW_HOST; None: the hostname)
    workspace: str = ""  # postgres: the workspace this host indexes, named with the host in each file's row


class KeywordSource(Protocol):
    """What a search's keyword side reads: candidates with the statistics BM25 needs
    (``search/keyword.py`` ranks them, so two sources with the same candidates rank alike)."""

    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates:
        """At most ``depth`` chunks holding a query term, with the corpus statistics."""

    def terms_starting(self, letters: str, shortest: int, longest: int) -> list[str]:
        """The index's terms that start with one of ``letters`` and are ``shortest`` to
        ``longest`` characters long (where a respelled name is looked for: text/spelling.py)."""

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each of ``terms`` (where a Chinese name written with other
        characters of the same sound is looked for: text/sounds.py)."""


class VectorSource(Protocol):
    """What a search's vector side reads."""

    # the keyword and the vector side of one search may run at the same time, from two threads
    # (each read takes its own connection); a search then waits for the slower side only
    parallel_reads: bool

    def vector_search(self, vector: np.ndarray, limit: int,
                      sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) best first."""
    def detached_vector_search(self) -> VectorSearch | None:
        """Where ``parallel_reads`` is false: a ``vector_search`` that answers from memory,
        without this store's connection, so that it may run on another thread while the
        store's connection serves the keyword side (None when the store must search itself).
        Called on the thread that owns the connection; what it returns is valid for one search."""
    def vector_reference(self, vector: np.ndarray) -> VectorReference | None:
        """``vector``'s cosine with a fixed sample of the index's chunks (what text that mostly
        does not answer it scores) and the sample's own spread; None while it has too few vectors."""


class ChunkSource(Protocol):
    """What a search reads of the chunks its two sides found, and of the files they are from."""

    def file_records(self) -> dict[str, FileRecord]: ...
    def file_chunks(self, path: str) -> FileWrite | None:
        """Everything indexed for one file, in the shape ``apply`` takes."""
    def chunks(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks by id, each checked against its hash (a chunk that fails is left out)."""
    def file_heads(self, paths: Iterable[str]) -> dict[str, str]:
        """The text of each file's first chunk (the one starting at line 1), by path."""
    def annotations(self) -> dict[int, tuple[str, int, int, str]]:
        """The chunks with annotations: id -> (path, start line, end line, meta JSON)."""


class EmbeddingCache(Protocol):
    """Vectors by (provider, model, provider key, chunk text hash): nothing is embedded twice."""

    def cache_get(self, key: CacheKey, hashes: Iterable[str]) -> dict[str, np.ndarray]: ...
    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None: ...
    def cache_prune(self, max_entries: int) -> int: ...
    def cache_items(self, batch: int = 1000) -> Iterator[tuple[CacheKey, dict[str, np.ndarray]]]:
        """Every cached vector, in batches of one provider key (for ``mnemoclaw migrate``)."""
    def cache_delete(self, hashes: Iterable[str]) -> int:
        """Forget the cached vectors of these chunk texts, for every provider and model."""


class FileIndex(ChunkSource, Protocol):
    """What the indexer writes and reads back: files, their chunks and vectors, and the
    index's metadata (the fingerprint, the last sync, ...; a store's own bookkeeping is kept
    apart and never shows here)."""

    def meta(self) -> dict[str, str]: ...
    def set_meta(self, items: dict[str, str]) -> None: ...
    def delete_meta(self, keys: Iterable[str]) -> None: ...
    def apply(self, writes: Sequence[FileWrite], removes: Iterable[str] = (),
              touches: Iterable[FileRecord] = ()) -> None:
        """Apply one batch atomically: readers see all of it or none of it."""
    def vectors_for_hashes(self, hashes: Iterable[str], model: str) -> dict[str, np.ndarray]:
        """Vectors of chunks already indexed with ``model``, by chunk text hash."""
    def counts(self) -> dict[str, int]: ...
    def corpus_size(self) -> int:
        """How many chunks keyword search ranks among (kept between writes: no count per call)."""
    def vector_dims(self) -> int | None:
        """The dimension of the vectors the index holds (None while it holds none)."""
    def file_candidates(self, query: KeywordQuery, paths: Sequence[str],
                        sources: Sequence[str] | None = None) -> KeywordCandidates:
        """Every chunk of these files (paths as the index names them) holding a query term, with
        the corpus statistics (another engine found the files: the QMD backend)."""
    # chunks indexed without vectors (the provider was down)
    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str, str]]: ...
    def count_without_vectors(self) -> int: ...
    def add_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None: ...


class WriteLock(Protocol):
    """One writer at a time, across processes (and, for Postgres, hosts)."""

    def write_lock(self, timeout: float | None = None) -> AbstractContextManager[None]: ...
    def lock_holder(self) -> int | None:
        """The process that last took the write lock (it may have finished since)."""
    def lock_busy(self) -> bool:
        """Some process (this one included) holds the write lock now."""


class Rebuilds(Protocol):
    """A full index built aside while this one keeps serving, then swapped in at once."""

    def begin_rebuild(self) -> Store:
        """A new, empty store to build a full index into while this one keeps serving."""
    def commit_rebuild(self, build: Store, *, repair: bool = False) -> None:
        """Make this store hold what ``build`` holds, at once for every reader (``repair``:
        this one is damaged, so nothing of it is read); ``build`` is gone afterwards."""
    def discard_rebuild(self, build: Store) -> None: ...
    def remove_stale_builds(self) -> None:
        """Builds a crashed process left behind (the caller holds the write lock)."""


class Health(Protocol):
    """Whether the index may be written, and the damage found in it (the next sync repairs it)."""

    read_only: bool  # served as it is: nothing may be written (a read-only directory, a full disk)
    read_only_why: str

    def mark_damaged(self, why: str) -> None: ...
    def damaged(self) -> str | None:
        """Why the index is known to be damaged (by any process), or None."""
    def clear_damaged(self) -> None: ...
    def check(self, *, deep: bool = False) -> list[str]:
        """What is wrong with the index, read from every page and chunk; [] when sound."""
    def recover(self, why: str) -> None:
        """The index cannot be used at all: set it aside and start an empty one."""
    def take_recovery(self) -> str | None:
        """Where a damaged index was set aside (at opening, or by ``recover``), once: the next
        sync rebuilds and says why; None when nothing was, or it was told already."""


class Purge(Protocol):
    """Leaving nothing forgotten readable."""

    def scrub(self) -> None:
        """Leave nothing deleted readable in the index's files (after a forget)."""
    def holds(self, texts: Sequence[str]) -> list[str]:
        """Which of ``texts`` the index still holds anywhere it can look (after a scrub: none)."""


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What an index is, for ``status``."""

    path: str
    driver: str  # the database and its version
    vector: str  # how vectors are searched
    fts_tokenizer: str  # how keyword candidates are found
    namespace: str | None = None  # postgres: the namespace written, and the shared ones read


class Handle(Protocol):
    """An open index: where it is (for messages), what it is, and its closing."""

    path: str

    def describe(self) -> StoreInfo:
        """What the index is (a server's version may be asked for: not for every message)."""
    def close(self) -> None: ...


class Store(FileIndex, KeywordSource, VectorSource, EmbeddingCache, WriteLock, Rebuilds, Health, Purge, Handle,
            Protocol):
    """An index: every slice above. Callers are typed on the slice they use."""


# -- what only some stores can do: declared, and checked with isinstance ------------------------
@runtime_checkable
class SharedNamespaces(Protocol):
    """Namespaces of other agents searched beside this one's (the Postgres store)."""

    def shared_file(self, path: str) -> str | None:
        """The text of a file of a shared namespace ("shared/<namespace>/<path>"), from what the
        index holds; None when ``path`` is not one."""


@runtime_checkable
class BulkLoad(Protocol):
    """A first load that builds the store's indexes once, after the rows (the Postgres store)."""

    def bulk_load(self) -> AbstractContextManager[None]: ...


@runtime_checkable
class HostedFiles(Protocol):
    """A store several hosts write (Postgres). Each file's record names the hosts that have had
    it (``FileRecord.hosts``, the one whose copy is indexed first); every write and touch adds
    ``origin``, this host and workspace ("host:workspace"). The indexer removes a file missing
    here only if this host has had it (index/planning.py)."""

    origin: str
